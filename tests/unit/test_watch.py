"""The scheduler with a fake clock and no network."""

from __future__ import annotations

import asyncio
import itertools
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from mcptask.errors import (
    AuthError,
    HttpStatusError,
    RpcError,
    SessionGone,
    TaskNotFound,
    TransportError,
)
from mcptask.model.refs import TaskRef
from mcptask.model.results import TaskResult
from mcptask.model.task import Task
from mcptask.pacing import MIN_POLL_INTERVAL as MIN_INTERVAL
from mcptask.scheduler.watcher import WatchConfig, Watched, Watcher


def task(
    tid: str, status: str = "working", poll: int | None = 1000, msg: str | None = None
) -> Task:
    return Task(
        taskId=tid,
        status=status,  # type: ignore[arg-type]
        statusMessage=msg,
        pollInterval=poll,
        protocol="test",
        server="test",
        raw={},
    )


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@dataclass
class Recorder:
    updates: list[tuple[str, str, str | None]] = field(default_factory=list)
    ends: list[tuple[str, str, int | None]] = field(default_factory=list)
    retries: list[tuple[str, float]] = field(default_factory=list)

    def update(self, w: Watched, via: str) -> None:
        assert w.task is not None
        self.updates.append((w.task_id, w.task.status, w.task.statusMessage))

    def retry(self, w: Watched, error: str, delay: float) -> None:
        self.retries.append((w.task_id, delay))

    def end(self, w: Watched) -> None:
        self.ends.append((w.task_id, w.outcome or "", w.exit_code))


class Script:
    """A server that answers each task's polls from a list, recording the poll times."""

    def __init__(self, clock: FakeClock, answers: dict[str, list[Any]], latency: float = 0.0):
        self.clock = clock
        self.answers = {k: list(v) for k, v in answers.items()}
        self.polls: dict[str, list[float]] = {k: [] for k in answers}
        self.results: list[tuple[str, float]] = []
        self.latency = latency

    async def fetch(self, ref: TaskRef) -> Task:
        self.polls[ref.task_id].append(self.clock.now)
        self.clock.now += self.latency
        queue = self.answers[ref.task_id]
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, Exception):
            raise answer
        assert isinstance(answer, Task)
        return answer

    async def fetch_result(self, ref: TaskRef, t: Task) -> TaskResult:
        self.results.append((ref.task_id, self.clock.now))
        return TaskResult(task=t, payload={"content": [{"type": "text", "text": "done"}]})


def make(script: Script, clock: FakeClock, rec: Recorder, **config: Any) -> Watcher:
    return Watcher(
        fetch=script.fetch,
        fetch_result=script.fetch_result,
        config=WatchConfig(**config),
        events=rec,
        clock=clock,
        sleep=clock.sleep,
        rng=random.Random(1),
    )


def run(w: Watcher) -> int:
    return asyncio.run(w.run())


def gaps(times: list[float]) -> list[float]:
    return [round(b - a, 6) for a, b in itertools.pairwise(times)]


def test_honours_a_poll_interval_that_changes_mid_run() -> None:
    clock = FakeClock()
    answers = [
        task("a", poll=1000),
        task("a", poll=3000),
        task("a", poll=500),
        task("a", "completed"),
    ]
    script = Script(clock, {"a": answers})
    rec = Recorder()
    w = make(script, clock, rec)
    w.add(TaskRef("a"))
    assert run(w) == 0
    assert gaps(script.polls["a"]) == [1.0, 3.0, 0.5]
    assert rec.ends == [("a", "completed", 0)]


def test_next_poll_counts_from_the_answer_not_the_request() -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [task("a"), task("a"), task("a", "completed")]}, latency=0.4)
    w = make(script, clock, Recorder())
    w.add(TaskRef("a"))
    run(w)
    # each answer arrives 0.4 s after its request; the next request waits a full interval after that
    assert gaps(script.polls["a"]) == [1.4, 1.4]


def test_interval_floor_only_lengthens() -> None:
    clock = FakeClock()
    answers = [task("a", poll=1000), task("a", poll=5000), task("a", "completed")]
    script = Script(clock, {"a": answers})
    w = make(script, clock, Recorder(), floor=2.0)
    w.add(TaskRef("a"))
    run(w)
    assert gaps(script.polls["a"]) == [2.0, 5.0]


@pytest.mark.parametrize("hint", [0, -5, 1])
def test_tiny_or_negative_hints_are_clamped(hint: int) -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [task("a", poll=hint)] * 4 + [task("a", "completed")]})
    w = make(script, clock, Recorder())
    w.add(TaskRef("a"))
    run(w)
    assert all(g >= MIN_INTERVAL for g in gaps(script.polls["a"]))


def test_default_interval_without_a_hint() -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [task("a", poll=None), task("a", "completed", poll=None)]})
    w = make(script, clock, Recorder(), default_interval=2.0)
    w.add(TaskRef("a"))
    run(w)
    assert gaps(script.polls["a"]) == [2.0]


@pytest.mark.parametrize(
    ("status", "code"),
    [
        ("completed", 0),
        ("failed", 5),
        ("cancelled", 8),
        ("rejected", 8),
        ("input_required", 6),
        ("auth_required", 6),
    ],
)
def test_stops_at_every_terminal_or_interrupting_state(status: str, code: int) -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [task("a"), task("a", status)]})
    rec = Recorder()
    w = make(script, clock, rec)
    w.add(TaskRef("a"))
    assert run(w) == code
    assert rec.ends == [("a", status, code)]
    assert len(script.polls["a"]) == 2


def test_not_found_after_a_sighting_is_expired_and_before_is_unknown() -> None:
    clock = FakeClock()
    gone = TaskNotFound("task not found")
    script = Script(clock, {"a": [task("a"), gone], "b": [gone]})
    rec = Recorder()
    w = make(script, clock, rec)
    w.add(TaskRef("a"))
    w.add(TaskRef("b"))
    assert run(w) == 9
    assert sorted(rec.ends) == [("a", "expired", 9), ("b", "unknown", 9)]


def test_a_gone_session_is_told_by_its_type_never_by_the_words() -> None:
    """Issue 36: a task seen inside its ttl whose session is gone ends `expired` (the session,
    not a lost task); a plain not-found ends `unknown` with the lost-inside-ttl reason, whatever
    the server's words say (here: the word "session")."""
    from datetime import UTC, datetime

    made = datetime.now(UTC).isoformat()
    seen = task("a").model_copy(update={"createdAt": made, "raw": {"ttl": 3_600_000}})
    clock = FakeClock()
    by_words = TaskNotFound("task a: no such session-scoped task")  # a server's wording
    by_type = SessionGone("the server said: gone", reason="HTTP 404")
    script = Script(
        clock, {"a": [seen, by_words], "b": [seen.model_copy(update={"taskId": "b"}), by_type]}
    )
    rec = Recorder()
    w = make(script, clock, rec)
    w.add(TaskRef("a"))
    w.add(TaskRef("b"))
    run(w)
    assert sorted(rec.ends) == [("a", "unknown", 9), ("b", "expired", 9)]


def test_result_is_fetched_in_the_tick_that_sees_completion() -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [task("a"), task("a", "completed")]})
    w = make(script, clock, Recorder(), want_result=True)
    watched = w.add(TaskRef("a"))
    run(w)
    assert script.results == [("a", script.polls["a"][-1])]
    assert watched.result is not None


def test_failed_task_result_is_fetched_too_but_not_cancelled() -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [task("a", "failed")], "b": [task("b", "cancelled")]})
    w = make(script, clock, Recorder(), want_result=True)
    w.add(TaskRef("a"))
    w.add(TaskRef("b"))
    assert run(w) == 8
    assert [r[0] for r in script.results] == ["a"]


def test_initial_status_delays_the_first_poll_by_one_interval() -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [task("a", "completed")]})
    rec = Recorder()
    w = make(script, clock, rec)
    w.add(TaskRef("a"), initial=task("a", poll=2000, msg="created"))
    run(w)
    assert script.polls["a"] == [2.0]
    assert rec.updates[0] == ("a", "working", "created")


def test_only_changes_are_reported() -> None:
    clock = FakeClock()
    answers = [
        task("a", msg="x"),
        task("a", msg="x"),
        task("a", msg="y"),
        task("a", "completed", msg="y"),
    ]
    script = Script(clock, {"a": answers})
    rec = Recorder()
    w = make(script, clock, rec)
    w.add(TaskRef("a"))
    run(w)
    assert rec.updates == [("a", "working", "x"), ("a", "working", "y"), ("a", "completed", "y")]


def test_timeout_ends_remaining_tasks_with_seven() -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [task("a")], "b": [task("b", "completed")]})
    rec = Recorder()
    w = make(script, clock, rec, timeout=5.0)
    w.add(TaskRef("a"))
    w.add(TaskRef("b"))
    assert run(w) == 7
    assert sorted(rec.ends) == [("a", "timeout", 7), ("b", "completed", 0)]
    assert clock.now == pytest.approx(5.0)


def test_transient_failures_back_off_and_recover() -> None:
    clock = FakeClock()
    boom = TransportError("connection reset")
    script = Script(clock, {"a": [task("a"), boom, boom, task("a", "completed")]})
    rec = Recorder()
    w = make(script, clock, rec)
    w.add(TaskRef("a"))
    assert run(w) == 0
    assert len(rec.retries) == 2
    # backoff grows and never undercuts the poll interval
    assert rec.retries[0][1] >= 1.0
    assert rec.retries[1][1] > rec.retries[0][1]


def test_five_failures_in_a_row_end_the_task_with_error() -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [HttpStatusError("HTTP 502", status=502)]})
    rec = Recorder()
    w = make(script, clock, rec)
    w.add(TaskRef("a"))
    assert run(w) == 4
    assert rec.ends == [("a", "error", 4)]
    assert len(script.polls["a"]) == 5


def test_auth_failure_ends_at_once_with_three() -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [AuthError("HTTP 401")]})
    rec = Recorder()
    w = make(script, clock, rec)
    w.add(TaskRef("a"))
    assert run(w) == 3
    assert len(script.polls["a"]) == 1


def test_retry_after_is_honoured_for_the_whole_origin_on_http_429() -> None:
    clock = FakeClock()
    limited = HttpStatusError("HTTP 429", status=429, retry_after=7.0)
    script = Script(
        clock,
        {
            "a": [task("a"), limited, task("a", "completed")],
            "b": [task("b")] * 3 + [task("b", "completed")],
        },
    )
    w = make(script, clock, Recorder())
    w.add(TaskRef("a"))
    w.add(TaskRef("b"))
    run(w)
    # a's 429 at t=1 pushes both tasks to t>=8
    assert script.polls["a"][2] == pytest.approx(8.0)
    assert all(t < 1.5 or t >= 8.0 for t in script.polls["b"])


@pytest.mark.parametrize(
    "limited",
    [
        HttpStatusError("HTTP 429", status=429, retry_after=1.0),
        HttpStatusError("HTTP 429", status=429),
        RpcError(-32429, "Too Many Requests"),
        RpcError(-32000, "slow down", http_status=429, retry_after=1.0),
    ],
    ids=["429-retry-after", "429", "-32429", "429-with-a-json-rpc-body"],
)
def test_too_many_requests_slow_a_task_down_and_do_not_end_it(limited: Exception) -> None:
    """Issue 41: a server that says "too many requests" is alive and asks for a slower pace:
    twelve refusals in a row (more than `max_failures`) are retried, and the task is followed
    to its end (a 1,000-task watch against a rate-limited server ended 304 tasks in `error`);
    the retries back off all the same."""
    clock = FakeClock()
    script = Script(clock, {"a": [task("a"), *[limited] * 12, task("a", "completed")]})
    rec = Recorder()
    w = make(script, clock, rec)
    w.add(TaskRef("a"))
    assert run(w) == 0
    assert rec.ends == [("a", "completed", 0)]
    assert len(rec.retries) == 12
    assert all(delay >= 1.0 for _, delay in rec.retries)


def test_too_many_requests_for_max_limited_seconds_end_the_task() -> None:
    """A server that says nothing but "too many requests" for `max_limited` seconds in a
    row: the task ends with `error` (exit 4), not a watch that never ends."""
    clock = FakeClock()
    limited = HttpStatusError("HTTP 429", status=429, retry_after=10.0)
    script = Script(clock, {"a": [task("a"), limited]})
    rec = Recorder()
    w = make(script, clock, rec, max_limited=60.0)
    w.add(TaskRef("a"))
    assert run(w) == 4
    assert rec.ends == [("a", "error", 4)]
    first_refusal = script.polls["a"][1]
    assert script.polls["a"][-1] - first_refusal == pytest.approx(60.0)


def test_other_failures_after_too_many_requests_count_from_one() -> None:
    """A refusal for pace is not a failure: 502s after a run of 429s still get their five."""
    clock = FakeClock()
    refusal = HttpStatusError("HTTP 429", status=429, retry_after=1.0)
    broken = HttpStatusError("HTTP 502", status=502)
    script = Script(clock, {"a": [task("a"), *[refusal] * 8, broken]})
    rec = Recorder()
    w = make(script, clock, rec)
    w.add(TaskRef("a"))
    assert run(w) == 4
    assert rec.ends == [("a", "error", 4)]
    assert len(script.polls["a"]) == 1 + 8 + 5


def test_rpc_rate_limit_backs_off_that_task_only() -> None:
    clock = FakeClock()
    limited = RpcError(-32429, "Too Many Requests")
    script = Script(
        clock,
        {
            "a": [task("a"), limited, task("a", "completed")],
            "b": [task("b"), task("b", "completed")],
        },
    )
    w = make(script, clock, Recorder())
    w.add(TaskRef("a"))
    w.add(TaskRef("b"))
    run(w)
    assert script.polls["b"] == [0.0, 1.0]
    assert script.polls["a"][2] - script.polls["a"][1] >= 1.0


def test_each_task_keeps_its_own_schedule() -> None:
    clock = FakeClock()
    script = Script(
        clock,
        {
            "fast": [task("fast", poll=500)] * 4 + [task("fast", "completed")],
            "slow": [task("slow", poll=2000), task("slow", "completed")],
        },
    )
    w = make(script, clock, Recorder())
    w.add(TaskRef("fast"))
    w.add(TaskRef("slow"))
    run(w)
    assert gaps(script.polls["fast"]) == [0.5] * 4
    assert gaps(script.polls["slow"]) == [2.0]


def test_interrupt_ends_remaining_tasks() -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [task("a")]})
    rec = Recorder()

    async def scenario() -> int:
        w = make(script, clock, rec)
        w.add(TaskRef("a"))

        async def slow_sleep(seconds: float) -> None:
            clock.now += seconds
            w.interrupt(130)
            await asyncio.sleep(0)

        w.sleep = slow_sleep
        return await w.run()

    assert asyncio.run(scenario()) == 130
    assert rec.ends == [("a", "interrupted", 130)]


def test_a_hung_poll_holds_back_no_other_task_nor_the_timeout() -> None:
    clock = FakeClock()
    script = Script(
        clock, {"fast": [task("fast")] * 4 + [task("fast", "completed")], "hung": [task("hung")]}
    )
    rec = Recorder()
    w = make(script, clock, rec, timeout=10.0)
    w.add(TaskRef("fast"))
    w.add(TaskRef("hung"))
    answer = script.fetch

    async def fetch(ref: TaskRef) -> Task:
        if ref.task_id == "hung" and script.polls["hung"]:
            script.polls["hung"].append(clock.now)
            await asyncio.Event().wait()  # never answers
        return await answer(ref)

    w.fetch = fetch
    assert run(w) == 7
    assert gaps(script.polls["fast"]) == [1.0] * 4  # not held back by the hung poll
    assert script.polls["hung"] == [0.0, 1.0]
    assert sorted(rec.ends) == [("fast", "completed", 0), ("hung", "timeout", 7)]
    assert clock.now == pytest.approx(10.0)


def test_at_most_max_in_flight_polls_at_once() -> None:
    clock = FakeClock()
    ids = [f"t{i}" for i in range(6)]
    script = Script(clock, {i: [task(i), task(i, "completed")] for i in ids})
    w = make(script, clock, Recorder(), max_in_flight=2)
    for i in ids:
        w.add(TaskRef(i))
    answer = script.fetch
    now_in_flight = [0]
    most = [0]

    async def fetch(ref: TaskRef) -> Task:
        now_in_flight[0] += 1
        most[0] = max(most[0], now_in_flight[0])
        try:
            for _ in range(3):
                await asyncio.sleep(0)
            return await answer(ref)
        finally:
            now_in_flight[0] -= 1

    w.fetch = fetch
    assert run(w) == 0
    assert most[0] == 2
    assert all(len(script.polls[i]) == 2 for i in ids)


def test_an_exception_in_a_poll_ends_the_watch_with_it() -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [task("a")], "b": [task("b")]})

    class Closed(Recorder):
        def update(self, w: Watched, via: str) -> None:
            if w.task_id == "b":
                raise BrokenPipeError("stdout closed")

    w = make(script, clock, Closed())
    w.add(TaskRef("a"))
    w.add(TaskRef("b"))
    with pytest.raises(BrokenPipeError):
        run(w)


def stamped(tid: str, status: str, msg: str, at: str) -> Task:
    return task(tid, status, msg=msg).model_copy(update={"lastUpdatedAt": at})


def test_stale_pushes_are_ignored() -> None:
    """A stream resumed with Last-Event-ID may replay events the watch has seen: a pushed
    task older than the known one, or any push once the task is terminal, changes nothing."""
    clock = FakeClock()
    rec = Recorder()
    done = stamped("a", "completed", "ready", "2026-12-01T10:00:05Z")
    w = make(Script(clock, {"a": [done]}), clock, rec)
    watched = w.add(TaskRef("a"), stamped("a", "working", "drafting", "2026-12-01T10:00:03Z"))

    async def scenario() -> None:
        await w.push(stamped("a", "working", "reading", "2026-12-01T10:00:01Z"))  # older
        assert watched.task is not None and watched.task.statusMessage == "drafting"
        await w.push(stamped("a", "working", "finalizing", "2026-12-01T10:00:04Z"))  # newer
        assert watched.task is not None and watched.task.statusMessage == "finalizing"
        watched.task = done  # a poll saw the end (its result is being fetched)
        await w.push(stamped("a", "working", "checking", "2026-12-01T10:00:09Z"))
        assert watched.task is done

    asyncio.run(scenario())
    assert [u[2] for u in rec.updates] == ["drafting", "finalizing"]


def test_a_bug_in_the_inline_answer_ends_the_watch_like_a_poll_error() -> None:
    """Issue 23, defect 3: what `on_input` raised was kept in `last_error` and never shown;
    the task just ended `input_required`. A bug propagates, as one in a poll does."""
    clock = FakeClock()
    script = Script(clock, {"a": [task("a", "input_required")]})

    async def broken(w: Watched) -> Task | None:
        raise KeyError("a bug")

    w = make(script, clock, Recorder(), on_input=broken)
    w.add(TaskRef("a"))
    with pytest.raises(KeyError, match="a bug"):
        run(w)


def test_an_expected_failure_of_the_inline_answer_is_shown() -> None:
    """An mcptask error from `on_input` ends the task as an error that says why (exit 4)."""
    clock = FakeClock()
    script = Script(clock, {"a": [task("a", "input_required")]})

    async def refused(w: Watched) -> Task | None:
        raise TransportError("the answer could not be sent")

    rec = Recorder()
    w = make(script, clock, rec, on_input=refused)
    watched = w.add(TaskRef("a"))
    assert run(w) == 4
    assert rec.ends == [("a", "error", 4)]
    assert watched.last_error == "the answer could not be sent"
