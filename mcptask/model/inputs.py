"""What a task asks of its client (`InputRequest`, `TEXT_FORM` where a question has no form of
its own), and what answering it did (`Answered`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcptask.model.task import Task

#: the schema of a form with one free-text field (A2A questions, which carry no schema)
TEXT_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "title": "Answer"}},
    "required": ["text"],
}


@dataclass
class InputRequest:
    """One thing a task asks of its client, as the server sent it: an `elicitation/create`
    (MCP; `params` holds `message` and `requestedSchema`) or an A2A question (the agent's
    status message, with the one-field `TEXT_FORM`)."""

    task_id: str
    method: str
    params: dict[str, Any]
    #: how the server names it: the 2026-07-28 `inputRequests` key, the 2025-11-25 JSON-RPC
    #: request id (as text); None for A2A
    key: str | None = None
    #: the answer may be `decline` or `cancel` (MCP); an A2A agent only takes an answer
    can_decline: bool = True
    #: who asks, for a person ("tool echo"); None: the task (`task <id>`)
    asker: str | None = None

    @property
    def who(self) -> str:
        return self.asker or f"task {self.task_id}"

    @property
    def message(self) -> str:
        text = self.params.get("message")
        return text if isinstance(text, str) else ""

    @property
    def schema(self) -> dict[str, Any]:
        schema = self.params.get("requestedSchema")
        return schema if isinstance(schema, dict) else {"type": "object", "properties": {}}

    @property
    def answerable(self) -> bool:
        """mcptask answers elicitations (forms, and URL ones by accept/decline/cancel)."""
        return self.method == "elicitation/create"


@dataclass
class Answered:
    """What `answer` did."""

    #: the requests answered, each with the answer sent
    sent: list[tuple[InputRequest, dict[str, Any]]] = field(default_factory=list)
    #: the person dismissed a question (nothing was sent, or `cancel` where a question that
    #: has been read cannot be left unanswered: MCP 2025-11-25)
    dismissed: bool = False
    #: the task as the server showed it in its answer, when it sent one (A2A)
    task: Task | None = None
    #: remarks for the person (requests skipped or refused), one line each
    notes: list[str] = field(default_factory=list)
    #: the server started a new task for the answer instead of continuing this one (A2A)
    new_task: Task | None = None

    @property
    def keys(self) -> list[str]:
        """Keys of the requests answered, for the task book (never sent twice)."""
        return [req.key for req, _ in self.sent if req.key is not None]
