"""The commands. Each takes an options object and a `Context` (target, book, protocol, output,
clock) and returns the exit status; the CLI layer only parses and calls these."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import (
    OUTCOME_EXIT,
    Interrupted,
    NotApplicable,
    TaskEnded,
    TaskNotFound,
    UsageError,
)
from .model import INTERRUPTED, TERMINAL, Task
from .render import JsonEvents, LiveEvents, NdjsonEvents

if TYPE_CHECKING:
    from rich.console import Console

    from .app import Context
    from .protocols.base import Answered, InputRequest, TaskProtocol, TaskRef, TaskResult
    from .watch import OnInput, Watched, Watcher


# -- get --------------------------------------------------------------------------------------


@dataclass
class GetOptions:
    task_id: str
    history: int | None = None


async def run_get(opts: GetOptions, ctx: Context) -> int:
    ctx.require_reachable("get", [opts.task_id])
    proto = await ctx.protocol()
    proto.history_length = opts.history
    task, _ = await _look_up(ctx, proto, opts.task_id)
    ctx.out.task(task)
    return 0


async def _look_up(ctx: Context, proto: TaskProtocol, task_id: str) -> tuple[Task, TaskRef]:
    """One status fetch through the task book's reference; recorded; a task the book knew
    but the server does not is reported as expired."""
    ref = ctx.ref(task_id)
    try:
        task = await proto.get(ref)
    except TaskNotFound as exc:
        raise _gone(ctx, task_id, exc) from None
    ctx.remember(task, ref)
    return task, ref


def _gone(ctx: Context, task_id: str, exc: TaskNotFound) -> TaskNotFound:
    rec = ctx.book.lookup(ctx.server, task_id) if ctx.remembers else None
    if rec is not None:
        last = rec.get("status", "unknown")
        return TaskNotFound(f"task {task_id} has expired (last seen {last}): {exc.message}")
    return exc


# -- watch ------------------------------------------------------------------------------------


@dataclass
class WatchOptions:
    task_ids: list[str]
    interval: float | None = None
    timeout: float | None = None
    want_result: bool = False
    #: statuses already known (after `call --watch`): the first poll waits one interval
    initial: dict[str, Task] = field(default_factory=dict)
    title: str | None = None
    push: bool = True
    #: `--all`: every unfinished task the server lists, plus the task book's
    all_tasks: bool = False


async def run_watch(opts: WatchOptions, ctx: Context) -> int:
    from .watch import WatchConfig, Watcher

    if opts.all_tasks and opts.task_ids:
        raise UsageError("give task ids or --all, not both")
    if not opts.task_ids and not opts.all_tasks:
        raise UsageError("watch needs task ids (or --all)")
    ctx.require_reachable("watch", opts.task_ids)
    await ctx.expect_tasks(len(opts.task_ids))  # before the first request builds the client
    proto = await ctx.protocol()
    if opts.all_tasks:
        opts.task_ids = await _unfinished_tasks(ctx, proto)
        await ctx.expect_tasks(len(opts.task_ids))
        if not opts.task_ids:
            ctx.out.note("no unfinished tasks to watch")
            if not ctx.out.pretty:
                ctx.out.line(
                    {"exitCode": 0, "tasks": []}
                    if ctx.out.mode == "json"
                    else {"event": "done", "exitCode": 0, "outcomes": {}}
                )
            return 0
    mode = ctx.out.mode
    events: NdjsonEvents | JsonEvents | LiveEvents
    if mode == "pretty":
        events = LiveEvents(
            ctx.out, with_result=opts.want_result, clock=ctx.clock, title=opts.title
        )
    elif mode == "ndjson":
        events = NdjsonEvents(ctx.out, with_result=opts.want_result)
    else:
        events = JsonEvents(ctx.out, with_result=opts.want_result)

    refs: dict[str, TaskRef] = {}

    async def fetch_result(ref: TaskRef, task: Task) -> TaskResult:
        result = await proto.result(ref, task)
        ctx.remember(task, ref, result=result.to_json())
        return result

    # ended tasks go to the task book in batches (each write rewrites the whole file): at most
    # every BOOK_FLUSH seconds during the watch, and the rest when it ends
    ended: list[tuple[Task, TaskRef]] = []
    flushed = ctx.clock()

    def flush() -> None:
        nonlocal flushed
        if ended:
            batch = ended[:]
            ended.clear()
            ctx.remember_many(batch)
        flushed = ctx.clock()

    def on_end(w: Any) -> None:
        if w.task is not None:
            ended.append((w.task, w.ref))
            if ctx.clock() - flushed >= BOOK_FLUSH:
                flush()

    watcher = Watcher(
        fetch=proto.get,
        fetch_result=fetch_result,
        config=WatchConfig(
            floor=opts.interval or 0.0,
            default_interval=proto.default_interval,
            timeout=opts.timeout,
            want_result=opts.want_result,
            push=opts.push,
            on_input=_inline_answers(ctx, proto, events)
            if isinstance(events, LiveEvents) and proto.can_answer and _terminal_io()
            else None,
        ),
        events=_EndHook(events, on_end),
        clock=ctx.clock,
        sleep=ctx.sleep,
    )
    with _signals(watcher):
        for ref in ctx.refs(dict.fromkeys(opts.task_ids)):
            refs[ref.task_id] = ref
            watcher.add(ref, opts.initial.get(ref.task_id))
        if opts.push:
            watcher.feeds = proto.push_feeds(list(refs.values()))
        if isinstance(events, LiveEvents):
            events.track(watcher.watched)
            events.__enter__()
        try:
            code = await watcher.run()
        finally:
            flush()
    events.finish(watcher.watched, code)
    return code


#: seconds between two task-book writes of ended tasks during a watch
BOOK_FLUSH = 1.0


async def _unfinished_tasks(ctx: Context, proto: Any) -> list[str]:
    """`watch --all`: the server's unfinished tasks (where it can list them) and the task
    book's tasks for this endpoint that were last seen unfinished."""
    ids: dict[str, None] = {}
    book = ctx.book.tasks(ctx.server) if ctx.remembers else {}
    if proto.can_list:
        listed = await proto.list_tasks(ctx.refs(book))
        ids.update((t.taskId, None) for t in listed if not t.terminal)
    for task_id, rec in book.items():
        if str(rec.get("status", "working")) not in TERMINAL:
            ids.setdefault(task_id, None)
    return list(ids)


class _EndHook:
    """Passes events through and records each ended task in the task book."""

    def __init__(self, inner: Any, on_end: Any) -> None:
        self.inner = inner
        self.on_end = on_end

    def update(self, w: Any, via: str) -> None:
        self.inner.update(w, via)

    def retry(self, w: Any, error: str, delay: float) -> None:
        self.inner.retry(w, error, delay)

    def end(self, w: Any) -> None:
        self.on_end(w)
        self.inner.end(w)


@contextlib.contextmanager
def _signals(watcher: Watcher) -> Iterator[None]:
    """Ctrl-C (130) and SIGTERM (143) end the watch cleanly: every task gets its end event.
    Installed before the first event is printed, so no signal can skip the end lines."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    installed = []
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        try:
            loop.add_signal_handler(sig, watcher.interrupt, code)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


# -- result -----------------------------------------------------------------------------------


@dataclass
class ResultOptions:
    task_id: str
    wait: bool = True
    interval: float | None = None
    timeout: float | None = None


async def run_result(opts: ResultOptions, ctx: Context) -> int:
    from .watch import WatchConfig, Watcher

    ctx.require_reachable("result", [opts.task_id])
    proto = await ctx.protocol()
    ref = ctx.ref(opts.task_id)
    try:
        task = await proto.get(ref)
    except TaskNotFound as exc:
        return _kept_result(ctx, opts.task_id, exc)
    ctx.remember(task, ref)
    if task.status not in TERMINAL:
        if task.status in INTERRUPTED:
            raise TaskEnded(
                f"task {task.taskId} is waiting for input ({task.status}); "
                f"answer it with `mcptask answer {task.taskId}`",
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
                timeout=opts.timeout,
                want_result=True,
            ),
            events=_Quiet(),
            clock=ctx.clock,
            sleep=ctx.sleep,
        )
        with _signals(watcher):
            w = watcher.add(ref, task)
            await watcher.run()
        if w.task is not None:
            task = w.task
            ctx.remember(task, ref)
        if w.outcome == "timeout":
            raise TaskEnded(f"task {task.taskId} is still {task.status} (--timeout)", 7)
        if w.outcome == "interrupted":
            raise TaskEnded("interrupted", w.exit_code or 130)
        if w.outcome == "expired":
            return _kept_result(ctx, opts.task_id, TaskNotFound(f"task {opts.task_id} expired"))
        if w.outcome == "error":
            raise TaskEnded(w.last_error or "the server stopped answering", w.exit_code or 4)
        if task.status in INTERRUPTED:
            raise TaskEnded(
                f"task {task.taskId} is waiting for input ({task.status}); "
                f"answer it with `mcptask answer {task.taskId}`",
                OUTCOME_EXIT[task.status],
            )
        if w.result is not None:
            return _print_result(ctx, ref, w.result)
    if task.status in ("cancelled", "rejected"):
        raise TaskEnded(f"task {task.taskId} was {task.status}; it has no result", 8)
    return _print_result(ctx, ref, await proto.result(ref, task))


class _Quiet:
    def update(self, w: Any, via: str) -> None:
        pass

    def retry(self, w: Any, error: str, delay: float) -> None:
        pass

    def end(self, w: Any) -> None:
        pass


def _print_result(ctx: Context, ref: TaskRef, result: TaskResult) -> int:
    ctx.remember(result.task, ref, result=result.to_json())
    ctx.out.result(result)
    return OUTCOME_EXIT.get(result.task.status, 0)


def _kept_result(ctx: Context, task_id: str, exc: TaskNotFound) -> int:
    rec = ctx.book.lookup(ctx.server, task_id) if ctx.remembers else None
    if rec is None:
        raise exc
    if "result" not in rec:
        raise _gone(ctx, task_id, exc)
    status = str(rec.get("status", "completed"))
    ctx.out.note(
        f"task {task_id} is gone from the server; showing the result kept at "
        f"{rec.get('resultKeptAt', '?')}"
    )
    if ctx.out.pretty:
        from .protocols.base import TaskResult

        kept = rec["result"]
        error = kept.get("error") if isinstance(kept, dict) and len(kept) == 1 else None
        placeholder = Task(
            taskId=task_id, status="completed", protocol="?", server=ctx.server, raw={}
        )
        ctx.out.result(TaskResult(task=placeholder, payload=None if error else kept, error=error))
    else:
        ctx.out.line(rec["result"])
    return OUTCOME_EXIT.get(status, 0)


# -- answer -----------------------------------------------------------------------------------

#: how long `answer` (and the form in `watch`) looks for the task to leave `input_required`
CONFIRM_SECONDS = 5.0
#: answered input-request keys kept per task in the task book
ANSWERED_KEPT = 50


@dataclass
class AnswerOptions:
    task_id: str
    json: str | None = None
    decline: bool = False
    cancel: bool = False
    text: str | None = None
    key: str | None = None


class _Responder:
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
    ) -> None:
        self.ctx = ctx
        self.content = content
        self.text = text
        self.action = action
        self.console = console
        self.interrupt_dismisses = interrupt_dismisses
        #: an async context manager factory wrapped around the form (`watch`: pause the view)
        self.around = around

    async def __call__(self, request: InputRequest) -> dict[str, Any] | None:
        from . import forms

        if self.console is not None:
            if self.around is None:
                return await forms.ask(
                    request, self.console, interrupt_dismisses=self.interrupt_dismisses
                )
            async with self.around():
                return await forms.ask(
                    request, self.console, interrupt_dismisses=self.interrupt_dismisses
                )
        self.ctx.out.note(f"task {request.task_id} asks: {request.message or '(no message)'}")
        if self.action is not None:
            if not request.can_decline:
                raise UsageError(
                    f"an A2A agent takes an answer (--text TEXT), not --{self.action}; "
                    f"`mcptask cancel {request.task_id}` cancels the task"
                )
            return {"action": self.action}
        try:
            if self.text is not None:
                content = forms.text_content(request.schema, self.text)
            else:
                content = forms.validate(request.schema, self.content)
        except forms.Invalid as exc:
            option = "--text" if self.text is not None else "--json"
            raise UsageError(f"{option}: {exc}; {_form_summary(request)}") from None
        if request.params.get("mode") == "url":
            return {"action": "accept"}
        return {"action": "accept", "content": content}


def _form_summary(request: InputRequest) -> str:
    """`the form: name* (text), size (one of s, m, l)`: what `--json` must hold."""
    from . import forms

    parts = []
    for f in forms.fields(request.schema):
        what = f.kind if f.kind not in ("string", "any") else "text"
        if f.choices:
            values = ", ".join(forms.short_value(c.value) for c in f.choices[:8])
            what = ("one of " if f.kind == "choice" else "any of ") + values
        parts.append(f"{f.name}{'*' if f.required else ''} ({what})")
    return "the form: " + (", ".join(parts) if parts else "no fields")


def _check_waiting(task: Task) -> None:
    if task.status == "input_required":
        return
    if task.status == "auth_required":
        raise NotApplicable(
            f"task {task.taskId} waits for authentication (auth-required), not for an answer: "
            "mcptask cannot give it"
        )
    raise NotApplicable(f"task {task.taskId} is not waiting for input: it is {task.status}")


def _answered_keys(ctx: Context, task_id: str) -> frozenset[str]:
    rec = ctx.book.lookup(ctx.server, task_id) if ctx.remembers else None
    keys = rec.get("answered") if rec else None
    return (
        frozenset(k for k in keys if isinstance(k, str)) if isinstance(keys, list) else frozenset()
    )


def _keep_answered(
    ctx: Context, task: Task, ref: TaskRef, old: frozenset[str], new: list[str]
) -> None:
    if new:
        keys = list(dict.fromkeys([*sorted(old), *new]))[-ANSWERED_KEPT:]
        ctx.remember(task, ref, answered=keys)


def _moved_on(before: Task, after: Task, done: Answered) -> bool:
    """Whether the task took the answer: it left `input_required`, or (still asking) none of
    the requests answered is pending any more (2026-07-28 keys), or it asks something else."""
    if after.status != "input_required":
        return True
    keys = set(done.keys)
    if after.inputRequests is not None or before.inputRequests is not None:
        return not (keys & set(after.inputRequests or {}))
    return not after.same_state(before)


async def _confirm(
    ctx: Context, proto: TaskProtocol, ref: TaskRef, before: Task, done: Answered
) -> tuple[Task, bool]:
    """Servers acknowledge answers they ignore: poll (at the task's pace) for up to
    CONFIRM_SECONDS until it moved on. The last task seen, and whether it moved on."""
    from .watch import WatchConfig, interval_for

    pace = interval_for(before, WatchConfig(default_interval=proto.default_interval))
    deadline = ctx.clock() + CONFIRM_SECONDS
    task = done.task
    if task is not None and task.taskId == ref.task_id and _moved_on(before, task, done):
        return task, True
    while True:
        task = await proto.get(ref)
        if _moved_on(before, task, done):
            return task, True
        if ctx.clock() + pace > deadline:
            return task, False
        await ctx.sleep(pace)


def _how_to_answer(task: Task, requests: list[InputRequest] | None) -> str:
    tid = task.taskId
    if requests is None:
        return (
            f"task {tid} waits for input: answer with --json CONTENT, --decline or --cancel, or "
            "run `mcptask answer` on a terminal for a form (an MCP 2025-11-25 server shows its "
            "question only to the client that answers it)"
        )
    asks = "; ".join(
        f"{r.key + ': ' if r.key and len(requests) > 1 else ''}{r.message or r.method} "
        f"({_form_summary(r)})"
        for r in requests
    )
    how = (
        "--text TEXT"
        if requests and not requests[0].can_decline
        else ("--json CONTENT, --decline or --cancel")
    )
    return f"task {tid} asks: {asks}; answer with {how}, or run `mcptask answer` on a terminal"


async def run_answer(opts: AnswerOptions, ctx: Context) -> int:
    import json

    from .app import stdout_is_terminal

    given = [
        name
        for name, on in (
            ("--json", opts.json is not None),
            ("--text", opts.text is not None),
            ("--decline", opts.decline),
            ("--cancel", opts.cancel),
        )
        if on
    ]
    if len(given) > 1:
        raise UsageError(f"give one answer: {' and '.join(given)} cannot go together")
    content: Any = None
    if opts.json is not None:
        try:
            content = json.loads(opts.json)
        except (ValueError, RecursionError) as exc:
            raise UsageError(f"--json is not valid JSON: {exc}") from None
        if not isinstance(content, dict):
            raise UsageError("--json must be a JSON object of the form's fields")
    interactive = not given and stdin_is_terminal() and stdout_is_terminal()
    ctx.require_reachable("answer", [opts.task_id])
    proto = await ctx.protocol()
    task, ref = await _look_up(ctx, proto, opts.task_id)
    _check_waiting(task)
    requests = proto.input_requests(task)
    if not given and not interactive:
        raise UsageError(_how_to_answer(task, requests))
    answered = _answered_keys(ctx, task.taskId)
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
    responder = _Responder(ctx, content=content, text=opts.text, action=action, console=console)
    try:
        done = await proto.answer(ref, task, responder, key=opts.key, answered=answered)
    except Interrupted as exc:  # Ctrl-C in the form
        exc.hint = exc.hint or f"nothing was sent: task {task.taskId} still waits for input"
        raise
    for note in done.notes:
        ctx.out.note(note)
    _keep_answered(ctx, task, ref, answered, done.keys)
    if not done.sent:
        raise TaskEnded(
            f"the form was dismissed; nothing was sent: task {task.taskId} still waits for input",
            6,
        )
    if done.dismissed:
        ctx.out.note(
            "the form was dismissed: mcptask answered `cancel` (a question read from an MCP "
            "2025-11-25 server cannot be put back)"
        )
    after, moved = await _confirm(ctx, proto, ref, task, done)
    ctx.remember(after, ref)
    if not moved:
        raise TaskEnded(
            f"task {task.taskId} still waits for input {CONFIRM_SECONDS:g} s after the answer: "
            "the server did not take it",
            6,
        )
    actions = ", ".join(str(response.get("action")) for _, response in done.sent)
    ctx.out.note(f"task {task.taskId} took the answer ({actions}); it is {after.status} now")
    ctx.out.task(after)
    return 0


def _inline_answers(ctx: Context, proto: TaskProtocol, events: LiveEvents) -> OnInput:
    """`watch` on a terminal: a task that asks for input gets the form inline (the live view
    paused, one form at a time); the other tasks are polled meanwhile."""
    import asyncio

    lock = asyncio.Lock()
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
        from .errors import McptaskError

        task, ref = w.task, w.ref
        if task is None:
            return None
        answered = _answered_keys(ctx, ref.task_id) | sent.get(ref.task_id, set())
        responder = _Responder(
            ctx, console=ctx.out.console, interrupt_dismisses=False, around=paused
        )
        try:
            done = await proto.answer(ref, task, responder, answered=frozenset(answered))
            for note in done.notes:
                await say(f"{ref.task_id}: {note}")
            if not done.sent:
                return None
            sent.setdefault(ref.task_id, set()).update(done.keys)
            _keep_answered(ctx, task, ref, frozenset(answered), done.keys)
            after, moved = await _confirm(ctx, proto, ref, task, done)
        except McptaskError as exc:
            hint = f" ({exc.hint})" if exc.hint else ""
            await say(f"{ref.task_id}: not answered: {exc.message}{hint}")
            return None
        if not moved:
            await say(f"{ref.task_id} still waits for input: the server did not take the answer")
            return None
        return after

    return on_input


# -- list -------------------------------------------------------------------------------------


@dataclass
class ListOptions:
    local: bool = False


async def run_list(opts: ListOptions, ctx: Context) -> int:
    if opts.local:
        ctx.out.tasks(local_tasks(ctx), title="tasks in the task book")
        return 0
    proto = await ctx.protocol()
    if not proto.can_list:
        ctx.out.note(f"{proto.name} has no method to list tasks; showing the task book's tasks")
        ctx.out.tasks(local_tasks(ctx), title="tasks in the task book")
        return 0
    refs = ctx.refs(ctx.book.tasks(ctx.server)) if ctx.remembers else []
    tasks = await proto.list_tasks(refs)
    ctx.remember_many(list(zip(tasks, ctx.refs(t.taskId for t in tasks), strict=True)))
    ctx.out.tasks(tasks)
    return 0


def local_tasks(ctx: Context) -> list[Task]:
    out = []
    for task_id, rec in ctx.book.tasks(ctx.server).items():
        from .model import normalize_status

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


# -- cancel -----------------------------------------------------------------------------------


@dataclass
class CancelOptions:
    task_id: str


async def run_cancel(opts: CancelOptions, ctx: Context) -> int:
    ctx.require_reachable("cancel", [opts.task_id])
    proto = await ctx.protocol()
    ref = ctx.ref(opts.task_id)
    try:
        task = await proto.cancel(ref)
    except TaskNotFound as exc:
        raise _gone(ctx, opts.task_id, exc) from None
    if task is None:
        ctx.out.note(f"cancellation of task {opts.task_id} requested")
        if not ctx.out.pretty:
            ctx.out.line({"taskId": opts.task_id, "cancelRequested": True})
        return 0
    ctx.remember(task, ref)
    if ctx.out.pretty:
        ctx.out.note(f"task {task.taskId}: cancellation requested")
    ctx.out.task(task)
    return 0


# -- call / send ------------------------------------------------------------------------------


@dataclass
class FollowUp:
    """What `call` and `send` do once the task exists: print it, watch it, wait for its
    result."""

    watch: bool = False
    want_result: bool = False
    interval: float | None = None
    timeout: float | None = None
    push: bool = True


@dataclass
class CallOptions:
    tool: str
    pairs: list[str] = field(default_factory=list)
    args_json: str | None = None
    ttl: int | None = None
    then: FollowUp = field(default_factory=FollowUp)


async def run_call(opts: CallOptions, ctx: Context) -> int:
    from . import arguments

    proto = await ctx.protocol()
    schema = await proto.tool_schema(opts.tool) if arguments.needs_schema(opts.pairs) else None
    args = arguments.build(opts.pairs, opts.args_json, schema)
    created = await proto.call_tool(opts.tool, args, ttl=opts.ttl)
    return await _after_create(ctx, created, opts.then)


@dataclass
class SendOptions:
    text: str
    then: FollowUp = field(default_factory=FollowUp)


async def run_send(opts: SendOptions, ctx: Context) -> int:
    proto = await ctx.protocol()
    created = await proto.send_message(opts.text, context_id=ctx.options.context_id)
    return await _after_create(ctx, created, opts.then)


async def _after_create(
    ctx: Context, created: Any, then: FollowUp, *, title: str | None = None
) -> int:
    from .protocols.base import TaskRef, TaskResult

    watch, want_result = then.watch, then.want_result
    interval, timeout, push = then.interval, then.timeout, then.push

    if created.task is None:
        ctx.out.note("the server answered without creating a task; this is its answer")
        placeholder = Task(taskId="-", status="completed", protocol="?", server=ctx.server, raw={})
        ctx.out.result(TaskResult(task=placeholder, payload=created.result))
        return 0
    task: Task = created.task
    ref: TaskRef = created.ref or TaskRef(task.taskId)
    ctx.remember(task, ref)
    if ctx.target.command is not None:
        watch = True  # over stdio the task dies with the server: follow it now
    if not watch and not want_result:
        ctx.out.task(task)
        return 0
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
        ),
        ctx,
    )


# -- demo -------------------------------------------------------------------------------------


@dataclass
class DemoOptions:
    seconds: float = 8.0
    want_result: bool = True


async def run_demo(opts: DemoOptions, ctx: Context) -> int:
    from .demo_server import DemoServer

    with DemoServer(task_seconds=opts.seconds) as server:
        ctx.options.url = server.url
        ctx.options.protocol = "mcp-2025-11-25"
        from .app import Target

        ctx._target = Target(url=server.url, protocol="mcp-2025-11-25", ephemeral=True)
        if ctx.out.pretty:
            ctx.out.note(f"demo task server listening on {server.url}")
        proto = await ctx.protocol()
        created = await proto.call_tool("build-report", {"topic": "tide pools"}, ttl=60_000)
        return await _after_create(
            ctx,
            created,
            FollowUp(watch=True, want_result=opts.want_result),
            title="mcptask demo: watching a task on the embedded server",
        )


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


def _terminal_io() -> bool:
    """A run is interactive only when stdin and stdout are terminals."""
    from .app import stdout_is_terminal

    return stdin_is_terminal() and stdout_is_terminal()
