"""httpx's async client on aiohttp's connection pool, for watches of many tasks.

httpx's own async pool costs 1.0-1.3 ms of CPU per request with a dozen requests in flight; the
`httpx_aiohttp` transport costs about 0.3 ms and keeps the httpx API (bench/README.md, "What
limits it" 4). It takes about 0.2 s to import, so only `HttpOptions.many` loads this module.

httpx-aiohttp 0.2 maps aiohttp's errors to httpx's coarsely: a refused connection and a server
that disconnects both become `httpx.ConnectTimeout`. `ManyTransport` maps them again, from the
aiohttp exception, so that `HttpTransport._connect_error` says what the default transport says
(`connection refused`, `timed out ...` only for real timeouts, a disconnect as a disconnect).
"""

from __future__ import annotations

import asyncio
import errno
import os
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx
import yarl
from aiohttp.http_exceptions import ContentLengthError, TransferEncodingError
from httpx_aiohttp import AiohttpTransport
from httpx_aiohttp.transport import AiohttpResponseStream

#: at least the watch's polls in flight plus one push stream per session; httpx's default
MAX_CONNECTIONS = 100

_NOT_SENT = "Server disconnected without sending a response."
_CUT_SHORT = "peer closed connection without sending complete message body"


def _source(exc: BaseException) -> BaseException:
    """The aiohttp (or asyncio) exception behind `exc`: httpx-aiohttp raises its httpx
    exception `from` the aiohttp one."""
    if isinstance(exc, httpx.TransportError) and isinstance(
        exc.__cause__, aiohttp.ClientError | asyncio.TimeoutError
    ):
        return exc.__cause__
    return exc


def _refused(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError) or (
            isinstance(seen, OSError) and seen.errno == errno.ECONNREFUSED
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


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


def map_error(exc: BaseException, *, reading: bool) -> httpx.TransportError | None:
    """The httpx exception the default transport would raise for `exc` (an aiohttp, asyncio or
    httpx-aiohttp exception), or None to let `exc` through unchanged. `reading`: the
    response's headers have come (the body was being read)."""
    src = _source(exc)
    if isinstance(src, aiohttp.ServerTimeoutError):  # before ClientConnectionError: it is one
        if isinstance(src, aiohttp.ConnectionTimeoutError):
            return httpx.ConnectTimeout(str(src) or "timed out connecting")
        return httpx.ReadTimeout(str(src) or "timed out reading")
    if isinstance(src, aiohttp.ClientConnectorCertificateError):
        return httpx.ConnectError(str(src.certificate_error))
    if isinstance(src, aiohttp.ClientConnectorError):
        if _refused(src):
            return httpx.ConnectError("connection refused")
        return httpx.ConnectError(os_reason(src.os_error) or str(src))
    if isinstance(src, aiohttp.ServerDisconnectedError):
        return httpx.RemoteProtocolError(_CUT_SHORT if reading else _NOT_SENT)
    if isinstance(src, aiohttp.ClientPayloadError):
        if "ConnectionResetError" in str(src):
            # aiohttp keeps the reset only in the message; the default transport raises a
            # ReadError caused by ConnectionResetError ("the connection was reset")
            reset = httpx.ReadError(str(src))
            reset.__cause__ = ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")
            return reset
        cause = src.__cause__
        if isinstance(cause, ContentLengthError):
            # the default transport's words: "(received 3 bytes, expected 100)"
            m = re.search(r"received (\d+) of (\d+) bytes", str(cause))
            sizes = f" (received {m[1]} bytes, expected {m[2]})" if m else ""
            return httpx.RemoteProtocolError(_CUT_SHORT + sizes)
        if isinstance(cause, TransferEncodingError):
            return httpx.RemoteProtocolError(f"{_CUT_SHORT} (incomplete chunked read)")
        return httpx.RemoteProtocolError(str(src))
    if isinstance(src, aiohttp.ClientOSError):
        return httpx.ReadError(str(src) or type(src).__name__)
    if isinstance(src, aiohttp.ClientConnectionError):
        return httpx.ReadError(str(src) or _NOT_SENT)
    if isinstance(src, aiohttp.ClientResponseError):
        # aiohttp's HTTP parser refused the answer (a bad status line, headers too long)
        return httpx.RemoteProtocolError(src.message or str(src))
    if isinstance(src, aiohttp.ClientError):
        return httpx.TransportError(str(src) or type(src).__name__)
    if isinstance(src, asyncio.TimeoutError):
        return httpx.ReadTimeout("timed out")
    return None


class _MappedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream) -> None:
        self._inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                yield chunk
        except Exception as exc:
            mapped = map_error(exc, reading=True)
            if mapped is None:
                raise
            raise mapped from mapped.__cause__ or _source(exc)

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        except Exception as exc:
            mapped = map_error(exc, reading=True)
            if mapped is None:
                raise
            raise mapped from mapped.__cause__ or _source(exc)


class ManyTransport(httpx.AsyncBaseTransport):
    """`httpx_aiohttp.AiohttpTransport` with the default transport's exceptions, and a leaner
    request: no cookie jar in aiohttp either (the httpx client keeps cookies), the URL parsed
    and the timeout made once, not per request (a watch of 1,000 tasks sends the same POST over
    and over)."""

    def __init__(self, *, verify: bool) -> None:
        self.inner = AiohttpTransport(
            verify=verify,
            trust_env=False,
            limits=httpx.Limits(
                max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS
            ),
            client=self._session,
        )
        self._urls: dict[str, yarl.URL] = {}
        self._timeouts: dict[tuple[Any, ...], aiohttp.ClientTimeout] = {}

    def _session(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            limit=MAX_CONNECTIONS,
            keepalive_timeout=self.inner.limits.keepalive_expiry,
            ssl=self.inner.ssl_context,
        )
        return aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar())

    def _url(self, url: httpx.URL) -> yarl.URL:
        text = str(url)
        parsed = self._urls.get(text)
        if parsed is None:
            if len(self._urls) > 64:
                self._urls.clear()
            parsed = self._urls[text] = yarl.URL(text, encoded=True)
        return parsed

    def _timeout(self, given: Any) -> aiohttp.ClientTimeout:
        given = given or {}
        key = (given.get("connect"), given.get("read"), given.get("pool"))
        timeout = self._timeouts.get(key)
        if timeout is None:
            if len(self._timeouts) > 64:
                self._timeouts.clear()
            timeout = self._timeouts[key] = aiohttp.ClientTimeout(
                sock_connect=key[0], sock_read=key[1], connect=key[2]
            )
        return timeout

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            try:
                content = request.content
            except httpx.RequestNotRead:  # a streamed body (a redirect's new request, say)
                response = await self.inner.handle_async_request(request)
            else:
                response = await self._send(request, content)
        except Exception as exc:
            mapped = map_error(exc, reading=False)
            if mapped is None:
                raise
            raise mapped from mapped.__cause__ or _source(exc)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _MappedStream(response.stream)
        return response

    async def _send(self, request: httpx.Request, content: bytes) -> httpx.Response:
        """`AiohttpTransport.handle_async_request` for a request whose body is in memory."""
        inner = self.inner
        if not isinstance(inner.client, aiohttp.ClientSession):
            inner.client = inner.get_client()
        answer = await inner.client.request(
            request.method,
            self._url(request.url),
            headers=request.headers.multi_items(),
            data=content or None,
            allow_redirects=False,
            auto_decompress=False,
            compress=False,
            timeout=self._timeout(request.extensions.get("timeout")),
            server_hostname=request.extensions.get("sni_hostname"),
        ).__aenter__()
        extensions = {"http_version": b"HTTP/1.1"}
        if answer.reason:
            extensions["reason_phrase"] = answer.reason.encode()
        return httpx.Response(
            status_code=answer.status,
            headers=answer.raw_headers,
            stream=AiohttpResponseStream(answer),
            request=request,
            extensions=extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()
