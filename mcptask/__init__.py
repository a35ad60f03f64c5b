"""mcptask: inspect long-running tasks on MCP servers and A2A agents."""

__version__ = "0.1.0"


def interrupted_early(_signum: int, _frame: object) -> None:
    """Ctrl-C while Python imports mcptask, before `cli.main` can catch it: exit 130 at
    once, without a traceback (nothing has started that would need ending). `cli.main` puts
    Python's own handler back first thing."""
    import os

    os._exit(130)


def _catch_early_ctrl_c() -> None:
    # only when mcptask is the program: its console script, or `python -m mcptask` (whose
    # package is imported while argv[0] is still "-m"); never when a test imports it.
    # `_signal`, not `signal`: that one imports enum, ~10 ms
    import sys

    program = sys.argv[0].rsplit("/", 1)[-1] if sys.argv else ""
    if program == "-m":  # which module: `python -m mcptask.demo.server` has Ctrl-C of its own
        original = getattr(sys, "orig_argv", [])
        at = original.index("-m") + 1 if "-m" in original else len(original)
        program = "mcptask" if original[at : at + 1] == ["mcptask"] else ""
    if program != "mcptask":
        return
    import _signal  # type: ignore[import-not-found]

    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, interrupted_early)


_catch_early_ctrl_c()
