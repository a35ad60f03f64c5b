"""The endpoint a run speaks to, built lazily from its target: transport (HTTP or stdio) ->
JSON-RPC client -> protocol (forced by `-p`, remembered in the task book, or detected), with
OAuth for HTTP targets and the connection's limits read from the environment once."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcptask.session.env import Limits

if TYPE_CHECKING:
    from mcptask.auth.lazy import LazyOAuth
    from mcptask.output.console import Output
    from mcptask.protocols.base import TaskProtocol
    from mcptask.session.targets import GlobalOptions, Target
    from mcptask.session.terminal import Environment
    from mcptask.state.taskbook import TaskBook
    from mcptask.transports.rpc import RpcClient

#: a watch of this many tasks sends its polls on the poll pool (transports/poll_pool.py): about
#: 0.1 ms of CPU per poll instead of 1-1.3 ms through httpx's async client (bench/README.md)
MANY_TASKS = 50


class Endpoint:
    """One target's connection and protocol; `aclose` ends them (and a stdio server)."""

    def __init__(
        self,
        target: Target,
        options: GlobalOptions,
        out: Output,
        *,
        book: Callable[[], TaskBook],
        env: Callable[[], Environment],
        remembers: bool,
        one_at_a_time: bool = False,
        many_tasks: bool = False,
    ) -> None:
        self.target = target
        self.options = options
        self.out = out
        self._book = book
        self._env = env
        self.remembers = remembers
        #: the command makes one request at a time (a blocking connection for one-shot commands)
        self.one_at_a_time = one_at_a_time
        #: the command keeps many requests in flight (a watch of MANY_TASKS or more)
        self.many_tasks = many_tasks
        self._limits: Limits | None = None
        self._rpc: RpcClient | None = None
        self._protocol: TaskProtocol | None = None
        self._lazy_oauth: LazyOAuth | None = None
        #: the protocol detected this run, for the task book once the command succeeded
        self.detected: dict[str, Any] | None = None
        #: the protocol the task book recorded with the tasks this run addresses (`places`)
        self.recorded: str | None = None

    @property
    def key(self) -> str:
        return self.target.key

    @property
    def limits(self) -> Limits:
        if self._limits is None:
            self._limits = Limits.from_environment()
        return self._limits

    @property
    def built(self) -> TaskProtocol | None:
        """The protocol, if this run has needed one yet."""
        return self._protocol

    def clock_skew(self) -> float | None:
        """Seconds the server's clock is ahead of this machine's, as measured so far (HTTP);
        None where nothing says."""
        from mcptask.transports.rpc import KnowsServerClock

        if self._rpc is None or not isinstance(self._rpc.transport, KnowsServerClock):
            return None
        return self._rpc.transport.clock_skew

    def trace(self, line: str) -> None:
        self.out.stderr.write(line + "\n")
        self.out.stderr.flush()

    def rpc(self) -> RpcClient:
        if self._rpc is None:
            from mcptask.transports.rpc import RpcClient

            target, limits = self.target, self.limits
            trace = self.trace if self.options.trace else None
            transport: Any
            if target.command is not None:
                from mcptask.transports.stdio import StdioOptions, StdioTransport

                transport = StdioTransport(
                    StdioOptions(
                        command=target.command,
                        env=target.env,
                        cwd=target.cwd,
                        read_timeout=limits.read_timeout,
                        max_line=limits.max_body,
                        trace=trace,
                        on_silence=self.out.note,
                    )
                )
            else:
                from mcptask.transports.http import HttpOptions, HttpTransport

                assert target.url is not None
                transport = HttpTransport(
                    HttpOptions(
                        url=target.url,
                        headers=target.headers,
                        token=target.token,
                        connect_timeout=limits.connect_timeout,
                        read_timeout=limits.read_timeout,
                        max_body=limits.max_body,
                        trace=trace,
                        blocking=self.one_at_a_time,
                        many=self.many_tasks and not self.one_at_a_time,
                        auth=self._oauth(),
                        network=target.network,
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

        url, blocking, limits = target.url, self.one_at_a_time, self.limits

        def make() -> Any:
            from mcptask.auth import session

            env = self._env()
            io = session.Io(
                note=self.out.note,
                trace=self._auth_trace if self.options.trace else None,
                connect_timeout=limits.connect_timeout,
                read_timeout=limits.read_timeout,
                interactive=env.stdin_tty and env.stderr_tty,
                network=self.target.network,
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
        """The command will follow `count` tasks at once. From MANY_TASKS on, polls go on the
        poll pool (`HttpOptions.many`), from the next request on (`watch --all` lists
        first)."""
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
            if name is None and self.options.session:
                # a session is MCP 2025-11-25's: a server that also speaks 2026-07-28 (which
                # has none) must not be asked in that version, which would drop the session
                from mcptask.protocols.registry import fallback

                name = fallback().name
            if name is None and self.recorded in NAMES and self.target.command is None:
                # the protocol the tasks were made in (`send -p a2a-0.3`): they are spoken
                # to in it, wherever the endpoint's own card would lead detection
                name = self.recorded
                self._post_to(self._book().endpoint(self.key).get("postTo"))
                if self.options.trace:
                    self.trace(f"* {name}, the protocol the task book recorded with the task")
            if name is None and self.remembers:
                endpoint = self._book().endpoint(self.key)
                remembered = endpoint.get("protocol")
                if isinstance(remembered, str) and remembered in NAMES:
                    name = remembered
                    self._post_to(endpoint.get("postTo"))
            if name is None:
                found = await protocols.detect(self.rpc(), self.key)
                name = found.name
                if found.fresh and self.target.command is not None:
                    found.opened = await self._fresh_process(found.name)
                # the endpoint an agent card named, where every request goes
                named = self._post_to(found.post_to, detected=True)
                if self.remembers:
                    # kept once the command ends without an error (`keep_detected`)
                    self.detected = {"protocol": name, "postTo": named}
                if found.opened is not None:
                    # the protocol that confirmed the endpoint, its session already open
                    opened: TaskProtocol = found.opened
                    self._protocol = opened
                    return opened
            self._protocol = protocols.create(
                name,
                self.rpc(),
                self.key,
                session=self.options.session,
                context_id=self.options.context_id,
            )
        return self._protocol

    async def _fresh_process(self, name: str) -> TaskProtocol | None:
        """`name` on a new stdio process, its session open, when the first process served
        another version of the protocol first (a server that keeps a connection in the
        version it opened with): the new process is kept and the first one stopped. When the
        server refuses `name` there too, the first connection stays (and what it can do)."""
        from mcptask import protocols

        first = self.rpc()
        self._rpc = None
        opened = await protocols.open_fallback(self.rpc(), self.key)
        if opened is None:
            assert self._rpc is not None
            await self._rpc.aclose()
            self._rpc = first
            self.out.redactor = first.transport.redact
            return None
        await first.aclose()
        if self.options.trace:
            self.trace(f"* {name} on a fresh process (the first one served a newer version)")
        return opened

    def keep_detected(self) -> None:
        """Remember the detected protocol in the task book: a command that failed to speak to
        a URL adds nothing there. A protocol forced with `-p` is remembered for an endpoint
        the book knows no protocol of (`book` shows it; later runs without `-p` use it)."""
        if not self.remembers:
            return
        if self.detected is not None:
            self._book().set_endpoint(self.key, **self.detected)
            self.detected = None
        elif self._protocol is not None and self.options.protocol not in ("auto", None):
            book = self._book()
            if not book.endpoint(self.key).get("protocol"):
                book.set_endpoint(self.key, protocol=self._protocol.name)

    def _post_to(self, url: Any, *, detected: bool = False) -> str | None:
        """Post to the endpoint the agent card named (when the protocol was detected, or as
        the task book kept it), if it is on the target's origin (credentials never go
        elsewhere): set once, here, where the transport is built. The URL, when it is set."""
        from mcptask.text.urls import origin
        from mcptask.transports.rpc import SwitchesUrl, Traces

        transport = self.rpc().transport
        if not isinstance(url, str) or url == transport.url:
            return None
        if origin(url).lower() != origin(transport.url).lower():
            return None
        if not isinstance(transport, SwitchesUrl):
            return None
        transport.move_to(url)
        if isinstance(transport, Traces):
            transport.trace(
                f"* the agent card names the endpoint {url}: posting there"
                if detected
                else f"* posting to {url}, the endpoint the agent card named"
            )
        return url

    async def aclose(self) -> None:
        try:
            if self._protocol is not None:
                await self._protocol.aclose()
        finally:
            if self._rpc is not None:
                await self._rpc.aclose()  # stops a stdio server: on every path
            if self._lazy_oauth is not None:
                await self._lazy_oauth.aclose()
