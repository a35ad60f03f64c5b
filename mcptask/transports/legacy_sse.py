"""MCP's deprecated HTTP+SSE transport (protocol 2024-11-05), which servers still offer at an
`/sse` URL. The 2025-11-25 transports spec ("Backwards Compatibility") says how a client reaches
one: POST to the URL as for Streamable HTTP; on 400, 404 or 405 GET it, expecting an event stream
whose first event is `endpoint`, its data the URL to POST messages to. Every answer, request
and notification of the server then comes on that one GET stream, and the session lives as long
as the stream: a task made on it cannot be reached by a later run.

One reader task routes the stream as the stdio transport routes a server's stdout: answers go to
the `send` waiting for that id; requests and notifications to the oldest open request's stream
(a plain call's progress and questions), else (notifications) to `on_notification` or the bounded
`notifications` queue (a watch's pushed statuses). Each message is POSTed to the endpoint, on
the stream's origin only (credentials never go elsewhere); the server answers the POST with 202.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urljoin

from mcptask.errors import (
    McptaskError,
    ProtocolError,
    ServerError,
    TransportError,
)
from mcptask.text import jsonsafe, urls
from mcptask.text.sanitize import one_line
from mcptask.transports.http import HttpTransport, _can_wait
from mcptask.transports.peer import PeerRouter
from mcptask.transports.rpc import StreamEvent, is_response

Message = dict[str, Any]

#: how long the stream may take to name its endpoint (the first event)
ENDPOINT_WAIT = 10.0
NOTIFICATION_QUEUE = 1000
#: what a person is told about this transport where it cannot do something
DEPRECATED = "the deprecated HTTP+SSE transport (MCP 2024-11-05)"


class LegacySseTransport:
    """The HTTP+SSE transport over an `HttpTransport`'s options (its own connection pool,
    never the blocking one: the stream is read while messages are POSTed)."""

    #: `rpc.SharesOneStream`: what the server sends goes through `peer.PeerRouter`
    shares_one_stream = True

    def __init__(self, http: HttpTransport) -> None:
        self._outer = http
        options = replace(http.options, blocking=False, many=False)
        self.http = HttpTransport(options)
        self.url = http.url
        #: where messages are POSTed (the `endpoint` event's URL)
        self.endpoint: str | None = None
        self.deadline: float | None = None
        #: what the server's stream brings, routed (transports/peer.py, shared with stdio)
        self.router = PeerRouter(self._reply, trace=self.http.trace, kept=NOTIFICATION_QUEUE)
        self.notifications: asyncio.Queue[Message] = self.router.notifications
        self._reader: asyncio.Task[None] | None = None
        self._stream: AsyncIterator[StreamEvent] | None = None
        self._dead: BaseException | None = None

    @property
    def on_notification(self) -> Callable[[Message], None] | None:
        return self.router.on_notification

    def notifications_to(
        self, handler: Callable[[Message], None], *, backlog: bool = False
    ) -> contextlib.AbstractContextManager[None]:
        """`rpc.HasNotifications`: notifications to `handler` inside the block."""
        return self.router.notifications_to(handler, backlog=backlog)

    def set_deadline(self, deadline: float | None) -> None:
        """`rpc.HasDeadline`: no request from now on outlasts `deadline`."""
        self.deadline = deadline

    # -- opening ----------------------------------------------------------------------------

    async def connect(self) -> bool:
        """GET the URL; True once its stream named the endpoint. False when the answer is not
        an event stream that begins with `endpoint` (not this transport)."""
        stream = self.http.event_stream()
        self._stream = stream
        try:
            async with asyncio.timeout(ENDPOINT_WAIT):
                async for event in stream:
                    if event.event == "open":
                        continue
                    if event.event != "endpoint":
                        break
                    self.endpoint = self._resolve(event.data.strip())
                    break
        except (McptaskError, TimeoutError):
            self.endpoint = None
        if self.endpoint is None:
            await self._close_stream()
            return False
        self.http.trace(f"* {urls.safe_url(self.url)} is {DEPRECATED}: posting to {self.endpoint}")
        self._reader = asyncio.ensure_future(self._read(stream))
        return True

    def _resolve(self, data: str) -> str:
        if not data:
            raise ProtocolError(f"{urls.safe_url(self.url)}: an empty `endpoint` event")
        endpoint = urljoin(self.url, data)
        if urls.origin(endpoint).lower() != urls.origin(self.url).lower():
            raise ProtocolError(
                f"{urls.safe_url(self.url)} named an endpoint on another origin "
                f"({urls.origin(endpoint)}): mcptask posts only to the origin it was given"
            )
        return endpoint

    # -- reading ----------------------------------------------------------------------------

    async def _read(self, stream: AsyncIterator[StreamEvent]) -> None:
        error: BaseException
        try:
            async for event in stream:
                if not event.data.strip() or event.event not in ("message", ""):
                    continue
                try:
                    parsed = jsonsafe.loads(event.data)
                except (ValueError, RecursionError):
                    self.http.trace(f"< (not JSON, ignored) {one_line(event.data, 200)}")
                    continue
                for item in parsed if isinstance(parsed, list) else [parsed]:
                    if isinstance(item, dict):
                        self.router.route(item)
            error = TransportError(
                f"{urls.safe_url(self.url)} closed its event stream ({DEPRECATED}: the session "
                "ended with it)"
            )
        except asyncio.CancelledError:
            return
        except Exception as exc:
            error = exc
        self._dead = error
        self.router.fail(error)

    def _reply(self, message: Message) -> None:
        """An answer of ours to the server (a ping's, a refusal), posted without waiting."""
        self._spawn(self._post(message))

    def _spawn(self, job: Any) -> None:
        task = asyncio.ensure_future(job)
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    # -- sending ----------------------------------------------------------------------------

    async def _post(self, message: Message, headers: Mapping[str, str] | None = None) -> None:
        if self._dead is not None:
            raise self._dead
        assert self.endpoint is not None
        response = await self.http.rest("POST", self.endpoint, body=message, headers=headers)
        if not response.is_success:
            raise self.http.error_for_status(response, response.content)

    async def send(
        self,
        message: Message,
        *,
        headers: Mapping[str, str] | None = None,
        url: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[Message]:
        """POST one message; for a request, yield what the stream brings for it up to its
        answer."""
        if self.endpoint is None:
            raise TransportError(f"{urls.safe_url(self.url)}: the event stream is not open")
        if not ("method" in message and "id" in message):
            await self._post(message, headers)
            return
        req_id = message["id"]
        method = message.get("method")
        queue = self.router.open(req_id)
        try:
            await self._post(message, headers)
            wait = timeout if timeout is not None else self.http.options.read_timeout
            while True:
                left = wait
                if self.deadline is not None:
                    left = min(wait, max(0.01, self.deadline - time.monotonic()))
                try:
                    item = await asyncio.wait_for(queue.get(), left)
                except TimeoutError:
                    raise TransportError(
                        f"timed out waiting for {urls.safe_url(self.url)} to answer {method}"
                    ) from None
                if isinstance(item, BaseException):
                    raise item
                yield item
                if is_response(item):
                    return
        finally:
            self.router.close(req_id)

    # -- the rest of the Transport ----------------------------------------------------------

    def redact(self, message: str) -> str:
        return self.http.redact(message)

    def trace(self, line: str) -> None:
        self.http.trace(line)

    async def _close_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            with contextlib.suppress(Exception):
                await stream.aclose()  # type: ignore[attr-defined]

    async def aclose(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        await self._close_stream()
        await self.http.aclose()
        await self._outer.aclose()


async def open_legacy(transport: Any) -> LegacySseTransport | None:
    """The fallback of the 2025-11-25 spec, after a POST to the URL got 400, 404 or 405: GET
    it; an event stream that names its `endpoint` makes the transport to use instead. None when
    the URL is not that transport (or the target is not HTTP)."""
    if not isinstance(transport, HttpTransport):
        return None
    if not _can_wait():
        # a one-shot look-up (`get`, `list`, `cancel`) runs loop-free: it cannot hold a stream
        # open while it posts, and an earlier run's task is gone with its connection anyway
        if await _names_endpoint(transport):
            raise ServerError(
                f"{urls.safe_url(transport.url)} is {DEPRECATED}, whose sessions end with their "
                "connection: a task made by an earlier run cannot be reached (`call` follows "
                "its task in the same run; `tools` and plain calls work)"
            )
        return None
    legacy = LegacySseTransport(transport)
    try:
        opened = await legacy.connect()
    except BaseException:
        await legacy.http.aclose()
        raise
    if not opened:
        await legacy.http.aclose()
        return None
    return legacy


async def _names_endpoint(transport: HttpTransport) -> bool:
    """Whether the URL's GET stream begins with an `endpoint` event (read, then closed)."""
    stream = transport.event_stream(answer_within=ENDPOINT_WAIT)
    try:
        async for event in stream:
            if event.event != "open":
                return event.event == "endpoint"
    except McptaskError:
        return False
    finally:
        await stream.aclose()  # type: ignore[attr-defined]
    return False
