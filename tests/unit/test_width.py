"""scheduler/width.py on a fake clock: the polls in flight widen while they run late, narrow at
once when the server asks for less, and say once when they are late at the cap; the watcher
narrows on HTTP 429, Retry-After and refused connections."""

from __future__ import annotations

import asyncio

from mcptask.errors import HttpStatusError, RpcError, TransportError
from mcptask.model.refs import TaskRef
from mcptask.model.results import TaskResult
from mcptask.model.task import Task
from mcptask.scheduler import width as width_mod
from mcptask.scheduler.watcher import WatchConfig, Watched, Watcher
from mcptask.scheduler.width import Width


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def _window(w: Width, clock: Clock, *, polls: int, late: float, answer: float) -> object:
    """A window of the clock in which `polls` went out `late` and their answers took `answer`
    seconds, some waiting for a place; what the last one's judgement said."""
    for _ in range(polls):
        w.answered(answer)
    w._waited += 1
    for _ in range(polls - 1):
        w.started(late)
    clock.now += width_mod.WINDOW
    return w.started(late)


def test_late_polls_that_wait_for_a_place_widen_up_to_the_cap() -> None:
    clock = Clock()

    async def go() -> list[int]:
        w = Width(2, 8, clock)
        limits = []
        for _ in range(5):
            for _ in range(w.limit):
                await w.acquire()
            extra = asyncio.ensure_future(w.acquire())  # waits: no place
            await asyncio.sleep(0)
            assert not extra.done()
            # 100 polls due a second, answers of 0.1 s: 2 places carry 20 a second
            _window(w, clock, polls=100, late=0.5, answer=0.1)
            limits.append(w.limit)
            await asyncio.sleep(0)
            if not extra.done():  # at the cap: it waits for a place to be given back
                w.release()
            await extra
            for _ in range(w.busy):
                w.release()
        return limits

    assert asyncio.run(go()) == [4, 8, 8, 8, 8]  # and not past the cap


def test_late_polls_that_more_places_would_not_speed_up_do_not_widen() -> None:
    """A burst of polls due at once, answered quickly: the places are not what holds them."""
    clock = Clock()
    w = Width(4, 64, clock)
    _window(w, clock, polls=100, late=0.5, answer=0.002)  # 4 places carry 2,000 a second
    assert w.limit == 4


def test_polls_on_time_shrink_the_width_back() -> None:
    clock = Clock()
    w = Width(4, 64, clock)
    _window(w, clock, polls=100, late=0.5, answer=0.1)
    _window(w, clock, polls=100, late=0.5, answer=0.1)
    assert w.limit == 16
    for _ in range(30):
        _window(w, clock, polls=100, late=0.0, answer=0.01)
    assert w.limit == 4


def test_polls_on_time_do_not_widen() -> None:
    clock = Clock()
    w = Width(4, 64, clock)
    assert _window(w, clock, polls=100, late=0.01, answer=0.1) is None
    assert w.limit == 4


def test_narrowing_halves_at_once_and_holds_for_the_servers_wait() -> None:
    clock = Clock()
    w = Width(16, 64, clock)
    w.narrow(wait=5.0)
    assert w.limit == 8
    for _ in range(5):  # late and short of places, but inside the server's wait: held
        _window(w, clock, polls=200, late=1.0, answer=0.1)
    assert w.limit == 8
    _window(w, clock, polls=200, late=1.0, answer=0.1)  # the wait and a window are over
    assert w.limit == 16
    for _ in range(10):  # a burst of refusals (the polls that were in flight) is one
        w.narrow()
    assert w.limit == 8
    for _ in range(10):  # one a window
        clock.now += width_mod.WINDOW
        w.narrow()
    assert w.limit == 1


def test_late_at_the_cap_is_said_once() -> None:
    clock = Clock()
    w = Width(4, 4, clock)
    said = _window(w, clock, polls=100, late=2.0, answer=0.2)
    assert isinstance(said, width_mod.Lateness)
    assert said.cap == 4 and said.p50 == 2.0 and said.answer == 0.2
    assert "2.0 s late" in said.line() and "MCPTASK_MAX_IN_FLIGHT" in said.line()
    assert said.to_json()["lateMs"] == {"p50": 2000, "p99": 2000}
    assert _window(w, clock, polls=100, late=3.0, answer=0.2) is None  # once


def test_a_cancelled_wait_passes_its_place_on() -> None:
    clock = Clock()

    async def go() -> int:
        w = Width(1, 1, clock)
        await w.acquire()
        second = asyncio.ensure_future(w.acquire())
        third = asyncio.ensure_future(w.acquire())
        await asyncio.sleep(0)
        second.cancel()
        w.release()
        await third
        return w.busy

    assert asyncio.run(go()) == 1


def _task(tid: str, status: str = "working") -> Task:
    return Task(
        taskId=tid,
        status=status,  # type: ignore[arg-type]
        pollInterval=1000,
        protocol="test",
        server="test",
        raw={},
    )


class Quiet:
    def update(self, w: Watched, via: str) -> None:
        pass

    def retry(self, w: Watched, error: str, delay: float) -> None:
        pass

    def end(self, w: Watched) -> None:
        pass


def _narrowed_by(error: Exception) -> int:
    clock = Clock()
    answers: list[Exception | Task] = [error, _task("a", "completed")]

    async def fetch(ref: TaskRef) -> Task:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def result(ref: TaskRef, task: Task) -> TaskResult:
        raise AssertionError("no result wanted")

    watcher = Watcher(
        fetch=fetch,
        fetch_result=result,
        config=WatchConfig(max_in_flight=16),
        events=Quiet(),
        clock=clock,
        sleep=clock.sleep,
    )
    watcher.add(TaskRef("a"))
    asyncio.run(watcher.run())
    assert watcher.width is not None
    return watcher.width.limit


def test_the_watcher_narrows_when_the_server_asks_for_less() -> None:
    assert _narrowed_by(HttpStatusError("HTTP 429", status=429)) == 8
    assert _narrowed_by(RpcError(-32429, "Too Many Requests")) == 8
    assert _narrowed_by(HttpStatusError("HTTP 503", status=503, retry_after=2.0)) == 8
    refused = TransportError("cannot connect: connection refused")
    refused.refused = True
    assert _narrowed_by(refused) == 8
    assert _narrowed_by(TransportError("connection reset")) == 16


def test_polls_late_for_a_servers_429_pace_do_not_widen_and_say_the_pace() -> None:
    """Issue 41: after HTTP 429 the watch keeps to a pace (scheduler/rate.py); polls late for
    it are not helped by more places: the width stays, and the lateness is said once with the
    pace as its reason (stderr, ndjson `late` with `pacedPerSecond`, the live view)."""
    clock = Clock()
    w = Width(4, 64, clock)
    for _ in range(20):
        w.answered(0.01)
        w.started(2.0, paced=262.4)
    w._waited += 5
    clock.now += width_mod.WINDOW
    said = w.started(2.0, paced=262.4)
    assert w.limit == 4
    assert isinstance(said, width_mod.Lateness)
    assert said.paced == 262.4
    assert said.to_json()["pacedPerSecond"] == 262.4
    assert said.line() == (
        "polls run 2.0 s late (p99 2.0 s): the server answers HTTP 429 (too many requests) "
        "past about 262 requests a second, and mcptask keeps to that pace"
    )
    clock.now += width_mod.WINDOW
    assert w.started(3.0, paced=262.4) is None  # said once


def test_a_width_that_cannot_carry_the_pace_still_widens() -> None:
    """Paced at 150 a second, answers of 0.1 s: 4 places carry 40 a second, so polls are
    late for want of places, not for the pace: the width widens (and nothing blames the
    pace)."""
    clock = Clock()
    w = Width(4, 64, clock)
    for _ in range(100):
        w.answered(0.1)
    w._waited += 10
    for _ in range(99):
        w.started(2.0, paced=150.0)
    clock.now += width_mod.WINDOW
    assert w.started(2.0, paced=150.0) is None
    assert w.limit == 8
