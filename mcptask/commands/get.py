"""`mcptask get TASK_ID`: one status fetch."""

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
    ctx, task_id = ctx.locate(opts.task_id)
    ctx.require_reachable("get", [task_id])
    proto = await ctx.protocol()
    proto.history_length = opts.history
    task, _ = await look_up(ctx, proto, task_id)
    ctx.out.task(task)
    if ctx.out.pretty and task.status == "input_required":
        from mcptask.text.command_line import command_line

        ctx.out.note(f"answer it: {command_line('answer', task_id)}")
    return ExitCode.OK
