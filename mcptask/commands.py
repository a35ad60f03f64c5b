"""The commands. Each takes an options object and a `Context` (target, book, protocol, output,
clock) and returns the exit status; the CLI layer only parses and calls these."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import OUTCOME_EXIT, NotApplicable, TaskEnded, TaskNotFound, UsageError
from .model import INTERRUPTED, TERMINAL, Task
from .render import JsonEvents, LiveEvents, NdjsonEvents

if TYPE_CHECKING:
    from .app import Context
    from .protocols.base import TaskRef, TaskResult
    from .watch import Watcher


# -- get --------------------------------------------------------------------------------------


@dataclass
class GetOptions:
    task_id: str
    history: int | None = None


async def run_get(opts: GetOptions, ctx: Context) -> int:
    ctx.require_reachable("get", [opts.task_id])
    proto = await ctx.protocol()
    proto.history_length = opts.history
    ref = ctx.ref(opts.task_id)
    try:
        task = await proto.get(ref)
    except TaskNotFound as exc:
        raise _gone(ctx, opts.task_id, exc) from None
    ctx.remember(task, ref)
    ctx.out.task(task)
    return 0


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
    proto = await ctx.protocol()
    if opts.all_tasks:
        opts.task_ids = await _unfinished_tasks(ctx, proto)
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

    def on_end(w: Any) -> None:
        if w.task is not None:
            ctx.remember(w.task, w.ref)

    watcher = Watcher(
        fetch=proto.get,
        fetch_result=fetch_result,
        config=WatchConfig(
            floor=opts.interval or 0.0,
            default_interval=proto.default_interval,
            timeout=opts.timeout,
            want_result=opts.want_result,
            push=opts.push,
        ),
        events=_EndHook(events, on_end),
        clock=ctx.clock,
        sleep=ctx.sleep,
    )
    with _signals(watcher):
        for task_id in dict.fromkeys(opts.task_ids):
            refs[task_id] = ctx.ref(task_id)
            watcher.add(refs[task_id], opts.initial.get(task_id))
        if opts.push:
            watcher.feeds = proto.push_feeds(list(refs.values()))
        if isinstance(events, LiveEvents):
            events.track(watcher.watched)
            events.__enter__()
        code = await watcher.run()
    events.finish(watcher.watched, code)
    return code


async def _unfinished_tasks(ctx: Context, proto: Any) -> list[str]:
    """`watch --all`: the server's unfinished tasks (where it can list them) and the task
    book's tasks for this endpoint that were last seen unfinished."""
    ids: dict[str, None] = {}
    book = ctx.book.tasks(ctx.server) if ctx.remembers else {}
    if proto.can_list:
        listed = await proto.list_tasks([ctx.ref(t) for t in book])
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
    refs = [ctx.ref(t) for t in ctx.book.tasks(ctx.server)] if ctx.remembers else []
    tasks = await proto.list_tasks(refs)
    for t in tasks:
        ctx.remember(t, ctx.ref(t.taskId))
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
class CallOptions:
    tool: str
    pairs: list[str] = field(default_factory=list)
    args_json: str | None = None
    ttl: int | None = None
    watch: bool = False
    want_result: bool = False
    interval: float | None = None
    timeout: float | None = None
    push: bool = True


async def run_call(opts: CallOptions, ctx: Context) -> int:
    from . import arguments

    proto = await ctx.protocol()
    schema = await proto.tool_schema(opts.tool) if arguments.needs_schema(opts.pairs) else None
    args = arguments.build(opts.pairs, opts.args_json, schema)
    created = await proto.call_tool(opts.tool, args, ttl=opts.ttl)
    return await _after_create(
        ctx,
        created,
        watch=opts.watch,
        want_result=opts.want_result,
        interval=opts.interval,
        timeout=opts.timeout,
        push=opts.push,
    )


@dataclass
class SendOptions:
    text: str
    watch: bool = False
    want_result: bool = False
    interval: float | None = None
    timeout: float | None = None
    push: bool = True


async def run_send(opts: SendOptions, ctx: Context) -> int:
    proto = await ctx.protocol()
    created = await proto.send_message(opts.text, context_id=ctx.options.context_id)
    return await _after_create(
        ctx,
        created,
        watch=opts.watch,
        want_result=opts.want_result,
        interval=opts.interval,
        timeout=opts.timeout,
        push=opts.push,
    )


async def _after_create(
    ctx: Context,
    created: Any,
    *,
    watch: bool,
    want_result: bool,
    interval: float | None,
    timeout: float | None,
    title: str | None = None,
    push: bool = True,
) -> int:
    from .protocols.base import TaskRef, TaskResult

    if created.task is None:
        ctx.out.note("the server answered without creating a task; this is its answer")
        placeholder = Task(taskId="-", status="completed", protocol="?", server=ctx.server, raw={})
        ctx.out.result(TaskResult(task=placeholder, payload=created.result))
        return 0
    task: Task = created.task
    ref: TaskRef = created.ref or TaskRef(task.taskId)
    ctx.remember(task, ref)
    if not ctx.remembers:
        watch = watch or not want_result
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
            watch=True,
            want_result=opts.want_result,
            interval=None,
            timeout=None,
            title="mcptask demo: watching a task on the embedded server",
        )


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()
