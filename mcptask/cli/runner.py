"""Running one command: build its context, run it, and turn what it raised into one line on
stderr and the exit status (`errors.exit_code_for` is the one mapping)."""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from mcptask.errors import ExitCode

if TYPE_CHECKING:
    from mcptask.output.jq import JqFilter
    from mcptask.session.context import Context
    from mcptask.session.targets import GlobalOptions


def execute(
    g: GlobalOptions,
    make: Callable[[Context], Coroutine[Any, Any, int]],
    *,
    streaming: bool = False,
    one_at_a_time: bool = False,
    loop_free: bool = False,
    many_reads: Callable[[Context], bool] | None = None,
) -> None:
    """`run_command` for a command Typer runs: its exit status is Typer's `Exit`."""
    import typer

    from mcptask.cli.framework import get_current_context

    current_click = get_current_context(silent=True)
    raise typer.Exit(
        run_command(
            g,
            make,
            command=current_click.info_name if current_click is not None else None,
            streaming=streaming,
            one_at_a_time=one_at_a_time,
            loop_free=loop_free,
            many_reads=many_reads,
        )
    )


def run_command(
    g: GlobalOptions,
    make: Callable[[Context], Coroutine[Any, Any, int]],
    *,
    command: str | None,
    streaming: bool = False,
    one_at_a_time: bool = False,
    loop_free: bool = False,
    many_reads: Callable[[Context], bool] | None = None,
) -> int:
    """Run one command (`command`: its name, as typed): build its context, run it, map any
    error to its exit status, which it returns. Imports no Typer (`cli/quick_get.py`).
    `one_at_a_time`: the command makes one request at a time (a blocking HTTP connection is
    cheaper than the async pool for that). `loop_free`: it never waits, either (no sleeps, no
    streams): over HTTP it runs without an event loop. `many_reads`: whether, for this
    context, the command will make so many reads (`list`'s pages) that the event loop and
    the poll pool's lean connections cost less than one blocking request after another."""
    from mcptask.errors import McptaskError, ctrl_c_inside
    from mcptask.output.console import MODES, Output, resolve_mode
    from mcptask.session.context import Context

    if g.output not in MODES:
        sys.stderr.write(f"mcptask: error: --output must be one of {', '.join(MODES)}\n")
        sys.stderr.flush()
        return ExitCode.USAGE
    from mcptask.session.terminal import current

    env = current()
    # --jq filters JSON: on a terminal too, the output is JSON
    terminal = env.stdout_tty and g.jq is None
    out = Output(mode=resolve_mode(g.output, terminal, streaming=streaming))
    try:
        out.jq = jq_filter(g)
    except McptaskError as exc:
        out.error(exc.message)
        return exc.exit_code
    ctx = Context(g, out, env=env)
    ctx.one_at_a_time = one_at_a_time
    ctx.command = command

    async def main() -> int:
        _quiet_interrupted_tasks()
        try:
            code = await make(ctx)
            ctx.succeeded()
            return code
        finally:
            await ctx.aclose()

    try:
        # over HTTP (and task ids found in the task book are always on HTTP endpoints)
        # (the target is resolved only by a command that can run loop-free: `servers` lists
        # a config whose targets may not resolve, a token variable unset)
        if many_reads is not None and _over_http(ctx) and many_reads(ctx):
            loop_free = ctx.one_at_a_time = False
            ctx.many_tasks = True
        if loop_free and _over_http(ctx):
            code = _run_without_loop(main())
        else:
            import asyncio

            code = asyncio.run(main())
    except McptaskError as exc:
        message = exc.message + (f" ({exc.hint})" if exc.hint else "")
        out.error(message)
        code = exc.exit_code
    except KeyboardInterrupt:
        code = _interrupted(out)
    except OSError as exc:
        handled = output_exit(exc, out.error)
        if handled is None:
            return _unexpected(exc, g.trace, out)
        code = handled
    except Exception as exc:  # a bug: one line, the traceback only with --trace
        if not ctrl_c_inside(exc):
            return _unexpected(exc, g.trace, out)
        code = _interrupted(out)  # Ctrl-C met while a module imported (Python wraps it)
    if out.jq is not None:
        code = _finish_jq(out.jq, out, code)
    out.save_recording()
    return code


def _interrupted(out: Any) -> int:
    if out.interrupted:
        out.note(out.interrupted)
    else:
        out.error("interrupted")
    return ExitCode.INTERRUPTED


def _quiet_interrupted_tasks() -> None:
    """A task that Ctrl-C ended (KeyboardInterrupt raised inside it) is not a bug to dump:
    asyncio would print `Task exception was never retrieved` and a traceback after mcptask's
    own `interrupted` line. Everything else still goes to asyncio's handler. (A run without
    an event loop has not even imported asyncio: nothing to do.)"""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return

    def handler(loop: Any, context: dict[str, Any]) -> None:
        if isinstance(context.get("exception"), KeyboardInterrupt | SystemExit):
            return
        loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


def _finish_jq(jq: JqFilter, out: Any, code: int) -> int:
    """What the jq worker was handed while the loop ran is printed before the exit (an
    interrupted run ends it instead); a jq error or Ctrl-C meanwhile is the run's outcome."""
    from mcptask.errors import McptaskError

    if code == ExitCode.INTERRUPTED:
        jq.close(kill=True)
        return code
    try:
        jq.finish()
    except McptaskError as exc:
        out.error(exc.message)
        return code or exc.exit_code
    except KeyboardInterrupt:
        out.error("interrupted")
        return ExitCode.INTERRUPTED
    except OSError as exc:  # what the worker met writing the output
        handled = output_exit(exc, out.error)
        if handled is None:
            raise
        return code or handled
    return code


def jq_filter(g: GlobalOptions) -> JqFilter | None:
    """`--jq EXPR`, compiled before anything is sent (a bad program is a usage error)."""
    if g.jq is None:
        return None
    from mcptask.errors import UsageError
    from mcptask.output.jq import JqFilter

    if g.output == "pretty":
        raise UsageError("--jq filters JSON output: it cannot go with -o pretty")
    return JqFilter(g.jq)


#: errors writing the output that are the disk's, not mcptask's (EBADF: `output_failure`)
_OUTPUT_ERRNOS = frozenset(
    getattr(errno, name)
    for name in ("ENOSPC", "EDQUOT", "EFBIG", "EIO", "EROFS")
    if hasattr(errno, name)
)


def output_failure(exc: OSError) -> bool:
    """Whether an error is the output's, not a bug's: a full, failing or read-only disk
    (`_OUTPUT_ERRNOS`); EBADF, which any descriptor can raise, only when stdout itself cannot
    be written (closed by the shell, `>&-`, or open for reading only, `1</dev/null`)."""
    if exc.errno == errno.EBADF:
        return not _stdout_writable()
    return exc.errno in _OUTPUT_ERRNOS


def _stdout_writable() -> bool:
    import os

    from mcptask.output.closed import ClosedStream

    if isinstance(sys.stdout, ClosedStream):  # closed by the shell (`cli._standard_streams`)
        return False
    try:
        import fcntl

        fd = sys.stdout.fileno()
    except (ImportError, OSError, ValueError):  # no fcntl (Windows), no file: no telling
        return True
    try:
        return fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY
    except OSError:  # a descriptor closed meanwhile
        return False


def output_exit(exc: OSError, say: Callable[[str], None]) -> int | None:
    """The exit status of an error writing the output, None when it is not the output's (a
    bug's): the reader went away (`| head -1`: exit 0, quietly), or the output cannot be
    written (`output_failure`: said once with `say`, exit 2). Either way what is still
    buffered for stdout goes to /dev/null, so that the interpreter's flush at exit does not
    fail again (exit 120)."""
    from mcptask.errors import exit_code_for

    if isinstance(exc, BrokenPipeError):
        quiet_output()
        return exit_code_for(exc)
    if not output_failure(exc):
        return None
    quiet_output()
    say(f"cannot write the output: {exc.strerror or exc}")
    return ExitCode.USAGE


def _unexpected(exc: BaseException, trace: bool, out: Any) -> int:
    """A bug: one line, the traceback only with --trace; its exit status."""
    from mcptask.errors import exit_code_for

    if trace:
        import traceback

        traceback.print_exception(exc)
    out.error(f"internal error: {type(exc).__name__}: {exc}")
    return exit_code_for(exc)


def _over_http(ctx: Context) -> bool:
    """The command's target is reached over HTTP (task ids found in the task book are always
    on HTTP endpoints), not a stdio server's process."""
    return not ctx.has_target() or ctx.target.command is None


def _run_without_loop(coro: Coroutine[Any, Any, int]) -> int:
    """A one-shot command over a blocking connection never suspends: run its coroutine to the
    end directly (importing asyncio alone costs ~11 ms of start-up; bench/startup.py)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return int(stop.value)
    coro.close()
    raise RuntimeError("a one-shot command waited on the event loop")


def quiet_output() -> None:
    """Stdout's descriptor on /dev/null: the reader went away (`| head -1`) or the output
    cannot be written, and mcptask exits quietly, without Python's flush warning at exit."""
    import os

    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):  # no descriptor (a closed stdout: `output.closed`)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
