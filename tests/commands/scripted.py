"""A scripted `TaskProtocol` and a `Context` around it: run functions driven in-process without a
server (gh's `runF` idea). Each task follows the statuses its script lists, one per `get`; the
last one repeats. Calls, answers and cancels are recorded for the test to read."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcptask.errors import NotApplicable, TaskNotFound
from mcptask.model.inputs import Answered, InputRequest
from mcptask.model.refs import TaskRef
from mcptask.model.results import Created, TaskResult
from mcptask.model.task import Task
from mcptask.model.tools import Tool
from mcptask.output.console import Output
from mcptask.protocols.base import CallHooks, Responder, TaskProtocol
from mcptask.protocols.registry import fallback
from mcptask.protocols.trace_context import TaskTrace
from mcptask.session.context import Context
from mcptask.session.targets import GlobalOptions, Target
from mcptask.session.terminal import Environment
from mcptask.state.taskbook import TaskBook
from mcptask.transports.rpc import RpcClient

URL = "http://scripted.test/mcp"


def task(task_id: str, status: str, **extra: Any) -> Task:
    return Task(
        taskId=task_id,
        status=status,  # type: ignore[arg-type]
        protocol=fallback().name,
        server=URL,
        raw={"taskId": task_id, "status": status},
        **extra,
    )


class Scripted(TaskProtocol):
    """Statuses per task id, a result per task id, tools, and what a plain call does."""

    name = fallback().name  # the task book keeps the protocol's name: a real one
    default_interval = 0.01
    has_tools = True
    can_answer = True

    def __init__(self) -> None:
        super().__init__(RpcClient.__new__(RpcClient), URL)
        self.scripts: dict[str, list[str]] = {}
        self.results: dict[str, Any] = {}
        self.tools: list[Tool] = []
        self.calls: list[tuple[str, str]] = []
        #: the trace each `call_tool` was given, and the reference of each `get`
        self.traces: list[TaskTrace | None] = []
        self.refs: list[TaskRef] = []
        self.answers: list[dict[str, Any]] = []
        #: what a plain call does with its hooks, and returns
        self.plain: Callable[[CallHooks], Awaitable[dict[str, Any]]] | None = None
        #: what an input-required task asks
        self.asks: list[InputRequest] = []
        #: raised by `answer` (the inline-answer path), when set
        self.answer_error: BaseException | None = None
        #: called with each task a `get` returns (to act in the middle of a run)
        self.on_get: Callable[[Task], None] | None = None

    def script(self, task_id: str, *statuses: str, result: Any = None) -> None:
        self.scripts[task_id] = list(statuses)
        if result is not None:
            self.results[task_id] = result

    async def get(self, ref: TaskRef) -> Task:
        self.calls.append(("get", ref.task_id))
        self.refs.append(ref)
        steps = self.scripts.get(ref.task_id)
        if not steps:
            raise TaskNotFound(f"task {ref.task_id} not found")
        status = steps.pop(0) if len(steps) > 1 else steps[0]
        found = task(ref.task_id, status)
        if self.on_get is not None:
            self.on_get(found)
        return found

    async def result(self, ref: TaskRef, task: Task) -> TaskResult:
        self.calls.append(("result", ref.task_id))
        return TaskResult(task=task, payload=self.results.get(ref.task_id))

    async def cancel(self, ref: TaskRef) -> Task | None:
        self.calls.append(("cancel", ref.task_id))
        steps = self.scripts.get(ref.task_id)
        if not steps:
            raise TaskNotFound(f"task {ref.task_id} not found")
        if steps[0] in ("completed", "failed", "cancelled"):
            raise NotApplicable(f"task {ref.task_id} has already ended: {steps[0]}")
        self.scripts[ref.task_id] = ["cancelled"]
        return task(ref.task_id, "cancelled")

    async def list_tasks(self, refs: list[TaskRef]) -> list[Task]:
        return [task(t, steps[0]) for t, steps in self.scripts.items() if steps]

    async def list_tools(self) -> list[Tool]:
        return self.tools

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        ttl: int | None,
        trace: TaskTrace | None = None,
    ) -> Created:
        self.calls.append(("call", tool))
        self.traces.append(trace)
        task_id = f"task-{len(self.scripts) + 1}"
        self.script(task_id, "working", "completed", result={"content": [], "args": arguments})
        return Created(task=task(task_id, "working"), ref=TaskRef(task_id))

    async def call_plain(
        self, tool: str, arguments: dict[str, Any], hooks: CallHooks
    ) -> dict[str, Any]:
        self.calls.append(("plain", tool))
        assert self.plain is not None
        return await self.plain(hooks)

    def input_requests(self, task: Task) -> list[InputRequest] | None:
        return list(self.asks)

    async def answer(
        self,
        ref: TaskRef,
        task: Task,
        responder: Responder,
        *,
        key: str | None = None,
        answered: frozenset[str] = frozenset(),
    ) -> Answered:
        self.calls.append(("answer", ref.task_id))
        if self.answer_error is not None:
            raise self.answer_error
        done = Answered()
        for req in self.asks:
            if key is not None and req.key != key:
                continue
            reply = await responder(req)
            if reply is None:
                done.dismissed = True
                break
            self.answers.append(reply)
            done.sent.append((req, reply))
        if done.sent:
            self.scripts[ref.task_id] = ["working", "completed"]
        return done


def tool(name: str, support: str = "optional", **schema: Any) -> Tool:
    input_schema = {"type": "object", **schema}
    return Tool(name, None, None, support, input_schema, {"name": name})


class Run:
    """One command run in-process: its streams, the task book, the scripted protocol."""

    def __init__(
        self,
        proto: Scripted,
        book: TaskBook | Path,
        *,
        mode: str = "json",
        env: Environment | None = None,
        target: bool = True,
        stdout: io.StringIO | None = None,
    ) -> None:
        self.stdout: io.StringIO = stdout or io.StringIO()
        self.stderr = io.StringIO()
        #: a virtual clock: sleeping moves it on at once
        self.now = 0.0
        self.book = book if isinstance(book, TaskBook) else TaskBook(book / "tasks.json")
        out = Output(mode=mode, stdout=self.stdout, stderr=self.stderr)
        self.ctx = Context(
            GlobalOptions(),
            out,
            book=self.book,
            clock=lambda: self.now,
            sleep=self.sleep,
            target=Target(url=URL) if target else None,
            env=env or Environment(),
        )
        self.proto = proto
        if target:
            self.ctx.endpoint._protocol = proto

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)

    def go(self, command: Callable[[Context], Awaitable[int]]) -> int:
        async def main() -> int:
            try:
                return await command(self.ctx)
            finally:
                self.proto.calls.append(("closed", ""))

        return asyncio.run(main())

    def json(self) -> Any:
        return json.loads(self.stdout.getvalue())

    def lines(self) -> list[Any]:
        return [json.loads(line) for line in self.stdout.getvalue().splitlines()]
