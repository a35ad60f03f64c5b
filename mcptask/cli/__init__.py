"""The command line: parse, call a run function, print. `run` is the console script."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping

from mcptask import interrupted_early
from mcptask.errors import ExitCode, ctrl_c_inside

#: answered before Typer and the commands are even imported (bench/startup.py)
VERSION_FLAGS = (["--version"], ["-V"])


def main(argv: list[str] | None = None) -> int:
    """The command line; Ctrl-C before the command runs (while Python and Typer start) is
    exit 130 without a traceback, as it is once the command runs (`runner.execute`)."""
    try:
        if signal.getsignal(signal.SIGINT) is interrupted_early:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        _standard_streams()
        code = _main(argv)
        sys.stdout.flush()  # what is still buffered fails here, not in the interpreter's exit
        return code
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except RuntimeError as exc:
        if ctrl_c_inside(exc):
            return ExitCode.INTERRUPTED
        raise
    except OSError as exc:
        # output written outside a command's run (`--version`, help), or left in the buffer
        return _unwritten(exc)


def _unwritten(exc: OSError) -> int:
    """An error writing stdout outside a command's run, as within one (`runner.output_exit`);
    anything else is raised again."""
    from mcptask.cli.runner import output_exit

    def say(message: str) -> None:
        sys.stderr.write(f"mcptask: error: {message}\n")
        sys.stderr.flush()

    code = output_exit(exc, say)
    if code is None:
        raise exc
    return code


def _standard_streams() -> None:
    """Standard streams the shell closed (`<&-`, `>&-`, `2>&-`), which Python makes None.
    Their descriptors are opened on /dev/null first, so that no file mcptask opens (the task
    book, a state file) takes descriptor 1 or 2 and gets what is meant for a terminal. Then
    stdin reads nothing; stderr is a sink (nothing can be said, the exit status stays the
    same); stdout fails every write with EBADF, reported as any output that cannot be
    written is (`cannot write the output`, exit 2), as coreutils report a closed stdout."""
    names = ("stdin", "stdout", "stderr")
    if all(getattr(sys, name) is not None for name in names):
        return
    for fd in range(3):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    # open for the whole run, as Python's own streams are (SIM115: not in a `with`)
    if sys.stdin is None:
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    if sys.stderr is None:
        sink = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        sys.stderr = sink
    if sys.stdout is None:
        from mcptask.output.closed import ClosedStream

        sys.stdout = ClosedStream("standard output is closed")


def _main(argv: list[str] | None = None, *, quick: bool = True) -> int:
    """`main`'s work. `quick`: a plain `get` runs before Typer is imported (False: through
    Typer, as every other line: tests hold the two to the same reading)."""
    words = sys.argv[1:] if argv is None else argv
    if words in VERSION_FLAGS:
        from mcptask import __version__

        sys.stdout.write(f"mcptask {__version__}\n")
        return ExitCode.OK

    bad = _not_utf8(words, os.environ)
    if bad is not None:
        sys.stderr.write(f"mcptask: error: {bad} (mcptask -h)\n")
        return ExitCode.USAGE

    if "_MCPTASK_COMPLETE" in os.environ:
        # TAB on a task id: answered from the task book before Typer is imported
        answered = _quick_completion()
        if answered is not None:
            text, status = answered
            if text is not None:
                sys.stdout.write(text + "\n")
            return status

    # mcptask uses pydantic for its own wire models only: scanning the installed packages for
    # pydantic plugins costs ~9 ms of every command's start-up (bench/startup.py)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

    if quick and not any(k.startswith("_MCPTASK_COMPLETE") for k in os.environ):
        # a plain `get ID`: run before Typer is imported (cli/quick_get.py)
        from mcptask.cli.quick_get import run as run_quick

        code = run_quick(words, os.environ)
        if code is not None:
            return code

    import typer

    from mcptask.cli.app import _app_for, app
    from mcptask.cli.argv_order import hoist, looks_like_task_id
    from mcptask.cli.framework import click_exceptions as click_exc
    from mcptask.cli.help_layout import HELP_ALL, SHOW_ALL
    from mcptask.cli.options import COMMON_OPTIONS

    # `mcptask --url U list` is `mcptask list --url U`
    # commands with subcommands (`auth`): options go after the subcommand
    groups = {
        str(g.name or (g.typer_instance.info.name if g.typer_instance else ""))
        for g in app.registered_groups
    }
    args = hoist(words, groups=groups)
    if HELP_ALL in args[: args.index("--") if "--" in args else len(args)]:
        SHOW_ALL[0] = True  # the shared options too, each explained
        args = ["--help" if a == HELP_ALL else a for a in args]
    if (
        "_MCPTASK_COMPLETE" in os.environ
        or "--show-completion" in args
        or ("--install-completion" in args)
    ):
        from mcptask.cli.complete import use_bash_script

        use_bash_script()
    try:
        rv = _app_for(args)(args=args, prog_name="mcptask", standalone_mode=False)
    except click_exc.NoSuchOption as exc:
        name = exc.option_name
        # `-kE3x...` is parsed as the short option `-k`: find the whole word
        words = [a for a in args if a.startswith(name) and looks_like_task_id(a)]
        if words:
            word = words[0]
            exc.message = (
                f"no such option: {name}. If {word!r} is a task id, put -- before it: "
                f"mcptask <command> [options] -- {word}"
            )
        elif args and not args[0].startswith("-") and name in COMMON_OPTIONS:
            exc.message = f"no such option: {name} (`mcptask {args[0]}` does not take it)"
        return _usage_error(exc, args)
    except click_exc.NoArgsIsHelpError as exc:
        exc.show()  # `mcptask auth`: its help
        return exc.exit_code
    except click_exc.UsageError as exc:
        return _usage_error(exc, args)
    except click_exc.ClickException as exc:
        exc.show()
        return exc.exit_code
    except typer.Abort:
        return ExitCode.INTERRUPTED
    except SystemExit as exc:
        # Typer ends a line whose output's reader went away (help into a closed pipe) with
        # exit 1, as Click does; mcptask's way is exit 0, quietly, as for any command
        if isinstance(exc.__context__, BrokenPipeError):
            return _unwritten(exc.__context__)
        raise
    return rv if isinstance(rv, int) else ExitCode.OK


def _not_utf8(words: list[str], environ: Mapping[str, str]) -> str | None:
    """What holds a byte that is not UTF-8 text (Python keeps such bytes as lone surrogates,
    U+DC80-U+DCFF), in words, else None: an argument (a task id, a value) or one of mcptask's
    environment variables (MCPTASK_STATE_DIR, MCPTASK_CONFIG...). Such text can be neither
    sent, nor stored in the task book, nor printed as JSON: refused as a usage error."""
    for n, word in enumerate(words, 1):
        if _has_escaped_byte(word):
            return f"argument {n} ({_shown(word)}) has a byte that is not UTF-8 text"
    for name in sorted(environ):
        if name.startswith("MCPTASK_") and _has_escaped_byte(environ[name]):
            return f"{name} ({_shown(environ[name])}) has a byte that is not UTF-8 text"
    return None


def _has_escaped_byte(text: str) -> bool:
    return not text.isascii() and any("\udc80" <= c <= "\udcff" for c in text)


def _shown(text: str) -> str:
    """`text` with its undecodable bytes as \\xNN and nothing that moves a terminal."""
    raw = text.encode("utf-8", "surrogateescape")
    shown = repr(raw)[2:-1]
    return shown if len(shown) <= 80 else shown[:79] + "…"


def _quick_completion() -> tuple[str | None, int] | None:
    from mcptask.cli.quick_complete import answer

    try:
        return answer()
    except Exception:  # whatever went wrong, Typer's completion answers instead
        return None


def _usage_error(exc: Exception, args: list[str]) -> int:
    """Click's usage errors (four lines: usage, a hint, a blank, `Error: ...`) as mcptask's
    one line, with where help is: `mcptask: error: get needs TASK_ID (mcptask get -h)`."""
    from mcptask.cli.usage_errors import one_line

    sys.stderr.write(f"mcptask: error: {one_line(exc, args)}\n")
    sys.stderr.flush()
    return ExitCode.USAGE


def run() -> None:
    try:
        code = main()
    except KeyboardInterrupt:  # between `main` returning and here
        code = ExitCode.INTERRUPTED
    except RuntimeError as exc:
        if not ctrl_c_inside(exc):
            raise
        code = ExitCode.INTERRUPTED
    sys.exit(code)
