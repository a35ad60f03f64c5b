"""`mcptask list`: the server's tasks, or the task book's (`--local`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.errors import ExitCode
from mcptask.model import Task

if TYPE_CHECKING:
    from mcptask.session.context import Context


#: listed tasks recorded in the task book per transaction
RECORD_BATCH = 5000


@dataclass
class ListOptions:
    local: bool = False


async def run_list(opts: ListOptions, ctx: Context) -> int:
    if opts.local and not ctx.has_target():
        _whole_book(ctx)
        return ExitCode.OK
    if opts.local:
        ctx.out.tasks(local_tasks(ctx), title="tasks in the task book")
        return ExitCode.OK
    from mcptask.protocols.base import CannotList

    proto = await ctx.endpoint.protocol()
    if not proto.can_list:
        ctx.out.note(f"{proto.name} has no method to list tasks; showing the task book's tasks")
        ctx.out.tasks(local_tasks(ctx), title="tasks in the task book")
        return ExitCode.OK
    from mcptask.protocols.base import TaskRef

    known = ctx.places.known()  # every task the book knows there, in one read
    refs = ctx.places.refs_from(known, known)
    # and the sessions where a task may exist that the book does not know (a lost answer)
    refs += [TaskRef("", session=s) for s in ctx.places.orphan_sessions()]
    # -o ndjson passes each page on as it comes (a line per task); the other outputs need
    # the whole list. Either way the tasks are recorded by the batch, their references from
    # the read above (not read again), and each batch let go once written
    streaming = ctx.out.mode == "ndjson"
    tasks: list[Task] = []
    batch: list[Task] = []
    count = 0

    def record() -> None:
        listed = ctx.places.refs_from([t.taskId for t in batch], known)
        ctx.places.remember_many(list(zip(batch, listed, strict=True)), via="listed")
        batch.clear()

    try:
        async for page in proto.list_pages(refs):
            count += len(page)
            batch.extend(page)
            if streaming:
                ctx.out.tasks(page)
            else:
                tasks.extend(page)
            if len(batch) >= RECORD_BATCH:
                record()
    except CannotList as exc:  # the server turned out not to list after all
        ctx.out.note(f"{exc.message}; showing the task book's tasks")
        ctx.out.tasks(local_tasks(ctx), title="tasks in the task book")
        return ExitCode.OK
    if batch:
        record()
    if not streaming:
        ctx.out.tasks(tasks)
    if proto.list_cut:
        ctx.out.note(f"the list is cut short: {proto.list_cut}; showing {count} tasks")
    return ExitCode.OK


def _whole_book(ctx: Context) -> None:
    """`list --local` without a target: every endpoint's tasks, grouped by server."""
    by_server = {
        server: book_tasks(ep.get("tasks") or {}, server)
        for server, ep in ctx.book.all_endpoints().items()
    }
    if not ctx.out.pretty:
        ctx.out.tasks([t for tasks in by_server.values() for t in tasks])
        return
    if not any(by_server.values()):
        ctx.out.tasks([], title="tasks in the task book")
    for server, tasks in by_server.items():
        if tasks:
            ctx.out.tasks(tasks, title=f"tasks in the task book on {server}")


def local_tasks(ctx: Context) -> list[Task]:
    return book_tasks(ctx.book.tasks(ctx.server), ctx.server)


def book_tasks(records: dict[str, dict[str, Any]], server: str) -> list[Task]:
    """The task book's records of one endpoint as normalized tasks."""
    from mcptask.model import normalize_status

    out = []
    for task_id, rec in records.items():
        out.append(
            Task(
                taskId=task_id,
                status=normalize_status(str(rec.get("status", "working"))),
                lastUpdatedAt=rec.get("lastSeenAt"),
                createdAt=rec.get("firstSeenAt"),
                protocol=str(rec.get("protocol", "?")),
                server=server,
                contextId=rec.get("contextId"),
                raw=rec,
            )
        )
    return out
