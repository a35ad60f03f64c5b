"""Push-first watch: updates the server pushes are applied at once; polling is the safety net."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import re
import threading
import time
from datetime import datetime
from typing import Any

import httpx

from mcptask.demo.server import DemoServer
from mcptask.model.refs import TaskRef
from mcptask.model.results import TaskResult
from mcptask.model.task import Task
from mcptask.protocols.base import Deliver, Health, PushFeed
from mcptask.scheduler.watcher import RELAXED_MIN, WatchConfig, Watcher

from conftest import CliResult, RunCli
from servers.common import ServerProcess


def gets(trace: str) -> int:
    return len(re.findall(r'^> .*"method":\s*"tasks/get"', trace, re.MULTILINE))


def statuses(r: CliResult) -> list[dict[str, Any]]:
    return [ln for ln in r.lines() if ln.get("event") == "status"]


def iso_ts(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def test_push_on_server_everything_sees_every_stage_with_fewer_polls(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    url = everything_server.url
    # each task is followed by the process that creates it: a second process could start after
    # some of its four 1 s stages on a busy machine
    tool = ("call", "simulate-research-query", "--watch", "--url", url, "-o", "ndjson", "--trace")
    started = time.time()
    pushed = run_cli(*tool, "topic=push")
    ended = time.time()
    assert pushed.code == 0, pushed.stderr
    lines = statuses(pushed)
    messages = [ln["statusMessage"] for ln in lines]
    for stage in ("Analyzing content", "Synthesizing findings", "Generating report"):
        assert any(m and m.startswith(stage) for m in messages), messages
    assert lines[-1]["status"] == "completed"
    assert lines[-1]["via"] == "push"
    assert {ln["via"] for ln in lines[1:]} == {"push"}
    # the server's completion time vs the end of the watch (same machine clock)
    finished = iso_ts(lines[-1]["lastUpdatedAt"])
    assert finished <= ended  # (how soon after: bench/push_lateness.py)
    push_gets = gets(pushed.stderr)

    polled = run_cli(*tool, "topic=poll", "--no-push")
    assert polled.code == 0, polled.stderr
    assert {ln["via"] for ln in statuses(polled)} == {"poll"}
    assert "> GET" not in polled.stderr
    assert push_gets < gets(polled.stderr), (push_gets, gets(polled.stderr))
    assert started  # (timing figures live in bench/, not here)


def test_a_dropped_stream_is_reopened_with_last_event_id(run_cli: RunCli) -> None:
    with DemoServer(task_seconds=3.0, push_retry_ms=200, push_drop_after=1) as server:
        r = run_cli("call", "build-report", "--watch", "--url", server.url, "-o", "ndjson")
        assert r.code == 0, r.stderr
        lines = statuses(r)
        assert lines[-1]["status"] == "completed"
        messages = [ln["statusMessage"] for ln in lines]
        assert messages[-1] == "Report ready"
        assert "push" in {ln["via"] for ln in lines}
        # it reconnected, resuming from the last event it saw
        assert len(server.stream_requests) >= 2
        resumed = [h for h in server.stream_requests if "last-event-id" in h]
        assert resumed, server.stream_requests
        ids = [int(h["last-event-id"]) for h in resumed]
        assert ids == sorted(ids)


def test_409_falls_back_to_polling(run_cli: RunCli) -> None:
    with DemoServer(task_seconds=2.0) as server:
        created = run_cli("call", "build-report", "--url", server.url, "-o", "json")
        tid = created.json()["taskId"]
        session = server.requests[0]["headers"].get("mcp-session-id") or _session_of(server, tid)
        # another client holds the session's only stream
        held = len(server.stream_requests)
        holder = threading.Thread(target=_hold_stream, args=(server.url, session, 4.0), daemon=True)
        holder.start()
        deadline = time.monotonic() + 10
        while len(server.stream_requests) == held and time.monotonic() < deadline:
            time.sleep(0.01)  # until the server holds the stream open (a condition, not a pause)
        r = run_cli("watch", "--url", server.url, "-o", "ndjson", "--", tid)
        assert r.code == 0, r.stderr
        assert {ln["via"] for ln in statuses(r)} == {"poll"}
        holder.join()


def test_405_means_polling(run_cli: RunCli) -> None:
    with DemoServer(task_seconds=1.5, push=False) as server:
        r = run_cli("call", "build-report", "--watch", "--url", server.url, "-o", "ndjson")
        assert r.code == 0, r.stderr
        assert {ln["via"] for ln in statuses(r)} == {"poll"}


def _session_of(server: DemoServer, tid: str) -> str:
    for req in server.requests:
        if req["message"].get("method") == "tools/call":
            return str(req["headers"]["mcp-session-id"])
    raise AssertionError("no tools/call recorded")


def _hold_stream(url: str, session: str, seconds: float) -> None:
    headers = {"Mcp-Session-Id": session, "Accept": "text/event-stream"}
    deadline = time.time() + seconds
    try:
        with httpx.stream("GET", url, headers=headers, timeout=seconds + 1) as resp:
            for _ in resp.iter_bytes():
                if time.time() > deadline:
                    break
    except httpx.HTTPError:
        pass


# -- the scheduler's push rules, with a fake clock ------------------------------------------------


def task(tid: str, status: str = "working", msg: str | None = None) -> Task:
    return Task(
        taskId=tid,
        status=status,  # type: ignore[arg-type]
        statusMessage=msg,
        pollInterval=1000,
        protocol="test",
        server="test",
        raw={},
    )


class Clock:
    """Fake time. Feed events scheduled with `at` run, in order, as the fake time passes them."""

    def __init__(self) -> None:
        self.now = 0.0
        self.scheduled: list[tuple[float, Any]] = []

    def __call__(self) -> float:
        return self.now

    def at(self, when: float, action: Any) -> None:
        self.scheduled.append((when, action))
        self.scheduled.sort(key=lambda x: x[0])

    async def sleep(self, seconds: float) -> None:
        end = self.now + seconds
        await asyncio.sleep(0)
        if self.scheduled and self.scheduled[0][0] <= end:
            # the feed acts at that moment; the nap ends there (the watcher naps again)
            when, action = self.scheduled.pop(0)
            self.now = max(self.now, when)
            await action()
            return
        self.now = max(self.now, end)


class ScriptedFeed(PushFeed):
    def __init__(self, clock: Clock, events: list[tuple[float, Any]]) -> None:
        super().__init__({"a"})
        self.clock = clock
        self.events = events

    async def run(self, deliver: Deliver, health: Health) -> None:
        for when, what in self.events:
            if isinstance(what, bool):

                async def act(live: bool = what) -> None:
                    health(live)

            else:

                async def act(t: Task = what) -> None:
                    await deliver(t)

            if when <= self.clock.now:
                await act()
            else:
                self.clock.at(when, act)
        await asyncio.Event().wait()


class Recorded:
    """A watcher on fake time whose events are recorded: `(via, status, message)` per update,
    the outcome per end."""

    def __init__(self, clock: Clock, fetch: Any, **config: Any) -> None:
        self.vias: list[tuple[str, str, str | None]] = []
        self.ends: list[str] = []
        self.watcher = Watcher(
            fetch=fetch,
            fetch_result=self.fetch_result,
            config=WatchConfig(timeout=120, **config),
            events=self,
            clock=clock,
            sleep=clock.sleep,
            rng=random.Random(0),
        )

    async def fetch_result(self, ref: TaskRef, t: Task) -> TaskResult:
        return TaskResult(task=t, payload={})

    def update(self, w: Any, via: str) -> None:
        self.vias.append((via, w.task.status, w.task.statusMessage))

    def retry(self, w: Any, error: str, delay: float) -> None:
        pass

    def end(self, w: Any) -> None:
        self.ends.append(w.outcome)


def run_scenario(feed_events: list[tuple[float, Any]], server: list[Task]) -> tuple[Any, ...]:
    clock = Clock()
    polls: list[float] = []

    async def fetch(ref: TaskRef) -> Task:
        polls.append(clock.now)
        return server.pop(0) if len(server) > 1 else server[0]

    rec = Recorded(clock, fetch)
    rec.watcher.feeds = [ScriptedFeed(clock, feed_events)]
    rec.watcher.add(TaskRef("a"))
    code = asyncio.run(rec.watcher.run())
    return code, polls, rec.vias, rec.ends


def test_pushed_updates_apply_at_once_and_a_terminal_push_is_confirmed_by_a_poll() -> None:
    code, polls, vias, ends = run_scenario(
        [
            (0.0, True),
            (0.5, task("a", msg="half")),
            (0.7, task("other", "completed")),
            (1.2, task("a", msg="more")),
            (2.0, task("a", "completed", "done")),
        ],
        [task("a"), task("a", "completed", "done")],
    )
    assert code == 0
    assert ends == ["completed"]
    assert ("push", "working", "half") in vias
    assert vias[-1] == ("push", "completed", "done")
    # first poll at once; then put off while the feed speaks of the task (never a pollInterval
    # of silence); one confirming poll at the terminal push
    assert polls[0] == 0.0
    assert len(polls) == 2
    assert 2.0 <= polls[1] < RELAXED_MIN


def test_a_live_feed_that_says_nothing_of_the_task_leaves_the_servers_pace() -> None:
    """Issue 27 item 9: a push stream that stays open but never mentions the task (and one that
    falls silent about it) must not relax polling: the task is polled at its pollInterval."""
    code, polls, _vias, ends = run_scenario(
        [(0.0, True), (0.3, task("other", msg="not ours"))],
        [task("a")] * 3 + [task("a", "completed")],
    )
    assert code == 0 and ends == ["completed"]
    assert polls == [0.0, 1.0, 2.0, 3.0], polls
    code, polls, _vias, ends = run_scenario(
        [(0.0, True), (0.5, task("a", msg="once"))],  # then silence about it
        [task("a")] * 3 + [task("a", "completed")],
    )
    assert code == 0 and ends == ["completed"]
    assert polls == [0.0, 1.5, 2.5, 3.5], polls


def test_when_the_feed_drops_polling_returns_to_its_normal_pace() -> None:
    code, polls, _vias, _ends = run_scenario(
        [(0.0, True), (0.5, False)],
        [task("a")] * 4 + [task("a", "completed")],
    )
    assert code == 0
    gaps = [round(b - a, 3) for a, b in itertools.pairwise(polls)]
    assert gaps and max(gaps) <= 1.5, gaps


def test_a_stale_terminal_push_is_not_believed() -> None:
    code, _polls, vias, ends = run_scenario(
        [(0.0, True), (0.5, task("a", "completed", "stale"))],
        [task("a"), task("a", msg="still going"), task("a", "completed", "done")],
    )
    assert code == 0
    assert ("poll", "working", "still going") in vias
    assert ends == ["completed"]


def stamped(status: str, msg: str, second: int | None) -> Task:
    t = task("a", status, msg)
    if second is None:
        return t
    return t.model_copy(update={"lastUpdatedAt": f"2026-12-01T10:00:{second:02d}Z"})


def run_overtaken(pushed: Task, answers: list[Task]) -> tuple[Any, ...]:
    """The first poll is in flight when `pushed` is applied; it then answers `answers[0]`
    (what the server said before it pushed); later polls answer the rest in turn."""
    clock = Clock()
    polls: list[float] = []

    async def fetch(ref: TaskRef) -> Task:
        polls.append(clock.now)
        if len(polls) == 1:
            await rec.watcher.push(pushed)  # read before the poll's answer
        return answers.pop(0) if len(answers) > 1 else answers[0]

    rec = Recorded(clock, fetch, want_result=True)
    rec.watcher.add(TaskRef("a"), stamped("working", "step 3", 3))
    code = asyncio.run(rec.watcher.run())
    return code, polls, rec.vias, rec.ends


def test_a_poll_answer_older_than_a_push_read_meanwhile_is_not_applied() -> None:
    # seen on server-everything over stdio: the server answers tasks/get ("step 4"), then
    # completes and pushes; the push is applied before the poll's answer is
    for stamp in (True, False):
        at = (lambda s: s) if stamp else (lambda s: None)
        code, polls, vias, ends = run_overtaken(
            stamped("completed", "done", at(5)),
            [stamped("working", "step 4", at(4)), stamped("completed", "done", at(5))],
        )
        assert code == 0 and ends == ["completed"], stamp
        # no step back to "working" between the push and its confirmation
        assert vias == [("poll", "working", "step 3"), ("push", "completed", "done")], stamp
        # the terminal push is confirmed by a poll sent after it, at once
        assert len(polls) == 2 and polls[1] == polls[0], (stamp, polls)


def test_a_poll_answer_newer_than_a_push_read_meanwhile_is_applied() -> None:
    # a terminal push the poll shows to be stale (the poll's news is newer): the poll wins
    code, polls, vias, ends = run_overtaken(
        stamped("completed", "stale", 4),
        [stamped("working", "step 5", 5), stamped("completed", "done", 6)],
    )
    assert code == 0 and ends == ["completed"]
    assert ("poll", "working", "step 5") in vias
    assert vias[-1] == ("poll", "completed", "done")
    # a terminal answer is final, whatever a push said meanwhile (even with no stamps)
    code, polls, vias, ends = run_overtaken(
        stamped("working", "step 4", None), [stamped("completed", "done", None)]
    )
    assert code == 0 and ends == ["completed"] and len(polls) == 1
    assert vias[-1] == ("poll", "completed", "done")


def test_a2a_watch_follows_the_subscription(run_cli: RunCli, a2a_server: ServerProcess) -> None:
    # one process sends and watches: a second one could start after the task's 3 s on a busy
    # machine, and see nothing to follow
    url = a2a_server.url
    r = run_cli("send", "hello push", "--url", url, "--watch", "-o", "ndjson", "--result")
    assert r.code == 0, r.stderr
    lines = statuses(r)
    tid = lines[-1]["taskId"]
    assert "push" in {ln["via"] for ln in lines}, lines
    messages = [ln["statusMessage"] for ln in lines]
    assert "step 3/3" in messages
    assert lines[-1]["status"] == "completed"
    assert "echo: hello push" in json.dumps(r.lines()[-1]["result"])
    polled = run_cli("watch", "--url", a2a_server.url, "-o", "ndjson", "--no-push", "--", tid)
    assert polled.code == 0
    assert {ln["via"] for ln in statuses(polled)} == {"poll"}


def test_stdio_notifications_are_pushed(run_cli: RunCli, everything_stdio_cmd: list[str]) -> None:
    import shlex

    r = run_cli(
        "call", "simulate-research-query", "topic=stdio",
        "--stdio", shlex.join(everything_stdio_cmd), "-o", "ndjson",
    )  # fmt: skip
    assert r.code == 0, r.stderr
    lines = statuses(r)
    assert lines[-1]["status"] == "completed"
    assert lines[-1]["via"] == "push"
    assert "push" in {ln["via"] for ln in lines[1:-1]}
