"""What `call`, `send` and `demo` do once a task exists: print it, or watch it, or wait for its
result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.errors import ExitCode
from mcptask.model.task import Task

if TYPE_CHECKING:
    from mcptask.protocols.trace_context import TaskTrace
    from mcptask.session.context import Context


@dataclass
class FollowUp:
    """What `call` and `send` do once the task exists: print it, watch it, wait for its
    result."""

    watch: bool = False
    want_result: bool = False
    interval: float | None = None
    timeout: float | None = None
    push: bool = True
    #: `--push-receiver` (`commands._webhook.PushReceiver`)
    receiver: Any = None
    #: `--otlp`: the watch exports each task's story as it ends (`export.live`)
    otlp: bool = False


def how_to_reach(ctx: Context, task_id: str, ref: Any, why: str) -> str:
    """A task the book could not record can still be reached: with what the book would have
    kept (the session, the context) on the command line."""
    flags = [f"--url {ctx.server}"]
    if ref.session:
        flags.append(f"--session {ref.session}")
    if ref.context_id:
        flags.append(f"--context-id {ref.context_id}")
    return (
        f"task {task_id} is not in the task book ({why}): reach it with "
        f"`mcptask get {task_id} {' '.join(flags)}`"
    )


async def after_create(
    ctx: Context,
    created: Any,
    then: FollowUp,
    *,
    title: str | None = None,
    fields: dict[str, Any] | None = None,
    trace: TaskTrace | None = None,
) -> int:
    """`fields`: more for the book to keep of the task (the tool that made it); `trace`: the
    one the create request carried, the task's from now on (kept in the book with it)."""
    from mcptask.commands.result import ResultOptions, run_result
    from mcptask.commands.watch import WatchOptions, run_watch
    from mcptask.model.refs import TaskRef
    from mcptask.model.results import TaskResult

    watch, want_result = then.watch, then.want_result
    interval, timeout, push = then.interval, then.timeout, then.push

    if created.task is None:
        ctx.out.note("the server answered without creating a task; this is its answer")
        placeholder = Task(taskId="-", status="completed", protocol="?", server=ctx.server, raw={})
        answer = TaskResult(task=placeholder, payload=created.result)
        if watch and ctx.out.mode == "ndjson":  # a watch's shape: its one `end` event
            ctx.out.line(
                {
                    "event": "end",
                    "outcome": "completed",
                    "exitCode": ExitCode.OK,
                    "result": answer.to_json(),
                }
            )
        else:
            ctx.out.result(answer)
        return ExitCode.OK
    task: Task = created.task
    ref: TaskRef = created.ref or TaskRef(task.taskId)
    ctx.places.keep_trace(ref, trace)
    if isinstance(created.extra.get("note"), str):
        ctx.out.note(created.extra["note"])
    ctx.places.remember(task, ref, **(fields or {}))
    if ctx.places.remembers and ctx.book.write_error is not None:
        ctx.out.note(how_to_reach(ctx, task.taskId, ref, ctx.book.write_error))
    if ctx.target.command is not None:
        watch = True  # over stdio the task dies with the server: follow it now
    elif not watch and (proto := await ctx.endpoint.protocol()).transport_label is not None:
        watch = True  # its session ends with this run's connection: follow it now
        ctx.out.note(
            f"task {task.taskId} lives only as long as this connection "
            f"({proto.transport_label}): following it now"
        )
    if not watch and not want_result:
        ctx.out.task(task, trace=ref.trace)
        if ctx.out.pretty and not task.terminal:
            from mcptask.text.command_line import command_line

            ctx.out.note(f"follow it: {command_line('watch', task.taskId)}")
        return ExitCode.OK
    if not watch and task.terminal:
        # finished in its creation answer (an Agno workflow, whose tasks cannot be looked up)
        from mcptask.commands.result import finished_result

        return await finished_result(ctx, await ctx.endpoint.protocol(), ref, task)
    if not watch:
        # --result alone: wait quietly, print the result
        ctx.out.note(f"task {task.taskId} created; waiting for its result")
        return await run_result(ResultOptions(task.taskId, interval=interval, timeout=timeout), ctx)
    if ctx.out.pretty:
        ctx.out.note(f"task {task.taskId} created")
    return await run_watch(
        WatchOptions(
            task_ids=[task.taskId],
            interval=interval,
            timeout=timeout,
            want_result=want_result,
            initial={task.taskId: task},
            title=title,
            push=push,
            receiver=then.receiver,
            otlp=then.otlp,
        ),
        ctx,
    )
