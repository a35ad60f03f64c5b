"""`watch --until STATUS,...`: the scheduler ends a task with exit 0 once it reaches a status
it was told to wait for; a terminal status it was not told ends it by outcome as before."""

from __future__ import annotations

import pytest
from test_watch import FakeClock, Recorder, Script, make, run, task

from mcptask.errors import UsageError
from mcptask.model.refs import TaskRef
from mcptask.scheduler.watcher import parse_until


def test_a_task_that_reaches_an_until_status_ends_there_with_zero() -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [task("a"), task("a", "input_required"), task("a", "completed")]})
    rec = Recorder()
    w = make(script, clock, rec, until=frozenset({"input_required"}))
    w.add(TaskRef("a"))
    assert run(w) == 0
    assert rec.ends == [("a", "input_required", 0)]
    assert len(script.polls["a"]) == 2


def test_until_wins_over_answering_on_a_terminal() -> None:
    asked: list[str] = []

    async def on_input(w: object) -> None:
        asked.append("asked")

    clock = FakeClock()
    script = Script(clock, {"a": [task("a", "input_required")]})
    rec = Recorder()
    w = make(script, clock, rec, until=frozenset({"input_required"}), on_input=on_input)
    w.add(TaskRef("a"))
    assert run(w) == 0
    assert asked == []


def test_a_terminal_status_not_named_ends_by_its_outcome() -> None:
    clock = FakeClock()
    script = Script(
        clock,
        {
            "a": [task("a"), task("a", "failed")],
            "b": [task("b"), task("b", "input_required")],
        },
    )
    rec = Recorder()
    w = make(script, clock, rec, until=frozenset({"input_required"}))
    w.add(TaskRef("a"))
    w.add(TaskRef("b"))
    assert run(w) == 5
    assert sorted(rec.ends) == [("a", "failed", 5), ("b", "input_required", 0)]


def test_a_named_terminal_status_is_success_and_still_fetches_the_result() -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [task("a"), task("a", "failed")]})
    rec = Recorder()
    w = make(script, clock, rec, until=frozenset({"failed"}), want_result=True)
    wa = w.add(TaskRef("a"))
    assert run(w) == 0
    assert rec.ends == [("a", "failed", 0)]
    assert wa.result is not None


def test_an_initial_status_already_there_ends_at_once() -> None:
    clock = FakeClock()
    script = Script(clock, {"a": [task("a")]})
    rec = Recorder()
    w = make(script, clock, rec, until=frozenset({"working"}))
    w.add(TaskRef("a"), task("a"))
    assert run(w) == 0
    assert rec.ends == [("a", "working", 0)]
    assert script.polls["a"] == []


def test_a_pushed_until_status_is_confirmed_by_one_poll_at_once() -> None:
    import asyncio

    clock = FakeClock()
    script = Script(clock, {"a": [task("a", "input_required")]})
    rec = Recorder()
    w = make(script, clock, rec, until=frozenset({"input_required"}))
    wa = w.add(TaskRef("a"), task("a", poll=60_000))

    async def go() -> int:
        runner = asyncio.ensure_future(w.run())
        await asyncio.sleep(0)
        await w.push(task("a", "input_required"))
        return await runner

    assert asyncio.run(go()) == 0
    assert wa.outcome == "input_required"
    assert script.polls["a"] == [0.0]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("input_required", {"input_required"}),
        ("input-required, Completed", {"input_required", "completed"}),
        ("canceled", {"cancelled"}),
        ("auth-required,", {"auth_required"}),
    ],
)
def test_until_words(text: str, words: set[str]) -> None:
    assert parse_until(text) == words


@pytest.mark.parametrize("text", ["", ",", "done", "working,finished"])
def test_unknown_until_words_are_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="--until: unknown status"):
        parse_until(text)
