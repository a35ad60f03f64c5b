"""What every command needs: the resolved target, the task book, the protocol client, the
output, the terminal, a clock. Commands receive a `Context`; tests build one with their own
pieces (streams, clock, sleep, book, target, terminal environment)."""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from .errors import UsageError
from .render import Output
from .targets import GlobalOptions, Target

if TYPE_CHECKING:
    from .model import Task
    from .protocols.base import TaskProtocol, TaskRef
    from .rpc import RpcClient
    from .taskbook import TaskBook
    from .terminal import Environment


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{name}={raw!r} is not a number") from None
    if value <= 0:
        raise UsageError(f"{name} must be positive")
    return value


async def _asyncio_sleep(seconds: float) -> None:
    import asyncio  # not at start-up: one-shot commands run without an event loop

    await asyncio.sleep(seconds)


#: a watch of this many tasks uses aiohttp's connection pool: 0.3 ms of CPU per request instead
#: of 1-1.3 ms with httpx's own, for 0.2 s more start-up (bench/README.md)
MANY_TASKS = 50


class Context:
    """Built once per command run; owns the connection and closes it."""

    def __init__(
        self,
        options: GlobalOptions,
        out: Output,
        *,
        book: TaskBook | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        target: Target | None = None,
        env: Environment | None = None,
    ) -> None:
        self.options = options
        self._env = env
        self.out = out
        self.clock = clock
        self.sleep = sleep or _asyncio_sleep
        self._target = target
        self._book = book
        self._rpc: RpcClient | None = None
        self._protocol: TaskProtocol | None = None
        #: ids of the tasks this run has seen (over stdio, the only reachable ones)
        self._seen: set[str] = set()
        #: the command makes one request at a time (set by the CLI for one-shot commands)
        self.one_at_a_time = False
        #: the command keeps many requests in flight (a watch of MANY_TASKS or more)
        self.many_tasks = False

    @property
    def target(self) -> Target:
        """Flags beat environment which beats config files (see `targets`)."""
        if self._target is None:
            from . import targets

            self._target = targets.resolve(self.options, self.out.note)
        return self._target

    def use_target(self, target: Target) -> None:
        """Point this run at a target it made itself (the demo's server)."""
        self._target = target

    @property
    def env(self) -> Environment:
        """The terminal this run talks to (read once, when first asked)."""
        if self._env is None:
            from .terminal import current

            self._env = current()
        return self._env

    @property
    def book(self) -> TaskBook:
        if self._book is None:
            from .taskbook import TaskBook

            self._book = TaskBook(warn=self.out.note)
        return self._book

    @property
    def server(self) -> str:
        return self.target.key

    def trace(self, line: str) -> None:
        self.out.stderr.write(line + "\n")
        self.out.stderr.flush()

    def rpc(self) -> RpcClient:
        if self._rpc is None:
            from .rpc import RpcClient

            target = self.target
            if target.command is not None:
                from .transports.stdio import (
                    DEFAULT_MAX_LINE,
                    DEFAULT_READ_TIMEOUT,
                    StdioOptions,
                    StdioTransport,
                )

                transport: Any = StdioTransport(
                    StdioOptions(
                        command=target.command,
                        env=target.env,
                        cwd=target.cwd,
                        read_timeout=_env_float("MCPTASK_READ_TIMEOUT", DEFAULT_READ_TIMEOUT),
                        max_line=int(_env_float("MCPTASK_MAX_BODY", DEFAULT_MAX_LINE)),
                        trace=self.trace if self.options.trace else None,
                    )
                )
            else:
                from .transports.http import (
                    DEFAULT_CONNECT_TIMEOUT,
                    DEFAULT_MAX_BODY,
                    DEFAULT_READ_TIMEOUT,
                    HttpOptions,
                    HttpTransport,
                )

                assert target.url is not None
                transport = HttpTransport(
                    HttpOptions(
                        url=target.url,
                        headers=target.headers,
                        token=target.token,
                        connect_timeout=_env_float(
                            "MCPTASK_CONNECT_TIMEOUT", DEFAULT_CONNECT_TIMEOUT
                        ),
                        read_timeout=_env_float("MCPTASK_READ_TIMEOUT", DEFAULT_READ_TIMEOUT),
                        max_body=int(_env_float("MCPTASK_MAX_BODY", DEFAULT_MAX_BODY)),
                        trace=self.trace if self.options.trace else None,
                        blocking=self.one_at_a_time,
                        many=self.many_tasks and not self.one_at_a_time,
                    )
                )
            self.out.redactor = transport.redact
            self._rpc = RpcClient(transport)
        return self._rpc

    async def expect_tasks(self, count: int) -> None:
        """The command will follow `count` tasks at once. From MANY_TASKS on, HTTP requests go
        through aiohttp's pool (`HttpOptions.many`): before the first request this only sets
        the option; after it (`watch --all` lists first), the client is rebuilt."""
        if count < MANY_TASKS or self.many_tasks:
            return
        self.many_tasks = True
        if self._rpc is not None:
            from .rpc import SwitchesPool

            if isinstance(self._rpc.transport, SwitchesPool):
                await self._rpc.transport.use_many()

    async def protocol(self) -> TaskProtocol:
        """The protocol module for the target: forced by `-p`, else remembered for the
        endpoint, else detected (and remembered)."""
        if self._protocol is None:
            from . import protocols
            from .protocols.registry import NAMES

            name = self.options.protocol if self.options.protocol != "auto" else None
            name = name or (self.target.protocol if self.target.protocol != "auto" else None)
            if name is None:
                remembered = self.book.endpoint(self.server).get("protocol")
                if isinstance(remembered, str) and remembered in NAMES:
                    name = remembered
            if name is None:
                name = await protocols.detect(self.rpc(), self.server)
                if self.remembers:
                    self.book.set_endpoint(self.server, protocol=name)
            self._protocol = protocols.create(
                name,
                self.rpc(),
                self.server,
                session=self.options.session,
                context_id=self.options.context_id,
            )
        return self._protocol

    def ref(self, task_id: str) -> TaskRef:
        """A task's reference from the task book, with `--session`/`--context-id` on top."""
        return self.refs([task_id])[0]

    def refs(self, task_ids: Iterable[str]) -> list[TaskRef]:
        """Many references from one read of the task book."""
        from .protocols.base import TaskRef

        book = self.book.tasks(self.server) if self.remembers else {}
        out = []
        for task_id in task_ids:
            rec = book.get(task_id) or {}
            session = self.options.session or rec.get("session")
            context = self.options.context_id or rec.get("contextId")
            out.append(
                TaskRef(
                    task_id=task_id,
                    session=session if isinstance(session, str) else None,
                    context_id=context if isinstance(context, str) else None,
                )
            )
        return out

    @property
    def remembers(self) -> bool:
        """Tasks on stdio servers die with the process: they are not kept in the book."""
        return self.target.command is None and not self.target.ephemeral

    def require_reachable(self, command: str, task_ids: list[str]) -> None:
        """Over stdio a task dies with the server process: a task id from the command line
        cannot be on the server this run would spawn (usage error, before spawning)."""
        if self.target.command is None:
            return
        from .targets import unreachable_over_stdio

        for task_id in task_ids:
            if task_id not in self._seen:
                raise unreachable_over_stdio(command, task_id)

    def remember(self, task: Task, ref: TaskRef, **extra: Any) -> None:
        self.remember_many([(task, ref)], **extra)

    def remember_many(self, seen: list[tuple[Task, TaskRef]], **extra: Any) -> None:
        """Record tasks in the task book, in one locked write."""
        self._seen.update(task.taskId for task, _ in seen)
        if not self.remembers or self._protocol is None or not seen:
            return
        updates: dict[str, dict[str, Any]] = {}
        for task, ref in seen:
            fields = self._protocol.book_fields(ref)
            fields.update(status=task.status, **extra)
            if task.contextId and not fields.get("contextId"):
                fields["contextId"] = task.contextId
            updates[task.taskId] = fields
        self.book.record_many(self.server, updates)

    async def aclose(self) -> None:
        try:
            if self._protocol is not None:
                await self._protocol.aclose()
        finally:
            if self._rpc is not None:
                await self._rpc.aclose()  # stops a stdio server: on every path
