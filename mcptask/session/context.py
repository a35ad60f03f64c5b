"""What every command needs: the resolved target, the task book, the protocol client, the
output, the terminal, a clock. Commands receive a `Context`; tests build one with their own
pieces (streams, clock, sleep, book, target, terminal environment)."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from mcptask.errors import UsageError
from mcptask.output.console import Output
from mcptask.session.targets import GlobalOptions, Target

if TYPE_CHECKING:
    from mcptask.auth.lazy import LazyOAuth
    from mcptask.model import Task
    from mcptask.protocols.base import TaskProtocol, TaskRef
    from mcptask.session.terminal import Environment
    from mcptask.state.taskbook import TaskBook
    from mcptask.transports.rpc import RpcClient


def _env_float(name: str, default: float) -> float:
    """A number of seconds from the environment: finite and positive (`nan` and `inf` would
    turn every wait into none or for ever)."""
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{name}={raw!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"{name}={raw!r}: give a finite, positive number of seconds")
    return value


def _env_int(name: str, default: int) -> int:
    """A size in bytes from the environment: a positive whole number (`1e400`, `0.5` are
    not)."""
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise UsageError(f"{name}={raw!r}: give a positive whole number of bytes")
    return value


async def _asyncio_sleep(seconds: float) -> None:
    import asyncio  # not at start-up: one-shot commands run without an event loop

    await asyncio.sleep(seconds)


def _ambiguous_prefix(prefix: str, hits: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"{tid} ({ep})" for ep, tid in hits[:10])
    more = f" and {len(hits) - 10} more" if len(hits) > 10 else ""
    return f"{prefix!r} is the start of {len(hits)} task ids: {shown}{more}; give more of it"


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
        #: contexts for the other endpoints this run reaches (task ids found in the task book)
        self._children: dict[str, Context] = {}
        self._lazy_oauth: LazyOAuth | None = None

    @property
    def target(self) -> Target:
        """Flags beat environment which beats config files (see `targets`)."""
        if self._target is None:
            from mcptask.session import targets

            self._target = targets.resolve(self.options, self.out.note)
        return self._target

    # -- which endpoint a task id lives on -------------------------------------------------------

    def has_target(self) -> bool:
        """A flag, a target variable or the config default names the target. Without one,
        commands about task ids find each id's endpoint in the task book."""
        if self._target is not None:
            return True
        from mcptask.session.targets import given

        return given(self.options)

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
                target=endpoint_target(self.options, endpoint),
                env=self._env,
            )
            child.one_at_a_time = self.one_at_a_time
            child.many_tasks = self.many_tasks
            self._children[endpoint] = child
        return child

    def locate(self, task_id: str) -> tuple[Context, str]:
        """The context that reaches `task_id`, and the whole id (a unique prefix of at least
        four characters stands for an id the task book knows). With a target, that target;
        without one, the task book's endpoint for the id."""
        [(ctx, [found])] = self.locate_many([task_id])
        return ctx, found

    def locate_many(self, task_ids: Iterable[str]) -> list[tuple[Context, list[str]]]:
        """Task ids grouped by the context that reaches them, in the order first given."""
        from mcptask.session.targets import NoTarget

        ids = list(task_ids)
        for task_id in ids:
            if not task_id.strip():  # blank too: it would only become a request
                raise UsageError("a task id cannot be empty")
        if self.has_target():
            return [(self, [self._expand(task_id) for task_id in ids])]
        groups: dict[str, list[str]] = {}
        for task_id in ids:
            endpoint, full = self._find(task_id, NoTarget)
            groups.setdefault(endpoint, [])
            if full not in groups[endpoint]:
                groups[endpoint].append(full)
        return [(self.at(endpoint), found) for endpoint, found in groups.items()]

    def _expand(self, task_id: str) -> str:
        """A prefix of one of this endpoint's ids in the book, as the whole id."""
        from mcptask.state.taskbook import MIN_PREFIX

        if not self.remembers or len(task_id) < MIN_PREFIX:
            return task_id
        known = self.book.tasks(self.server)
        if task_id in known:
            return task_id
        matches = sorted(t for t in known if t.startswith(task_id))
        if len(matches) > 1:
            raise UsageError(_ambiguous_prefix(task_id, [(self.server, m) for m in matches]))
        return matches[0] if matches else task_id

    def _find(self, task_id: str, no_target: type[UsageError]) -> tuple[str, str]:
        """(endpoint, whole id) of a task the book knows, for a run without a target."""
        hits = self.book.find(task_id)
        if not hits:
            raise no_target(
                f"task {task_id} is not in the task book, so mcptask does not know where it "
                "lives: give a target for tasks this machine has not seen (--url URL, "
                "--stdio CMD or -s NAME)"
            )
        ids = {tid for _, tid, _ in hits}
        if len(ids) > 1:
            raise UsageError(_ambiguous_prefix(task_id, [(ep, tid) for ep, tid, _ in hits]))
        if len(hits) > 1:
            where = "; ".join(sorted(ep for ep, _, _ in hits))
            raise UsageError(
                f"task {task_id} is known on {len(hits)} endpoints ({where}): pick one with "
                "--url URL or -s NAME"
            )
        endpoint, full, _ = hits[0]
        return endpoint, full

    def use_target(self, target: Target) -> None:
        """Point this run at a target it made itself (the demo's server)."""
        self._target = target

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
    def server(self) -> str:
        return self.target.key

    def trace(self, line: str) -> None:
        self.out.stderr.write(line + "\n")
        self.out.stderr.flush()

    def rpc(self) -> RpcClient:
        if self._rpc is None:
            from mcptask.transports.rpc import RpcClient

            target = self.target
            if target.command is not None:
                from mcptask.transports.stdio import (
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
                        max_line=_env_int("MCPTASK_MAX_BODY", DEFAULT_MAX_LINE),
                        trace=self.trace if self.options.trace else None,
                        on_silence=self.out.note,
                    )
                )
            else:
                from mcptask.transports.http import (
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
                        max_body=_env_int("MCPTASK_MAX_BODY", DEFAULT_MAX_BODY),
                        trace=self.trace if self.options.trace else None,
                        blocking=self.one_at_a_time,
                        many=self.many_tasks and not self.one_at_a_time,
                        auth=self._oauth(),
                    )
                )
            self.out.redactor = transport.redact
            self._rpc = RpcClient(transport)
        return self._rpc

    def _oauth(self) -> LazyOAuth | None:
        """OAuth for an HTTP target given no token (mcptask/auth): a stand-in that imports the
        machinery only once credentials are stored or the server refuses a request."""
        target = self.target
        settings = target.oauth
        if settings is None or target.url is None:
            return None
        from mcptask.auth.lazy import LazyOAuth

        url, blocking = target.url, self.one_at_a_time

        def make() -> Any:
            from mcptask.auth import session

            io = session.Io(
                note=self.out.note,
                trace=self._auth_trace if self.options.trace else None,
                connect_timeout=_env_float("MCPTASK_CONNECT_TIMEOUT", 10.0),
                read_timeout=_env_float("MCPTASK_READ_TIMEOUT", 60.0),
                interactive=self.env.stdin_tty and self.env.stderr_tty,
            )
            opts = session.from_settings(settings)
            return session.provider(
                url, opts, io, blocking=blocking, target_args=settings.target_args
            )

        self._lazy_oauth = LazyOAuth(url, make)
        return self._lazy_oauth

    def _auth_trace(self, line: str) -> None:
        self.trace(self.out.redactor(line))

    async def expect_tasks(self, count: int) -> None:
        """The command will follow `count` tasks at once. From MANY_TASKS on, HTTP requests go
        through aiohttp's pool (`HttpOptions.many`): before the first request this only sets
        the option; after it (`watch --all` lists first), the client is rebuilt."""
        if count < MANY_TASKS or self.many_tasks:
            return
        self.many_tasks = True
        if self._rpc is not None:
            from mcptask.transports.rpc import SwitchesPool

            if isinstance(self._rpc.transport, SwitchesPool):
                await self._rpc.transport.use_many()

    async def protocol(self) -> TaskProtocol:
        """The protocol module for the target: forced by `-p`, else remembered for the
        endpoint, else detected (and remembered)."""
        if self._protocol is None:
            from mcptask import protocols
            from mcptask.protocols.registry import NAMES

            name = self.options.protocol if self.options.protocol != "auto" else None
            name = name or (self.target.protocol if self.target.protocol != "auto" else None)
            if name is None:
                endpoint = self.book.endpoint(self.server)
                remembered = endpoint.get("protocol")
                if isinstance(remembered, str) and remembered in NAMES:
                    name = remembered
                    self._post_to(endpoint.get("postTo"))
            if name is None:
                rpc = self.rpc()
                typed = rpc.transport.url
                name = await protocols.detect(rpc, self.server)
                if self.remembers:
                    # the endpoint an agent card named, where every request goes
                    named = rpc.transport.url if rpc.transport.url != typed else None
                    self.book.set_endpoint(self.server, protocol=name, postTo=named)
            self._protocol = protocols.create(
                name,
                self.rpc(),
                self.server,
                session=self.options.session,
                context_id=self.options.context_id,
            )
        return self._protocol

    def _post_to(self, url: Any) -> None:
        """Post to the endpoint the agent card named when the protocol was detected (kept in
        the task book), if it is on the target's origin (credentials never go elsewhere)."""
        from mcptask.text.urls import origin

        transport = self.rpc().transport
        if not isinstance(url, str) or url == transport.url:
            return
        if origin(url).lower() != origin(transport.url).lower():
            return
        transport.url = url
        trace = getattr(transport, "_trace", None)
        if trace is not None:
            trace(f"* posting to {url}, the endpoint the agent card named")

    def ref(self, task_id: str) -> TaskRef:
        """A task's reference from the task book, with `--session`/`--context-id` on top."""
        return self.refs([task_id])[0]

    def refs(self, task_ids: Iterable[str]) -> list[TaskRef]:
        """Many references from one read of the task book."""
        from mcptask.protocols.base import TaskRef

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
        from mcptask.session.targets import unreachable_over_stdio

        for task_id in task_ids:
            if task_id not in self._seen:
                raise unreachable_over_stdio(command, task_id)

    def remember(self, task: Task, ref: TaskRef, **extra: Any) -> None:
        self.remember_many([(task, ref)], **extra)

    def remember_many(
        self,
        seen: list[tuple[Task, TaskRef]],
        *,
        each: dict[str, dict[str, Any]] | None = None,
        **extra: Any,
    ) -> None:
        """Record tasks in the task book, in one locked write; `each` adds fields to some
        tasks (by id: a watch's results), `extra` to all."""
        self._seen.update(task.taskId for task, _ in seen)
        if not self.remembers or self._protocol is None or not seen:
            return
        updates: dict[str, dict[str, Any]] = {}
        for task, ref in seen:
            fields = self._protocol.book_fields(ref)
            fields.update(status=task.status, **extra, **(each or {}).get(task.taskId, {}))
            if task.contextId and not fields.get("contextId"):
                fields["contextId"] = task.contextId
            updates[task.taskId] = fields
        self.book.record_many(self.server, updates)

    #: sessions kept per endpoint without a task (a lost `tools/call` answer), the newest last
    SESSIONS_KEPT = 20

    def remember_session(self, session: str) -> None:
        """Keep a session in which a task may exist that the book does not know (its
        creation's answer was lost), so that `list` looks there too."""
        others = [s for s in self.orphan_sessions() if s != session]
        kept = [*others[-(self.SESSIONS_KEPT - 1) :], session]
        self.book.set_endpoint(self.server, sessions=kept)

    def orphan_sessions(self) -> list[str]:
        """The sessions `remember_session` kept for this endpoint."""
        kept = self.book.endpoint(self.server).get("sessions") if self.remembers else None
        return [s for s in kept if isinstance(s, str)] if isinstance(kept, list) else []

    async def aclose(self) -> None:
        try:
            for child in self._children.values():
                await child.aclose()
            if self._protocol is not None:
                await self._protocol.aclose()
        finally:
            if self._rpc is not None:
                await self._rpc.aclose()  # stops a stdio server: on every path
            if self._lazy_oauth is not None:
                await self._lazy_oauth.aclose()
