"""Commands mcptask suggests: each one works when pasted (ids that begin with `-` come after
`--`; anything a shell would split or expand is quoted)."""

from __future__ import annotations

import shlex


def command_line(command: str, *words: str) -> str:
    """`mcptask COMMAND WORD...` as a shell line; task ids after `--` when one starts with -."""
    parts = ["mcptask", *command.split()]
    if any(w.startswith("-") for w in words):
        parts.append("--")
    return " ".join([*parts, *(shlex.quote(w) for w in words)])
