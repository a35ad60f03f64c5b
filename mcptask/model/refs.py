"""How mcptask reaches a task again: its id, with what the task book remembers of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcptask.protocols.trace_context import TaskTrace


@dataclass
class TaskRef:
    """How to reach a task: its id plus what the task book remembers (session, context)."""

    task_id: str
    session: str | None = None
    context_id: str | None = None
    #: the MCP version agreed when the session was opened (2025 sessions; None: the newest)
    version: str | None = None
    #: the task's trace, carried by every request about it (`protocols.trace_context`)
    trace: TaskTrace | None = None
