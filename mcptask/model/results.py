"""What a task yields: its result once finished (`TaskResult`), and what starting one got back
(`Created`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcptask.model.refs import TaskRef
    from mcptask.model.task import Task


@dataclass
class TaskResult:
    """A finished task's payload: the tool result / artifacts, or the JSON-RPC error."""

    task: Task
    payload: Any = None
    error: dict[str, Any] | None = None
    #: where the answer came from when not where the protocol puts it, for a person
    source: str | None = None

    def to_json(self) -> Any:
        if self.error is not None:
            return {"error": self.error}
        return self.payload

    def kept(self) -> dict[str, Any]:
        """The task book's fields for this result: `result` (as `to_json`), and `resultKind`
        saying whether it is the server's data (`payload`) or mcptask's record of the error
        that answered it (`error`): a payload may well be `{"error": "boom"}` itself."""
        return {"result": self.to_json(), "resultKind": "error" if self.error else "payload"}

    @property
    def broken(self) -> bool:
        """The task says `completed` but the server answered its result with an error: the
        result could not be had (exit 4, never 0)."""
        return self.error is not None and self.task.status == "completed"

    @property
    def error_message(self) -> str:
        err = self.error
        if isinstance(err, dict):
            return f"server error {err.get('code')}: {err.get('message', '')}"
        return str(err)

    @property
    def exit_code(self) -> int:
        """The exit status of a command that prints this result: by the task's status, 4 when
        the result is `broken`."""
        from mcptask.errors import OUTCOME_EXIT, ExitCode

        return ExitCode.SERVER if self.broken else OUTCOME_EXIT.get(self.task.status, ExitCode.OK)


@dataclass
class Created:
    """What `call` / `send` got back: a task, or (2026-07-28) a plain result."""

    task: Task | None
    result: Any = None
    ref: TaskRef | None = None
    extra: dict[str, Any] = field(default_factory=dict)
