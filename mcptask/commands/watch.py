"""`mcptask watch TASK_ID...`: follow tasks until they end (push first, polls as a safety net),
as a live view, ndjson events or one JSON summary."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mcptask.commands._answering import inline_answers
from mcptask.commands._shared import signals
from mcptask.errors import ExitCode, UsageError
from mcptask.model import TERMINAL, Task
from mcptask.output.live import JsonEvents, LiveEvents, NdjsonEvents
from mcptask.text.command_line import command_line

if TYPE_CHECKING:
    from mcptask.protocols.base import TaskRef
    from mcptask.scheduler.watcher import Watched, Watcher
    from mcptask.session.context import Context


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
    #: `--until STATUS,...`: a task that reaches one of them ends there, exit 0
    until: str | None = None
    #: `--bell`: ring the terminal's bell when the watch ends; `--notify`: a desktop notification
    bell: bool = False
    notify: bool = False

    def until_statuses(self) -> frozenset[str]:
        from mcptask.scheduler.watcher import parse_until

        return parse_until(self.until) if self.until is not None else frozenset()


async def run_watch(opts: WatchOptions, ctx: Context) -> int:
    if opts.all_tasks and opts.task_ids:
        raise UsageError("give task ids or --all, not both")
    if not opts.task_ids and not opts.all_tasks:
        raise UsageError("watch needs task ids (or --all)")
    opts.until_statuses()  # a bad --until is a usage error before any request
    if opts.all_tasks:
        places = await _everything_unfinished(ctx)
    else:
        places = ctx.locate_many(opts.task_ids)
        for place, ids in places:
            place.require_reachable("watch", ids)
    if not any(ids for _, ids in places):
        ctx.out.note("no unfinished tasks to watch")
        if not ctx.out.pretty:
            ctx.out.line(
                {"exitCode": ExitCode.OK, "tasks": []}
                if ctx.out.mode == "json"
                else {"event": "done", "exitCode": ExitCode.OK, "outcomes": {}}
            )
        return ExitCode.OK
    # over stdio a task ends with the server: the input hints say what works there
    ctx.out.stdio = any(place.target.command is not None for place, _ in places)
    events = _events(opts, ctx)
    lock = asyncio.Lock()  # one inline form at a time, whichever server asks
    groups = []
    for place, ids in places:
        if ids:
            groups.append(await _Group.start(opts, place, ids, events, lock))
    watched = [w for g in groups for w in g.watcher.watched]
    if isinstance(events, LiveEvents):
        if len(groups) > 1:
            events.servers = {w.task_id: g.short_name for g in groups for w in g.watcher.watched}
        events.track(watched)
        # a server that pushes may push progress: its column is there from the first frame
        events.may_progress = opts.push and any(g.watcher.feeds for g in groups)
        events.last_seen = _last_seen(groups)
    watchers = [g.watcher for g in groups]
    with signals(*watchers), _reader_gone(ctx, watchers):
        # the live view is left on every path, so the terminal never stays in live mode
        view = events if isinstance(events, LiveEvents) else contextlib.nullcontext()
        with view:
            try:
                codes = await asyncio.gather(*(w.run() for w in watchers))
            finally:
                for g in groups:
                    g.flush()
    code = max(codes, default=ExitCode.OK)
    events.finish(watched, code)
    _alert(opts, ctx, watched)
    if all(g.ctx.remembers for g in groups):  # stdio tasks die with the server
        _resume_hint(ctx, watched)
    return code


def _events(opts: WatchOptions, ctx: Context) -> NdjsonEvents | JsonEvents | LiveEvents:
    if ctx.out.mode == "pretty":
        return LiveEvents(ctx.out, with_result=opts.want_result, clock=ctx.clock, title=opts.title)
    if ctx.out.mode == "ndjson":
        return NdjsonEvents(ctx.out, with_result=opts.want_result)
    return JsonEvents(ctx.out, with_result=opts.want_result)


class _Group:
    """The tasks of one endpoint in a watch: its context (connection pool, session, push
    stream), its protocol, its own watcher (pace, rate limits, backoff), and the ended tasks
    waiting to be written to the task book in a batch (each write rewrites the whole file: at
    most every BOOK_FLUSH seconds during the watch, and the rest when it ends), each with its
    result (fetched in the tick that saw it end, with or without --result: `result` has it
    after the server forgot the task)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.ended: list[tuple[Task, TaskRef]] = []
        self.results: dict[str, dict[str, Any]] = {}
        self.flushed = ctx.clock()
        self.watcher: Watcher

    @property
    def short_name(self) -> str:
        target = self.ctx.target
        if target.name:
            return target.name
        u = urlsplit(self.ctx.server)
        return u.netloc or self.ctx.server

    @classmethod
    async def start(
        cls,
        opts: WatchOptions,
        ctx: Context,
        task_ids: list[str],
        events: NdjsonEvents | JsonEvents | LiveEvents,
        lock: asyncio.Lock,
    ) -> _Group:
        from mcptask.scheduler.watcher import WatchConfig, Watcher

        self = cls(ctx)
        await ctx.expect_tasks(len(task_ids))  # before the first request builds the client
        proto = await ctx.protocol()
        answers = isinstance(events, LiveEvents) and proto.can_answer and ctx.env.interactive
        self.watcher = Watcher(
            fetch=proto.get,
            fetch_result=proto.result,
            config=WatchConfig(
                floor=opts.interval or 0.0,
                default_interval=proto.default_interval,
                timeout=opts.timeout,
                want_result=opts.want_result,
                keep_result=ctx.remembers,
                push=opts.push,
                until=opts.until_statuses(),
                on_input=inline_answers(ctx, proto, events, lock=lock)
                if answers and isinstance(events, LiveEvents)
                else None,
            ),
            events=_EndHook(events, self.on_end),
            clock=ctx.clock,
            sleep=ctx.sleep,
        )
        refs = ctx.refs(task_ids)
        for ref in refs:
            self.watcher.add(ref, opts.initial.get(ref.task_id))
        if opts.push:
            self.watcher.feeds = proto.push_feeds(refs)
        return self

    def flush(self) -> None:
        if self.ended:
            batch, kept = self.ended[:], dict(self.results)
            self.ended.clear()
            self.results.clear()
            self.ctx.remember_many(batch, each=kept)
        self.flushed = self.ctx.clock()

    def on_end(self, w: Watched) -> None:
        if w.task is not None:
            self.ended.append((w.task, w.ref))
            if w.result is not None and not w.result.broken:
                self.results[w.task_id] = {"result": w.result.to_json()}
            if self.ctx.clock() - self.flushed >= BOOK_FLUSH:
                self.flush()


def _alert(opts: WatchOptions, ctx: Context, watched: list[Watched]) -> None:
    """`--bell`, `--notify`: the watch ended (not when it was interrupted)."""
    if not (opts.bell or opts.notify) or any(w.outcome == "interrupted" for w in watched):
        return
    from mcptask.output import alerts

    if opts.bell:
        alerts.bell(ctx.out.stderr)
    if opts.notify:
        why = alerts.notify(
            "mcptask watch ended", alerts.summary([(w.task_id, w.outcome) for w in watched])
        )
        if why is not None:
            ctx.out.note(why)


def _last_seen(groups: list[_Group]) -> dict[str, str]:
    """The status the task book last saw for each watched task (the live view shows it while a
    server that is down keeps a task from being seen)."""
    seen: dict[str, str] = {}
    for g in groups:
        if not g.ctx.remembers:
            continue
        for w in g.watcher.watched:
            rec = g.ctx.book.lookup(g.ctx.server, w.task_id)
            if rec is not None and isinstance(rec.get("status"), str):
                seen[w.task_id] = rec["status"]
    return seen


def _resume_hint(ctx: Context, watched: list[Watched]) -> None:
    """After Ctrl-C (or SIGTERM) the tasks keep running: say how to pick them up again."""
    left = [w.task_id for w in watched if w.outcome == "interrupted"]
    if left:
        ctx.out.note(
            f"the {'task keeps' if len(left) == 1 else 'tasks keep'} running on the server; "
            f"resume with `{command_line('watch', *left)}`"
        )


@contextlib.contextmanager
def _reader_gone(ctx: Context, watchers: list[Watcher]) -> Iterator[None]:
    """`mcptask watch ID | head -1`: when the reader of a pipe goes away, end the watch
    within a fraction of a second, without waiting for the next line to fail to write (with
    push, that may be a whole safety-net interval away)."""
    fd = _pipe_fd(ctx)
    if fd is None:
        yield
        return
    import select

    def gone() -> bool:
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))

    async def watch_pipe() -> None:
        while True:
            await asyncio.sleep(PIPE_CHECK)
            if gone():
                for watcher in watchers:
                    watcher.interrupt(ExitCode.OK)
                raise BrokenPipeError

    job = asyncio.ensure_future(watch_pipe())
    try:
        yield
    finally:
        job.cancel()
    if job.done() and not job.cancelled() and isinstance(job.exception(), BrokenPipeError):
        raise BrokenPipeError


def _pipe_fd(ctx: Context) -> int | None:
    """The descriptor of stdout when it is a pipe or socket (None for files and terminals)."""
    import os
    import stat

    try:
        fd = ctx.out.stdout.fileno()
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError):
        return None  # a StringIO in tests, a closed stream
    return fd if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else None


#: seconds between two task-book writes of ended tasks during a watch
BOOK_FLUSH = 1.0
#: seconds between two looks at whether the reader of a piped stdout went away
PIPE_CHECK = 0.2


async def _everything_unfinished(ctx: Context) -> list[tuple[Context, list[str]]]:
    """`watch --all`: with a target, its unfinished tasks; without one, those of every
    endpoint in the task book."""
    if ctx.has_target():
        return [(ctx, await _unfinished_tasks(ctx))]
    places = []
    for endpoint in ctx.book.all_endpoints():
        place = ctx.at(endpoint)
        places.append((place, await _unfinished_tasks(place)))
    return places


async def _unfinished_tasks(ctx: Context) -> list[str]:
    """The server's unfinished tasks (where it can list them) and the task book's tasks for
    this endpoint that were last seen unfinished."""
    ids: dict[str, None] = {}
    book = ctx.book.tasks(ctx.server) if ctx.remembers else {}
    unfinished = [t for t, rec in book.items() if str(rec.get("status", "working")) not in TERMINAL]
    if not unfinished and not ctx.has_target():
        return []  # nothing of ours is left there: no need to ask the server
    proto = await ctx.protocol()
    await ctx.expect_tasks(len(unfinished))
    if proto.can_list:
        from mcptask.protocols.base import CannotList

        try:
            listed = await proto.list_tasks(ctx.refs(book))
        except CannotList as exc:  # the server turned out not to list after all
            ctx.out.note(f"{exc.message}; watching the task book's unfinished tasks")
            listed = []
        ids.update((t.taskId, None) for t in listed if not t.terminal)
    ids.update(dict.fromkeys(unfinished))
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

    def progress(self, w: Any) -> None:
        from mcptask.scheduler.watcher import ShowsProgress

        if isinstance(self.inner, ShowsProgress):
            self.inner.progress(w)
