"""`mcptask why TASK_ID`: why a task may look stuck. The server is asked once; when it cannot be
reached (the commonest reason a task looks stuck), the answer comes from the task book: the last
status and message it saw, the pending question, retries and the last error, with the connection
error as the first reason; the exit status is then the error's (4), as `get`'s would be."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.commands._shared import look_up
from mcptask.errors import ExitCode, McptaskError, TaskNotFound, is_transient

if TYPE_CHECKING:
    from mcptask.model.task import Task
    from mcptask.session.context import Context


@dataclass
class WhyOptions:
    task_id: str


async def run_why(opts: WhyOptions, ctx: Context) -> int:
    from mcptask.commands._history import book_skew, why_stuck

    ctx, task_id = ctx.places.locate(opts.task_id)
    record = ctx.book.lookup(ctx.server, task_id) if ctx.places.records else None
    failure: McptaskError | None = None
    try:
        ctx.places.require_reachable("why", [task_id])
        proto = await ctx.endpoint.protocol()
        task, _ = await look_up(ctx, proto, task_id)
        record = ctx.book.lookup(ctx.server, task_id) if ctx.places.records else None
    except TaskNotFound:
        raise
    except McptaskError as exc:
        if record is None or not (is_transient(exc) or exc.exit_code == ExitCode.SERVER):
            raise
        failure = exc
        task = _from_book(ctx, task_id, record)
    info = why_stuck(
        task,
        record,
        ctx.book.events(ctx.server, task_id) if ctx.places.records else [],
        skew=book_skew(ctx),
        unreachable=failure.message if failure is not None else None,
    )
    source = "book" if failure is not None else "server"
    trace = ctx.places.trace(task_id, record)  # the look's, else the book's
    if not ctx.out.pretty:
        from mcptask.output.console import traced

        shown = traced(task.to_json(), trace)
        raw = shown.pop("raw")
        ctx.out.line({**shown, "source": source, "history": info, "raw": raw})
    else:
        from mcptask.output.history import print_stuck

        if failure is not None:
            ctx.out.note(
                f"the server cannot be reached; this is what the task book last saw of task "
                f"{task_id} ({task.lastSeenAt or 'when unknown'})"
            )
        ctx.out.task(task, trace=trace)
        print_stuck(ctx.out, info, task.taskId)
    if failure is not None:
        failure.hint = None  # `why` is what the hint would have suggested
        raise failure
    return ExitCode.OK


def _from_book(ctx: Context, task_id: str, record: dict[str, Any]) -> Task:
    from mcptask.commands.list import book_task

    return book_task(task_id, record, ctx.server)
