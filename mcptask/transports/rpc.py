"""The one JSON-RPC client all commands share: ids, response matching, typed errors,
notifications, and messages the server sends while a request is open (e.g. elicitation)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractContextManager, aclosing, contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from mcptask.errors import McptaskError, ProtocolError, RpcError

if TYPE_CHECKING:
    import httpx

Message = dict[str, Any]
#: JSON-RPC's "Method not found": what a request nobody answers gets (transports/peer.py,
#: protocols/server_requests.py through protocols/wire.py)
METHOD_NOT_FOUND = -32601


def is_response(msg: Message) -> bool:
    """An answer (a result or an error), not a request or a notification: the one test, for
    every transport (transports/peer.py, http.py)."""
    return "method" not in msg and ("result" in msg or "error" in msg)


PING = "ping"


def first_time(answered: set[str], req_id: Any) -> bool:
    """Whether a request of the peer's with this id is seen for the first time (noted in
    `answered`; `1` and `"1"` are two ids): each is answered once."""
    seen = f"{type(req_id).__name__}:{req_id}"
    if seen in answered:
        return False
    answered.add(seen)
    return True


def own_answer(msg: Message) -> Message:
    """mcptask's own answer to a request of the peer's (`id` and `method`) that no protocol
    handles, the same on every transport: a `ping` gets an empty result, any other method
    METHOD_NOT_FOUND. The id is echoed as received (0 is a valid id)."""
    method = msg.get("method")
    if method == PING:
        return {"jsonrpc": "2.0", "id": msg["id"], "result": {}}
    error = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
    return {"jsonrpc": "2.0", "id": msg["id"], "error": error}


#: called with a request or notification from the server that arrived on a request's stream
ServerMessageHandler = Callable[[Message], Awaitable[None]]


class StreamEvent(NamedTuple):
    """One server-sent event of a standalone stream (`event` "open" first, with no data)."""

    event: str
    data: str
    id: str | None
    retry: int | None


class Transport(Protocol):
    """What every transport does. What only some do is one of the capability protocols below;
    protocols test for those with `isinstance`, never with `getattr`. Its state (the URL, the
    session, the notification handler, the deadline) is read by anyone and changed only by its
    own methods (`SwitchesUrl`, `HasSession`, `HasNotifications`, `HasDeadline`)."""

    @property
    def url(self) -> str: ...

    def send(
        self,
        message: Message,
        *,
        headers: Mapping[str, str] | None = None,
        url: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[Message]: ...

    async def aclose(self) -> None: ...

    def redact(self, message: str) -> str: ...


@runtime_checkable
class HasSession(Protocol):
    """Keeps the `Mcp-Session-Id` the server gave (MCP 2025-11-25 over HTTP and stdio)."""

    @property
    def session_id(self) -> str | None: ...

    def using_session(self, session_id: str | None) -> AbstractContextManager[None]:
        """`session_id` inside the block, the one before after it, whatever the requests
        inside brought (a probe's refusal may hand out a session that is not ours to keep;
        `check` opens sessions of its own)."""
        ...


class KeepsSession:
    """`HasSession.using_session` for a transport that keeps its session in `session_id`
    (Streamable HTTP, stdio)."""

    session_id: str | None

    @contextmanager
    def using_session(self, session_id: str | None) -> Iterator[None]:
        """`session_id` inside the block, the one before after it."""
        before, self.session_id = self.session_id, session_id
        try:
            yield
        finally:
            self.session_id = before


@runtime_checkable
class SharesOneStream(Protocol):
    """Reads all the peer sends on one channel of its own (stdio, MCP's legacy HTTP+SSE),
    through `transports/peer.py`'s router: it answers pings and hands the peer's other
    requests to the request waiting longest, which may be another's to answer (a question
    for a task whose `tasks/result` is open): `RpcClient.request` refuses none there."""

    @property
    def shares_one_stream(self) -> bool: ...


#: `SharesOneStream` by the transport's class: an isinstance of a runtime Protocol walks its
#: members each time (3% of a 1,000-task watch's CPU, once a request)
_SHARING: dict[type, bool] = {}


def _shares_one_stream(transport: object) -> bool:
    kind = type(transport)
    known = _SHARING.get(kind)
    if known is None:
        known = _SHARING[kind] = isinstance(transport, SharesOneStream)
    return known


@runtime_checkable
class HasEventStream(Protocol):
    """Opens the endpoint's standalone GET event stream (server push over HTTP)."""

    def event_stream(
        self, *, headers: Mapping[str, str] | None = None, last_event_id: str | None = None
    ) -> AsyncIterator[StreamEvent]: ...


@runtime_checkable
class HasNotifications(Protocol):
    """Hands over notifications that arrive outside any request (stdio: the server's stdout)."""

    def notifications_to(
        self, handler: Callable[[Message], None], *, backlog: bool = False
    ) -> AbstractContextManager[None]:
        """Notifications go to `handler` inside the block (none set: to a bounded queue).
        `backlog`: those kept in that queue go to it first."""
        ...


@runtime_checkable
class KnowsServerClock(Protocol):
    """Measures the server's clock against this machine's (HTTP `Date` headers)."""

    @property
    def clock_skew(self) -> float | None: ...


@runtime_checkable
class FetchesUrls(Protocol):
    """Makes plain GET requests (A2A agent cards)."""

    async def get(
        self, path_or_url: str, *, max_body: int | None = None, json_only: bool = False
    ) -> httpx.Response: ...


@runtime_checkable
class SpeaksRest(Protocol):
    """Makes HTTP+JSON exchanges and opens an event stream on any resource (A2A's REST
    binding)."""

    async def rest(
        self,
        method: str,
        url: str,
        *,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response: ...

    def event_stream(
        self,
        *,
        headers: Mapping[str, str] | None = None,
        last_event_id: str | None = None,
        answer_within: float | None = None,
        method: str = "GET",
        url: str | None = None,
        body: Any = None,
    ) -> AsyncIterator[StreamEvent]: ...


@runtime_checkable
class Traces(Protocol):
    """Writes a line to `--trace` (redacted), when tracing is on."""

    def trace(self, line: str) -> None: ...


@runtime_checkable
class HasDeadline(Protocol):
    """Bounds every request by one `time.monotonic()` deadline (`result --timeout`)."""

    def set_deadline(self, deadline: float | None) -> None:
        """No request from now on outlasts `deadline` (None: no bound)."""
        ...


@runtime_checkable
class SwitchesUrl(Protocol):
    """Can send to another URL from now on (the endpoint an A2A agent card names)."""

    def move_to(self, url: str) -> None: ...


@runtime_checkable
class SwitchesPool(Protocol):
    """Can move to a connection pool built for many requests in flight (big watches)."""

    async def use_many(self) -> None: ...


def error_from(obj: Any) -> RpcError:
    if not isinstance(obj, dict):
        raise ProtocolError("the server sent a JSON-RPC error that is not an object")
    code = obj.get("code")
    message = obj.get("message")
    if not isinstance(code, int) or isinstance(code, bool):
        raise ProtocolError(f"the server sent a JSON-RPC error without an integer code: {obj!r}")
    return RpcError(code, str(message) if message is not None else "", obj.get("data"))


class RpcClient:
    """JSON-RPC over a transport. `headers` go with every message this client sends, merged
    per message under the caller's own (as httpx merges a client's defaults): a protocol's
    version header lives on its client (`with_headers`), never on the shared transport."""

    def __init__(self, transport: Transport, *, headers: Mapping[str, str] | None = None) -> None:
        self.transport = transport
        self.headers: dict[str, str] = dict(headers or {})
        self._ids = itertools.count(1)

    def with_headers(self, headers: Mapping[str, str]) -> RpcClient:
        """A client on the same transport (and the same request ids) that adds `headers`."""
        other = RpcClient(self.transport, headers={**self.headers, **headers})
        other._ids = self._ids
        return other

    def merged(self, headers: Mapping[str, str] | None) -> dict[str, str] | None:
        """This client's headers under the caller's (None when there are none at all)."""
        if not self.headers:
            return dict(headers) if headers else None
        return {**self.headers, **(headers or {})}

    @property
    def url(self) -> str:
        return self.transport.url

    def next_id(self) -> int:
        """An id for a request the caller must know before sending (to cancel it)."""
        return next(self._ids)

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        url: str | None = None,
        timeout: float | None = None,
        on_message: ServerMessageHandler | None = None,
        req_id: int | None = None,
        answer_headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Send a request and return its `result`; a JSON-RPC error raises `RpcError`.
        `req_id`: one from `next_id()` (else a new one). What the server sends on the
        request's stream before the answer goes to `on_message`. Without one, a request of
        the server's gets `own_answer` (a ping its empty result, any other method
        METHOD_NOT_FOUND: an MCP server would wait for ever), once per id, sent with
        `answer_headers` (with this client's), when they are given: a protocol whose peer
        makes requests (MCP) gives them, others (A2A) let such a message go, as a
        transport that `SharesOneStream` does, whose router answers. A notification is let
        go."""
        if req_id is None:
            req_id = next(self._ids)
        msg: Message = {"jsonrpc": "2.0", "id": req_id, "method": method}
        if params is not None:
            msg["params"] = dict(params)
        if _shares_one_stream(self.transport):
            answer_headers = None  # its router answers pings, and hands the rest around
        #: the requests of the server's answered on this stream (a resumed stream replays)
        answered: set[str] = set()
        stream = self.transport.send(msg, headers=self.merged(headers), url=url, timeout=timeout)
        async with aclosing(stream):  # type: ignore[type-var]
            async for incoming in stream:
                if is_response(incoming):
                    if incoming.get("id") != req_id:
                        raise ProtocolError(
                            f"the server answered request id {incoming.get('id')!r} "
                            f"to {method} (id {req_id})"
                        )
                    if "error" in incoming and incoming["error"] is not None:
                        raise error_from(incoming["error"])
                    return incoming.get("result")
                if "method" in incoming:
                    if on_message is not None:
                        await on_message(incoming)
                    elif "id" in incoming and answer_headers is not None:
                        await self._own_answer(incoming, answer_headers, answered)
                    continue
                raise ProtocolError(f"the server sent something that is not JSON-RPC to {method}")
        raise ProtocolError(f"the server closed the connection without answering {method}")

    async def _own_answer(
        self, incoming: Message, headers: Mapping[str, str], answered: set[str]
    ) -> None:
        """`own_answer` to a request of the server's, once per id; an answer that cannot be
        sent is traced, and the request it came inside goes on."""
        if not first_time(answered, incoming["id"]):
            return
        own = own_answer(incoming)
        try:
            await self.respond(own["id"], own.get("result"), own.get("error"), headers=headers)
        except McptaskError as exc:
            if isinstance(self.transport, Traces):
                self.transport.trace(
                    f"* the answer to the server's {incoming.get('method')!r} "
                    f"could not be sent: {exc.message}"
                )

    async def notify(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        msg: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = dict(params)
        stream = self.transport.send(msg, headers=self.merged(headers))
        async with aclosing(stream):  # type: ignore[type-var]
            async for _ in stream:
                pass

    async def respond(
        self,
        req_id: Any,
        result: Any = None,
        error: Message | None = None,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Answer a request the server sent us (e.g. `elicitation/create`). The id is echoed
        as received (0 is a valid id)."""
        msg: Message = {"jsonrpc": "2.0", "id": req_id}
        if error is not None:
            msg["error"] = error
        else:
            msg["result"] = result
        stream = self.transport.send(msg, headers=self.merged(headers))
        async with aclosing(stream):  # type: ignore[type-var]
            async for _ in stream:
                pass

    async def aclose(self) -> None:
        await self.transport.aclose()
