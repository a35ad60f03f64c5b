"""`mcptask list`: the server's tasks, or the task book's (`--local`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ExitCode
from ..model import Task

if TYPE_CHECKING:
    from ..context import Context


@dataclass
class ListOptions:
    local: bool = False


async def run_list(opts: ListOptions, ctx: Context) -> int:
    if opts.local:
        ctx.out.tasks(local_tasks(ctx), title="tasks in the task book")
        return ExitCode.OK
    proto = await ctx.protocol()
    if not proto.can_list:
        ctx.out.note(f"{proto.name} has no method to list tasks; showing the task book's tasks")
        ctx.out.tasks(local_tasks(ctx), title="tasks in the task book")
        return ExitCode.OK
    refs = ctx.refs(ctx.book.tasks(ctx.server)) if ctx.remembers else []
    tasks = await proto.list_tasks(refs)
    ctx.remember_many(list(zip(tasks, ctx.refs(t.taskId for t in tasks), strict=True)))
    ctx.out.tasks(tasks)
    return ExitCode.OK


def local_tasks(ctx: Context) -> list[Task]:
    out = []
    for task_id, rec in ctx.book.tasks(ctx.server).items():
        from ..model import normalize_status

        out.append(
            Task(
                taskId=task_id,
                status=normalize_status(str(rec.get("status", "working"))),
                lastUpdatedAt=rec.get("lastSeenAt"),
                createdAt=rec.get("firstSeenAt"),
                protocol=str(rec.get("protocol", "?")),
                server=ctx.server,
                contextId=rec.get("contextId"),
                raw=rec,
            )
        )
    return out
