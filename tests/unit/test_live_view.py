"""The live view draws what fits the terminal: unfinished tasks first, then the latest ended."""

from __future__ import annotations

import io

from rich.console import Console

from mcptask.model.refs import TaskRef
from mcptask.model.task import Task
from mcptask.output.console import Output
from mcptask.output.live import LiveEvents
from mcptask.scheduler.watcher import Watched


def watched(i: int, done: bool) -> Watched:
    w = Watched(ref=TaskRef(f"task-{i:03d}"), started=0.0, due=5.0)
    w.task = Task(
        taskId=w.task_id,
        status="completed" if done else "working",
        statusMessage=f"message {i}",
        pollInterval=1000,
        ttl=60000,
        protocol="test",
        server="test",
        raw={},
    )
    if done:
        w.outcome, w.exit_code, w.ended = "completed", 0, float(i)
    return w


def render(events: LiveEvents, height: int) -> str:
    buf = io.StringIO()
    Console(file=buf, width=140, height=height, color_system=None).print(events.render())
    return buf.getvalue()


def test_a_big_watch_draws_only_the_rows_that_fit() -> None:
    out = Output(mode="pretty", stdout=io.StringIO())
    out._console = Console(file=io.StringIO(), width=140, height=20)
    events = LiveEvents(out, with_result=False, clock=lambda: 10.0)
    events.track([watched(i, done=i % 2 == 0) for i in range(200)])
    text = render(events, 20)
    rows = [ln for ln in text.splitlines() if "task-" in ln]
    assert len(rows) == 13
    # every drawn row is an unfinished task while there are more of those than room
    assert all("working" in ln for ln in rows)
    assert "+187 more rows" in text
    assert "100 completed" in text and "100 working" in text


def test_a_small_watch_draws_every_row() -> None:
    out = Output(mode="pretty", stdout=io.StringIO())
    out._console = Console(file=io.StringIO(), width=140, height=40)
    events = LiveEvents(out, with_result=False, clock=lambda: 10.0)
    events.track([watched(i, done=i < 3) for i in range(6)])
    text = render(events, 40)
    assert len([ln for ln in text.splitlines() if "task-" in ln]) == 6
    assert "more rows" not in text


def test_pushed_progress_is_drawn_before_the_message() -> None:
    """No progress column to stay empty (issue 38): a bar and the count lead the message."""
    from mcptask.protocols.base import Progress

    out = Output(mode="pretty", stdout=io.StringIO())
    out._console = Console(file=io.StringIO(), width=140, height=40)
    events = LiveEvents(out, with_result=False, clock=lambda: 10.0)
    rows = [watched(i, done=False) for i in range(2)]
    events.track(rows)
    assert "progress" not in render(events, 40)
    rows[0].progress = Progress(progress=3, total=4, task_id=rows[0].task_id)
    text = render(events, 40)
    assert "progress" not in text
    assert "████░░ 3/4" in text
