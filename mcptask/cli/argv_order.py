"""The command line before Click reads it: target and output options given before the command
(`mcptask --url U list`) are moved after it (`mcptask list --url U`), and the words that may
be task ids are told apart from mistyped options."""

from __future__ import annotations

import re
from collections.abc import Collection

#: a task id that begins with `-` (fastmcp-tasks makes url-safe random ids, 43 characters):
#: one dash, then at least five id characters
_DASHED_ID = re.compile(r"-[A-Za-z0-9_][A-Za-z0-9_-]{4,}")


def hoist(
    args: list[str], options: dict[str, bool] | None = None, groups: Collection[str] = ()
) -> list[str]:
    """`[--url, U, list, --local]` -> `[list, --url, U, --local]`: common options before the
    command word go right after it (after its subcommand for a command in `groups`: `auth
    login --url U`). Anything else before the command (`--help`, `--version`, an unknown
    option) leaves the line as it is, for Click to answer."""
    if options is None:
        # the global options' one table: the Typer parameters of `cli/options.py`
        from mcptask.cli.options import COMMON_OPTIONS

        options = COMMON_OPTIONS
    moved: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--" or not word.startswith("-") or word == "-":
            break
        name, eq, _ = word.partition("=")
        takes_value = _takes_value(name if eq else word, options)
        if takes_value is None:
            return args  # not one of ours: Click says what it is
        if takes_value and not eq and _attached(word, options) is None:
            if i + 1 >= len(args):
                return args  # its value is missing: Click says so
            moved += args[i : i + 2]
            i += 2
        else:
            moved.append(word)
            i += 1
    if not moved or i >= len(args) or args[i] == "--":
        return args
    words = 2 if args[i] in groups and i + 1 < len(args) else 1
    return [*args[i : i + words], *moved, *args[i + words :]]


def _takes_value(word: str, options: dict[str, bool]) -> bool | None:
    if word in options:
        return options[word]
    attached = _attached(word, options)
    return True if attached is not None else None


def _attached(word: str, options: dict[str, bool]) -> str | None:
    """`-uhttp://…`: a short option with its value attached; the option, else None."""
    if len(word) > 2 and not word.startswith("--") and options.get(word[:2]) is True:
        return word[:2]
    return None


def looks_like_task_id(word: str) -> bool:
    """Whether a word Click took for an unknown option may be a task id that begins with `-`
    (then the error says to put `--` before it)."""
    return bool(_DASHED_ID.fullmatch(word))
