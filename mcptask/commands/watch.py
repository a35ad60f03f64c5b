"""`mcptask watch TASK_ID...`: follow tasks until they end (push first, polls as a safety net),
as a live view, ndjson events or one JSON summary."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mcptask.commands._answering import inline_answers
from mcptask.commands._shared import Ending, signals
from mcptask.errors import ExitCode, UsageError
from mcptask.model.events import EventKind, event
from mcptask.model.status import TERMINAL
from mcptask.model.task import Task
from mcptask.output.live import JsonEvents, LiveEvents, NdjsonEvents
from mcptask.text.command_line import command_line

if TYPE_CHECKING:
    from mcptask.commands._save import SaveTo
    from mcptask.commands._webhook import PushReceiver
    from mcptask.export.live import LiveExport
    from mcptask.model.refs import TaskRef
    from mcptask.protocols.artifacts import ArtifactUpdate
    from mcptask.scheduler.watcher import Watched, Watcher
    from mcptask.scheduler.width import Lateness
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
    #: `--push-receiver`: a webhook receiver for A2A push notifications (`commands._webhook`)
    receiver: PushReceiver | None = None
    #: `--bell`: ring the terminal's bell when the watch ends; `--notify`: a desktop notification
    bell: bool = False
    notify: bool = False
    #: where the watch's events go instead of the output mode's (`log --follow`'s own watch)
    sink: Any = None
    #: seconds between two writes of what the watch saw to the task book (0: at once)
    book_flush: float | None = None
    #: a task that asks for input ends the watch (False: it is followed until it ends)
    stop_on_input: bool = True
    #: `--save DIR` (with `--result`): each task's result as files (`commands._save`)
    save: SaveTo | None = None
    #: `--otlp`: each task's story exported as it ends (`export.live`)
    otlp: bool = False
    #: `--traceparent`: the trace a task joins when it has none yet (over `TRACEPARENT`)
    traceparent: str | None = None

    def until_statuses(self) -> frozenset[str]:
        from mcptask.scheduler.watcher import parse_until

        return parse_until(self.until) if self.until is not None else frozenset()


async def run_watch(opts: WatchOptions, ctx: Context) -> int:
    if opts.all_tasks and opts.task_ids:
        raise UsageError("give task ids or --all, not both")
    if not opts.task_ids and not opts.all_tasks:
        raise UsageError("watch needs task ids (or --all)")
    opts.until_statuses()  # a bad --until is a usage error before any request
    if opts.save is not None and not opts.want_result:
        raise UsageError("--save writes the result: it goes with --result")
    if opts.receiver is not None:
        if not opts.push:
            raise UsageError("--push-receiver is a push channel: drop --no-push")
        opts.receiver.check()
    ctx.name_trace(opts.traceparent)  # a malformed one is a usage error before any request
    #: `--all`: the endpoints that could not be asked (the watch then ends with exit 4)
    unreachable: list[str] = []
    if opts.all_tasks:
        places = await _everything_unfinished(ctx, unreachable)
    else:
        places = ctx.places.locate_many(opts.task_ids)
        for place, ids in places:
            place.places.require_reachable("watch", ids)
    if not any(ids for _, ids in places):
        code: int = ExitCode.SERVER if unreachable else ExitCode.OK
        if unreachable:
            ctx.out.note(
                f"no unfinished tasks to watch on the endpoints that answered; "
                f"{_endpoints(unreachable)} could not be reached (exit {int(code)})"
            )
        else:
            ctx.out.note("no unfinished tasks to watch")
        if not ctx.out.pretty:
            ctx.out.line(
                {"exitCode": code, "tasks": []}
                if ctx.out.mode == "json"
                else {"event": "done", "exitCode": code, "outcomes": {}}
            )
        return code
    # over stdio a task ends with the server: the input hints say what works there
    ctx.out.stdio = any(place.target.command is not None for place, _ in places)
    live = _live_export(opts, ctx)  # nowhere to export to: a usage error before any poll
    events = opts.sink if opts.sink is not None else _events(opts, ctx)
    lock = asyncio.Lock()  # one inline form at a time, whichever server asks
    # the book is written by a thread of its own: a book another process holds locked delays
    # the records, never the polls, the view or Ctrl-C
    ctx.book.write_in_background()
    try:
        with signals() as ending:  # before the first event (a task's status as created) is out
            return await _watch(opts, ctx, places, events, lock, ending, unreachable, live)
    finally:
        ctx.book.finish_writes(BOOK_FINISH)
        if live is not None:
            live.close(EXPORT_FINISH)
            if live.warning is not None:
                ctx.out.note(
                    f"{live.warning}; the watch went on (`mcptask export` sends the stories later)"
                )


#: seconds the end of a watch waits for its last stories to be exported (a backend that does
#: not answer: its timeout, `commands.export.LIVE_TIMEOUT`, ends the try before)
EXPORT_FINISH = 12.0


def _live_export(opts: WatchOptions, ctx: Context) -> LiveExport | None:
    """`--otlp`: the exporter of the tasks' stories as they end (its destination checked)."""
    if not opts.otlp:
        return None
    if not ctx.places.records:
        ctx.out.note("--otlp: this target's tasks are not kept in the task book: nothing to export")
        return None
    import os

    from mcptask.commands.export import LIVE_TIMEOUT, make_sink
    from mcptask.export.live import LiveExport

    timed = any(
        os.environ.get(v, "").strip()
        for v in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
    )
    return LiveExport(ctx.book.path, make_sink(None, None, None if timed else LIVE_TIMEOUT))


def _endpoints(endpoints: list[str]) -> str:
    if len(endpoints) == 1:
        return endpoints[0]
    return f"{len(endpoints)} endpoints ({', '.join(endpoints)})"


async def _watch(
    opts: WatchOptions,
    ctx: Context,
    places: list[tuple[Context, list[str]]],
    events: NdjsonEvents | JsonEvents | LiveEvents,
    lock: asyncio.Lock,
    ending: Ending,
    unreachable: list[str],
    live: LiveExport | None = None,
) -> int:
    groups = []
    for place, ids in places:
        if ids:
            group = await _Group.start(opts, place, ids, events, lock, ending.add)
            group.live = live
            groups.append(group)
    watched = [w for g in groups for w in g.watcher.watched]
    if isinstance(events, LiveEvents):
        if len(groups) > 1:
            events.servers = {w.task_id: g.short_name for g in groups for w in g.watcher.watched}
        events.track(watched)
        events.last_seen = _last_seen(groups)
    watchers = [g.watcher for g in groups]
    receiving: contextlib.AbstractAsyncContextManager[None] = contextlib.nullcontext()
    if opts.receiver is not None:
        from mcptask.commands._webhook import push_receiver

        receiving = push_receiver(opts.receiver, groups, ctx)
    with _reader_gone(ctx, watchers):
        async with receiving:
            # the live view is left on every path, so the terminal never stays in live mode
            view = events if isinstance(events, LiveEvents) else contextlib.nullcontext()
            with view:
                ticker = asyncio.ensure_future(_flush_now_and_then(groups))
                try:
                    codes = await asyncio.gather(*(w.run() for w in watchers))
                finally:
                    ticker.cancel()
                    for g in groups:
                        g.flush()
                        g.contact()
    code = max(codes, default=ExitCode.OK)
    if opts.save is not None:
        await _save_results(opts.save, groups, events)
    if unreachable:  # `--all`: the tasks there were not watched, the watch is not all done
        code = max(code, ExitCode.SERVER)
    events.finish(watched, code)
    if unreachable:
        ctx.out.note(
            f"{_endpoints(unreachable)} could not be reached: its tasks were not watched "
            f"(exit {int(code)})"
        )
    _alert(opts, ctx, watched)
    if all(g.ctx.places.remembers for g in groups):  # stdio tasks die with the server
        _resume_hint(ctx, watched)
    return code


async def _save_results(
    save: SaveTo, groups: list[_Group], events: NdjsonEvents | JsonEvents | LiveEvents
) -> None:
    """`--save DIR`: each task's result as files, in DIR (a folder per task when there are
    several), once every task has ended; what was written is an ndjson `saved` line, `saved` in
    the JSON summary, or a line a file on stderr below the live view."""
    from dataclasses import replace

    from mcptask.commands import _save

    several = sum(len(g.watcher.watched) for g in groups) > 1
    if isinstance(events, LiveEvents):
        events.__exit__()  # the lines go below the final frame
    for g in groups:
        for w in g.watcher.watched:
            if w.result is None or w.result.error is not None:
                continue
            to = save
            if several:
                to = replace(save, directory=save.directory / _save.safe_name(w.task_id, "task"))
            manifest = await _save.save(g.ctx, w.task_id, w.result.payload, to)
            events.saved(manifest)


def _events(opts: WatchOptions, ctx: Context) -> NdjsonEvents | JsonEvents | LiveEvents:
    if ctx.out.mode == "pretty":
        return LiveEvents(ctx.out, with_result=opts.want_result, clock=ctx.clock, title=opts.title)
    if ctx.out.mode == "ndjson":
        return NdjsonEvents(ctx.out, with_result=opts.want_result)
    return JsonEvents(ctx.out, with_result=opts.want_result)


class _Group:
    """The tasks of one endpoint in a watch: its context (connection pool, session, push
    stream), its protocol, its own watcher (pace, rate limits, backoff), and what the watch
    saw of them waiting to be written to the task book in a batch (one transaction at most
    every BOOK_FLUSH seconds, and the rest when it ends): each change of status or message
    (when and whether by push or poll), retries, progress, push feeds opened and lost, and
    each ended task with its result (fetched in the tick that saw it end, with or without
    --result: `result` has it after the server forgot the task)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        #: task id -> (task, reference, fields): the last state seen of each since the flush
        self.seen: dict[str, tuple[Task, TaskRef, dict[str, Any]]] = {}
        self.events: list[dict[str, Any]] = []
        self.flushed = ctx.clock()
        #: a task's state came from the endpoint during the watch
        self.answered = False
        #: seconds between two writes to the book
        self.flush_every = BOOK_FLUSH
        self.watcher: Watcher
        #: `--otlp`: told of each task whose end the book holds
        self.live: LiveExport | None = None

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
        on_watcher: Callable[[Watcher], None] = lambda _: None,
    ) -> _Group:
        from mcptask.scheduler.watcher import WatchConfig, Watcher

        self = cls(ctx)
        if opts.book_flush is not None:
            self.flush_every = opts.book_flush
        await ctx.endpoint.expect_tasks(len(task_ids))  # before the first request builds the client
        proto = await ctx.endpoint.protocol()
        answers = isinstance(events, LiveEvents) and proto.can_answer and ctx.env.interactive
        self.watcher = Watcher(
            fetch=proto.get,
            fetch_result=proto.result,
            config=WatchConfig(
                floor=opts.interval or 0.0,
                default_interval=proto.default_interval,
                timeout=opts.timeout,
                want_result=opts.want_result,
                keep_result=ctx.places.records,
                push=opts.push,
                cap_in_flight=cap_in_flight(),
                until=opts.until_statuses(),
                stop_on_input=opts.stop_on_input,
                artifacts=proto.chunk_ends if proto.has_artifacts else None,
                on_input=inline_answers(ctx, proto, events, lock=lock)
                if answers and isinstance(events, LiveEvents)
                else None,
            ),
            events=_Recorder(events, self),
            clock=ctx.clock,
            sleep=ctx.sleep,
        )
        on_watcher(self.watcher)  # a signal from now on ends its tasks
        refs = ctx.places.refs(task_ids)
        for ref in refs:
            self.watcher.add(ref, opts.initial.get(ref.task_id))
        if opts.push:
            self.watcher.feeds = proto.push_feeds(refs)
        return self

    def flush(self) -> None:
        if self.seen or self.events:
            batch = [(task, ref) for task, ref, _ in self.seen.values()]
            each = {task.taskId: fields for task, _, fields in self.seen.values()}
            events = self.events[:]
            self.seen.clear()
            self.events.clear()
            self.ctx.places.remember_many(batch, each=each, events=events)
            ended = [e["task"] for e in events if e["kind"] == EventKind.END]
            if self.live is not None and ended:
                self.ctx.book.after_writes(partial(self.live.ended_many, self.ctx.server, ended))
        self.flushed = self.ctx.clock()

    def contact(self) -> None:
        """An endpoint none of whose tasks answered, and some failed: `book` shows when it
        last failed, `watch --all` skips it once it has not answered for a day."""
        failed = any(w.outcome == "error" for w in self.watcher.watched)
        if failed and not self.answered and self.ctx.places.records:
            self.ctx.book.contact(self.ctx.server, ok=False)

    def maybe_flush(self) -> None:
        if self.ctx.clock() - self.flushed >= self.flush_every:
            self.flush()

    def saw(self, w: Watched, via: str, **extra: Any) -> None:
        from mcptask.state.taskbook import AT, VIA

        if w.task is None:
            return
        self.answered = True
        old = self.seen.get(w.task_id)
        if old is not None and not old[0].same_state(w.task):
            self.flush()  # every change is kept, not only the last of a batch
            old = None
        fields = {**(old[2] if old is not None else {}), VIA: via, AT: time.time(), **extra}
        self.seen[w.task_id] = (w.task, w.ref, fields)
        self.maybe_flush()

    def note(self, w: Watched, kind: str, **fields: Any) -> None:
        status = w.task.status if w.task is not None else None
        self.events.append(event(w.task_id, kind, at=time.time(), status=status, **fields))
        self.maybe_flush()


async def _flush_now_and_then(groups: list[_Group]) -> None:
    """What the watch saw reaches the book within BOOK_FLUSH seconds even when nothing else
    happens (`log --follow` in another process shows it)."""
    while True:
        await asyncio.sleep(BOOK_FLUSH)
        for g in groups:
            g.maybe_flush()


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
        if not g.ctx.places.records:
            continue
        recs = g.ctx.book.lookup_many(g.ctx.server, [w.task_id for w in g.watcher.watched])
        for task_id, rec in recs.items():
            if isinstance(rec.get("status"), str):
                seen[task_id] = rec["status"]
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


#: seconds between two task-book writes during a watch (one transaction each)
BOOK_FLUSH = 0.5
#: seconds the end of a watch waits for its records to reach a book another process holds
BOOK_FINISH = 10.0
#: seconds between two looks at whether the reader of a piped stdout went away
PIPE_CHECK = 0.2


async def _everything_unfinished(
    ctx: Context, unreachable: list[str]
) -> list[tuple[Context, list[str]]]:
    """`watch --all`: with a target, its unfinished tasks; without one, those of every
    endpoint in the task book: aliases of one endpoint (a URL whose agent card named another
    endpoint of the book) once, and endpoints that have not answered for a day skipped with a
    note (their tasks stay in the book: `watch ID` still tries them). An endpoint that cannot
    be asked now is skipped with a note and added to `unreachable`."""
    if ctx.has_target():
        return [(ctx, await _unfinished_tasks(ctx, ask=True))]
    from mcptask.errors import McptaskError
    from mcptask.state.endpoints import same_place

    book = ctx.book
    silent = book.silent_endpoints(SILENT_FOR)
    places = []
    # aliases: endpoints that post to one place are one endpoint (the one named as it posts)
    chosen: dict[str, str] = {}
    for endpoint in book.endpoint_keys():
        posts_to = book.endpoint(endpoint).get("postTo")
        where = same_place(posts_to if isinstance(posts_to, str) else endpoint)
        if where not in chosen or same_place(endpoint) == where:
            chosen[where] = endpoint
    for endpoint in chosen.values():
        if endpoint in silent:
            ctx.out.note(
                f"skipping {endpoint}: it has not answered for {silent[endpoint]}; "
                f"`mcptask watch --all --url {endpoint}` tries it, "
                f"`mcptask forget --endpoint {endpoint}` drops it"
            )
            continue
        place = ctx.at(endpoint)
        try:
            ids = await _unfinished_tasks(place, ask=False)
        except McptaskError as exc:
            if exc.exit_code != ExitCode.SERVER:
                raise
            book.contact(endpoint, ok=False)
            ctx.out.note(f"skipping {endpoint}: {exc.message}")
            unreachable.append(endpoint)
            continue
        places.append((place, ids))
    return places


async def _unfinished_tasks(ctx: Context, *, ask: bool) -> list[str]:
    """The server's unfinished tasks (where it can list them) and the task book's tasks for
    this endpoint that were last seen unfinished; `ask`: list the server even when the book
    has no unfinished task there."""
    ids: dict[str, None] = {}
    book = ctx.places.known()  # status and reference of each, one read
    unfinished = [t for t, rec in book.items() if str(rec.get("status", "working")) not in TERMINAL]
    if not unfinished and not ask:
        return []  # nothing of ours is left there: no need to ask the server
    proto = await ctx.endpoint.protocol()
    await ctx.endpoint.expect_tasks(len(unfinished))
    if proto.can_list:
        from mcptask.protocols.base import CannotList

        try:
            listed = await proto.list_tasks(ctx.places.refs_from(book, book))
        except CannotList as exc:  # the server turned out not to list after all
            ctx.out.note(f"{exc.message}; watching the task book's unfinished tasks")
            listed = []
        ids.update((t.taskId, None) for t in listed if not t.terminal)
    ids.update(dict.fromkeys(unfinished))
    return list(ids)


#: `watch --all` skips an endpoint that has not answered for this long (seconds)
SILENT_FOR = 86400.0


def cap_in_flight() -> int:
    """`MCPTASK_MAX_IN_FLIGHT`: the most polls a watch keeps in flight per endpoint when its
    polls run late (1 to 100; unset: 64)."""
    import os

    from mcptask.scheduler.width import DEFAULT_CAP, MOST
    from mcptask.text.numbers import whole

    raw = os.environ.get("MCPTASK_MAX_IN_FLIGHT", "")
    return whole(raw, "MCPTASK_MAX_IN_FLIGHT", high=MOST) if raw.strip() else DEFAULT_CAP


class _Recorder:
    """Passes events through and records what the watch sees in the task book (batched by
    the task's `_Group`)."""

    def __init__(self, inner: Any, group: _Group) -> None:
        self.inner = inner
        self.group = group
        #: tasks whose push feed dropped (one that opens again has resumed)
        self.lost: set[str] = set()

    def update(self, w: Watched, via: str) -> None:
        self.group.saw(w, via)
        self.inner.update(w, via)

    def retry(self, w: Watched, error: str, delay: float) -> None:
        # the watcher counted this failure as a refusal for pace (429, -32429), not by its words
        limited = w.refusals > 0
        self.group.note(
            w, EventKind.RETRY, message=error, delay=round(delay, 3), rateLimited=limited or None
        )
        self.inner.retry(w, error, delay)

    def end(self, w: Watched) -> None:
        extra: dict[str, Any] = {}
        if w.result is not None and not w.result.broken:
            extra.update(w.result.kept())
        stdio_gone = not self.group.ctx.places.remembers and w.outcome not in TERMINAL
        if stdio_gone:  # its stdio server stops with this mcptask: it cannot be reached again
            extra["lost"] = "its stdio server has exited"
        if w.outcome not in ("error", "unknown") or stdio_gone:
            self.group.saw(w, w.via, **extra)
        if w.result is not None:
            size = len(json.dumps(w.result.to_json(), default=str)) if extra else None
            self.group.note(w, EventKind.RESULT, bytes=size, broken=w.result.broken or None)
        if w.last_error and w.outcome in ("error", "unknown"):
            self.group.note(w, EventKind.ERROR, message=w.last_error)
        if stdio_gone:
            self.group.note(
                w,
                EventKind.LOST,
                message="its stdio server stops with this mcptask: it cannot be reached",
            )
        self.group.note(w, EventKind.END, outcome=w.outcome, exitCode=w.exit_code)
        self.inner.end(w)

    def progress(self, w: Watched) -> None:
        from mcptask.scheduler.watcher import ShowsProgress

        p = w.progress
        if p is not None:
            self.group.note(
                w, EventKind.PROGRESS, message=p.message, progress=p.progress, total=p.total
            )
        if isinstance(self.inner, ShowsProgress):
            self.inner.progress(w)

    def artifact(self, w: Watched, update: ArtifactUpdate) -> None:
        from mcptask.scheduler.watcher import ShowsArtifacts

        self.group.note(
            w,
            EventKind.ARTIFACT,
            message=update.tail or None,
            artifactId=update.artifact_id,
            name=update.name,
            append=update.append,
            lastChunk=update.last_chunk,
            parts=update.total_parts,
            bytes=update.size,
        )
        if isinstance(self.inner, ShowsArtifacts):
            self.inner.artifact(w, update)

    def push_state(self, w: Watched, live: bool) -> None:
        resumed = live and w.task_id in self.lost
        if live:
            self.lost.discard(w.task_id)
        else:
            self.lost.add(w.task_id)
        self.group.note(
            w,
            EventKind.PUSH_OPEN if live else EventKind.PUSH_LOST,
            via="push",
            resumed=resumed or None,
        )

    def late(self, note: Lateness) -> None:
        """Polls of this endpoint run late at the cap of polls in flight."""
        import dataclasses

        self.inner.late(dataclasses.replace(note, server=self.group.ctx.server))
