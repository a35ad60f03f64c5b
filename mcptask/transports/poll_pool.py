"""Keep-alive HTTP/1.1 connections to one origin for the polls of a large watch.

A watch of 1,000 tasks sends about 1,000 small POSTs a second to one URL, a few at a time. Any
general HTTP client spends most of a poll's CPU on its own machinery: httpx's request and
response objects, aiohttp's `ClientSession._request` and its response reader (0.2 ms a request
with few in flight, `bench/http_clients.py`), leaving nothing of the 0.3 ms a poll may cost
(issue 30). Here a poll is one `write` of bytes made once per endpoint (request line, `Host`,
the endpoint's headers) plus its own few headers and body, and the answer is parsed by llhttp
(`httptools`, the C parser uvicorn uses): status, headers, body by length or chunks. Nothing
else: no redirects, cookies, proxies, compression or authentication here. `HttpTransport`
sends only polls this way and hands any answer that is not a plain JSON success (a redirect, a
refusal, an event stream, an encoded or large body) to its general reader as an
`httpx.Response`, so every rule of the general path still applies to it.

Failures are raised as the httpx exceptions the default transport raises for them, so that
`HttpTransport` maps them to mcptask errors in its one place.
"""

from __future__ import annotations

import asyncio
import errno
import os
import re
import socket
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import httptools
import httpx

#: connections kept open at most (the watch has fewer polls in flight)
MAX_CONNECTIONS = 100
#: an idle connection older than this is closed rather than used: servers drop them, uvicorn
#: and Node after 5 s, and one they drop as a request goes out fails a `tasks/result` (which
#: is not sent twice); a second under theirs
KEEPALIVE_SECONDS = 4.0
#: reading from a connection pauses while this much of its body waits to be read
HIGH_WATER = 256 * 1024
#: an answer's status line and headers are at most this long (as httpx's h11 allows): a
#: server that sends headers without end is refused, not kept in memory
MAX_HEAD = 16 * 1024
#: `aclose` waits this long for connections to close before it aborts them
CLOSE_SECONDS = 1.0
#: an answer of at most this many bytes, its length known, is read whole here when its body
#: comes after its headers (a server that writes them apart: Python's `http.server`)
SMALL_BODY = 64 * 1024
#: Linux's switch for an ACK sent at once rather than delayed (up to 40 ms): a server that
#: writes headers and body apart with Nagle on holds the body until the headers are ACKed.
#: It does not stay on (the kernel goes back to delayed ACKs), so it is set again after every
#: read that leaves an answer unfinished; setting it also sends the ACK that was held back.
#: None where the platform has no such switch
QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)

NOT_SENT = "Server disconnected without sending a response."
CUT_SHORT = "peer closed connection without sending complete message body"


def os_reason(err: OSError) -> str:
    """An OS error as the default transport words it (`[Errno 104] Connection reset by
    peer`): asyncio replaces the reason with "Connect call failed ('127.0.0.1', 9)", which
    names no reason, or folds several attempts into "Multiple exceptions: ..."."""
    code = err.errno
    if not isinstance(code, int):
        m = re.search(r"\[Errno (\d+)\]", str(err))
        code = int(m[1]) if m else None
    if isinstance(code, int) and code > 0:
        return f"[Errno {code}] {os.strerror(code)}"
    return str(err)


def _lost(exc: BaseException | None, ex: Exchange) -> httpx.TransportError:
    """The connection closed under an exchange: before its answer began, or in its body
    (worded as the default transport words it)."""
    if isinstance(exc, ConnectionResetError) or (
        isinstance(exc, OSError) and exc.errno == errno.ECONNRESET
    ):
        reset = httpx.ReadError("the connection was reset")
        reset.__cause__ = exc
        return reset
    if not ex.head:
        return httpx.RemoteProtocolError(NOT_SENT)
    length = ex.header(b"content-length")
    if length is not None and length.isdigit():
        return httpx.RemoteProtocolError(
            f"{CUT_SHORT} (received {ex.received} bytes, expected {int(length)})"
        )
    if ex.header(b"transfer-encoding") is not None:
        return httpx.RemoteProtocolError(f"{CUT_SHORT} (incomplete chunked read)")
    return httpx.RemoteProtocolError(CUT_SHORT)


class Exchange:
    """One request's answer, as it arrives: status and headers first, the body in chunks."""

    def __init__(self, conn: _Conn) -> None:
        self.conn = conn
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        #: body bytes received in all
        self.received = 0
        self.head = False
        #: the whole answer has arrived
        self.done = False
        #: the server keeps the connection open after this answer
        self.keep_alive = False
        #: the body runs until the connection closes (no length, not chunked)
        self.until_close = False
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.released = False
        #: the loop time the whole answer is due by, and the seconds it had (`PollPool.send`)
        self.until = 0.0
        self.within = 0.0

    def header(self, name: bytes) -> bytes | None:
        """The first value of a header (names compared case-blind)."""
        for key, value in self.headers:
            if len(key) == len(name) and key.lower() == name:
                return value
        return None

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def fail(self, exc: BaseException) -> None:
        if self.error is None and not self.done:
            self.error = exc
        self._wake()

    async def _wait(self, until: float, within: float | None = None) -> None:
        """Wait for the next event of the exchange until the loop time `until`; past it, the
        connection is closed and `httpx.ReadTimeout` raised (`within`: the seconds the whole
        answer had, to say so; None: the wait for the next piece of the body)."""
        loop = asyncio.get_running_loop()
        self.waiter = waiter = loop.create_future()
        handle = loop.call_at(until, _expire, waiter)
        try:
            await waiter
        except TimeoutError:
            self.conn.close()
            why = "timed out reading" if within is None else f"no answer within {within:g} s"
            raise httpx.ReadTimeout(why) from None
        finally:
            handle.cancel()
            self.waiter = None

    async def answer(self, until: float, within: float) -> None:
        """Wait for the status line and headers (until the loop time `until`)."""
        while not self.head and self.error is None:
            await self._wait(until, within)
        if self.error is not None:
            raise self.error

    def small(self) -> bool:
        """The body still to come is short and its length known (`SMALL_BODY`): it is
        worth waiting for here (`whole`) rather than reading as a stream."""
        length = self.header(b"content-length")
        return (
            length is not None
            and length.isdigit()
            and int(length) <= SMALL_BODY
            and self.header(b"transfer-encoding") is None
        )

    async def whole(self) -> None:
        """Wait for the rest of the answer, until its deadline (`until`); past it, the
        connection is closed and `httpx.ReadTimeout` raised; a connection lost meanwhile
        raises as `stream` would."""
        while not self.done and self.error is None:
            await self._wait(self.until, self.within)
        if self.error is not None:
            raise self.error

    def body(self) -> bytes:
        """The whole body, once `done`."""
        out = b"".join(self.chunks)
        self.chunks.clear()
        self.buffered = 0
        return out

    async def stream(self, read_timeout: float) -> AsyncIterator[bytes]:
        """The body's chunks as they come; `httpx.ReadTimeout` when none comes for
        `read_timeout` seconds."""
        loop = asyncio.get_running_loop()
        while True:
            if self.chunks:
                chunk = self.chunks.popleft()
                self.buffered -= len(chunk)
                self.conn.reading(self.buffered)
                yield chunk
                continue
            if self.error is not None:
                raise self.error
            if self.done:
                return
            await self._wait(loop.time() + read_timeout)

    def release(self) -> None:
        """The exchange is over: its connection goes back to the pool when the answer was
        read whole and the server keeps it open, else it is closed."""
        if self.released:
            return
        self.released = True
        conn = self.conn
        if conn.exchange is self:
            conn.exchange = None
        if self.done and self.keep_alive and self.error is None and not conn.dead:
            conn.reading(0)
            conn.pool.put_back(conn)
        else:
            conn.close()


#: bytes h11 refuses in a header value (the other control bytes it lets through, as llhttp's
#: lenient_headers does)
_NOT_IN_VALUE = re.compile(rb"[\x00\n\r\x0b\x0c]")

#: a request target sent as it is: RFC 3986's path and query characters (anything else goes
#: through httpx, which quotes it)
_PLAIN_TARGET = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*")


def request_line(method: str, url: str) -> bytes | None:
    """`METHOD target HTTP/1.1` for `url`, when it can be sent as it is (HTTP or HTTPS, no
    user name or password, no fragment, nothing to quote); else None. Whether `url` is on
    the pool's origin is the caller's to judge."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number raises ValueError
    except ValueError:
        return None
    if (
        parts.scheme.lower() not in ("http", "https")
        or parts.username is not None
        or parts.fragment
    ):
        return None
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if not _PLAIN_TARGET.fullmatch(target):
        return None
    return f"{method} {target} HTTP/1.1\r\n".encode("ascii")


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


class _Conn(asyncio.Protocol):
    """One connection: the llhttp parser's callbacks fill the exchange under way."""

    def __init__(self, pool: PollPool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        # what httpx's h11 reads too: a header value with a control byte (the reader's to
        # judge: a session id that is not visible ASCII has its own error), lines ended by a
        # bare LF, Content-Length beside chunked Transfer-Encoding (the chunks count, RFC 9112
        # §6.3; the connection is not used again). Names, lengths and chunk sizes stay strict
        self.parser.set_dangerous_leniencies(
            lenient_headers=True, lenient_optional_cr_before_lf=True, lenient_chunked_length=True
        )
        self.exchange: Exchange | None = None
        #: the socket, to ask for ACKs at once (`QUICKACK`); None where that is not to be had
        self.sock: Any = None
        self.dead = False
        self.paused = False
        self.idle_since = 0.0
        #: bytes of the answer under way read before its headers ended, and after
        self.head_bytes = 0
        self.after_head = 0
        #: set once the connection is closed (`connection_lost`)
        self.lost = asyncio.get_running_loop().create_future()

    # -- asyncio ---------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.pool.conns.add(self)
        if QUICKACK is not None:
            self.sock = transport.get_extra_info("socket")
            self._quick_ack()

    def _quick_ack(self) -> None:
        """ACK what came at once (and the next few packets): see `QUICKACK`."""
        try:
            self.sock.setsockopt(socket.IPPROTO_TCP, QUICKACK, 1)
        except (OSError, AttributeError, TypeError):
            self.sock = None  # not a TCP socket after all: never asked again

    def data_received(self, data: bytes) -> None:
        ex = self.exchange
        if ex is None or ex.done:
            self.close()  # bytes nobody asked for: the connection is not to be trusted
            return
        if not ex.head:
            room = MAX_HEAD - self.head_bytes
            self.head_bytes += len(data)
            if len(data) > room:
                # the headers must end within the limit (a body in the same read is not
                # counted: what fits is parsed first)
                self._feed(ex, data[: max(0, room)])
                if not ex.head:
                    self._refuse(ex, "Receive buffer too long")
                    return
                data = data[max(0, room) :]
            self._feed(ex, data)
        else:
            # after the headers: what is not body (chunk sizes, trailers) stays in proportion
            # to the body (1-byte chunks take 6 bytes): an endless trailer is refused, not kept
            self.after_head += len(data)
            self._feed(ex, data)
            if self.after_head - ex.received > MAX_HEAD + 8 * ex.received:
                self._refuse(ex, "Receive buffer too long")
                return
        if not ex.done and self.sock is not None and not self.dead:
            self._quick_ack()  # more is to come: the server may be waiting for this ACK

    def _feed(self, ex: Exchange, data: bytes) -> None:
        if self.dead or not data:
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._refuse(ex, "the server switched protocols")
        except httptools.HttpParserError as exc:
            self._refuse(ex, f"malformed HTTP answer: {exc}")

    def eof_received(self) -> bool | None:
        return None  # close: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.dead = True
        if not self.lost.done():
            self.lost.set_result(None)
        self.pool.conns.discard(self)
        self.pool.wake_one()
        ex = self.exchange
        if ex is None or ex.done:
            return
        if ex.head and ex.until_close and exc is None:
            ex.done = True  # the body ran until the close, as its headers said
            ex._wake()
        else:
            ex.fail(_lost(exc, ex))

    def reading(self, buffered: int) -> None:
        if self.paused and buffered < HIGH_WATER // 2 and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()

    def _refuse(self, ex: Exchange, why: str) -> None:
        """The answer breaks HTTP (`why`, worded as httpx's h11 words it): the exchange fails
        and the connection closes."""
        ex.fail(httpx.RemoteProtocolError(why))
        self.close()

    def close(self) -> None:
        self.dead = True
        if self.transport is not None:
            self.transport.close()

    def send(self, data: bytes) -> Exchange:
        assert self.transport is not None
        self.head_bytes = self.after_head = 0
        self.exchange = ex = Exchange(self)
        self.transport.write(data)
        return ex

    # -- llhttp callbacks (never raise: an exception would cut the parse) --------------------

    def _current(self) -> Exchange | None:
        """The exchange whose answer is being parsed; None once it is whole (anything after
        it on this connection is a second answer nobody asked for: see `on_message_begin`)."""
        ex = self.exchange
        return None if ex is None or ex.done else ex

    def on_message_begin(self) -> None:
        ex = self.exchange
        if ex is None or ex.done:
            self.dead = True  # a second answer to one request: the connection is not reused
            return
        ex.headers = []
        ex.reason = b""

    def on_status(self, status: bytes) -> None:
        ex = self._current()
        if ex is not None:
            ex.reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        ex = self._current()
        if ex is None:
            return
        if _NOT_IN_VALUE.search(value):
            # llhttp's lenient_headers lets these through too; httpx's h11 refuses them (in
            # trailers as well)
            line = bytearray(name + b": " + value)
            self._refuse(ex, f"illegal header line: {line!r}")
        elif not ex.head:  # trailers are not headers (httpx drops them)
            ex.headers.append((name, value))

    def on_headers_complete(self) -> None:
        ex = self._current()
        status = self.parser.get_status_code()
        if ex is not None and _NOT_IN_VALUE.search(ex.reason):
            line = bytearray(
                b"HTTP/%s %d %s" % (self.parser.get_http_version().encode(), status, ex.reason)
            )
            self._refuse(ex, f"illegal status line: {line!r}")
            return
        if ex is None or 100 <= status < 200:
            return  # an interim answer (100 Continue): the real one follows
        coding = [v for k, v in ex.headers if k.lower() == b"transfer-encoding"]
        if len(coding) > 1 or (coding and coding[0].strip(b" \t").lower() != b"chunked"):
            # refused as httpx's h11 refuses it: llhttp would read the chunks and leave the
            # other codings (`gzip, chunked`) undone
            self._refuse(
                ex,
                "multiple Transfer-Encoding headers"
                if len(coding) > 1
                else "Only Transfer-Encoding: chunked is supported",
            )
            return
        ex.status = status
        ex.head = True
        ex.until_close = (
            ex.header(b"content-length") is None
            and ex.header(b"transfer-encoding") is None
            and status not in (204, 304)
        )
        ex._wake()

    def on_body(self, body: bytes) -> None:
        ex = self._current()
        if ex is None:
            return
        ex.chunks.append(body)
        ex.buffered += len(body)
        ex.received += len(body)
        if ex.buffered > HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        if ex.waiter is not None:
            ex._wake()

    def on_message_complete(self) -> None:
        ex = self._current()
        if ex is None or not ex.head:
            return  # the end of an interim answer
        ex.keep_alive = self.parser.should_keep_alive() and (
            ex.header(b"content-length") is None or ex.header(b"transfer-encoding") is None
        )
        ex.done = True
        ex._wake()


class PollPool:
    """Connections to the origin of `url`; `send` writes a request made by `request`."""

    def __init__(
        self,
        url: str,
        *,
        connect_timeout: float,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        # as httpx reads it: the host in IDNA (what DNS, TLS and `Host` take), lowercase
        parts = httpx.URL(url)
        self.https = parts.scheme == "https"
        self.host = parts.raw_host.decode("ascii")
        default = 443 if self.https else 80
        self.port = parts.port or default
        host = f"[{self.host}]" if ":" in self.host else self.host
        authority = host if parts.port in (None, default) else f"{host}:{parts.port}"
        self._host = f"Host: {authority}\r\n".encode("ascii")
        self.connect_timeout = connect_timeout
        self.ssl_context = ssl_context
        self._idle: deque[_Conn] = deque()
        #: open connections, and connections being opened
        self.conns: set[_Conn] = set()
        self._connecting = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        #: `aclose` was called: no new connection is opened
        self.closed = False

    def head(self, headers: Mapping[str, str]) -> bytes:
        """`Host` and these headers, made once, sent with request after request. Values are
        visible ASCII (checked by the caller). A `Host` among them (`-H`) replaces the
        URL's, as in httpx."""
        lines = [] if any(name.lower() == "host" for name in headers) else [self._host]
        lines.extend(f"{name}: {value}\r\n".encode("latin-1") for name, value in headers.items())
        return b"".join(lines)

    async def send(
        self,
        line: bytes,
        head: bytes,
        extra: bytes,
        content: bytes | None,
        within: float,
        *,
        fresh: bool = False,
    ) -> Exchange:
        """Send one request (`line`: its request line, from `request_line`; `content`: its
        body, None for none) and wait for its status line and headers, at most `within`
        seconds from now (the connection's set-up included). `fresh`: on a new connection
        (a request sent again after its connection died: an idle one may have died too, its
        close not yet seen)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + within
        conn = await self._acquire(until, fresh=fresh)
        if content is None:
            data = b"%s%s%s\r\n" % (line, head, extra)
        else:
            data = b"%s%s%sContent-Length: %d\r\n\r\n%s" % (
                line,
                head,
                extra,
                len(content),
                content,
            )
        ex = conn.send(data)
        ex.until, ex.within = until, within
        try:
            await ex.answer(until, within)
        except BaseException:
            ex.release()  # not done: closed
            raise
        return ex

    async def _acquire(self, until: float, *, fresh: bool = False) -> _Conn:
        now = time.monotonic()
        while True:
            if fresh and self._idle and len(self.conns) + self._connecting >= MAX_CONNECTIONS:
                self._idle.popleft().close()  # the oldest makes room (its close wakes us)
            while self._idle and not fresh:
                conn = self._idle.pop()  # the most recently used: the likeliest to be open
                if conn.dead or now - conn.idle_since > KEEPALIVE_SECONDS:
                    conn.close()
                    continue
                return conn
            if self.closed:
                raise httpx.ConnectError("the connection pool is closed")
            if len(self.conns) + self._connecting < MAX_CONNECTIONS:
                return await self._connect(until)
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                async with asyncio.timeout_at(until):
                    await waiter
            except BaseException as exc:
                if waiter.done() and not waiter.cancelled():
                    self.wake_one()  # woken, then cancelled or out of time: the turn passes on
                if isinstance(exc, TimeoutError):
                    raise httpx.PoolTimeout("no connection free in time") from None
                raise
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    async def _connect(self, until: float) -> _Conn:
        loop = asyncio.get_running_loop()
        self._connecting += 1
        try:
            async with asyncio.timeout_at(min(until, loop.time() + self.connect_timeout)):
                _, conn = await loop.create_connection(
                    lambda: _Conn(self),
                    self.host,
                    self.port,
                    ssl=self.ssl_context if self.https else None,
                    server_hostname=self.host if self.https else None,
                )
        except TimeoutError:
            raise httpx.ConnectTimeout("timed out connecting") from None
        except ssl.SSLError as exc:
            raise httpx.ConnectError(str(exc)) from exc
        except OSError as exc:
            if isinstance(exc, ConnectionRefusedError) or exc.errno == errno.ECONNREFUSED:
                raise httpx.ConnectError("connection refused") from exc
            raise httpx.ConnectError(os_reason(exc)) from exc
        finally:
            self._connecting -= 1
            self.wake_one()
        if self.closed:  # closed while connecting: this one too
            conn.close()
            raise httpx.ConnectError("the connection pool is closed")
        return conn

    def wake_one(self) -> None:
        """Let one request waiting for a connection look again."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def put_back(self, conn: _Conn) -> None:
        if self.closed:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        self._idle.append(conn)
        self.wake_one()

    async def aclose(self) -> None:
        """Close every connection and wait until each is closed (its socket too): a TLS
        connection that does not finish its closing handshake soon is aborted."""
        self.closed = True
        self._idle.clear()
        conns = list(self.conns)
        for conn in conns:
            conn.close()
        if not conns:
            return
        _, pending = await asyncio.wait([c.lost for c in conns], timeout=CLOSE_SECONDS)
        for conn in conns:
            if not conn.lost.done() and conn.transport is not None:
                conn.transport.abort()
        if pending:
            await asyncio.wait(pending, timeout=CLOSE_SECONDS)


class ExchangeStream(httpx.AsyncByteStream):
    """An exchange's body as an httpx response stream (the general reader's input)."""

    def __init__(self, ex: Exchange, read_timeout: float) -> None:
        self.ex = ex
        self.read_timeout = read_timeout

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.ex.stream(self.read_timeout):
            yield chunk

    async def aclose(self) -> None:
        self.ex.release()


def as_response(ex: Exchange, request: httpx.Request, read_timeout: float) -> httpx.Response:
    """The exchange as an `httpx.Response` whose body is still to be read."""
    # the reason as it came, "" included (httpx's default transport gives h11's, so that
    # errors read the same)
    extensions: dict[str, Any] = {"http_version": b"HTTP/1.1", "reason_phrase": ex.reason}
    return httpx.Response(
        ex.status,
        headers=ex.headers,
        stream=ExchangeStream(ex, read_timeout),
        request=request,
        extensions=extensions,
    )
