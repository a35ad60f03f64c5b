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

    if not sys.argv or sys.argv[0].rsplit("/", 1)[-1] not in ("mcptask", "-m"):
        return
    import _signal  # type: ignore[import-not-found]

    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, interrupted_early)


_catch_early_ctrl_c()
