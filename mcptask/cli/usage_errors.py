"""Click's usage errors in mcptask's one style: one line, what is wrong and where help is."""

from __future__ import annotations

import difflib
import re
from typing import Any


def one_line(exc: Any, args: list[str] | None = None) -> str:
    """`get needs TASK_ID (mcptask get -h)`, `no such option: --ur; did you mean --url?
    (mcptask get -h)`. `args`: the command line (where Click gives no context)."""
    from mcptask.cli.framework import click_exceptions as click_exc

    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        path = ctx.command_path
    elif args and not args[0].startswith("-"):
        path = f"mcptask {args[0]}"
    else:
        path = "mcptask"
    command = path.removeprefix("mcptask").strip()
    hint = f"({path} -h)"
    if isinstance(exc, click_exc.MissingParameter) and exc.param is not None:
        param = exc.param
        opts = [o for o in getattr(param, "opts", []) if o.startswith("-")]
        if opts:
            what = max(opts, key=len)
        else:
            what = str(getattr(param, "metavar", None) or param.name or "").upper()
        return f"{command or 'mcptask'} needs {what} {hint}"
    if isinstance(exc, click_exc.NoSuchOption):
        message = exc.message  # Click's words (or mcptask's own), without its guesses
        # the closest by likeness (Click lists its guesses alphabetically: `--untill` got
        # `--notify` before `--until`)
        close = difflib.get_close_matches(exc.option_name, list(exc.possibilities or ()), n=1)
        if close:
            message = f"{message.rstrip('.')}; did you mean {close[0]}?"
        return f"{_lower(message)} {hint}"
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    unknown = re.match(r"No such command '([^']*)'", message)
    if unknown and ctx is not None:
        # one suggestion, the closest (Click's list put `auth` beside `watch` for `wacth`)
        message = unknown.group(0) + _closest_command(ctx, unknown.group(1))
    message = message.rstrip(".").replace(". Did you mean", "; did you mean")
    return f"{_lower(message)} {hint}"


def _closest_command(ctx: Any, name: str) -> str:
    commands = list(getattr(ctx.command, "commands", {}) or {})
    close = difflib.get_close_matches(name, commands, n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def _lower(message: str) -> str:
    """Click's sentences start with a capital; mcptask's errors do not."""
    one = " ".join(message.split())
    return one[:1].lower() + one[1:] if one[:2] != one[:2].upper() else one
