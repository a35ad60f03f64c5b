"""`mcptask get TASK_ID`: one status fetch, with what the task book's history knows of it
(since when nothing moved, the pace, a watch elsewhere, retries, a pending question, the ttl)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcptask.commands._shared import look_up
from mcptask.errors import ExitCode

if TYPE_CHECKING:
    from mcptask.session.context import Context


@dataclass
class GetOptions:
    task_id: str
    history: int | None = None


async def run_get(opts: GetOptions, ctx: Context) -> int:
    ctx, task_id = ctx.places.locate(opts.task_id)
    ctx.places.require_reachable("get", [task_id])
    proto = await ctx.endpoint.protocol()
    proto.history_length = opts.history
    task, ref = await look_up(ctx, proto, task_id)
    if not ctx.places.records:
        ctx.out.task(task, trace=ref.trace)
        return ExitCode.OK
    from mcptask.commands._history import book_skew, why_stuck

    info = why_stuck(
        task,
        ctx.book.lookup(ctx.server, task.taskId),
        ctx.book.events(ctx.server, task.taskId),
        skew=book_skew(ctx),
    )
    if not ctx.out.pretty:
        from mcptask.output.console import traced

        shown = traced(task.to_json(), ref.trace)
        raw = shown.pop("raw")
        ctx.out.line({**shown, "history": info, "raw": raw})
        return ExitCode.OK
    ctx.out.task(task, trace=ref.trace)
    if not task.terminal:
        from mcptask.output.history import print_stuck

        print_stuck(ctx.out, info, task.taskId)
    question = info.get("pendingQuestion") or {}
    if task.status == "input_required" and not question.get("formOpenIn"):
        from mcptask.text.command_line import command_line

        ctx.out.note(f"answer it: {command_line('answer', task_id)}")
    return ExitCode.OK
