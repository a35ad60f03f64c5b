"""Defect 2 of issue 23: `call --watch` and `demo` print the task's first event (its status as
created) before the watch's signal handlers were installed; a signal in that window ended the
process without the `end` lines."""

from __future__ import annotations

import io
import json
import os
import signal
from pathlib import Path

from scripted import Run, Scripted, tool

from mcptask.commands._follow import FollowUp
from mcptask.commands.call import CallOptions, run_call
from mcptask.errors import ExitCode


class SignalOnFirstLine(io.StringIO):
    """stdout that sends SIGTERM to this process when the first line is written, if a handler
    is there to catch it (without one, the signal would end the test run)."""

    def __init__(self) -> None:
        super().__init__()
        self.unprotected = False
        self.sent = False

    def write(self, s: str) -> int:
        n = super().write(s)
        if not self.sent and "\n" in s:
            self.sent = True
            if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
                self.unprotected = True
            else:
                os.kill(os.getpid(), signal.SIGTERM)
        return n


def test_a_signal_at_the_first_event_of_call_watch_still_ends_the_task(tmp_path: Path) -> None:
    proto = Scripted()
    proto.tools = [tool("slow")]
    stdout = SignalOnFirstLine()
    run = Run(proto, tmp_path, mode="ndjson", stdout=stdout)
    opts = CallOptions("slow", then=FollowUp(watch=True))
    code = run.go(lambda ctx: run_call(opts, ctx))
    assert not stdout.unprotected, "the first event was printed before the signal handlers"
    lines = run.lines()
    assert lines[0]["event"] == "status"
    ends = [line for line in lines if line["event"] == "end"]
    assert [e["outcome"] for e in ends] == ["interrupted"]
    assert code == ExitCode.TERMINATED


def test_a_signal_at_the_first_event_of_demo_still_ends_the_task(tmp_path: Path) -> None:
    """`mcptask demo`: the embedded server's task, watched; SIGTERM at its first line."""
    import asyncio

    from mcptask.commands.demo import DemoOptions, run_demo
    from mcptask.output.console import Output
    from mcptask.session.context import Context
    from mcptask.session.targets import GlobalOptions
    from mcptask.session.terminal import Environment
    from mcptask.state.taskbook import TaskBook

    stdout = SignalOnFirstLine()
    out = Output(mode="ndjson", stdout=stdout, stderr=io.StringIO())
    ctx = Context(
        GlobalOptions(url="http://127.0.0.1"),
        out,
        book=TaskBook(tmp_path / "tasks.json"),
        env=Environment(),
    )

    async def main() -> int:
        try:
            return await run_demo(DemoOptions(seconds=30), ctx)
        finally:
            await ctx.aclose()

    code = asyncio.run(main())
    assert not stdout.unprotected, "the first event was printed before the signal handlers"
    lines = [json.loads(x) for x in stdout.getvalue().splitlines()]
    assert [x["outcome"] for x in lines if x["event"] == "end"] == ["interrupted"]
    assert code == ExitCode.TERMINATED
