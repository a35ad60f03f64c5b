"""`mcptask cancel TASK_ID`: ask the server to cancel a task."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcptask.commands._shared import gone
from mcptask.errors import ExitCode, TaskNotFound

if TYPE_CHECKING:
    from mcptask.session.context import Context


@dataclass
class CancelOptions:
    task_id: str


async def run_cancel(opts: CancelOptions, ctx: Context) -> int:
    ctx, task_id = ctx.places.locate(opts.task_id)
    ctx.places.require_reachable("cancel", [task_id])
    proto = await ctx.endpoint.protocol()
    ref = ctx.places.ref(task_id)
    import time

    from mcptask.protocols.base import ask_cancel

    asked = time.time()
    try:
        task = await ask_cancel(proto, ref)
    except TaskNotFound as exc:
        raise gone(ctx, task_id, exc) from None
    from mcptask.model.events import EventKind, event

    if task is None:
        if ctx.book.lookup(ctx.server, task_id) is not None:
            ctx.places.note(
                task_id, EventKind.CANCEL, message="cancel asked; the server accepted it", at=asked
            )
        ctx.out.note(f"cancellation of task {task_id} requested")
        if not ctx.out.pretty:
            ctx.out.line({"taskId": task_id, "cancelRequested": True})
        return ExitCode.OK
    said = f"cancel asked; the server says it is {task.status}"
    ctx.places.remember(
        task,
        ref,
        events=[event(task.taskId, EventKind.CANCEL, at=asked, status=task.status, message=said)],
    )
    if ctx.out.pretty:
        ctx.out.note(f"task {task.taskId}: cancellation requested")
    ctx.out.task(task, trace=ref.trace)
    return ExitCode.OK
