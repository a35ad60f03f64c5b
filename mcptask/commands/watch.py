"""`mcptask watch TASK_ID...`: follow tasks until they end (push first, polls as a safety net),
as a live view, ndjson events or one JSON summary."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ExitCode, UsageError
from ..model import TERMINAL, Task
from ..render import JsonEvents, LiveEvents, NdjsonEvents
from ._answering import inline_answers
from ._shared import signals

if TYPE_CHECKING:
    from ..context import Context
    from ..protocols.base import TaskRef, TaskResult


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
    from ..watch import WatchConfig, Watcher

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
                    {"exitCode": ExitCode.OK, "tasks": []}
                    if ctx.out.mode == "json"
                    else {"event": "done", "exitCode": ExitCode.OK, "outcomes": {}}
                )
            return ExitCode.OK
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
            on_input=inline_answers(ctx, proto, events)
            if isinstance(events, LiveEvents) and proto.can_answer and ctx.env.interactive
            else None,
        ),
        events=_EndHook(events, on_end),
        clock=ctx.clock,
        sleep=ctx.sleep,
    )
    with signals(watcher):
        for ref in ctx.refs(dict.fromkeys(opts.task_ids)):
            refs[ref.task_id] = ref
            watcher.add(ref, opts.initial.get(ref.task_id))
        if opts.push:
            watcher.feeds = proto.push_feeds(list(refs.values()))
        view: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
        if isinstance(events, LiveEvents):
            events.track(watcher.watched)
            view = events  # left on every path, so the terminal never stays in live mode
        with view:
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
