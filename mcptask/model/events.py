"""The vocabulary of the task book's event log: what mcptask can observe about a task, each
kind with what it carries. Events are appended, never changed; `mcptask log ID` prints them.

Every event has: `at` (seconds since the epoch when mcptask saw it, or did it), `server_at`
(when it happened on the server's clock, where the server said: a status change at the task's
`lastUpdatedAt`, its creation at `createdAt`; None where the server gave no time), `kind`
(below), `via` (`poll`, `push` or `listed`, where it says how the news came), `status`,
`message`, `command` (which mcptask command saw it) and `data` (a small JSON object; the
server's `lastUpdatedAt` and `pollInterval` where given, a retry's delay and error, a result's
size...)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class EventKind(StrEnum):
    """What a task's story records (`mcptask log` prints them; schema `log-event`). A
    member is its string: the book stores and compares the plain word."""

    #: the task was seen for the first time (its status and message then)
    CREATED = "created"
    #: its status changed
    STATUS = "status"
    #: its status message changed (same status)
    MESSAGE = "message"
    #: the server's poll interval changed (same status and message)
    PACE = "pace"
    #: a progress notification (progress, total, message)
    PROGRESS = "progress"
    #: the task asks for input: the request(s), by key
    QUESTION = "question"
    #: an answer was sent (keys), and whether the server took it
    ANSWER = "answer"
    #: the result was fetched (its size in bytes, kept or not)
    RESULT = "result"
    #: a cancel was asked (and what the server said)
    CANCEL = "cancel"
    #: a request about the task failed (the error) and is retried after a delay
    RETRY = "retry"
    #: a request failed for good (the error)
    ERROR = "error"
    #: the push stream carrying the task opened / was lost
    PUSH_OPEN = "push-open"
    PUSH_LOST = "push-lost"
    #: a watch ended following the task (its outcome)
    END = "end"
    #: the server refused an answer (its reason)
    ANSWER_REFUSED = "answer-refused"
    #: a question was dismissed without an answer (and what mcptask sent instead: a cancel)
    DISMISSED = "dismissed"
    #: the server no longer knows a task it knew (expired, purged)
    EXPIRED = "expired"
    #: the task can no longer be reached (a stdio server that exited): its last status is kept
    LOST = "lost"
    #: a push notification config was created or deleted (`push set`, `--push-receiver`)
    PUSH_CONFIG = "push-config"
    #: a message of the task's own history (A2A) that arrived between two looks
    HISTORY = "history"
    #: an artifact grew (A2A): its id, name, parts and bytes so far, whether it was the last chunk
    ARTIFACT = "artifact"
    #: messages of the task's history that the server no longer holds (a gap the log cannot fill)
    HISTORY_GAP = "history-gap"


#: every kind (the log's readers and its schema know no other)
KINDS: frozenset[str] = frozenset(EventKind)

#: events kept per task (the oldest after the first are dropped beyond it)
MAX_EVENTS_PER_TASK = 5000
#: characters of a message or error kept in an event
MAX_TEXT = 2000


def event(
    task_id: str,
    kind: str,
    *,
    at: float | None = None,
    server_at: float | None = None,
    via: str | None = None,
    status: str | None = None,
    message: str | None = None,
    **data: Any,
) -> dict[str, Any]:
    """One event for the book (`TaskBook.record_many(..., events=[...])`); `data`'s None
    values are left out. `kind` is an `EventKind` (or its word; the log's readers and its
    schema know no other)."""
    if kind not in KINDS:
        raise ValueError(f"not an event kind: {kind!r}")
    out: dict[str, Any] = {"task": task_id, "kind": kind}
    if at is not None:
        out["at"] = at
    if server_at is not None:
        out["server_at"] = server_at
    if via is not None:
        out["via"] = via
    if status is not None:
        out["status"] = status
    if message is not None:
        out["message"] = message[:MAX_TEXT]
    extra = {k: v for k, v in data.items() if v is not None}
    if extra:
        out["data"] = extra
    return out
