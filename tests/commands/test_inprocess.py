"""Commands driven in-process (gh's `NewCmdX(f, runF)` idea): each `run_x(opts, ctx)` gets a
`Context` built from the test's own pieces (StringIO streams, a private task book, a target, a
terminal environment) and talks to the embedded demo server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcptask.commands._follow import FollowUp
from mcptask.commands.call import CallOptions, run_call
from mcptask.commands.cancel import CancelOptions, run_cancel
from mcptask.commands.get import GetOptions, run_get
from mcptask.commands.list import ListOptions, run_list
from mcptask.commands.result import ResultOptions, run_result
from mcptask.commands.watch import WatchOptions, run_watch
from mcptask.demo.server import DemoServer
from mcptask.errors import ExitCode, TaskNotFound, UsageError
from mcptask.output.console import Output
from mcptask.session.context import Context
from mcptask.session.targets import GlobalOptions, Target
from mcptask.session.terminal import Environment
from mcptask.state.taskbook import TaskBook


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    with DemoServer(task_seconds=1.5) as server:
        yield server


class Run:
    """One command run: its streams, the shared book, and the context it was given."""

    def __init__(self, book: TaskBook, target: Target | None, mode: str = "json") -> None:
        self.stdout = io.StringIO()
        self.stderr = io.StringIO()
        out = Output(mode=mode, stdout=self.stdout, stderr=self.stderr)
        self.ctx = Context(GlobalOptions(), out, book=book, target=target, env=Environment())

    def go(self, command: Callable[[Context], Awaitable[int]]) -> int:
        async def main() -> int:
            try:
                return await command(self.ctx)
            finally:
                await self.ctx.aclose()

        return asyncio.run(main())

    def json(self) -> Any:
        return json.loads(self.stdout.getvalue())

    def lines(self) -> list[Any]:
        return [json.loads(line) for line in self.stdout.getvalue().splitlines()]


@pytest.fixture
def book(tmp_path: Path) -> TaskBook:
    return TaskBook(tmp_path / "tasks.json")


def start(book: TaskBook, demo: DemoServer) -> str:
    run = Run(book, Target(url=demo.url))
    code = run.go(lambda ctx: run_call(CallOptions("build-report", ["topic=kelp"]), ctx))
    assert code == ExitCode.OK, run.stderr.getvalue()
    task_id: str = run.json()["taskId"]
    return task_id


def test_call_get_watch_result_in_process(book: TaskBook, demo: DemoServer) -> None:
    task_id = start(book, demo)

    run = Run(book, Target(url=demo.url))
    assert run.go(lambda ctx: run_get(GetOptions(task_id), ctx)) == ExitCode.OK
    assert run.json()["taskId"] == task_id and run.json()["server"] == demo.url

    # no target: the task book says where the task lives (and a prefix stands for its id)
    run = Run(book, None, mode="ndjson")
    assert run.go(lambda ctx: run_watch(WatchOptions([task_id[:8]]), ctx)) == ExitCode.OK
    end = run.lines()[-1]
    assert end["event"] == "end" and end["outcome"] == "completed" and end["taskId"] == task_id

    run = Run(book, None)
    assert run.go(lambda ctx: run_result(ResultOptions(task_id), ctx)) == ExitCode.OK
    assert "kelp" in json.dumps(run.json())

    run = Run(book, Target(url=demo.url))
    assert run.go(lambda ctx: run_list(ListOptions(local=True), ctx)) == ExitCode.OK
    assert task_id in {t["taskId"] for t in run.json()["tasks"]}


def test_cancel_of_a_finished_task_does_not_apply(book: TaskBook, demo: DemoServer) -> None:
    run = Run(book, Target(url=demo.url))
    follow = FollowUp(watch=True)
    opts = CallOptions("build-report", ["topic=done"], then=follow)
    assert run.go(lambda ctx: run_call(opts, ctx)) == ExitCode.OK
    task_id = run.json()["tasks"][0]["taskId"]
    run = Run(book, Target(url=demo.url))
    with pytest.raises(Exception) as caught:
        run.go(lambda ctx: run_cancel(CancelOptions(task_id), ctx))
    assert getattr(caught.value, "exit_code", None) == ExitCode.NOT_APPLICABLE


def test_errors_surface_as_exceptions_with_exit_codes(book: TaskBook, demo: DemoServer) -> None:
    """Run functions raise; mapping to exit statuses is the CLI runner's job."""
    run = Run(book, Target(url=demo.url))
    with pytest.raises(TaskNotFound):
        run.go(lambda ctx: run_get(GetOptions("no-such-task"), ctx))
    run = Run(book, None)
    with pytest.raises(UsageError, match="not in the task book"):
        run.go(lambda ctx: run_get(GetOptions("no-such-task"), ctx))
