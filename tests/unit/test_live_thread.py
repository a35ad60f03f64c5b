"""The live view draws on the thread that owns the watch's state (issue 23, defect 1): Rich's
refresh thread used to render while the event loop changed the tasks and the retry table, and a
KeyError there killed that thread and froze the view."""

from __future__ import annotations

import asyncio
import io
import threading
from typing import Any

from rich.console import Console

from mcptask.model.refs import TaskRef
from mcptask.model.task import Task
from mcptask.output.console import Output
from mcptask.output.live import SYNC_BEGIN, SYNC_END, LiveEvents
from mcptask.scheduler.watcher import Watched


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def working(i: int) -> Watched:
    w = Watched(ref=TaskRef(f"task-{i:04d}"), started=0.0, due=1.0)
    w.task = Task(
        taskId=w.task_id,
        status="working",
        statusMessage=f"step {i}",
        protocol="test",
        server="test",
        raw={},
    )
    return w


def test_frames_are_drawn_on_the_loop_while_the_loop_changes_the_state() -> None:
    console = Console(file=Tty(), force_terminal=True, width=100, height=40, color_system=None)
    out = Output(mode="pretty", stdout=console.file, stderr=io.StringIO(), _console=console)
    events = LiveEvents(out, with_result=False)
    drawn_on: list[int] = []
    real_render = events.render

    def render(width: int | None = None) -> Any:
        drawn_on.append(threading.get_ident())
        return real_render(width)

    events.render = render  # type: ignore[method-assign]
    crashed: list[BaseException | None] = []
    hook = threading.excepthook
    threading.excepthook = lambda args: crashed.append(args.exc_value)

    async def race() -> int:
        rows = [working(i) for i in range(30)]
        events.track(rows)
        with events:
            n = 0
            # race the redraws: change the retry table and the task list as a watch does,
            # until a good number of frames were drawn meanwhile
            while len(drawn_on) < 8 and not crashed:
                for w in rows:
                    events.retry(w, "cannot connect", 1.0)
                for w in rows:
                    events.update(w, "poll")
                events.track(rows[: 1 + n % 30])
                n += 1
                if n % 20 == 0:
                    await asyncio.sleep(0)  # the loop's own turn: the ticker draws here
        return threading.get_ident()

    try:
        loop_thread = asyncio.run(race())
    finally:
        threading.excepthook = hook
    assert not crashed
    assert set(drawn_on) == {loop_thread}


def test_a_redraw_is_one_synchronized_update_on_a_terminal() -> None:
    console = Console(file=Tty(), force_terminal=True, width=100, height=40, color_system=None)
    out = Output(mode="pretty", stdout=console.file, stderr=io.StringIO(), _console=console)
    events = LiveEvents(out, with_result=False)
    events.track([working(1)])
    with events:
        events.refresh()
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert text.count(SYNC_BEGIN) == text.count(SYNC_END) >= 2
    assert text.index(SYNC_BEGIN) < text.index("task-0001") < text.rindex(SYNC_END)
