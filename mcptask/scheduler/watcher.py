"""The polling scheduler: pure logic. It knows nothing of HTTP or terminals; it is given a way
to fetch a task, a way to fetch a result, a clock, a sleep, and somewhere to report events.

Rules (the CLI contract, "Pacing"):
- each task is polled `pollInterval` after the previous answer *arrived*, never sooner; the
  server's hint is clamped by `pacing.poll_seconds`; `floor` (`--interval`) only lengthens;
- terminal states end a task; so do input_required/auth_required when the run cannot answer;
- `until` (`--until STATUS,...`): a task that reaches one of those statuses ends there, exit 0
  (a terminal status it does not name ends it by its outcome, as without `until`);
- with `want_result` (or `keep_result`), the result is fetched in the same tick that sees
  `completed`/`failed`; with `want_result` a failed fetch is retried like a poll, and a result
  that cannot be had ends the task with exit 4 and `result_error` (never a silent 0);
- a task that was seen and then is not found has expired;
- transient failures are retried with backoff; after `max_failures` in a row the task ends
  with outcome `error`; HTTP 429 backs off every task (the whole origin), -32429 that task;
  a server that answers "too many requests" (429, -32429) is alive and asks for a slower
  pace, not a failing one: its refusals end a task only once they have lasted `max_limited`
  seconds in a row (a busy server slows a big watch down, it does not end its tasks); after
  an HTTP 429 a big watch's polls go out spaced at the pace `scheduler/rate.py` learns;
- where the server pushes updates (`PushFeed`s), they are applied at once (`via: push`); each
  push about a task puts its next safety-net poll off, to at most `max(RELAX_FACTOR x interval,
  RELAXED_MIN)` after the last poll, but never past one interval after that push: a feed that
  is live but says nothing about a task (or a server that never pushes) leaves it polled at
  the pace the server asks; when the feed drops or ends for any reason (an error while
  delivering included), polling returns to the normal pace at once; a terminal status that
  came by push is confirmed by one poll before the task ends; a poll's answer that a push
  applied while the poll was in flight shows to be older (`_overtaken`) is not applied.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from mcptask.errors import (
    OUTCOME_EXIT,
    TOO_MANY_REQUESTS,
    AuthError,
    ExitCode,
    HttpStatusError,
    McptaskError,
    ProtocolError,
    RpcError,
    ServerError,
    SessionGone,
    TaskNotFound,
    TransportError,
    UsageError,
    is_transient,
)
from mcptask.model.refs import TaskRef
from mcptask.model.results import TaskResult
from mcptask.model.status import INTERRUPTED, STATUSES, TERMINAL
from mcptask.model.task import Task
from mcptask.model.times import epoch, ms_seconds
from mcptask.pacing import poll_seconds
from mcptask.protocols.artifacts import ArtifactTracker, ArtifactUpdate
from mcptask.protocols.base import Progress, PushFeed
from mcptask.scheduler.rate import Rate
from mcptask.scheduler.width import DEFAULT_CAP, Lateness, Width

MAX_BACKOFF = 60.0
RELAX_FACTOR = 5.0
RELAXED_MIN = 10.0

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]
Fetch = Callable[[TaskRef], Awaitable[Task]]
FetchResult = Callable[[TaskRef, Task], Awaitable[TaskResult]]
#: answers a task that asks for input (the inline form on a terminal): returns the task as the
#: server shows it once it took the answer, or None when it was not answered
OnInput = Callable[["Watched"], Awaitable[Task | None]]


@dataclass
class WatchConfig:
    floor: float = 0.0
    default_interval: float = 1.0
    timeout: float | None = None
    want_result: bool = False
    #: fetch the result of a task seen `completed`/`failed` even without `want_result` (so that
    #: the caller keeps it): one try, a failure changes nothing
    keep_result: bool = False
    max_failures: int = 5
    #: seconds of "too many requests" in a row (HTTP 429, -32429) after which a task ends
    #: with outcome `error`; until then they are retried however many they are
    max_limited: float = 600.0
    #: polls in flight at once at the start; lateness widens it up to `cap_in_flight`
    #: (scheduler/width.py)
    max_in_flight: int = 16
    cap_in_flight: int = DEFAULT_CAP
    #: end a task that needs input (the run cannot answer it)
    stop_on_input: bool = True
    #: use the server's push feeds (`--no-push` turns it off)
    push: bool = True
    #: answer tasks that ask for input instead of ending them (`input_required` only); the
    #: task is not polled while it is being answered, the others are
    on_input: OnInput | None = None
    #: statuses that end a task with exit 0 (`--until`): the watch waits for the moment, e.g.
    #: `input_required` to answer from a script; see `parse_until`
    until: frozenset[str] = frozenset()
    #: follow the tasks' artifacts as they grow (A2A): for a task, what its stream said of
    #: each artifact's latest chunk (`TaskProtocol.chunk_ends`); None: no artifacts to follow
    artifacts: Callable[[str], dict[str, bool] | None] | None = None


@dataclass
class Watched:
    ref: TaskRef
    task: Task | None = None
    due: float = 0.0
    started: float = 0.0
    failures: int = 0
    #: "too many requests" answers in a row (HTTP 429, -32429: not `failures`), and when
    #: they began (clock time), or None
    refusals: int = 0
    limited_since: float | None = None
    last_error: str | None = None
    outcome: str | None = None
    exit_code: int | None = None
    result: TaskResult | None = None
    result_error: str | None = None
    #: the task was seen terminal; its result is still to be fetched (a retry is due)
    result_pending: bool = False
    via: str = "poll"
    #: when the last poll's answer arrived
    answered: float = 0.0
    #: the task's push feed is connected
    push_live: bool = False
    #: the `via` of the feeds that are live for it (`push`, `webhook`)
    live_via: set[str] = field(default_factory=set)
    #: when a push last mentioned the task (clock time), or None
    pushed: float | None = None
    #: how many pushes about it were applied (a poll in flight meanwhile may answer older news)
    pushes: int = 0
    #: `on_input` is answering the task (it is not polled meanwhile)
    asking: bool = False
    #: a poll of it is in flight
    polling: bool = False
    #: when the task ended (clock time)
    ended: float | None = None
    #: the last progress notification the server pushed for it (task-augmented calls)
    progress: Progress | None = None
    #: what the watch has shown of its artifacts (`WatchConfig.artifacts`)
    artifacts: ArtifactTracker = field(default_factory=ArtifactTracker)
    #: the latest update of each of its artifacts, by artifact id, in the order they came
    artifact_news: dict[str, ArtifactUpdate] = field(default_factory=dict)

    @property
    def task_id(self) -> str:
        return self.ref.task_id

    @property
    def done(self) -> bool:
        return self.outcome is not None


class Events(Protocol):
    def update(self, w: Watched, via: str) -> None:
        """The task's status or message changed (or it was seen for the first time)."""

    def retry(self, w: Watched, error: str, delay: float) -> None:
        """A poll failed and will be retried after `delay` seconds."""

    def end(self, w: Watched) -> None:
        """The task ended (outcome and exit_code set)."""


@runtime_checkable
class ShowsProgress(Protocol):
    """Events that also show the progress a server pushes for a task (`Watched.progress`)."""

    def progress(self, w: Watched) -> None: ...


@runtime_checkable
class ShowsArtifacts(Protocol):
    """Events that also show a task's artifacts as they grow (`WatchConfig.artifacts`)."""

    def artifact(self, w: Watched, update: ArtifactUpdate) -> None: ...


@runtime_checkable
class ShowsPush(Protocol):
    """Events that also hear when a task's push feed goes live or drops (the task book's
    recorder)."""

    def push_state(self, w: Watched, live: bool) -> None: ...


@runtime_checkable
class ShowsPace(Protocol):
    """Events that also say when polls run late with as many in flight as allowed."""

    def late(self, note: Lateness) -> None: ...


def interval_for(task: Task | None, config: WatchConfig, *, relaxed: bool = False) -> float:
    hint = poll_seconds(task.pollInterval if task is not None else None, config.default_interval)
    hint = max(hint, config.floor)
    if relaxed:
        return max(hint * RELAX_FACTOR, RELAXED_MIN)
    return hint


@dataclass
class Watcher:
    fetch: Fetch
    fetch_result: FetchResult
    config: WatchConfig
    events: Events
    clock: Clock
    sleep: Sleep
    rng: random.Random = field(default_factory=random.Random)
    watched: list[Watched] = field(default_factory=list)
    feeds: list[PushFeed] = field(default_factory=list)
    #: set by `interrupt()` (a signal handler): remaining tasks end `interrupted` with this code
    _interrupt_code: int | None = None
    _main: asyncio.Task[None] | None = None
    #: HTTP 429 holds every task of the origin until this time
    _hold_until: float = 0.0
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    #: (due, n, task): when each task is due; entries go stale when `due` changes and are
    #: checked against `w.due` when they come up
    _heap: list[tuple[float, int, Watched]] = field(default_factory=list)
    _order: itertools.count[int] = field(default_factory=itertools.count)
    #: when the loop means to wake up
    _target: float = math.inf
    #: tasks not ended yet (kept by `_end`, so the loop need not scan every task per wake)
    _open: int = 0
    #: `on_input` calls in progress
    _answering: set[asyncio.Task[None]] = field(default_factory=set)
    #: the endpoint has answered a poll in its protocol at least once during this watch
    _spoke: bool = False
    #: raised in a poll or a push feed (a closed stdout, a bug): the loop re-raises the first
    _errors: list[BaseException] = field(default_factory=list)
    #: the polls in flight and how late they run (made when the loop starts)
    width: Width | None = None
    #: how fast polls go out once the server has said "too many requests" (made with the loop)
    rate: Rate | None = None

    def add(self, ref: TaskRef, initial: Task | None = None) -> Watched:
        """Watch `ref`. With `initial` (a status the caller already has, e.g. from `call`),
        the first poll waits one interval."""
        now = self.clock()
        w = Watched(ref=ref, task=initial, started=now)
        w.due = now + interval_for(initial, self.config) if initial is not None else now
        self.watched.append(w)
        if initial is not None:
            self._spoke = True  # the caller heard the endpoint speak (it created the task)
            self.events.update(w, "poll")
            self._grown(w, initial, pushed=False)
        return w

    def interrupt(self, code: int = ExitCode.INTERRUPTED) -> None:
        self._interrupt_code = code
        if self._main is not None:
            self._main.cancel()

    async def run(self) -> int:
        """Watch until every task has ended; returns the highest exit code."""
        self._main = asyncio.current_task()
        for w in self.watched:
            if w.task is not None and not w.done:
                await self._maybe_finish(w, w.task)
        for feed in self.feeds:
            feed.progress = self.progressed
        feeds = [
            asyncio.create_task(self._run_feed(feed))
            for feed in (self.feeds if self.config.push else [])
        ]
        try:
            if self._interrupt_code is not None:
                raise asyncio.CancelledError  # a signal came before the loop began
            await self._loop()
        except asyncio.CancelledError:
            if self._interrupt_code is None:
                raise
            for w in self._active():
                self._end(w, "interrupted", self._interrupt_code)
        finally:
            for t in [*feeds, *self._answering]:
                t.cancel()
            if feeds or self._answering:
                await asyncio.gather(*feeds, *self._answering, return_exceptions=True)
        return max((w.exit_code or ExitCode.OK for w in self.watched), default=ExitCode.OK)

    # -- push ---------------------------------------------------------------------------------

    def _by_id(self, task_id: str) -> Watched | None:
        for w in self.watched:
            if w.task_id == task_id and not w.done:
                return w
        return None

    async def push(self, task: Task, via: str = "push") -> None:
        """Apply a task the server pushed, as if a poll had returned it. A terminal (or
        input-needing) status is confirmed by one poll, at once. `via`: the feed's label."""
        w = self._by_id(task.taskId)
        if w is None:
            return  # not one of ours
        if _stale(task, w.task):
            return  # a replayed or late event: the task has moved on since
        changed = not task.same_state(w.task)
        first = w.task is None
        w.task = task
        w.via = via
        w.pushed = now = self.clock()
        w.pushes += 1
        if not first:
            self._grown(w, task, pushed=True)
        if changed:
            self.events.update(w, via)
        if first:
            self._grown(w, task, pushed=True)
        if self._confirmed_by_poll(task.status):
            w.due = now
            self._schedule(w)
            self._wake.set()
        elif not w.polling and not w.asking:
            # the feed speaks of the task: its next poll may wait, up to the relaxed pace
            # after the last poll, but no longer than one interval after this push
            relaxed = w.answered + interval_for(task, self.config, relaxed=True)
            w.due = max(w.due, min(relaxed, now + interval_for(task, self.config)))

    def progressed(self, progress: Progress) -> None:
        """A progress notification the server pushed for one of the tasks: kept on the task
        and reported to the events that show progress (the live view, ndjson)."""
        w = self._by_id(progress.task_id) if progress.task_id is not None else None
        if w is None:
            return
        w.progress = progress
        if isinstance(self.events, ShowsProgress):
            self.events.progress(w)

    async def _run_feed(self, feed: PushFeed) -> None:
        """Run one feed; however it ends (returned, failed, cancelled), its tasks go back to
        polling at their own pace at once. What it raised ends the watch, as a poll's would."""
        health = self._health_for(feed)
        try:
            if feed.via == "push":
                await feed.run(self.push, health)
            else:

                async def deliver(task: Task) -> None:
                    await self.push(task, feed.via)

                await feed.run(deliver, health)
        except Exception as exc:
            self._errors.append(exc)
        finally:
            health(False)

    def _health_for(self, feed: PushFeed) -> Callable[[bool], None]:
        def health(live: bool) -> None:
            now = self.clock()
            for w in self.watched:
                if w.task_id not in feed.task_ids or w.done:
                    continue
                # several feeds may follow one task (a subscription and a webhook): it is
                # live while any of them is
                (w.live_via.add if live else w.live_via.discard)(feed.via)
                if w.push_live == bool(w.live_via):
                    continue
                w.push_live = live
                if isinstance(self.events, ShowsPush):
                    self.events.push_state(w, live)
                if not live:  # (a live feed puts no poll off until it speaks of the task)
                    # the feed dropped: back to the normal pace at once
                    w.due = max(now, min(w.due, w.answered + interval_for(w.task, self.config)))
                    self._schedule(w)
            self._wake.set()

        return health

    async def _nap(self, seconds: float | None) -> None:
        """Sleep, unless a push (or an answer) wakes the loop first; None: until woken."""
        if self._wake.is_set():
            self._wake.clear()
            return
        waker: asyncio.Future[Any] = asyncio.ensure_future(self._wake.wait())
        naps = {waker}
        if seconds is not None:
            naps.add(asyncio.ensure_future(self.sleep(seconds)))
        try:
            await asyncio.wait(naps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in naps:
                t.cancel()
            self._wake.clear()

    def _active(self) -> list[Watched]:
        return [w for w in self.watched if not w.done]

    def _schedule(self, w: Watched) -> None:
        """(Re)enter `w` in the heap at `w.due`; wake the loop if it is due sooner than the
        loop means to look."""
        if w.done:
            return
        heapq.heappush(self._heap, (w.due, next(self._order), w))
        if w.due < self._target:
            self._wake.set()

    async def _loop(self) -> None:
        """Each task is polled when it is due, independently of the others: a heap of due
        times, at most `max_in_flight` polls at once, no batch to wait for (a slow answer
        never holds back another task's poll), O(log n) per poll."""
        start = self.clock()
        deadline = start + self.config.timeout if self.config.timeout is not None else None
        width = self.width = Width(self.config.max_in_flight, self.config.cap_in_flight, self.clock)
        rate = self.rate = Rate(self.clock)
        inflight: set[asyncio.Task[None]] = set()
        failed = self._errors
        active = self._active()
        self._open = len(active)
        for w in active:
            self._schedule(w)

        async def poll(w: Watched) -> None:
            try:
                await width.acquire()
                held = True
                try:
                    # spaced out once the server said "too many requests" (its place taken
                    # now, not when the poll was due: those due meanwhile would all go), and
                    # never inside the origin's hold (a refusal may come while it waits); the
                    # width's place is given back while it waits
                    wait = rate.reserve(not_before=self._hold_until)
                    while wait > 0:
                        width.release()
                        held = False
                        await self.sleep(wait)
                        await width.acquire()
                        held = True
                        wait = self._hold_until - self.clock()
                    if w.done:
                        return  # ended meanwhile (a push, Ctrl-C)
                    went = self.clock()
                    note = width.started(went - w.due, rate.limit)
                    if note is not None and isinstance(self.events, ShowsPace):
                        self.events.late(note)
                    await self._poll(w)
                    width.answered(self.clock() - went)
                finally:
                    if held:
                        width.release()
            except Exception as exc:
                failed.append(exc)
                self._wake.set()
            finally:
                w.polling = False
                inflight.discard(asyncio.current_task())
                if not w.done and not w.asking:
                    self._schedule(w)
                elif w.done:
                    self._wake.set()  # perhaps the last one: let the loop see

        try:
            while self._open > 0:
                if failed:
                    raise failed[0]
                now = self.clock()
                if deadline is not None and now >= deadline:
                    for w in self._active():
                        self._end(w, "timeout")
                    return
                heap = self._heap
                while heap and heap[0][0] <= now:
                    _, _, w = heapq.heappop(heap)
                    if w.done or w.polling or w.asking:
                        continue  # a stale entry: the task is ended, polled, or asking
                    if w.due > now:  # postponed meanwhile (HTTP 429, a push feed went live)
                        heapq.heappush(heap, (w.due, next(self._order), w))
                        continue
                    w.polling = True
                    inflight.add(asyncio.ensure_future(poll(w)))
                self._target = heap[0][0] if heap else math.inf
                if deadline is not None:
                    self._target = min(self._target, deadline)
                await asyncio.sleep(0)  # polls that finish at once (tests' fakes) go first
                if self._wake.is_set():
                    self._wake.clear()
                    continue
                wait = self._target - now
                await self._nap(max(0.0, wait) if wait < math.inf else None)
            if failed:
                raise failed[0]
        finally:
            self._target = math.inf
            for t in inflight:
                t.cancel()
            if inflight:
                await asyncio.gather(*inflight, return_exceptions=True)

    async def _poll(self, w: Watched) -> None:
        if w.result_pending and w.task is not None:
            # the status is known: only the result is missing
            await self._finish(w, w.task, w.task.status in self.config.until)
            return
        pushes = w.pushes
        try:
            task = await self.fetch(w.ref)
        except TaskNotFound as exc:
            # a session that is gone is said as such; a task gone inside its ttl was lost
            lost = None
            if w.task is not None and not isinstance(exc, SessionGone):
                lost = lost_inside_ttl(w.task)
            if lost is not None:
                w.last_error = lost  # a server that forgot it: not an expiry
                self._end(w, "unknown")
            elif w.task is not None:
                self._end(w, "expired")
            else:
                w.last_error = exc.message
                self._end(w, "unknown")
            return
        except AuthError as exc:
            w.last_error = exc.message
            self._end(w, "error", exc.exit_code)
            return
        except McptaskError as exc:
            if not _retryable(exc) or (not self._spoke and _not_the_protocol(exc)):
                # an endpoint that never once spoke the protocol is not retried
                w.last_error = exc.message
                self._end(w, "error", exc.exit_code)
                return
            self._failed(w, exc)
            return
        self._spoke = True
        if self.rate is not None:
            self.rate.answered()
        _recovered(w)
        w.last_error = None
        w.answered = self.clock()
        if w.pushes != pushes and _overtaken(task, w.task):
            self._keep_pushed(w)
            return
        await self._seen(w, task, "poll")

    def _keep_pushed(self, w: Watched) -> None:
        """A poll's answer that a push, applied while it was in flight, has overtaken: what the
        push said stands. A status the push said that needs confirming (terminal, asking,
        `until`) is confirmed by a poll sent now, after it; otherwise the server's pace."""
        assert w.task is not None
        if self._confirmed_by_poll(w.task.status):
            w.due = self.clock()
        else:
            w.due = max(self.clock() + interval_for(w.task, self.config), self._hold_until)

    def _confirmed_by_poll(self, status: str) -> bool:
        """A pushed status a poll must confirm, at once, before the watch acts on it: the task
        ended, asks for something, or reached a status `until` names."""
        return status in TERMINAL or status in INTERRUPTED or status in self.config.until

    async def _seen(self, w: Watched, task: Task, via: str) -> None:
        if w.via != "poll" and w.task is not None and w.task.status == task.status:
            via = w.via  # the poll confirms what the push (or webhook) said
        changed = not task.same_state(w.task)
        first = w.task is None
        w.task = task
        w.via = via
        if not first:  # what grew comes before the status it grew under changes
            self._grown(w, task, pushed=False)
        if changed:
            self.events.update(w, via)
        if first:
            self._grown(w, task, pushed=False)
        await self._maybe_finish(w, task)

    def _grown(self, w: Watched, task: Task, *, pushed: bool) -> None:
        """Report what is new in the task's artifacts (where the watch follows them); a pushed
        task says, from its stream, whether each artifact's latest chunk was its last."""
        ends = self.config.artifacts
        if ends is None:
            return
        for update in w.artifacts.updates(task, (ends(task.taskId) or {}) if pushed else None):
            w.artifact_news.pop(update.artifact_id, None)
            w.artifact_news[update.artifact_id] = update
            if isinstance(self.events, ShowsArtifacts):
                self.events.artifact(w, update)

    async def _maybe_finish(self, w: Watched, task: Task) -> None:
        reached = task.status in self.config.until
        if task.status in TERMINAL:
            await self._finish(w, task, reached)
        elif reached:
            self._end(w, task.status, ExitCode.OK)
        elif task.status == "input_required" and self.config.on_input is not None:
            self._ask(w)
        elif task.status in INTERRUPTED and self.config.stop_on_input:
            self._end(w, task.status)
        else:
            # the server's pace; a push about the task meanwhile puts the poll off (`push`)
            pace = interval_for(task, self.config)
            w.due = max(self.clock() + pace, self._hold_until)

    async def _finish(self, w: Watched, task: Task, reached: bool = False) -> None:
        """End a task seen terminal, with its result where there is one to fetch; `reached`:
        its status is one `until` names (exit 0, unless the result wanted cannot be had)."""
        wanted = self.config.want_result
        by_state = ExitCode.OK if reached else None
        if task.status not in ("completed", "failed") or not (wanted or self.config.keep_result):
            self._end(w, task.status, by_state)
            return
        try:
            w.result = await self.fetch_result(w.ref, task)
        except McptaskError as exc:
            w.result_pending = False
            if not wanted:
                self._end(w, task.status, by_state)  # kept only when it can be had at once
            elif _retryable(exc) and not self._gives_up(w, exc):
                w.result_pending = True
                self._failed(w, exc)
            else:
                w.result_error = exc.message
                self._end(w, task.status, ExitCode.SERVER)
            return
        w.result_pending = False
        _recovered(w)
        code = by_state
        if wanted and w.result.broken:
            w.result_error = w.result.error_message
            code = ExitCode.SERVER
        self._end(w, task.status, code)

    def _ask(self, w: Watched) -> None:
        """Hand a task that asks for input to `on_input`, without holding up the others."""
        if w.asking:
            return
        w.asking = True
        job = asyncio.ensure_future(self._answer(w))
        self._answering.add(job)
        job.add_done_callback(self._answering.discard)

    async def _answer(self, w: Watched) -> None:
        assert self.config.on_input is not None
        after: Task | None = None
        try:
            after = await self.config.on_input(w)
        except McptaskError as exc:  # expected: the task ends as an error that says why
            w.last_error = exc.message
            self._end(w, "error", exc.exit_code)
        except Exception as exc:  # a bug: it ends the watch, as one in a poll does
            self._errors.append(exc)
        finally:
            w.asking = False
        if not w.done:
            if after is not None:
                w.answered = self.clock()
                await self._seen(w, after, "poll")  # a new question is asked in turn
            elif w.task is not None and w.task.status in INTERRUPTED:
                self._end(w, w.task.status)  # not answered: as without `on_input`
            else:
                w.due = self.clock()  # it moved on meanwhile (a push said so): look again
            self._schedule(w)
        self._wake.set()

    def _gives_up(self, w: Watched, exc: McptaskError) -> bool:
        """Whether a task ends on this failure (not yet counted): the `max_failures`-th in a
        row; but "too many requests" only once the server has said so for `max_limited`
        seconds in a row (it is alive; the pace is what it refuses)."""
        if _rate_limited(exc):
            now = self.clock()
            since = w.limited_since if w.limited_since is not None else now
            return now - since >= self.config.max_limited
        return w.failures + 1 >= self.config.max_failures

    def _count(self, w: Watched, exc: McptaskError) -> int:
        """Count a failure with those of its kind: a refusal for pace in `refusals` (since
        `limited_since`), any other in `failures` (the refusals before it forgotten). How many
        of its kind in a row, this one included."""
        if _rate_limited(exc):
            if w.limited_since is None:
                w.limited_since = self.clock()
            w.refusals += 1
            return w.refusals
        w.refusals, w.limited_since = 0, None
        w.failures += 1
        return w.failures

    def _failed(self, w: Watched, exc: McptaskError) -> None:
        ends = self._gives_up(w, exc)
        tries = self._count(w, exc)
        w.last_error = exc.message
        if ends:
            self._end(w, "error", ExitCode.SERVER)
            return
        retry_after = exc.retry_after if isinstance(exc, ServerError) else None
        if retry_after is not None:
            delay = min(float(retry_after), MAX_BACKOFF * 5)
        else:
            base = interval_for(w.task, self.config)
            delay = min(MAX_BACKOFF, base * 2 ** min(tries - 1, 16)) * self.rng.uniform(0.75, 1.25)
        delay = max(delay, interval_for(w.task, self.config) if retry_after is None else 0.0)
        now = self.clock()
        # an origin-wide hold (HTTP 429 on another task) applies to this retry too
        delay = max(delay, self._hold_until - now)
        w.due = now + delay
        if self.width is not None and _asks_for_less(exc):
            self.width.narrow(float(retry_after or 0.0))
        if _http_429(exc):
            if self.rate is not None:
                self.rate.refused()  # and the polls after the wait go out spaced
            # HTTP 429 speaks for the whole origin: every task waits
            self._hold_until = max(self._hold_until, now + delay)
            for other in self._active():
                other.due = max(other.due, now + delay)
        self.events.retry(w, exc.message, delay)

    def _end(self, w: Watched, outcome: str, exit_code: int | None = None) -> None:
        if w.outcome is None:
            self._open -= 1
        w.outcome = outcome
        w.ended = self.clock()
        w.exit_code = (
            exit_code if exit_code is not None else OUTCOME_EXIT.get(outcome, ExitCode.INTERNAL)
        )
        self.events.end(w)


def parse_until(text: str) -> frozenset[str]:
    """`--until input_required,completed`: status words (MCP's, A2A's; `-` or `_`, any case);
    an unknown word is a usage error naming the known ones."""
    words = [w.strip().lower().replace("-", "_") for w in text.split(",")]
    words = ["cancelled" if w == "canceled" else w for w in words if w]
    unknown = [w for w in words if w not in STATUSES]
    if unknown or not words:
        known = ", ".join(sorted(STATUSES))
        raise UsageError(f"--until: unknown status {', '.join(unknown) or repr(text)} ({known})")
    return frozenset(words)


#: statuses a gateway answers for a backend that is away for a moment: retried even before
#: the endpoint has spoken the protocol
GATEWAY_STATUSES = frozenset({429, 502, 503, 504})


def _not_the_protocol(exc: McptaskError) -> bool:
    """An answer that is not the protocol at all (HTML, a page for another status, not
    JSON-RPC), as opposed to a connection failure or a gateway's passing trouble."""
    if isinstance(exc, HttpStatusError):
        return exc.status not in GATEWAY_STATUSES
    return isinstance(exc, ProtocolError)


def _overtaken(answer: Task, known: Task | None) -> bool:
    """A poll's answer older than what a push said while the poll was in flight (the server
    answered the poll, then pushed; the push was read first). Terminal states are final, so
    a terminal answer is never older than a live state; with both `lastUpdatedAt`s the older
    one is older; without them the two cannot be ordered, and the push, read last, stands."""
    if known is None or answer.same_state(known):
        return False
    if answer.terminal and not known.terminal:
        return False
    before, after = epoch(known.lastUpdatedAt), epoch(answer.lastUpdatedAt)
    if before is not None and after is not None:
        return after < before
    return True


def _stale(pushed: Task, known: Task | None) -> bool:
    """A pushed task older than what is known: the known one is terminal (terminal states are
    final), or the push was last updated before it (a stream resumed with Last-Event-ID may
    replay events the watch has already seen)."""
    if known is None:
        return False
    if known.terminal:
        return True
    before, after = epoch(known.lastUpdatedAt), epoch(pushed.lastUpdatedAt)
    return before is not None and after is not None and after < before


def lost_inside_ttl(task: Task, now: datetime | None = None) -> str | None:
    """Why a task the server no longer knows did not expire: it was created (`createdAt`)
    less than its `ttl` ago (or its ttl is unlimited), so the server lost it (a stateless
    gateway that forgets tasks at once). None when that cannot be told (no `createdAt`, no
    ttl given) or the ttl may have run out."""
    if "ttl" not in task.raw and "ttlMs" not in task.raw:
        return None
    return lost_after(task.taskId, task.createdAt, task.ttl, now)


def lost_after(
    task_id: str, created_at: str | None, ttl: int | None, now: datetime | None = None
) -> str | None:
    """`lost_inside_ttl` from the task's creation time and ttl (ms; None: unlimited)."""
    created = epoch(created_at)
    if created is None:
        return None
    from datetime import UTC

    age = (now or datetime.now(UTC)).timestamp() - created
    if age < 0 or not math.isfinite(age):
        return None
    if ttl is None:
        within = "its ttl is unlimited"
    elif age * 1000 < ttl:
        within = f"well inside its ttl of {_seconds(ms_seconds(ttl))}"
    else:
        return None
    return (
        f"the server no longer knows task {task_id}, {_seconds(age)} after it was "
        f"created, and {within}: the server lost the task (it did not expire)"
    )


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


def _asks_for_less(exc: McptaskError) -> bool:
    """The server asks for fewer requests: HTTP 429 (or JSON-RPC's -32429), a `Retry-After`,
    a refused connection."""
    if isinstance(exc, TransportError) and exc.refused:
        return True
    if isinstance(exc, ServerError) and exc.retry_after is not None:
        return True
    return _rate_limited(exc)


def _recovered(w: Watched) -> None:
    """An answer came: no failures or refusals in a row any more."""
    w.failures = w.refusals = 0
    w.limited_since = None


def _http_429(exc: McptaskError) -> bool:
    """HTTP 429, whatever its body (a JSON-RPC error in it is an `RpcError` that keeps the
    status): it speaks for the whole origin."""
    return isinstance(exc, ServerError) and exc.http_status == 429


def _rate_limited(exc: McptaskError) -> bool:
    """The server says "too many requests" (HTTP 429, JSON-RPC -32429): it is there, and
    asks for a slower pace."""
    return _http_429(exc) or (isinstance(exc, RpcError) and exc.code == TOO_MANY_REQUESTS)


def _retryable(exc: McptaskError) -> bool:
    """Transient failures (`errors.is_transient`), and an answer that is not the protocol,
    which may be a proxy's hiccup (retried only once the endpoint has spoken: `_poll`)."""
    return is_transient(exc) or isinstance(exc, ProtocolError)
