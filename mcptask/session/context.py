"""What every command runs in: the options, the output, the terminal, a clock, and what they
build lazily: the endpoint (`ctx.endpoint`: transport, JSON-RPC client, protocol) and the places
(`ctx.places`: which endpoint a task id lives on, what the task book records). Commands receive a
`Context`; tests build one with their own pieces (streams, clock, sleep, book, target, terminal)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from mcptask.output.console import Output
from mcptask.session.targets import GlobalOptions, Target

if TYPE_CHECKING:
    from mcptask.session.endpoint import Endpoint
    from mcptask.session.env import TraceGiven
    from mcptask.session.places import Places
    from mcptask.session.terminal import Environment
    from mcptask.state.taskbook import TaskBook


async def _asyncio_sleep(seconds: float) -> None:
    import asyncio  # not at start-up: one-shot commands run without an event loop

    await asyncio.sleep(seconds)


class Context:
    """Built once per command run; owns the connection (and the other endpoints' contexts) and
    closes them."""

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
        self.out = out
        self.clock = clock
        self.sleep = sleep or _asyncio_sleep
        self._env = env
        self._target = target
        self._book = book
        self._endpoint: Endpoint | None = None
        self._places: Places | None = None
        #: the command makes one request at a time (set by the CLI for one-shot commands)
        self.one_at_a_time = False
        #: the command makes many reads of one kind at once or in a row (a `list` of a server
        #: the book knows to hold many tasks): they go on the poll pool's lean connections
        self.many_tasks = False
        #: the command's name (the task book's events say which command saw them)
        self.command: str | None = None
        #: contexts for the other endpoints this run reaches (task ids found in the task book)
        self._children: dict[str, Context] = {}
        #: the trace this run's tasks join (`name_trace`: `call`, `send`, `watch`); None: the
        #: command names none (a task the book has no trace for gets one of its own)
        self.trace_given: TraceGiven | None = None

    @property
    def target(self) -> Target:
        """Flags beat environment which beats config files (see `targets`)."""
        if self._target is None:
            from mcptask.session import targets

            self._target = targets.resolve(self.options, self.out.note)
        return self._target

    def has_target(self) -> bool:
        """A flag, a target variable or the config default names the target. Without one,
        commands about task ids find each id's endpoint in the task book."""
        if self._target is not None:
            return True
        from mcptask.session.targets import given

        return given(self.options)

    def name_trace(self, flag: str | None) -> TraceGiven:
        """The trace this run's tasks join: `--traceparent` (`flag`), else the environment's
        `TRACEPARENT` (read once: a watch that `call --watch` starts keeps the call's);
        malformed, a usage error."""
        if flag is not None or self.trace_given is None:
            from mcptask.session.env import TraceGiven

            self.trace_given = TraceGiven.read(flag)
            for child in self._children.values():
                child.trace_given = self.trace_given
        return self.trace_given

    def use_target(self, target: Target) -> None:
        """Point this run at a target it made itself (the demo's server)."""
        self._target = target

    @property
    def server(self) -> str:
        """The target's key in the task book."""
        return self.target.key

    @property
    def env(self) -> Environment:
        """The terminal this run talks to (read once, when first asked)."""
        if self._env is None:
            from mcptask.session.terminal import current

            self._env = current()
        return self._env

    @property
    def book(self) -> TaskBook:
        if self._book is None:
            from mcptask.state.taskbook import TaskBook

            self._book = TaskBook(warn=self.out.note)
        return self._book

    @property
    def endpoint(self) -> Endpoint:
        """The target's connection and protocol, built when first asked."""
        if self._endpoint is None:
            from mcptask.session.endpoint import Endpoint

            self._endpoint = Endpoint(
                self.target,
                self.options,
                self.out,
                book=lambda: self.book,
                env=lambda: self.env,
                remembers=self.places.remembers,
                one_at_a_time=self.one_at_a_time,
                many_tasks=self.many_tasks,
            )
        return self._endpoint

    @property
    def places(self) -> Places:
        """Task ids -> endpoints, references, and the task book's records of this run."""
        if self._places is None:
            from mcptask.session.places import Places

            self._places = Places(self)
        return self._places

    def at(self, endpoint: str) -> Context:
        """The context for another endpoint the task book names (one per endpoint and run:
        its own connection pool, session, protocol and push stream); closed with this one."""
        child = self._children.get(endpoint)
        if child is None:
            from mcptask.session.targets import endpoint_target

            child = Context(
                self.options,
                self.out,
                book=self.book,
                clock=self.clock,
                sleep=self.sleep,
                target=endpoint_target(self.options, endpoint, self.out.note),
                env=self._env,
            )
            child.one_at_a_time = self.one_at_a_time
            child.many_tasks = self.many_tasks
            child.command = self.command
            child.trace_given = self.trace_given
            if self._endpoint is not None and self._endpoint.many_tasks:
                child.endpoint.many_tasks = True
            self._children[endpoint] = child
        return child

    def succeeded(self) -> None:
        """The command ended without an error: what it learnt of its endpoints is kept."""
        for child in self._children.values():
            child.succeeded()
        if self._endpoint is not None:
            self._endpoint.keep_detected()

    async def aclose(self) -> None:
        try:
            for child in self._children.values():
                await child.aclose()
        finally:
            if self._endpoint is not None:
                await self._endpoint.aclose()
