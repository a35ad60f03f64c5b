"""The story's pieces on their own (issue 34): events at the server's times in the task book,
the timeline's order and durations with a skewed server clock, the skew measured from `Date`
headers, an A2A task's history turns, and why a task looks stuck in the server's time."""

from __future__ import annotations

import time
from email.utils import formatdate
from pathlib import Path

import pytest

from mcptask.commands._history import Timeline, why_stuck
from mcptask.model.events import event
from mcptask.model.task import Task
from mcptask.protocols.a2a import history_turns
from mcptask.state import taskbook
from mcptask.state.taskbook import AT, TURNS, VIA, TaskBook
from mcptask.transports.http import ServerClock

URL = "http://127.0.0.1:8000/mcp"
T0 = 1_800_000_000.0


def stamp(at: float) -> str:
    from mcptask.model.times import iso

    return iso(at)


@pytest.fixture
def book(tmp_path: Path) -> TaskBook:
    return TaskBook(tmp_path / "tasks.db")


def test_changes_carry_the_server_s_time_and_when_they_were_seen(book: TaskBook) -> None:
    created = {"createdAt": stamp(T0), "lastUpdatedAt": stamp(T0)}
    book.record(URL, "t", status="working", statusMessage="a", **created, **{AT: T0 + 5})
    book.record(
        URL, "t", status="working", statusMessage="b", lastUpdatedAt=stamp(T0 + 2), **{AT: T0 + 9}
    )
    # a change whose lastUpdatedAt did not move: the server gave no time for it
    book.record(
        URL,
        "t",
        status="completed",
        statusMessage="b",
        lastUpdatedAt=stamp(T0 + 2),
        **{AT: T0 + 12},
    )
    events = book.events(URL, "t")
    assert [(e["kind"], e.get("serverAt"), e["at"]) for e in events] == [
        ("created", T0, T0 + 5),
        ("message", T0 + 2, T0 + 9),
        ("status", None, T0 + 12),
    ]
    lines = Timeline("t", URL).add(events)
    assert [x["clock"] for x in lines] == ["server", "server", "local"]
    assert [x["sinceCreated"] for x in lines] == [0.0, 2.0, 12.0]
    assert [x["late"] for x in lines] == [5.0, 7.0, None]


def test_a_task_first_seen_by_a_look_after_it_moved_on_is_created_then_changed(
    book: TaskBook,
) -> None:
    times = {"createdAt": stamp(T0), "lastUpdatedAt": stamp(T0 + 30)}
    book.record(URL, "t", status="completed", statusMessage="done", **times, **{VIA: "poll"})
    created, done = book.events(URL, "t")
    assert (created["kind"], created.get("status"), created["serverAt"]) == ("created", None, T0)
    assert created["data"] == {"firstSeen": True}
    assert (done["kind"], done["status"], done["serverAt"]) == ("status", "completed", T0 + 30)
    # (its times lie ahead of this machine's clock: the story takes the skew they prove)
    start, skew, pages = book.story(URL, "t")
    lines = Timeline("t", URL, skew, start).add([e for page in pages for e in page])
    assert [x["sinceCreated"] for x in lines] == [0.0, 30.0]
    # its creation's own answer (no `via`) is one created event, whatever its stamps say
    book.record(URL, "u", status="working", **times)
    assert [e["kind"] for e in book.events(URL, "u")] == ["created"]


def test_the_timeline_orders_by_when_things_happened_with_the_skew_taken_out() -> None:
    # the server's clock runs 100 s ahead: its times, less the skew, fall among mcptask's own
    events = [
        {"n": 1, "kind": "created", "at": T0, "serverAt": T0 + 100},
        {"n": 3, "kind": "answer", "at": T0 + 5},  # mcptask sent an answer at T0 + 5
        {"n": 2, "kind": "status", "status": "working", "at": T0 + 9, "serverAt": T0 + 106},
    ]
    lines = Timeline("t", URL, skew=100.0).add(events)
    assert [x["n"] for x in lines] == [1, 3, 2]
    assert [x["sinceCreated"] for x in lines] == [0.0, 5.0, 6.0]
    assert lines[2]["at"] == stamp(T0 + 106)  # shown as the server gave it
    assert lines[2]["late"] == 3.0
    # without the skew the answer would seem to come first... and the status 100 s late
    assert Timeline("t", URL).add(events)[2]["late"] == 0.0


def test_a_skew_known_only_to_a_second_never_puts_a_change_after_it_was_seen(
    book: TaskBook,
) -> None:
    # the `Date` headers put the skew at -0.4 s where it is 0: the completion, less that
    # skew, would fall 0.4 s after the look that saw it (and after the watch's end)
    times = {"createdAt": stamp(T0), "lastUpdatedAt": stamp(T0)}
    book.record(URL, "t", status="working", **times, **{AT: T0 + 0.1})
    book.record(
        URL,
        "t",
        status="completed",
        **{**times, "lastUpdatedAt": stamp(T0 + 3.0)},
        **{AT: T0 + 3.1, VIA: "poll"},
    )
    book.add_events(URL, [event("t", "end", at=T0 + 3.1)], command="watch")
    start, skew, pages = book.story(URL, "t", skew=-0.4)
    # the look at T0 + 3.1 saw what happened at T0 + 3.0: the server is at most 0.1 s behind
    assert skew == pytest.approx(-0.1)
    events = [e for page in pages for e in page]
    assert [e["kind"] for e in events] == ["created", "status", "end"]
    lines = Timeline("t", URL, skew=skew, start=start).add(events)
    assert [x["kind"] for x in lines] == ["created", "status", "end"]
    assert lines[1]["at"] == stamp(T0 + 3.0)  # shown as the server gave it
    assert (lines[1]["late"], lines[2]["gap"]) == (0.0, 0.0)
    assert lines[1]["sinceCreated"] == 3.0  # the server's own interval


def test_a_creation_timed_only_by_its_answer_still_comes_first() -> None:
    events = [
        {"n": 1, "kind": "created", "status": "submitted", "at": T0 + 1},
        {"n": 2, "kind": "status", "status": "working", "at": T0 + 2, "serverAt": T0 + 0.5},
    ]
    lines = Timeline("t", URL).add(events)
    assert [x["kind"] for x in lines] == ["created", "status"]
    assert [x["sinceCreated"] for x in lines] == [0.0, 0.0]


def test_the_server_clock_is_measured_from_date_headers() -> None:
    clock = ServerClock()
    assert clock.skew is None
    now = time.time()
    clock.saw(formatdate(now + 42, usegmt=True), took=0.01)
    assert clock.skew == pytest.approx(42, abs=1.0)
    clock.saw("not a date", took=0.0)
    assert clock.skew == pytest.approx(42, abs=1.0)
    # a clock that was set meanwhile: the bounds start over
    clock.saw(formatdate(time.time() - 300, usegmt=True), took=0.01)
    assert clock.skew == pytest.approx(-300, abs=1.0)


def test_an_a2a_task_s_history_turns_between_two_looks(book: TaskBook) -> None:
    def raw(history: list[str], status: str) -> dict[str, object]:
        return {
            "status": {"state": "working", "message": {"messageId": status, "role": "agent"}},
            "history": [
                {"messageId": m, "role": "ROLE_AGENT", "parts": [{"text": f"said {m}"}]}
                for m in history
            ],
        }

    first = history_turns(raw(["u1"], "s1"))
    assert first == [("u1", "agent", "said u1"), ("s1", "status", "")]
    book.record(URL, "t", status="working", **{TURNS: first})
    assert [e["kind"] for e in book.events(URL, "t")] == ["created"]
    # s1 was seen as a status: not a turn; s2 and s3 came and went between the looks
    book.record(URL, "t", status="working", **{TURNS: history_turns(raw(["u1", "s1", "s2"], "s3"))})
    turns = [e for e in book.events(URL, "t") if e["kind"] == "history"]
    assert [e["message"] for e in turns] == ["said s2"]
    # the server keeps a window: none of what the book saw is there any more
    book.record(URL, "t", status="working", **{TURNS: history_turns(raw(["x1"], "x2"))})
    kinds = [e["kind"] for e in book.events(URL, "t")]
    assert kinds[-2:] == ["history-gap", "history"]
    assert len(book.lookup(URL, "t")["turnsSeen"]) <= taskbook.TURNS_KEPT


def test_why_a_task_looks_stuck_counts_in_the_server_s_time() -> None:
    task = Task(
        taskId="t",
        status="input_required",
        statusMessage="Your name?",
        lastUpdatedAt=stamp(T0 + 110),
        protocol="mcp-2025-11-25",
        server=URL,
        raw={},
    )
    events = [
        {"n": 1, "kind": "created", "status": "working", "at": T0 + 1, "serverAt": T0 + 100},
        {"n": 2, "kind": "status", "status": "input_required", "at": T0 + 25, "serverAt": T0 + 110},
    ]
    info = why_stuck(task, None, events, now=T0 + 40, skew=100.0)
    # the change happened at T0 + 10 on this machine's clock: 30 s ago, not 15 (when seen)
    assert info["sinceChange"] == 30.0 and info["statusSinceClock"] == "server"
    assert info["statusSince"] == stamp(T0 + 110)
    assert info["pendingQuestion"]["waiting"] == 30.0
    assert info["pendingQuestion"]["message"] == "Your name?"
    assert info["reasons"][0] == "it waits for an answer"
    down = why_stuck(task, None, events, now=T0 + 40, unreachable="connection refused")
    assert down["reasons"][0] == "the server cannot be reached: connection refused"


def test_the_advice_names_the_form_a_running_watch_holds() -> None:
    from mcptask.output.history import stuck_rows

    now = time.time()
    task = Task(taskId="t", status="input_required", protocol="mcp-2025-11-25", server=URL, raw={})
    record = {"lastSeenAt": stamp(now - 1), "pollInterval": 1000}
    asked = {"n": 3, "kind": "question", "at": now - 2, "command": "watch"}
    events = [
        {"n": 1, "kind": "created", "status": "working", "at": now - 9, "command": "call"},
        {"n": 2, "kind": "status", "status": "input_required", "at": now - 3, "command": "watch"},
        {**asked, "message": "Your name?", "data": {"form": "watch", "keys": ["name"]}},
    ]
    info = why_stuck(task, record, events, now=now)
    assert info["watchedElsewhere"] and info["pendingQuestion"]["formOpenIn"] == "watch"
    (row,) = [v for k, v in stuck_rows(info, "t") if k == "waiting on"]
    assert "the form that `watch` shows" in row and "mcptask answer" not in row
    # the form was dismissed: the question is open to `answer` again
    dismissed = {"n": 4, "kind": "dismissed", "at": now - 1, "command": "watch"}
    info = why_stuck(task, record, [*events, dismissed], now=now)
    assert info["pendingQuestion"]["formOpenIn"] is None
    (row,) = [v for k, v in stuck_rows(info, "t") if k == "waiting on"]
    assert "mcptask answer t" in row
