"""Answering tasks that wait for input, shared by `answer` and `watch`'s inline forms: the
responder (command-line answer or terminal form), and the confirmation that the task moved on."""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any

from mcptask.errors import ExitCode, NotApplicable, TaskEnded, UsageError
from mcptask.model.task import Task
from mcptask.text.command_line import command_line

if TYPE_CHECKING:
    import asyncio

    from rich.console import Console

    from mcptask.model.inputs import Answered, InputRequest
    from mcptask.model.refs import TaskRef
    from mcptask.output.live import LiveEvents
    from mcptask.protocols.base import TaskProtocol
    from mcptask.scheduler.watcher import OnInput, Watched
    from mcptask.session.context import Context


#: how long `answer` (and the form in `watch`) looks for the task to leave `input_required`
CONFIRM_SECONDS = 5.0
#: answered input-request keys kept per task in the task book
ANSWERED_KEPT = 50
#: how often the form in `watch` asks again after the server refused an answer
ANSWER_TRIES = 3


class RefusedAnswer(TaskEnded):
    """The server refused every answer given in `watch`'s form: the watch ends with the task
    waiting for input (exit 6), and this names why."""

    def __init__(self, message: str) -> None:
        super().__init__(message, ExitCode.INPUT)


class Responder:
    """Turns one input request into an answer: from the command line (`--json`, `--text`,
    `--decline`, `--cancel`) or, on a terminal, a form (in `watch`, inside `around`: one form
    at a time, the live view paused). None: the person dismissed the form."""

    def __init__(
        self,
        ctx: Context,
        *,
        content: Any = None,
        text: str | None = None,
        action: str | None = None,
        console: Console | None = None,
        interrupt_dismisses: bool = True,
        around: Any = None,
        explain: str | None = None,
        option: str = "--json",
        data: Any = None,
    ) -> None:
        self.ctx = ctx
        #: said after the question on stderr (a plain call that declines by itself: why)
        self.explain = explain
        #: the option the content came from, named when it does not fit the form
        self.option = option
        #: `--data JSON`: answer with a data part (A2A)
        self.data = data
        self.content = content
        self.text = text
        self.action = action
        self.console = console
        self.interrupt_dismisses = interrupt_dismisses
        #: an async context manager factory wrapped around the form (`watch`: pause the view)
        self.around = around
        #: said just above the next form, inside `around` (a refused answer: it stays on screen)
        self.preface: str | None = None

    async def __call__(self, request: InputRequest) -> dict[str, Any] | None:
        from mcptask.output import forms

        self._asked(request)
        if self.console is not None:
            if self.around is None:
                return await forms.ask(
                    request, self.console, interrupt_dismisses=self.interrupt_dismisses
                )
            async with self.around():
                if self.preface:
                    self.ctx.out.note(self.preface)
                    self.preface = None
                return await forms.ask(
                    request, self.console, interrupt_dismisses=self.interrupt_dismisses
                )
        said = f"; {self.explain}" if self.explain else ""
        self.ctx.out.note(f"{request.who} asks: {request.message or '(no message)'}{said}")
        if self.data is not None:
            if request.can_decline:
                raise UsageError(
                    "--data answers an A2A agent with a data part; an MCP form takes --json"
                )
            content: dict[str, Any] = {"data": self.data}
            if self.text is not None:
                content["text"] = self.text
            return {"action": "accept", "content": content}
        if self.action is not None:
            if not request.can_decline:
                raise UsageError(
                    f"an A2A agent takes an answer (--text TEXT), not --{self.action}; "
                    f"`{command_line('cancel', request.task_id)}` cancels the task"
                )
            return {"action": self.action}
        try:
            if self.text is not None:
                content = forms.text_content(request.schema, self.text)
            else:
                # SEP-1034: the fields the answer leaves out take the form's defaults
                given = self.content
                if isinstance(given, dict):
                    given = forms.with_defaults(request.schema, given)
                content = forms.validate(request.schema, given)
        except forms.Invalid as exc:
            option = "--text" if self.text is not None else self.option
            raise UsageError(f"{option}: {exc}; {form_summary(request)}") from None
        if request.params.get("mode") == "url":
            return {"action": "accept"}
        return {"action": "accept", "content": content}

    def _asked(self, request: InputRequest) -> None:
        """The question as asked, in the log (on a terminal: which command shows its form)."""
        from mcptask.model.events import EventKind
        from mcptask.output import forms

        self.ctx.places.note(
            request.task_id,
            EventKind.QUESTION,
            status="input_required",
            message=request.message[:QUESTION_KEPT] or None,
            request=request.key,
            keys=[f.name for f in forms.fields(request.schema)] or None,
            form=self.ctx.command if self.console is not None else None,
        )


def one_answer(flags: list[tuple[str, bool]]) -> list[str]:
    """The answer options given (`--json`, `--decline`, ...); more than one is a usage error."""
    given = [name for name, on in flags if on]
    if len(given) > 1:
        raise UsageError(f"give one answer: {' and '.join(given)} cannot go together")
    return given


def json_answer(text: str | None) -> dict[str, Any] | None:
    """`--json CONTENT`: a JSON object of the form's fields (checked against the form later)."""
    import json

    if text is None:
        return None
    try:
        content = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"--json is not valid JSON: {exc}") from None
    if not isinstance(content, dict):
        raise UsageError("--json must be a JSON object of the form's fields")
    return content


def form_summary(request: InputRequest) -> str:
    """`the form: name* (text), size (one of s, m, l)`: what `--json` must hold."""
    from mcptask.output import forms

    parts = []
    for f in forms.fields(request.schema):
        what = f.kind if f.kind not in ("string", "any") else "text"
        if f.choices:
            values = ", ".join(forms.short_value(c.value) for c in f.choices[:8])
            what = ("one of " if f.kind == "choice" else "any of ") + values
        parts.append(f"{f.name}{'*' if f.required else ''} ({what})")
    return "the form: " + (", ".join(parts) if parts else "no fields")


def check_waiting(task: Task) -> None:
    if task.status == "input_required":
        return
    if task.status == "auth_required":
        raise NotApplicable(
            f"task {task.taskId} waits for authentication (auth-required), not for an answer: "
            "mcptask cannot give it"
        )
    raise NotApplicable(f"task {task.taskId} is not waiting for input: it is {task.status}")


def answered_keys(ctx: Context, task_id: str) -> frozenset[str]:
    rec = ctx.book.lookup(ctx.server, task_id) if ctx.places.remembers else None
    keys = rec.get("answered") if rec else None
    return (
        frozenset(k for k in keys if isinstance(k, str)) if isinstance(keys, list) else frozenset()
    )


def keep_answered(
    ctx: Context, task: Task, ref: TaskRef, old: frozenset[str], new: list[str]
) -> None:
    """The keys answered, kept so that an answer is never sent twice (the answer's event
    is recorded once the server took it or not: `answer_events`)."""
    if new:
        keys = list(dict.fromkeys([*sorted(old), *new]))[-ANSWERED_KEPT:]
        ctx.places.remember(task, ref, answered=keys)


#: characters of a question or a text answer kept in the log
QUESTION_KEPT = 500


def answer_events(
    task_id: str, done: Answered, status: str, confirmed: bool, sent_at: float
) -> list[Any]:
    """The log's record of an answer: one `answer` event per request answered (the question,
    the fields answered, the action, an A2A text answer's text; whether the server took it),
    and a `dismissed` event when a question was dismissed (with what mcptask sent)."""
    from mcptask.model.events import EventKind, event

    out = []
    for request, response in done.sent:
        content = response.get("content")
        action = response.get("action")
        fields = sorted(str(k) for k in content) if isinstance(content, dict) else []
        text = content.get("text") if isinstance(content, dict) else None
        dismissed = done.dismissed and action == "cancel"
        out.append(
            event(
                task_id,
                EventKind.DISMISSED if dismissed else EventKind.ANSWER,
                at=sent_at,
                status=status,
                message=(
                    "the form was dismissed: mcptask answered cancel (a question read from an "
                    "MCP 2025-11-25 server cannot be put back)"
                    if dismissed
                    else None
                ),
                question=request.message[:QUESTION_KEPT] or None,
                request=request.key,
                action=action,
                keys=fields or None,
                text=text[:QUESTION_KEPT]
                if isinstance(text, str) and not request.can_decline
                else None,
                confirmed=confirmed,
            )
        )
    return out


def refused_event(task_id: str, status: str, reason: str) -> Any:
    from mcptask.model.events import EventKind, event

    return event(
        task_id, EventKind.ANSWER_REFUSED, status=status, message=f"the server refused: {reason}"
    )


def moved_on(before: Task, after: Task, done: Answered) -> bool:
    """Whether the task took the answer: it left `input_required`, or (still asking) none of
    the requests answered is pending any more (2026-07-28 keys), or it asks something else."""
    if after.status != "input_required":
        return True
    keys = set(done.keys)
    if after.inputRequests is not None or before.inputRequests is not None:
        return not (keys & set(after.inputRequests or {}))
    return not after.same_state(before)


async def confirm(
    ctx: Context, proto: TaskProtocol, ref: TaskRef, before: Task, done: Answered
) -> tuple[Task, bool]:
    """Servers acknowledge answers they ignore: poll (at the task's pace) for up to
    CONFIRM_SECONDS until it moved on. The last task seen, and whether it moved on."""
    from mcptask.scheduler.watcher import WatchConfig, interval_for

    pace = interval_for(before, WatchConfig(default_interval=proto.default_interval))
    deadline = ctx.clock() + CONFIRM_SECONDS
    task = done.task
    if task is not None and task.taskId == ref.task_id and moved_on(before, task, done):
        return task, True
    while True:
        task = await proto.get(ref)
        if moved_on(before, task, done):
            return task, True
        if ctx.clock() + pace > deadline:
            return task, False
        await ctx.sleep(pace)


def how_to_answer(task: Task, requests: list[InputRequest] | None) -> str:
    tid = task.taskId
    if requests is None:
        return (
            f"task {tid} waits for input: answer with --json CONTENT, --decline or --cancel, or "
            f"run `{command_line('answer', tid)}` on a terminal for a form (an MCP 2025-11-25 "
            "server shows its "
            "question only to the client that answers it)"
        )
    asks = "; ".join(
        f"{r.key + ': ' if r.key and len(requests) > 1 else ''}{r.message or r.method} "
        f"({form_summary(r)})"
        for r in requests
    )
    how = (
        "--text TEXT or --data JSON"
        if requests and not requests[0].can_decline
        else ("--json CONTENT, --decline or --cancel")
    )
    form = command_line("answer", tid)
    return f"task {tid} asks: {asks}; answer with {how}, or run `{form}` on a terminal"


def inline_answers(
    ctx: Context, proto: TaskProtocol, events: LiveEvents, *, lock: asyncio.Lock | None = None
) -> OnInput:
    """`watch` on a terminal: a task that asks for input gets the form inline (the live view
    paused, one form at a time, also across servers when they share `lock`); the other tasks
    are polled meanwhile."""
    import asyncio

    lock = lock or asyncio.Lock()
    sent: dict[str, set[str]] = {}

    @contextlib.asynccontextmanager
    async def paused() -> Any:
        async with lock:
            events.pause()
            try:
                yield
            finally:
                events.resume()

    async def say(message: str) -> None:
        async with paused():
            ctx.out.note(message)

    async def on_input(w: Watched) -> Task | None:
        from mcptask.errors import McptaskError, RpcError
        from mcptask.model.events import EventKind

        task, ref = w.task, w.ref
        if task is None:
            return None
        answered = answered_keys(ctx, ref.task_id) | sent.get(ref.task_id, set())
        responder = Responder(
            ctx, console=ctx.out.console, interrupt_dismisses=False, around=paused
        )
        try:
            for attempt in range(1, ANSWER_TRIES + 1):
                try:
                    done = await proto.answer(ref, task, responder, answered=frozenset(answered))
                    sent_at = time.time()
                    break
                except RpcError as exc:
                    # the server refused the answer itself (an A2A agent's JSON-RPC error):
                    # where the question can be asked again, the form asks again with the
                    # refusal above it; else the watch ends naming the refusal
                    if proto.input_requests(task) is None:
                        raise
                    ctx.places.note_events(
                        [refused_event(ref.task_id, task.status, exc.rpc_message)]
                    )
                    refusal = f"{ref.task_id}: the server refused the answer: {exc.rpc_message}"
                    if attempt == ANSWER_TRIES:
                        raise RefusedAnswer(
                            f"the server refused the answer {ANSWER_TRIES} times "
                            f"(last: {exc.rpc_message})"
                        ) from None
                    responder.preface = f"{refusal}; asking again"
            for note in done.notes:
                await say(f"{ref.task_id}: {note}")
            if not done.sent:
                ctx.places.note(
                    ref.task_id, EventKind.DISMISSED, status=task.status, message="nothing was sent"
                )
                return None
            sent.setdefault(ref.task_id, set()).update(done.keys)
            keep_answered(ctx, task, ref, frozenset(answered), done.keys)
            after, moved = await confirm(ctx, proto, ref, task, done)
            ctx.places.remember(
                after, ref, events=answer_events(ref.task_id, done, after.status, moved, sent_at)
            )
        except RefusedAnswer:
            raise  # the task ends waiting for input, the refusal named (the scheduler's end)
        except McptaskError as exc:
            hint = f" ({exc.hint})" if exc.hint else ""
            await say(f"{ref.task_id}: not answered: {exc.message}{hint}")
            return None
        if not moved:
            await say(f"{ref.task_id} still waits for input: the server did not take the answer")
            return None
        return after

    return on_input
