"""`mcptask answer TASK_ID`: answer a task that waits for input (a form on a terminal, else
--json/--text/--decline/--cancel), then confirm that it moved on."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.commands._answering import (
    CONFIRM_SECONDS,
    Responder,
    answer_events,
    answered_keys,
    check_waiting,
    confirm,
    how_to_answer,
    json_answer,
    keep_answered,
    one_answer,
    refused_event,
)
from mcptask.commands._shared import look_up
from mcptask.errors import ExitCode, Interrupted, RpcError, TaskEnded, UsageError
from mcptask.model.events import EventKind
from mcptask.protocols.server_requests import HeldQuestion
from mcptask.text.command_line import command_line

if TYPE_CHECKING:
    from mcptask.model.inputs import Answered
    from mcptask.model.refs import TaskRef
    from mcptask.model.task import Task
    from mcptask.protocols.base import TaskProtocol
    from mcptask.session.context import Context


@dataclass
class AnswerOptions:
    task_id: str
    json: str | None = None
    decline: bool = False
    cancel: bool = False
    text: str | None = None
    key: str | None = None
    #: `--data JSON`: the answer as a data part (A2A structured questions)
    data: str | None = None


async def run_answer(opts: AnswerOptions, ctx: Context) -> int:
    import json

    given = one_answer(
        [
            ("--json", opts.json is not None),
            ("--text", opts.text is not None),
            ("--decline", opts.decline),
            ("--cancel", opts.cancel),
        ]
    )
    data: Any = None
    if opts.data is not None:
        if given and given != ["--text"]:
            raise UsageError(f"--data answers with a data part; it cannot go with {given[0]}")
        try:
            data = json.loads(opts.data)
        except (ValueError, RecursionError) as exc:
            raise UsageError(f"--data is not valid JSON: {exc}") from None
        given.append("--data")
    content: Any = json_answer(opts.json)
    interactive = not given and ctx.env.interactive
    ctx, task_id = ctx.places.locate(opts.task_id)
    ctx.places.require_reachable("answer", [task_id])
    proto = await ctx.endpoint.protocol()
    task, ref = await look_up(ctx, proto, task_id)
    check_waiting(task)
    requests = proto.input_requests(task)
    if not given and not interactive:
        raise UsageError(how_to_answer(task, requests))
    answered = answered_keys(ctx, task.taskId)
    if requests is not None and not interactive and opts.key is None:
        open_ = [r for r in requests if r.answerable and r.key not in answered]
        if len(open_) > 1:
            keys = ", ".join(str(r.key) for r in open_)
            raise UsageError(
                f"task {task.taskId} asks {len(open_)} questions: pick one with --key "
                f"(keys: {keys})"
            )
    console = None
    if interactive:
        console = ctx.out.console if ctx.out.pretty else ctx.out.err_console()
    action = "decline" if opts.decline else "cancel" if opts.cancel else None
    responder = Responder(
        ctx, content=content, text=opts.text, action=action, console=console, data=data
    )
    try:
        held = _held(ctx, task)
        if held is not None:
            done = await _answer_held(ctx, proto, ref, task, held, responder)
        else:
            done = await proto.answer(ref, task, responder, key=opts.key, answered=answered)
        sent_at = time.time()
    except Interrupted as exc:  # Ctrl-C in the form
        exc.hint = exc.hint or f"nothing was sent: task {task.taskId} still waits for input"
        ctx.places.note(
            task.taskId, EventKind.DISMISSED, status=task.status, message="nothing was sent"
        )
        raise
    except RpcError as exc:  # the server refused the answer itself
        ctx.places.note_events([refused_event(task.taskId, task.status, exc.rpc_message)])
        raise
    except HeldQuestion as exc:  # read, and the answer did not fit: kept to answer again
        held_fields = {"id": exc.request_id, "params": exc.params}
        ctx.places.remember(task, ref, heldQuestion=held_fields)
        raise UsageError(
            f"{exc.message}; nothing was sent: the server still waits for the answer (not for "
            "ever: the reference server waits 60 s), and the task book holds the question, so "
            f"`{command_line('answer', task.taskId)} --json ...` is checked against it before "
            "it is sent"
        ) from None
    for note in done.notes:
        ctx.out.note(note)
    keep_answered(ctx, task, ref, answered, done.keys)
    if not done.sent:
        ctx.places.note(
            task.taskId, EventKind.DISMISSED, status=task.status, message="nothing was sent"
        )
        raise TaskEnded(
            f"the form was dismissed; nothing was sent: task {task.taskId} still waits for input",
            ExitCode.INPUT,
        )
    if done.dismissed:
        ctx.out.note(
            "the form was dismissed: mcptask answered `cancel` (a question read from an MCP "
            "2025-11-25 server cannot be put back)"
        )
    if done.new_task is not None:
        return _new_task(ctx, task, ref, done.new_task)
    after, moved = await confirm(ctx, proto, ref, task, done)
    ctx.places.remember(
        after, ref, events=answer_events(task.taskId, done, after.status, moved, sent_at)
    )
    if not moved:
        raise TaskEnded(
            f"task {task.taskId} still waits for input {CONFIRM_SECONDS:g} s after the answer: "
            "the server did not take it",
            ExitCode.INPUT,
        )
    actions = ", ".join(str(response.get("action")) for _, response in done.sent)
    ctx.out.note(f"task {task.taskId} took the answer ({actions}); it is {after.status} now")
    ctx.out.task(after, trace=ref.trace)
    return ExitCode.OK


def _held(ctx: Context, task: Task) -> dict[str, Any] | None:
    """The question an earlier `answer` read and holds for this task (its answer did not
    fit), when the task still waits for input."""
    rec = ctx.book.lookup(ctx.server, task.taskId) if ctx.places.remembers else None
    held = rec.get("heldQuestion") if rec else None
    if not isinstance(held, dict) or "id" not in held or not isinstance(held.get("params"), dict):
        return None
    return held


async def _answer_held(
    ctx: Context,
    proto: TaskProtocol,
    ref: TaskRef,
    task: Task,
    held: dict[str, Any],
    responder: Responder,
) -> Answered:
    """Answer the held question: checked against its form here, before anything is sent
    (a bad answer is a usage error and the question stays held), then sent to its request
    id."""
    from mcptask.model.inputs import Answered, InputRequest
    from mcptask.protocols.server_requests import ELICIT

    request = InputRequest(task.taskId, ELICIT, held["params"], key=str(held["id"]))
    done = Answered()
    response = await responder(request)
    if response is None:  # dismissed: the question stays held, nothing is sent
        raise TaskEnded(
            f"the form was dismissed; nothing was sent: task {task.taskId} still waits for input",
            ExitCode.INPUT,
        )
    await proto.answer_held(ref, held["id"], response)
    done.sent.append((request, response))
    ctx.places.remember(task, ref, heldQuestion={})  # answered: held no more
    return done


def _new_task(ctx: Context, task: Task, ref: TaskRef, new: Task) -> int:
    """The server started a new task for the answer instead of continuing the old one: say
    so, name it, and follow it from now on (it is the one that carries on)."""
    from mcptask.model.refs import TaskRef

    new_ref = TaskRef(new.taskId, context_id=new.contextId or ref.context_id)
    if ref.trace is not None:
        # the answer that made it carried the old task's trace: a span under the old task's
        from mcptask.protocols.trace_context import TaskTrace
        from mcptask.text.traceparent import Traceparent, new_ids

        under = Traceparent(ref.trace.ids.trace_id, ref.trace.ids.span_id)
        ctx.places.keep_trace(new_ref, TaskTrace(new_ids(under), ref.trace.state))
    ctx.places.remember(new, new_ref)
    ctx.out.note(
        f"the server started a new task for the answer: {new.taskId} (it is {new.status}); "
        f"task {task.taskId} was not continued"
    )
    ctx.out.task(new, trace=new_ref.trace)
    return ExitCode.OK
