"""A task's status words: the normalized `Status`, which words end a task or wait for its
client, and a server's word read as one of them. Pure (no pydantic): the task book, `log`
and a TAB use these without the `Task` model."""

from __future__ import annotations

from typing import Literal, get_args

Status = Literal[
    "submitted",
    "working",
    "input_required",
    "auth_required",
    "completed",
    "failed",
    "cancelled",
    "rejected",
    # mcptask's own word, never a server's: the task book's last status of a task that can no
    # longer be reached (a stdio server that has exited)
    "unknown",
]

#: the statuses a server's word can become
STATUSES: frozenset[str] = frozenset(get_args(Status)) - {"unknown"}
TERMINAL: frozenset[str] = frozenset(("completed", "failed", "cancelled", "rejected"))
#: the task waits for the client: a watch without a way to answer ends here
INTERRUPTED: frozenset[str] = frozenset(("input_required", "auth_required"))


def normalize_status(word: str) -> Status:
    """MCP's status words; an unrecognised word counts as `working` (kept in `raw`)."""
    w = word.strip().lower().replace("-", "_")
    if w == "canceled":
        w = "cancelled"
    if w in STATUSES:
        return w  # type: ignore[return-value]
    return "working"
