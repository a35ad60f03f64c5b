"""The normalized task every protocol module produces (`Task`, a pydantic model); its status
words are `model.status`, its times `model.times`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from mcptask.model.status import TERMINAL, Status
from mcptask.model.times import utc_stamp


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
        for optional in _OPTIONAL:
            if out[optional] is None:
                del out[optional]
        # keep `raw` last, as the contract shows it
        out["raw"] = out.pop("raw")
        return out

    def json_view(self) -> dict[str, Any]:
        """`to_json`'s document for output encoded at once: the same keys in the same order,
        its nested values the task's own, not copies (`list` prints 100,000 tasks)."""
        fields = self.__dict__
        return {k: fields[k] for k in _JSON_ORDER if k not in _OPTIONAL or fields[k] is not None}

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
#: the fields `to_json` leaves out when None, and its order (`raw` last)
_OPTIONAL = frozenset(("inputRequests", "lastSeenAt", "bookNote"))
_JSON_ORDER: tuple[str, ...] = (*(k for k in Task.model_fields if k != "raw"), "raw")
