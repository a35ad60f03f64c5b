"""The normalized task every protocol module produces, and helpers shared by them."""

from __future__ import annotations

import math
from datetime import UTC
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, field_validator

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


class Task(BaseModel):
    """A task in the contract's normalized shape, whatever protocol it came from."""

    model_config = ConfigDict(extra="forbid")

    taskId: str
    status: Status
    statusMessage: str | None = None
    createdAt: str | None = None
    lastUpdatedAt: str | None = None
    ttl: int | None = None
    pollInterval: int | None = None
    protocol: str
    server: str
    contextId: str | None = None
    inputRequests: dict[str, Any] | None = None
    #: the task book's tasks (`list --local`, `why` with the server down): when mcptask last
    #: saw it, and why its status is not the server's word of now
    lastSeenAt: str | None = None
    bookNote: str | None = None
    raw: dict[str, Any]

    @field_validator("createdAt", "lastUpdatedAt", mode="after")
    @classmethod
    def _utc(cls, value: str | None) -> str | None:
        return utc_stamp(value)

    @classmethod
    def trusted(cls, fields: dict[str, Any]) -> Task:
        """A task from fields already checked and normalized by the caller (every field,
        of its type, times through `utc_stamp`): what `model_construct` makes, without its
        cost per field (a list of 100,000 tasks makes 100,000)."""
        task = cls.__new__(cls)
        object.__setattr__(task, "__dict__", fields)
        object.__setattr__(task, "__pydantic_fields_set__", set(_ALL_FIELDS))
        object.__setattr__(task, "__pydantic_extra__", None)
        object.__setattr__(task, "__pydantic_private__", None)
        return task

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def to_json(self) -> dict[str, Any]:
        out = self.model_dump()
        for optional in ("inputRequests", "lastSeenAt", "bookNote"):
            if out[optional] is None:
                del out[optional]
        # keep `raw` last, as the contract shows it
        out["raw"] = out.pop("raw")
        return out

    def same_state(self, other: Task | None) -> bool:
        """Whether `other` shows the same status and message (timestamps are not a change:
        some servers stamp `lastUpdatedAt` on every read)."""
        return (
            other is not None
            and other.status == self.status
            and other.statusMessage == self.statusMessage
            and other.inputRequests == self.inputRequests
        )


_ALL_FIELDS: frozenset[str] = frozenset(Task.model_fields)


def normalize_status(word: str) -> Status:
    """MCP's status words; an unrecognised word counts as `working` (kept in `raw`)."""
    w = word.strip().lower().replace("-", "_")
    if w == "canceled":
        w = "cancelled"
    if w in STATUSES:
        return w  # type: ignore[return-value]
    return "working"


#: the longest span in milliseconds taken from a server as it is (about 31,700 years): beyond it
#: an integer (JSON allows 400 digits) is no float, and no clock reaches it anyway
MAX_MS = 10**15


def ms_seconds(ms: int) -> float:
    """A server's milliseconds (a ttl) as seconds, within [0, MAX_MS / 1000]."""
    return min(max(ms, 0), MAX_MS) / 1000


def epoch(stamp: object, *, naive_utc: bool = False) -> float | None:
    """An ISO 8601 time as seconds since the epoch; None when it is none, not a time, out of
    range, or has no zone (`naive_utc`: then it is read as UTC, as the task book writes)."""
    if not isinstance(stamp, str) or not stamp:
        return None
    from datetime import datetime

    try:
        then = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
        if then.tzinfo is None:
            if not naive_utc:
                return None
            then = then.replace(tzinfo=UTC)
        value = then.timestamp()
    except (ValueError, OverflowError, OSError):
        return None
    return value if math.isfinite(value) else None


#: the latest instant shown as a date (a server's ttl of 1e999 ms lands past any calendar)
LAST_DATE = 253402300799.0  # 9999-12-31T23:59:59Z


def iso(at: float) -> str:
    """Seconds since the epoch as ISO 8601 UTC with milliseconds (within year 1 to 9999)."""
    from datetime import datetime

    at = min(max(at, -62135596800.0), LAST_DATE) if at == at else LAST_DATE
    stamp = datetime.fromtimestamp(at, tz=UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


#: times already put in one format (`utc_stamp`): a watch sees the same few again and again
_STAMPS: dict[str, str] = {}


def utc_stamp(value: str | None) -> str | None:
    """A server's ISO 8601 time in one format, UTC with `Z` (`2026-12-01T14:57:56.075Z`;
    fractions of a second kept to the millisecond), whatever offset or spelling it came with;
    text that is no ISO 8601 time with a zone is kept as it came (`raw` has the original)."""
    if not value or len(value) > 64:
        return value
    known = _STAMPS.get(value)
    if known is None:
        if len(_STAMPS) >= 4096:
            _STAMPS.clear()
        known = _STAMPS[value] = _utc_stamp(value)
    return known


def _utc_stamp(value: str) -> str:
    from datetime import datetime

    try:
        then = datetime.fromisoformat(value.strip().replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        return value
    if then.tzinfo is None:
        return value
    try:
        then = then.astimezone(UTC)
    except (OverflowError, ValueError):
        return value
    stamp = then.strftime("%Y-%m-%dT%H:%M:%S")
    if then.microsecond:
        stamp += f".{then.microsecond // 1000:03d}"
    return stamp + "Z"
