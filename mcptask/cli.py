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


# -- shell completion: every TAB runs the program, so this stays quick and never imports httpx --


def _completion_url(ctx: typer.Context) -> str | None:
    """The endpoint the command would reach, as far as the words typed so far (and MCPTASK_URL,
    MCPTASK_SERVER, the config's default) tell: None when unknown, "" for a stdio server (whose
    tasks die with it, so the task book has none)."""
    from types import SimpleNamespace
    from typing import cast

    from .targets import choose, pick

    p = ctx.params
    names = ("url", "stdio", "server", "config")
    opts = cast("GlobalOptions", SimpleNamespace(**{name: p.get(name) for name in names}))
    try:
        kind, value, _ = choose(opts)
        if kind == "server":
            return pick(opts, value).url or ""
    except Exception:  # no target yet, or a broken config file: every endpoint's ids
        return None
    return value if kind == "url" else ""


def _complete_task_ids(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Task ids from the task book (only the target's when it is known), most recently seen
    first."""
    from .taskbook import TaskBook, endpoint_key

    book = TaskBook()
    if not book.path.is_file():
        return []
    url = _completion_url(ctx)
    endpoints = book.all_endpoints()
    if url is not None:
        key = endpoint_key(url)
        endpoints = {key: endpoints[key]} if key in endpoints else {}
    typed = set(ctx.params.get("task_ids") or ())
    found: dict[str, tuple[str, str, str]] = {}
    for key, ep in endpoints.items():
        tasks = ep.get("tasks") if isinstance(ep, dict) else None
        for task_id, rec in (tasks if isinstance(tasks, dict) else {}).items():
            if not task_id.startswith(incomplete) or task_id in typed or not isinstance(rec, dict):
                continue
            seen = str(rec.get("lastSeenAt", ""))
            if task_id not in found or seen > found[task_id][0]:
                found[task_id] = (seen, str(rec.get("status", "?")), key)
    ranked = sorted(found.items(), key=lambda kv: kv[1][0], reverse=True)
    return [(task_id, f"{status} on {key}") for task_id, (_, status, key) in ranked]


def config_server_names(config: str | None) -> list[tuple[str, str]]:
    """Completion for `-s/--server`: (name, what it is) for each server in the config file
    (`--config`, else MCPTASK_CONFIG, else the default path)."""
    from urllib.parse import urlsplit

    from .config import load

    names = []
    for name, entry in sorted(load(config).servers.items()):
        if entry.url:
            u = urlsplit(entry.url)  # no userinfo, query or fragment: never a secret
            what = f"{u.scheme}://{u.hostname or ''}{f':{u.port}' if u.port else ''}{u.path}"
        else:
            what = "stdio: " + (entry.command or ["?"])[0]
        names.append((name, what))
    return names


def _complete_servers(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    try:
        names = config_server_names(ctx.params.get("config"))
    except Exception:  # a missing or broken config file completes nothing
        return []
    return [(name, what) for name, what in names if name.startswith(incomplete)]


def _common_parameters() -> list[inspect.Parameter]:
    def opt(name: str, annotation: Any, default: Any) -> inspect.Parameter:
        return inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
        )

    return [
        # MCPTASK_URL, MCPTASK_SERVER and MCPTASK_CONFIG are read by targets/config, not by Typer:
        # a target flag must beat a target variable of the other kind, and a missing --config
        # file is an error where a missing $MCPTASK_CONFIG file is not
        opt(
            "url",
            Annotated[
                str | None,
                typer.Option(
                    "--url",
                    "-u",
                    help="The endpoint: MCP Streamable HTTP, A2A JSON-RPC, or an Agno agent base. [env var: MCPTASK_URL]",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "server",
            Annotated[
                str | None,
                typer.Option(
                    "--server",
                    "-s",
                    help="A named target from the config file (see `mcptask servers`). [env var: MCPTASK_SERVER]",
                    rich_help_panel=TARGET,
                    autocompletion=_complete_servers,
                ),
            ],
            None,
        ),
        opt(
            "config",
            Annotated[
                str | None,
                typer.Option(
                    "--config",
                    help="mcptask's TOML config file, or an mcpServers/servers JSON file. [env var: MCPTASK_CONFIG]",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "stdio",
            Annotated[
                str | None,
                typer.Option(
                    "--stdio",
                    help="Spawn an MCP server and talk to it over stdio.",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "protocol",
            Annotated[
                str,
                typer.Option(
                    "--protocol",
                    "-p",
                    envvar="MCPTASK_PROTOCOL",
                    help="auto, mcp-2025-11-25, mcp-2026-07-28, a2a-0.3, a2a-1.0 or agno.",
                    rich_help_panel=TARGET,
                ),
            ],
            "auto",
        ),
        opt(
            "header",
            Annotated[
                list[str] | None,
                typer.Option(
                    "--header",
                    "-H",
                    help="Extra HTTP header 'Name: Value' (repeatable).",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "token_file",
            Annotated[
                str | None,
                typer.Option(
                    "--token-file",
                    help="Read the bearer token from this file (or set MCPTASK_TOKEN).",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "session",
            Annotated[
                str | None,
                typer.Option(
                    "--session", help="An MCP 2025-11-25 session to reuse.", rich_help_panel=TARGET
                ),
            ],
            None,
        ),
        opt(
            "context_id",
            Annotated[
                str | None,
                typer.Option(
                    "--context-id",
                    help="The A2A context (Agno requires it).",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "output",
            Annotated[
                str,
                typer.Option(
                    "--output",
                    "-o",
                    envvar="MCPTASK_OUTPUT",
                    help="auto, pretty, json or ndjson.",
                    rich_help_panel=OUTPUT,
                ),
            ],
            "auto",
        ),
        opt(
            "trace",
            Annotated[
                bool,
                typer.Option(
                    "--trace",
                    help="Print every HTTP exchange and JSON-RPC message on stderr (secrets redacted).",
                    rich_help_panel=OUTPUT,
                ),
            ],
            False,
        ),
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
    del wrapper.__wrapped__
    return wrapper


def execute(
    g: GlobalOptions,
    make: Callable[[Context], Coroutine[Any, Any, int]],
    *,
    streaming: bool = False,
    one_at_a_time: bool = False,
    loop_free: bool = False,
) -> None:
    """Run one command: build its context, run it, map any error to its exit status.
    `one_at_a_time`: the command makes one request at a time (a blocking HTTP connection is
    cheaper than the async pool for that). `loop_free`: it never waits, either (no sleeps, no
    streams): over HTTP it runs without an event loop."""
    from .app import Context
    from .errors import McptaskError, exit_code_for
    from .render import MODES, Output, resolve_mode

    if g.output not in MODES:
        typer.echo(f"mcptask: error: --output must be one of {', '.join(MODES)}", err=True)
        raise typer.Exit(2)
    out = Output(mode=resolve_mode(g.output, sys.stdout, streaming=streaming))
    ctx = Context(g, out)
    ctx.one_at_a_time = one_at_a_time

    async def main() -> int:
        try:
            return await make(ctx)
        finally:
            await ctx.aclose()

    try:
        if loop_free and ctx.target.command is None:
            code = _run_without_loop(main())
        else:
            import asyncio

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
    out.save_recording()
    raise typer.Exit(code)


def _run_without_loop(coro: Coroutine[Any, Any, int]) -> int:
    """A one-shot command over a blocking connection never suspends: run its coroutine to the
    end directly (importing asyncio alone costs ~11 ms of start-up; bench/startup.py)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return int(stop.value)
    coro.close()
    raise RuntimeError("a one-shot command waited on the event loop")


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


TaskId = Annotated[
    str,
    typer.Argument(
        help="The task id (put -- before an id that starts with -).",
        autocompletion=_complete_task_ids,
    ),
]
Interval = Annotated[
    float | None,
    typer.Option(
        "--interval",
        help="Poll no faster than every S seconds (a floor; never faster than the server asks).",
    ),
]
Timeout = Annotated[
    float | None, typer.Option("--timeout", help="Give up after S seconds (exit 7).")
]
WantResult = Annotated[
    bool, typer.Option("--result", help="Also print the result when the task ends.")
]
NoPush = Annotated[
    bool, typer.Option("--no-push", help="Poll only; ignore updates the server pushes.")
]


@app.command()
@with_target
def get(
    g: GlobalOptions,
    task_id: TaskId,
    history: Annotated[
        int | None, typer.Option("--history", help="A2A: include at most N history messages.")
    ] = None,
) -> None:
    """Fetch a task's status once."""
    from .commands import GetOptions, run_get

    execute(
        g,
        lambda ctx: run_get(GetOptions(task_id, history=history), ctx),
        one_at_a_time=True,
        loop_free=True,
    )


@app.command()
@with_target
def watch(
    g: GlobalOptions,
    task_ids: Annotated[
        list[str] | None,
        typer.Argument(help="Task ids to follow.", autocompletion=_complete_task_ids),
    ] = None,
    all_tasks: Annotated[
        bool,
        typer.Option(
            "--all", help="Every unfinished task the server lists or the task book knows."
        ),
    ] = False,
    interval: Interval = None,
    timeout: Timeout = None,
    result: WantResult = False,
    no_push: NoPush = False,
) -> None:
    """Follow tasks until they end: updates the server pushes at once, polls as a safety net."""
    from .commands import WatchOptions, run_watch

    opts = WatchOptions(
        task_ids=task_ids or [],
        interval=interval,
        timeout=timeout,
        want_result=result,
        push=not no_push,
        all_tasks=all_tasks,
    )
    execute(g, lambda ctx: run_watch(opts, ctx), streaming=True)


@app.command()
@with_target
def result(
    g: GlobalOptions,
    task_id: TaskId,
    no_wait: Annotated[
        bool, typer.Option("--no-wait", help="Fail at once if the task is still running.")
    ] = False,
    interval: Interval = None,
    timeout: Timeout = None,
) -> None:
    """Print a task's result, waiting for it to finish."""
    from .commands import ResultOptions, run_result

    opts = ResultOptions(task_id, wait=not no_wait, interval=interval, timeout=timeout)
    execute(g, lambda ctx: run_result(opts, ctx), one_at_a_time=True)


@app.command("list")
@with_target
def list_(
    g: GlobalOptions,
    local: Annotated[
        bool, typer.Option("--local", help="The tasks this machine created or saw.")
    ] = False,
) -> None:
    """List the server's tasks (or, with --local, the task book's)."""
    from .commands import ListOptions, run_list

    execute(
        g, lambda ctx: run_list(ListOptions(local=local), ctx), one_at_a_time=True, loop_free=True
    )


@app.command()
@with_target
def cancel(g: GlobalOptions, task_id: TaskId) -> None:
    """Ask the server to cancel a task."""
    from .commands import CancelOptions, run_cancel

    execute(
        g, lambda ctx: run_cancel(CancelOptions(task_id), ctx), one_at_a_time=True, loop_free=True
    )


@app.command()
@with_target
def answer(
    g: GlobalOptions,
    task_id: TaskId,
    json_content: Annotated[
        str | None,
        typer.Option(
            "--json", help="The answer: a JSON object of the form's fields (checked against it)."
        ),
    ] = None,
    decline: Annotated[
        bool, typer.Option("--decline", help="Decline what the server asks (MCP).")
    ] = False,
    cancel: Annotated[
        bool, typer.Option("--cancel", help="Dismiss the question without a choice (MCP).")
    ] = False,
    text: Annotated[
        str | None,
        typer.Option("--text", help="The answer as text (A2A; or a form with one text field)."),
    ] = None,
    key: Annotated[
        str | None,
        typer.Option("--key", help="Which input request to answer when several wait (MCP 2026)."),
    ] = None,
) -> None:
    """Answer a task that waits for input: a form on a terminal, else --json, --decline,
    --cancel or --text; then confirm that the task moved on."""
    from .commands import AnswerOptions, run_answer

    opts = AnswerOptions(
        task_id, json=json_content, decline=decline, cancel=cancel, text=text, key=key
    )
    execute(g, lambda ctx: run_answer(opts, ctx))


@app.command()
@with_target
def call(
    g: GlobalOptions,
    tool: Annotated[str, typer.Argument(help="The tool to call.")],
    arguments: Annotated[
        list[str] | None, typer.Argument(help="k=v (coerced to the schema's type) or k:=JSON.")
    ] = None,
    args: Annotated[str | None, typer.Option("--args", help="Arguments as a JSON object.")] = None,
    ttl: Annotated[
        int | None, typer.Option("--ttl", help="Ask for a ttl in ms (2025-11-25).")
    ] = None,
    watch: Annotated[bool, typer.Option("--watch", help="Then watch the task.")] = False,
    result: WantResult = False,
    interval: Interval = None,
    timeout: Timeout = None,
    no_push: NoPush = False,
) -> None:
    """Start an MCP tool call as a task."""
    from .commands import CallOptions, FollowUp, run_call

    then = FollowUp(watch, want_result=result, interval=interval, timeout=timeout, push=not no_push)
    opts = CallOptions(tool=tool, pairs=arguments or [], args_json=args, ttl=ttl, then=then)
    execute(g, lambda ctx: run_call(opts, ctx), streaming=watch, one_at_a_time=not watch)


@app.command()
@with_target
def send(
    g: GlobalOptions,
    text: Annotated[str, typer.Argument(help="The message that starts the A2A task.")],
    watch: Annotated[bool, typer.Option("--watch", help="Then watch the task.")] = False,
    result: WantResult = False,
    interval: Interval = None,
    timeout: Timeout = None,
    no_push: NoPush = False,
) -> None:
    """Start an A2A task with a non-blocking message."""
    from .commands import FollowUp, SendOptions, run_send

    then = FollowUp(watch, want_result=result, interval=interval, timeout=timeout, push=not no_push)
    opts = SendOptions(text, then=then)
    execute(g, lambda ctx: run_send(opts, ctx), streaming=watch, one_at_a_time=not watch)


@app.command()
@with_target
def check(
    g: GlobalOptions,
    arguments: Annotated[
        list[str] | None,
        typer.Argument(help="The task tool's arguments: k=v (coerced to its schema) or k:=JSON."),
    ] = None,
    tool: Annotated[
        str | None,
        typer.Option(
            "--tool",
            help="The tool whose tasks are examined (default: the first that allows tasks; required on MCP 2026-07-28).",
        ),
    ] = None,
    failing_tool: Annotated[
        str | None,
        typer.Option(
            "--failing-tool",
            help="A tool known to fail, for the failed-task checks (default: one named fail/error).",
        ),
    ] = None,
    failing_args: Annotated[
        str | None,
        typer.Option("--failing-args", help="The failing tool's arguments as a JSON object."),
    ] = None,
    check_ids: Annotated[
        list[str] | None,
        typer.Option("--check", help="Run only this check (repeatable; a prefix selects several)."),
    ] = None,
    category: Annotated[
        list[str] | None,
        typer.Option(
            "--category",
            help="Run only this category (repeatable): capability, creation, status, result, cancel, list, errors, session, wire, card, update, stream, security.",
        ),
    ] = None,
    rpc: Annotated[
        bool, typer.Option("--rpc", help="Show the messages each check exchanged.")
    ] = False,
    junit: Annotated[
        str | None, typer.Option("--junit", help="Also write the results as JUnit XML to FILE.")
    ] = None,
    task_timeout: Annotated[
        float, typer.Option("--task-timeout", help="How long to wait for a task to end (seconds).")
    ] = 60.0,
) -> None:
    """Check the target's task support against the spec: PASS/WARN/FAIL/INFO/SKIP per check
    (exit 0 passed, 5 a check failed, 10 incomplete)."""
    from .check import CheckOptions, run_check

    opts = CheckOptions(
        tool=tool,
        pairs=arguments or [],
        failing_tool=failing_tool,
        failing_args=failing_args,
        checks=check_ids or [],
        categories=category or [],
        rpc=rpc,
        junit=junit,
        task_timeout=task_timeout,
    )
    execute(g, lambda ctx: run_check(opts, ctx))


@app.command()
def servers(
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            help="mcptask's TOML config file, or an mcpServers/servers JSON file. [env var: MCPTASK_CONFIG]",
        ),
    ] = None,
    output: Annotated[
        str,
        typer.Option(
            "--output", "-o", envvar="MCPTASK_OUTPUT", help="auto, pretty, json or ndjson."
        ),
    ] = "auto",
) -> None:
    """List the named servers in the config file (never a secret)."""
    from .app import GlobalOptions
    from .serverlist import run_servers

    execute(GlobalOptions(config=config, output=output), run_servers)


@app.command()
def demo(
    seconds: Annotated[float, typer.Option("--seconds", help="How long the demo task runs.")] = 8.0,
    output: Annotated[
        str,
        typer.Option(
            "--output", "-o", envvar="MCPTASK_OUTPUT", help="auto, pretty, json or ndjson."
        ),
    ] = "auto",
    trace: Annotated[bool, typer.Option("--trace", help="Print the exchanges on stderr.")] = False,
) -> None:
    """Run an embedded demo task server and watch a task on it."""
    from .app import GlobalOptions
    from .commands import DemoOptions, run_demo

    g = GlobalOptions(output=output, trace=trace, url="http://127.0.0.1")
    execute(g, lambda ctx: run_demo(DemoOptions(seconds=seconds), ctx), streaming=True)


def main(argv: list[str] | None = None) -> int:
    import os

    from typer._click import exceptions as click_exc

    # mcptask uses pydantic for its own wire models only: scanning the installed packages for
    # pydantic plugins costs ~9 ms of every command's start-up (bench/startup.py)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

    args = sys.argv[1:] if argv is None else argv
    try:
        rv = _app_for(args)(args=args, prog_name="mcptask", standalone_mode=False)
    except click_exc.NoSuchOption as exc:
        name = exc.option_name
        # `-kE3x...` is parsed as the short option `-k`: find the whole word
        words = [a for a in args if a.startswith(name) and len(a) > 2]
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


def _app_for(args: list[str]) -> typer.Typer:
    """Typer builds every command's parameters (a pydantic adapter each) before it runs one:
    for a plain `mcptask COMMAND ...` only that command is built (start-up time; see
    bench/startup.py). Help for all commands and shell completion use the whole app."""
    import os

    if not args or any(k.startswith("_MCPTASK_COMPLETE") for k in os.environ):
        return app
    for info in app.registered_commands:
        name = info.name or (info.callback.__name__ if info.callback else "")
        if name.replace("_", "-") == args[0]:
            one = typer.Typer(
                name="mcptask",
                add_completion=False,
                context_settings=app.info.context_settings,
                rich_markup_mode=None,
                pretty_exceptions_enable=False,
            )
            one.registered_callback = app.registered_callback
            one.registered_commands = [info]
            return one
    return app


def run() -> None:
    sys.exit(main())
