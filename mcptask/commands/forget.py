"""`mcptask forget ID...` / `mcptask forget --endpoint URL`: drop tasks (with their history and
kept results) or a whole endpoint from the task book. The server is not asked anything."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcptask.errors import ExitCode, TaskNotFound, UsageError

if TYPE_CHECKING:
    from mcptask.session.context import Context


@dataclass
class ForgetOptions:
    task_ids: list[str] = field(default_factory=list)
    endpoint: str | None = None


async def run_forget(opts: ForgetOptions, ctx: Context) -> int:
    if bool(opts.task_ids) == bool(opts.endpoint):
        raise UsageError("forget needs task ids or --endpoint URL (one of them)")
    book = ctx.book
    if opts.endpoint is not None:
        if not book.has_endpoint(opts.endpoint):
            raise TaskNotFound(f"the task book has no endpoint {opts.endpoint}")
        tasks = book.forget_endpoint(opts.endpoint)
        _done(
            ctx,
            {"endpoint": opts.endpoint, "tasks": tasks},
            f"forgot {opts.endpoint} and its {tasks} task(s)",
        )
        return ExitCode.OK
    forgotten = []
    from mcptask.commands._shared import in_book

    for place, ids in in_book(ctx, opts.task_ids, "task"):
        for task_id in ids:
            if place.book.forget(place.server, task_id):
                forgotten.append({"taskId": task_id, "server": place.server})
    if not forgotten and book.write_error is not None:
        raise UsageError(f"cannot forget: the task book cannot be written ({book.write_error})")
    if not forgotten:
        raise TaskNotFound(f"the task book has no task {', '.join(opts.task_ids)}")
    _done(ctx, {"forgotten": forgotten}, f"forgot {len(forgotten)} task(s)")
    return ExitCode.OK


def _done(ctx: Context, data: dict[str, object], words: str) -> None:
    if ctx.out.pretty:
        ctx.out.console.print(words, markup=False)
    else:
        ctx.out.line(data)
