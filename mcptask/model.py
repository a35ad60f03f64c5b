"""The normalized task every protocol module produces, and helpers shared by them."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

Status = Literal[
    "submitted",
    "working",
    "input_required",
    "auth_required",
    "completed",
    "failed",
    "cancelled",
    "rejected",
]

STATUSES: frozenset[str] = frozenset(get_args(Status))
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
    raw: dict[str, Any]

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def to_json(self) -> dict[str, Any]:
        out = self.model_dump()
        if out["inputRequests"] is None:
            del out["inputRequests"]
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


def normalize_status(word: str) -> Status:
    """MCP's status words; an unrecognised word counts as `working` (kept in `raw`)."""
    w = word.strip().lower().replace("-", "_")
    if w == "canceled":
        w = "cancelled"
    if w in STATUSES:
        return w  # type: ignore[return-value]
    return "working"
