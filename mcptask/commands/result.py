"""`mcptask result TASK_ID`: print a task's result, waiting while it runs; a result kept in the
task book outlives the task on the server."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.commands._shared import gone, signals
from mcptask.errors import (
    OUTCOME_EXIT,
    ExitCode,
    NotApplicable,
    ProtocolError,
    TaskEnded,
    TaskNotFound,
    TransportError,
)
from mcptask.model.status import INTERRUPTED, TERMINAL
from mcptask.model.task import Task
from mcptask.text.command_line import command_line

if TYPE_CHECKING:
    from mcptask.commands._save import SaveTo
    from mcptask.model.refs import TaskRef
    from mcptask.model.results import TaskResult
    from mcptask.protocols.base import TaskProtocol
    from mcptask.session.context import Context


@dataclass
class ResultOptions:
    task_id: str
    wait: bool = True
    interval: float | None = None
    timeout: float | None = None
    #: `--save DIR`: the result's parts as files, and the manifest instead of the result
    save: SaveTo | None = None


async def run_result(opts: ResultOptions, ctx: Context) -> int:
    """`--timeout` bounds every phase (finding the protocol, the first look-up, the wait, the
    result fetch): each request's timeouts shrink to what is left of it."""
    ctx, task_id = ctx.places.locate(opts.task_id)
    if ctx.target.command is not None and task_id not in ctx.places.seen:
        # a stdio server's task died with its process: its result, if the book kept it
        rec = ctx.book.lookup(ctx.server, task_id)
        if rec is not None and "result" in rec:
            return await _kept_result(
                ctx, task_id, TaskNotFound(task_id), gone_from="its server", save=opts.save
            )
    ctx.places.require_reachable("result", [task_id])
    if opts.timeout is None:
        return await _result(opts, ctx, task_id, None)
    from mcptask.transports.rpc import HasDeadline

    deadline = time.monotonic() + opts.timeout
    transport = ctx.endpoint.rpc().transport
    if isinstance(transport, HasDeadline):
        transport.set_deadline(deadline)
    try:
        return await _result(opts, ctx, task_id, deadline)
    except TransportError as exc:
        if time.monotonic() < deadline - 0.05:
            raise
        raise TaskEnded(
            f"task {task_id}: --timeout {opts.timeout:g} s elapsed ({exc.message})",
            ExitCode.TIMEOUT,
        ) from None


async def _result(opts: ResultOptions, ctx: Context, task_id: str, deadline: float | None) -> int:
    from mcptask.protocols.base import read_status
    from mcptask.scheduler.watcher import WatchConfig, Watcher

    proto = await ctx.endpoint.protocol()
    ref = ctx.places.ref(task_id)
    try:
        task = await read_status(proto, ref)
    except TaskNotFound as exc:
        return await _kept_result(ctx, task_id, exc, save=opts.save)
    ctx.places.remember(task, ref, via="poll")
    if task.status not in TERMINAL:
        if task.status in INTERRUPTED:
            raise TaskEnded(
                f"task {task.taskId} is waiting for input ({task.status}); "
                f"answer it with `{command_line('answer', task.taskId)}`",
                OUTCOME_EXIT[task.status],
            )
        if not opts.wait:
            raise NotApplicable(f"task {task.taskId} is still {task.status} (--no-wait)")
        watcher = Watcher(
            fetch=proto.get,
            fetch_result=proto.result,
            config=WatchConfig(
                floor=opts.interval or 0.0,
                default_interval=proto.default_interval,
                timeout=opts.timeout if deadline is None else deadline - time.monotonic(),
                want_result=True,
            ),
            events=_Quiet(),
            clock=ctx.clock,
            sleep=ctx.sleep,
        )
        with signals(watcher):
            w = watcher.add(ref, task)
            await watcher.run()
        if w.task is not None:
            task = w.task
            ctx.places.remember(task, ref, via="poll")
        if w.outcome == "timeout":
            raise TaskEnded(
                f"task {task.taskId} is still {task.status} (--timeout)", ExitCode.TIMEOUT
            )
        if w.outcome == "interrupted":
            raise TaskEnded("interrupted", w.exit_code or ExitCode.INTERRUPTED)
        if w.outcome == "expired":
            return await _kept_result(
                ctx, task_id, TaskNotFound(f"task {task_id} expired"), save=opts.save
            )
        if w.outcome == "error":
            raise TaskEnded(
                w.last_error or "the server stopped answering", w.exit_code or ExitCode.SERVER
            )
        if task.status in INTERRUPTED:
            raise TaskEnded(
                f"task {task.taskId} is waiting for input ({task.status}); "
                f"answer it with `{command_line('answer', task.taskId)}`",
                OUTCOME_EXIT[task.status],
            )
        if w.result is not None:
            return await _print_result(ctx, ref, w.result, opts.save)
    return await finished_result(ctx, proto, ref, task, save=opts.save)


async def finished_result(
    ctx: Context, proto: TaskProtocol, ref: TaskRef, task: Task, *, save: SaveTo | None = None
) -> int:
    """Print the result of a task seen in a terminal state (exit code by its outcome); with
    `save`, write its files and print what was written."""
    if task.status in ("cancelled", "rejected"):
        raise TaskEnded(
            f"task {task.taskId} was {task.status}; it has no result", ExitCode.CANCELLED
        )
    return await _print_result(ctx, ref, await proto.result(ref, task), save)


class _Quiet:
    def update(self, w: Any, via: str) -> None:
        pass

    def retry(self, w: Any, error: str, delay: float) -> None:
        pass

    def end(self, w: Any) -> None:
        pass


async def _print_result(
    ctx: Context, ref: TaskRef, result: TaskResult, save: SaveTo | None = None
) -> int:
    import json

    from mcptask.model.events import EventKind, event

    payload = result.to_json()
    size = len(json.dumps(payload, default=str)) if ctx.places.records else None
    fetched = event(
        result.task.taskId,
        EventKind.RESULT,
        status=result.task.status,
        bytes=size,
        broken=result.broken or None,
    )
    ctx.places.remember(result.task, ref, **result.kept(), events=[fetched])
    if result.source is not None:
        ctx.out.note(f"task {result.task.taskId}: the answer is {result.source}")
    if save is not None and result.error is None:
        from mcptask.commands import _save

        _save.show(ctx, await _save.save(ctx, result.task.taskId, result.payload, save))
    else:
        ctx.out.result(result)
    if result.broken:
        ctx.out.note(
            f"task {result.task.taskId} says completed, but the server answered its result "
            f"with an error ({result.error_message})"
        )
    return result.exit_code


async def _kept_result(
    ctx: Context,
    task_id: str,
    exc: TaskNotFound,
    *,
    gone_from: str = "the server",
    save: SaveTo | None = None,
) -> int:
    rec = ctx.book.lookup(ctx.server, task_id) if ctx.places.records else None
    if rec is None:
        raise exc
    if "result" not in rec:
        raise gone(ctx, task_id, exc)
    kept = rec["result"]
    error = _kept_error(rec)
    if error is not None and not isinstance(error, dict):
        raise ProtocolError(
            f"the task book's result for task {task_id} is damaged (its error is not an object)"
        )
    status = str(rec.get("status", "completed"))
    ctx.out.note(
        f"task {task_id} is gone from {gone_from}; showing the result kept at "
        f"{rec.get('resultKeptAt', '?')}"
    )
    if save is not None and error is None:
        from mcptask.commands import _save

        _save.show(ctx, await _save.save(ctx, task_id, kept, save))
    elif ctx.out.pretty:
        from mcptask.model.results import TaskResult

        placeholder = Task(
            taskId=task_id, status="completed", protocol="?", server=ctx.server, raw={}
        )
        ctx.out.result(TaskResult(task=placeholder, payload=None if error else kept, error=error))
    else:
        ctx.out.line(rec["result"])
    return OUTCOME_EXIT.get(status, ExitCode.OK)


def _kept_error(rec: dict[str, Any]) -> Any:
    """The error that answered a kept result (mcptask's own record of it), or None when the
    kept result is the server's data, whatever its shape (`TaskResult.kept`). A book written
    before `resultKind` tells them apart by shape: mcptask's record is `{"error": {...}}`,
    so an `error` that is not an object is the server's data."""
    kept = rec.get("result")
    kind = rec.get("resultKind")
    if kind == "payload":
        return None
    if not (isinstance(kept, dict) and len(kept) == 1 and "error" in kept):
        return None
    if kind == "error":
        return kept["error"]
    return kept["error"] if isinstance(kept["error"], dict) else None
