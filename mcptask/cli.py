"""The command line: parse, call a run function, print. Kept light: `--version` and `--help`
import neither httpx nor pydantic; each command imports what it uses when it runs."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import __version__

if TYPE_CHECKING:
    from .app import Context, GlobalOptions

app = typer.Typer(
    name="mcptask",
    help="Inspect, follow and collect long-running tasks on MCP servers and A2A agents.",
    no_args_is_help=True,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

TARGET = "Target"
OUTPUT = "Output"


def _common_parameters() -> list[inspect.Parameter]:
    def opt(name: str, annotation: Any, default: Any) -> inspect.Parameter:
        return inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
        )

    return [
        opt("url", Annotated[str | None, typer.Option("--url", "-u", envvar="MCPTASK_URL", help="The endpoint: MCP Streamable HTTP, A2A JSON-RPC, or an Agno agent base.", rich_help_panel=TARGET, show_envvar=True)], None),  # noqa: E501
        opt("server", Annotated[str | None, typer.Option("--server", "-s", envvar="MCPTASK_SERVER", help="A named target from the config file.", rich_help_panel=TARGET)], None),  # noqa: E501
        opt("config", Annotated[str | None, typer.Option("--config", envvar="MCPTASK_CONFIG", help="mcptask's config file, or an mcpServers JSON file.", rich_help_panel=TARGET)], None),  # noqa: E501
        opt("stdio", Annotated[str | None, typer.Option("--stdio", help="Spawn an MCP server and talk to it over stdio.", rich_help_panel=TARGET)], None),  # noqa: E501
        opt("protocol", Annotated[str, typer.Option("--protocol", "-p", envvar="MCPTASK_PROTOCOL", help="auto, mcp-2025-11-25, mcp-2026-07-28, a2a-0.3, a2a-1.0 or agno.", rich_help_panel=TARGET)], "auto"),  # noqa: E501
        opt("header", Annotated[list[str] | None, typer.Option("--header", "-H", help="Extra HTTP header 'Name: Value' (repeatable).", rich_help_panel=TARGET)], None),  # noqa: E501
        opt("token_file", Annotated[str | None, typer.Option("--token-file", help="Read the bearer token from this file (or set MCPTASK_TOKEN).", rich_help_panel=TARGET)], None),  # noqa: E501
        opt("session", Annotated[str | None, typer.Option("--session", help="An MCP 2025-11-25 session to reuse.", rich_help_panel=TARGET)], None),  # noqa: E501
        opt("context_id", Annotated[str | None, typer.Option("--context-id", help="The A2A context (Agno requires it).", rich_help_panel=TARGET)], None),  # noqa: E501
        opt("output", Annotated[str, typer.Option("--output", "-o", envvar="MCPTASK_OUTPUT", help="auto, pretty, json or ndjson.", rich_help_panel=OUTPUT)], "auto"),  # noqa: E501
        opt("trace", Annotated[bool, typer.Option("--trace", help="Print every HTTP exchange and JSON-RPC message on stderr (secrets redacted).", rich_help_panel=OUTPUT)], False),  # noqa: E501
    ]


_COMMON = _common_parameters()
_COMMON_NAMES = [p.name for p in _COMMON]


def with_target(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Add the common target/output options to a command; it receives them as `g`."""
    import typing

    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn, localns={"GlobalOptions": object}, include_extras=True)
    own = [
        p.replace(annotation=hints.get(p.name, p.annotation))
        for p in sig.parameters.values()
        if p.name != "g"
    ]

    @functools.wraps(fn)
    def wrapper(**kwargs: Any) -> Any:
        from .app import GlobalOptions

        common = {name: kwargs.pop(name) for name in _COMMON_NAMES}
        common["headers"] = common.pop("header") or []
        return fn(g=GlobalOptions(**common), **kwargs)

    wrapper.__signature__ = sig.replace(parameters=own + _COMMON)  # type: ignore[attr-defined]
    annotations = {p.name: p.annotation for p in own + _COMMON}
    wrapper.__annotations__ = annotations
    del wrapper.__wrapped__  # type: ignore[attr-defined]
    return wrapper


def execute(
    g: GlobalOptions,
    make: Callable[[Context], Coroutine[Any, Any, int]],
    *,
    streaming: bool = False,
) -> None:
    """Run one command: build its context, run it, map any error to its exit status."""
    import asyncio

    from .app import Context
    from .errors import McptaskError, exit_code_for
    from .render import MODES, Output, resolve_mode

    if g.output not in MODES:
        typer.echo(f"mcptask: error: --output must be one of {', '.join(MODES)}", err=True)
        raise typer.Exit(2)
    out = Output(mode=resolve_mode(g.output, sys.stdout, streaming=streaming))
    ctx = Context(g, out)

    async def main() -> int:
        try:
            return await make(ctx)
        finally:
            await ctx.aclose()

    try:
        code = asyncio.run(main())
    except McptaskError as exc:
        message = exc.message + (f" ({exc.hint})" if exc.hint else "")
        out.error(message)
        code = exc.exit_code
    except KeyboardInterrupt:
        out.error("interrupted")
        code = 130
    except BrokenPipeError:
        _quiet_broken_pipe()
        code = 0
    except Exception as exc:  # a bug: one line, the traceback only with --trace
        if g.trace:
            import traceback

            traceback.print_exc()
        out.error(f"internal error: {type(exc).__name__}: {exc}")
        code = exit_code_for(exc)
    raise typer.Exit(code)


def _quiet_broken_pipe() -> None:
    import os

    # the reader went away (`| head -1`): exit quietly, without Python's flush warning
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mcptask {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool | None,
        typer.Option("--version", "-V", callback=_version, is_eager=True, help="Show the version."),
    ] = None,
) -> None:
    """Inspect, follow and collect long-running tasks on MCP servers and A2A agents."""


TaskId = Annotated[str, typer.Argument(help="The task id (put -- before an id that starts with -).")]
Interval = Annotated[
    float | None,
    typer.Option("--interval", help="Poll no faster than every S seconds (a floor; never faster than the server asks)."),  # noqa: E501
]
Timeout = Annotated[float | None, typer.Option("--timeout", help="Give up after S seconds (exit 7).")]
WantResult = Annotated[bool, typer.Option("--result", help="Also print the result when the task ends.")]


@app.command()
@with_target
def get(
    g: GlobalOptions,
    task_id: TaskId,
    history: Annotated[int | None, typer.Option("--history", help="A2A: include at most N history messages.")] = None,  # noqa: E501
) -> None:
    """Fetch a task's status once."""
    from .commands import GetOptions, run_get

    execute(g, lambda ctx: run_get(GetOptions(task_id, history=history), ctx))


@app.command()
@with_target
def watch(
    g: GlobalOptions,
    task_ids: Annotated[list[str], typer.Argument(help="Task ids to follow.")],
    interval: Interval = None,
    timeout: Timeout = None,
    result: WantResult = False,
) -> None:
    """Follow tasks until they end, polling as fast as the server allows and no faster."""
    from .commands import WatchOptions, run_watch

    opts = WatchOptions(task_ids=task_ids, interval=interval, timeout=timeout, want_result=result)
    execute(g, lambda ctx: run_watch(opts, ctx), streaming=True)


@app.command()
@with_target
def result(
    g: GlobalOptions,
    task_id: TaskId,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Fail at once if the task is still running.")] = False,  # noqa: E501
    interval: Interval = None,
    timeout: Timeout = None,
) -> None:
    """Print a task's result, waiting for it to finish."""
    from .commands import ResultOptions, run_result

    opts = ResultOptions(task_id, wait=not no_wait, interval=interval, timeout=timeout)
    execute(g, lambda ctx: run_result(opts, ctx))


@app.command("list")
@with_target
def list_(
    g: GlobalOptions,
    local: Annotated[bool, typer.Option("--local", help="The tasks this machine created or saw.")] = False,  # noqa: E501
) -> None:
    """List the server's tasks (or, with --local, the task book's)."""
    from .commands import ListOptions, run_list

    execute(g, lambda ctx: run_list(ListOptions(local=local), ctx))


@app.command()
@with_target
def cancel(g: GlobalOptions, task_id: TaskId) -> None:
    """Ask the server to cancel a task."""
    from .commands import CancelOptions, run_cancel

    execute(g, lambda ctx: run_cancel(CancelOptions(task_id), ctx))


@app.command()
@with_target
def call(
    g: GlobalOptions,
    tool: Annotated[str, typer.Argument(help="The tool to call.")],
    arguments: Annotated[list[str] | None, typer.Argument(help="k=v (coerced to the schema's type) or k:=JSON.")] = None,  # noqa: E501
    args: Annotated[str | None, typer.Option("--args", help="Arguments as a JSON object.")] = None,
    ttl: Annotated[int | None, typer.Option("--ttl", help="Ask for a ttl in ms (2025-11-25).")] = None,  # noqa: E501
    watch: Annotated[bool, typer.Option("--watch", help="Then watch the task.")] = False,
    result: WantResult = False,
    interval: Interval = None,
    timeout: Timeout = None,
) -> None:
    """Start an MCP tool call as a task."""
    from .commands import CallOptions, run_call

    opts = CallOptions(
        tool=tool,
        pairs=arguments or [],
        args_json=args,
        ttl=ttl,
        watch=watch,
        want_result=result,
        interval=interval,
        timeout=timeout,
    )
    execute(g, lambda ctx: run_call(opts, ctx), streaming=watch)


@app.command()
@with_target
def send(
    g: GlobalOptions,
    text: Annotated[str, typer.Argument(help="The message that starts the A2A task.")],
    watch: Annotated[bool, typer.Option("--watch", help="Then watch the task.")] = False,
    result: WantResult = False,
    interval: Interval = None,
    timeout: Timeout = None,
) -> None:
    """Start an A2A task with a non-blocking message."""
    from .commands import SendOptions, run_send

    opts = SendOptions(text, watch=watch, want_result=result, interval=interval, timeout=timeout)
    execute(g, lambda ctx: run_send(opts, ctx), streaming=watch)


@app.command()
def demo(
    seconds: Annotated[float, typer.Option("--seconds", help="How long the demo task runs.")] = 8.0,
    output: Annotated[str, typer.Option("--output", "-o", envvar="MCPTASK_OUTPUT", help="auto, pretty, json or ndjson.")] = "auto",  # noqa: E501
    trace: Annotated[bool, typer.Option("--trace", help="Print the exchanges on stderr.")] = False,
) -> None:
    """Run an embedded demo task server and watch a task on it."""
    from .app import GlobalOptions
    from .commands import DemoOptions, run_demo

    g = GlobalOptions(output=output, trace=trace, url="http://127.0.0.1")
    execute(g, lambda ctx: run_demo(DemoOptions(seconds=seconds), ctx), streaming=True)


def main(argv: list[str] | None = None) -> int:
    from typer._click import exceptions as click_exc

    args = sys.argv[1:] if argv is None else argv
    try:
        rv = app(args=args, prog_name="mcptask", standalone_mode=False)
    except click_exc.NoSuchOption as exc:
        name = exc.option_name
        # `-kE3x...` is parsed as the short option `-k`: find the whole word
        words = [a for a in args if a.startswith(name) and not a.startswith("--") and len(a) > 2]
        if words:
            word = words[0]
            exc.message = (
                f"No such option: {name}. If {word!r} is a task id, put -- before it: "
                f"mcptask <command> [options] -- {word}"
            )
        exc.show()
        return 2
    except click_exc.ClickException as exc:
        exc.show()
        return exc.exit_code
    except typer.Abort:
        return 130
    return rv if isinstance(rv, int) else 0


def run() -> None:
    sys.exit(main())
