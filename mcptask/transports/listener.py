"""One small HTTP/1.1 listener on h11 (the parser httpcore uses), shared by the webhook receiver
(transports/webhook.py) and OAuth's loopback redirect (auth/loopback.py).

h11 reads each request's head, strictly: a malformed request line or header (a space before the
colon, a name that is no token), conflicting `Content-Length` headers, a missing `Host`, a head
over `max_head` bytes (read 1 KiB at a time: at most one read more), a `Transfer-Encoding` other
than chunked, and (refused here) a control character in a header value or both
`Content-Length` and `Transfer-Encoding`, are answered 400 (431, 501 where h11 says so) before
the handler sees anything: no token is looked at, no body read. The handler gets the
head (`Incoming`) and reads the body, if it wants it, through `Incoming.body(limit)`. One request
per connection (`Connection: close`); the whole request within `read_seconds`; at most
`max_connections` at once (503 past that)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import h11

#: a control character (but HTAB) in a header value
_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    431: "Request Header Fields Too Large",
    501: "Not Implemented",
    503: "Service Unavailable",
}


class Refused(Exception):
    """Answer the request with `status`; `reason` says why (for the handler's report)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class Reply:
    status: int
    body: bytes = b""
    content_type: str | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)
    #: run once the answer is written (what arrived is passed on only after it was answered)
    then: Callable[[], None] | None = None

    def encode(self) -> bytes:
        head = f"HTTP/1.1 {self.status} {_REASONS.get(self.status, 'Error')}\r\n"
        if self.content_type:
            head += f"Content-Type: {self.content_type}\r\n"
        head += f"Content-Length: {len(self.body)}\r\nConnection: close\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in self.headers)
        return head.encode("latin-1") + b"\r\n" + self.body


class Incoming:
    """A request whose head h11 accepted: `method`, `target`, `headers` (names in lower case,
    repeated ones joined with `, ` as HTTP allows), `header_count`; `body(limit)` reads its
    body (a declared or actual size past `limit` is `Refused(413)`)."""

    def __init__(
        self, request: h11.Request, conn: h11.Connection, read: Callable[[], Awaitable[None]]
    ) -> None:
        self.method = request.method.decode("ascii", "replace")
        self.target = request.target.decode("ascii", "replace")
        headers: dict[str, str] = {}
        for name, value in request.headers:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        self.headers = headers
        self.header_count = len(request.headers)
        self._conn = conn
        self._read = read

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    async def body(self, limit: int) -> bytes:
        declared = self.headers.get("content-length")
        if declared is not None and int(declared) > limit:
            raise Refused(413, f"a body over {limit} bytes")
        chunks: list[bytes] = []
        size = 0
        while True:
            event = self._conn.next_event()
            if event is h11.NEED_DATA:
                await self._read()
                continue
            if isinstance(event, h11.Data):
                size += len(event.data)
                if size > limit:
                    raise Refused(413, f"a body over {limit} bytes")
                chunks.append(bytes(event.data))
                continue
            if isinstance(event, h11.EndOfMessage):
                return b"".join(chunks)
            raise Refused(400, "incomplete request")


Handler = Callable[[Incoming], Awaitable[Reply]]
#: told of each request refused before (or while) the handler read it: status and reason
OnRefused = Callable[[int, str], Reply]


class Listener:
    """`await start()` (then `port`), `aclose()`. `handle` answers a well-formed request (or
    raises `Refused`); `refused` makes the answer to one that is not, and hears of it."""

    def __init__(
        self,
        handle: Handler,
        refused: OnRefused,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        max_head: int = 16 * 1024,
        read_seconds: float = 10.0,
        max_connections: int = 64,
    ) -> None:
        self.handle = handle
        self.refused = refused
        self.host = host
        self.port = port
        self.max_head = max_head
        self.read_seconds = read_seconds
        self.max_connections = max_connections
        self._server: asyncio.Server | None = None
        self._open = 0
        self._handlers: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        sockets = self._server.sockets
        if sockets:
            self.port = int(sockets[0].getsockname()[1])

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._handlers):
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        me = asyncio.current_task()
        if me is not None:
            self._handlers.add(me)
        self._open += 1
        try:
            if self._open > self.max_connections:
                reply = self.refused(503, "too many connections")
            else:
                try:
                    async with asyncio.timeout(self.read_seconds):
                        reply = await self._exchange(reader)
                except TimeoutError:
                    reply = self.refused(400, "incomplete request")
        finally:
            self._open -= 1
        try:
            writer.write(reply.encode())
            await asyncio.wait_for(writer.drain(), self.read_seconds)
        except (TimeoutError, ConnectionError):
            pass
        finally:
            if reply.then is not None:
                reply.then()
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)
            if me is not None:
                self._handlers.discard(me)

    async def _exchange(self, reader: asyncio.StreamReader) -> Reply:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=self.max_head)

        async def read() -> None:
            # the head in small reads, so that h11's bound on an incomplete head holds (a
            # head is refused past `max_head` plus one read); the body in larger ones
            head = conn.their_state is h11.IDLE
            conn.receive_data(await reader.read(1024 if head else 65536))

        try:
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    await read()
                    continue
                break
            if not isinstance(event, h11.Request):
                return self.refused(400, "incomplete request")
            names = {name.lower() for name, _ in event.headers}
            if b"transfer-encoding" in names and b"content-length" in names:
                return self.refused(400, "both Content-Length and Transfer-Encoding")
            if any(_CONTROL.search(value) for _, value in event.headers):
                # h11 lets these through (as browsers send what they send); no client of a
                # webhook or a login redirect has a reason to
                return self.refused(400, "a control character in a header")
            incoming = Incoming(event, conn, read)
            try:
                return await self.handle(incoming)
            except Refused as refused:
                return self.refused(refused.status, refused.reason)
        except h11.RemoteProtocolError as exc:
            status = exc.error_status_hint if exc.error_status_hint in _REASONS else 400
            return self.refused(status, _said(exc, status))
        except (ConnectionError, asyncio.IncompleteReadError):
            return self.refused(400, "incomplete request")


def _said(exc: h11.RemoteProtocolError, status: int) -> str:
    """Why h11 refused, by its status hint (its words hold the bytes that came: not repeated)."""
    return "request head too large" if status == 431 else "a malformed request"
