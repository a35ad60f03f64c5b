"""HTTP transport: POST a JSON-RPC message, read the answer as JSON or as an SSE stream.

Every HTTP failure becomes an mcptask error here, in one place: connection problems are
`TransportError`, 401/403 `AuthError`, JSON-RPC error bodies `RpcError` (whatever the HTTP
status), anything else that is not JSON-RPC `ProtocolError`/`HttpStatusError`.
"""

from __future__ import annotations

import errno
import json
import math
import re
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from mcptask.errors import AuthError, HttpStatusError, ProtocolError, RpcError, TransportError
from mcptask.text import jsonsafe, redact, urls
from mcptask.text.numbers import DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_BODY, DEFAULT_READ_TIMEOUT
from mcptask.text.sanitize import clean, one_line
from mcptask.transports.net import UNTIL, Network, answered_in_plain_text, untrusted
from mcptask.transports.rpc import KeepsSession, StreamEvent, is_response

#: a request's body: compact JSON, the C encoder made once (`json.dumps` makes one a call)
_COMPACT = jsonsafe.encoder(separators=(",", ":"))

if TYPE_CHECKING:
    from mcptask.transports.poll_pool import Exchange, PollPool

Message = dict[str, Any]
Tracer = Callable[[str], None]

USER_AGENT = "mcptask"
#: the encodings transports/body.py decodes (kept here: no import of it on start-up)
ACCEPT_ENCODING = "gzip, deflate"


def origin(url: str | httpx.URL) -> tuple[str, str, int | None]:
    u = httpx.URL(str(url))
    port = u.port or (443 if u.scheme == "https" else 80)
    return (u.scheme, u.host, port)


def _origin_of(url: str) -> tuple[str, str, int | None] | None:
    """`origin`, or None for a URL httpx refuses."""
    try:
        return origin(url)
    except httpx.InvalidURL:
        return None


#: reconnections of a request's event stream that closed before its answer (SEP-1699)
RESUME_ATTEMPTS = 5
#: the longest `retry` mcptask waits before it reconnects, in seconds
RESUME_MAX_WAIT = 30.0


def _is_event_stream(response: httpx.Response) -> bool:
    ctype: str = response.headers.get("content-type", "")
    return ctype.split(";")[0].strip().lower() == "text/event-stream"


def _can_wait() -> bool:
    """Whether an event loop runs (one-shot commands run loop-free: no resumption there)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@dataclass
class _StreamState:
    """What a request's event stream said so far: the last event id, the server's `retry`,
    and whether the answer came (else the stream may be resumed)."""

    request_id: Any
    last_id: str | None = None
    retry: float | None = None
    answered: bool = False

    def event(self, event_id: str | None, retry: int | None) -> None:
        if event_id:
            self.last_id = event_id
        if retry is not None:
            self.retry = min(max(retry / 1000.0, 0.0), RESUME_MAX_WAIT)

    def saw(self, msg: Message) -> None:
        if is_response(msg):
            self.answered = self.answered or msg.get("id") == self.request_id

    @property
    def resumable(self) -> bool:
        return self.request_id is not None and not self.answered and self.last_id is not None

    def delay(self, attempt: int) -> float:
        if self.retry is not None:
            return self.retry
        return float(min(0.5 * 2**attempt, RESUME_MAX_WAIT))


class BearerAuth(Protocol):
    """OAuth as the transport sees it (`mcptask.auth.provider.OAuthProvider`)."""

    @property
    def secrets(self) -> list[str]:
        """Tokens and secrets in use: redacted from traces and errors."""
        ...

    async def bearer(self) -> str | None: ...

    async def refused(self, status: int, headers: list[str], sent: str | None) -> bool: ...


#: redirects followed for one request
MAX_REDIRECTS = 5
#: a request's extension: the seconds its whole answer may take, headers included (`_send`);
#: `UNTIL` (transports/net.py): the `time.monotonic()` that comes to for the send under way
WITHIN = "mcptask.within"

#: a request is sent at most this many times while OAuth renews, logs in or steps up
MAX_AUTH_TRIES = 4


async def read_capped(
    response: httpx.Response, cap: int, too_big: Callable[[], Exception]
) -> bytes:
    """A streamed answer's body, decoded, refused with `too_big()` as soon as it (or a layer
    of its Content-Encoding) passes `cap` bytes: never read whole first, a server may send
    without end (transports/body.py)."""
    from mcptask.transports.body import decoded

    return b"".join([chunk async for chunk in decoded(response, cap, too_big)])


@dataclass
class HttpOptions:
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    token: str | None = None
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    max_body: int = DEFAULT_MAX_BODY
    trace: Tracer | None = None
    #: one request at a time (one-shot commands): a blocking connection, no async pool
    blocking: bool = False
    #: many requests in flight (large watches): polls go on the poll pool
    #: (transports/poll_pool.py), everything else through httpx's async client
    many: bool = False
    #: OAuth credentials for the endpoint (used when no token was given)
    auth: BearerAuth | None = None
    #: proxies and trusted CAs (transports/net.py): the environment's unless given
    network: Network = field(default_factory=Network)


def _refused(exc: BaseException) -> bool:
    """Whether a failed connect was refused (nothing listens there): by the OS error beneath
    httpx's (through `__cause__`, `__context__` and anyio's exception group of every address
    tried), never by its words."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        cause = todo.pop()
        if id(cause) in seen:
            continue
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError) or (
            isinstance(cause, OSError) and cause.errno == errno.ECONNREFUSED
        ):
            return True
        if isinstance(cause, BaseExceptionGroup):
            todo.extend(cause.exceptions)
        todo.extend(c for c in (cause.__cause__, cause.__context__) if c is not None)
    return False


def _challenge_reason(headers: list[str]) -> str:
    """The `error` and `error_description` of a Bearer challenge (RFC 6750 §3), if any."""
    import re

    for header in headers:
        found: dict[str, str] = dict(re.findall(r'(error(?:_description)?)="([^"]*)"', header))
        error = found.get("error")
        if error:
            desc = found.get("error_description")
            return error + (f": {desc}" if desc else "")
    return ""


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        from email.utils import parsedate_to_datetime  # rare: not worth start-up time

        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _limit(cap: int) -> str:
    mib = 1024 * 1024
    return f"{cap // mib} MiB" if cap >= mib and cap % mib == 0 else f"{cap} byte"


class _CappedStream(httpx.AsyncByteStream):
    """A response's decoded bytes, refused past `cap` (MCPTASK_MAX_BODY)."""

    def __init__(self, response: httpx.Response, cap: int) -> None:
        from mcptask.transports.body import Meter

        self.response = response
        self.cap = cap
        #: bytes per layer since the last `reset()` (a long-lived push stream resets after
        #: each event)
        self.meter = Meter()

    def reset(self) -> None:
        self.meter.reset()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        from mcptask.transports.body import decoded

        def too_big() -> Exception:
            return ProtocolError(
                f"the server's event stream passed the {_limit(self.cap)} limit (MCPTASK_MAX_BODY)"
            )

        async for chunk in decoded(self.response, self.cap, too_big, self.meter):
            yield chunk


class _Deadline:
    """How long a request's answer may take as a whole: each read has its own timeout, but a
    server that trickles a byte at a time or sends SSE keep-alives for ever would stretch that
    without end. The clock restarts at each JSON-RPC message received (`restart`), so a long
    call that reports progress lives on; bytes that make no message never restart it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.restart()

    def restart(self) -> None:
        self.until = time.monotonic() + self.seconds

    def check(self) -> None:
        if time.monotonic() > self.until:
            raise httpx.ReadTimeout(f"no whole answer within {self.seconds:g} s")


class _DeadlineStream(httpx.AsyncByteStream):
    """A response's raw bytes, cut off (`httpx.ReadTimeout`) once its `_Deadline` passed."""

    def __init__(self, inner: Any, deadline: _Deadline) -> None:
        self._inner = inner
        self._deadline = deadline

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._deadline.check()
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def _bounded(response: httpx.Response, seconds: float) -> _Deadline:
    """Put the answer of `response` under a whole-answer deadline of `seconds`, counted from
    when the request went out (`UNTIL`: the status line and headers are under it too)."""
    deadline = _Deadline(seconds)
    until = response.request.extensions.get(UNTIL)
    if isinstance(until, float):
        deadline.until = until
    response.stream = _DeadlineStream(response.stream, deadline)
    return deadline


class _OAuthFlow(httpx.Auth):
    """OAuth's resend loop as httpx's `Auth` flow: the request goes with the bearer the
    provider holds; a 401/403 from the endpoint's origin is handed to the provider (it
    refreshes, logs in, steps up), and the request is sent again with the new token, at most
    MAX_AUTH_TRIES times; the last refusal is the answer (its reason in the error). A refusal
    from where a redirect led is the answer at once: its server is not the one logged in to,
    and a login never follows a redirect to another origin (RFC 9728 §3.3). The bearer itself
    is put on each request (redirects included) by the transport's request hook, for the
    endpoint's origin only."""

    def __init__(self, transport: HttpTransport, auth: BearerAuth) -> None:
        self.transport = transport
        self.auth = auth
        #: the send's whole-answer timer (`_send`), paused while the provider renews (a login
        #: may take minutes) and started again for each send
        self.timer: Any = None

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        t = self.transport
        within = request.extensions.get(WITHIN)
        if request.url.username or request.url.password:
            # as httpx does without a flow: a URL's user and password as Basic auth (a
            # bearer, once there is one, takes its place: the transport's request hook)
            basic = httpx.BasicAuth(request.url.username, request.url.password)
            request = next(basic.sync_auth_flow(request))
        for attempt in range(MAX_AUTH_TRIES):
            t._bearer = sent = await self.auth.bearer()
            if attempt and isinstance(within, int | float):
                request.extensions[UNTIL] = time.monotonic() + float(within)
                self._reschedule(float(within))
            response = yield request
            if response.status_code not in (401, 403) or attempt == MAX_AUTH_TRIES - 1:
                return
            if origin(response.url) != t._origin:
                return
            challenge = response.headers.get_list("www-authenticate")
            self._reschedule(None)
            retry = await self.auth.refused(response.status_code, challenge, sent)
            if not retry:
                return
            # the refusal's body is not wanted, and never read unbounded: its stream is
            # closed and an empty one stands in (httpx reads a refused answer before resending)
            await response.stream.aclose()  # type: ignore[union-attr]
            response.stream = httpx.ByteStream(b"")
            t._trace(f"* OAuth: sending {request.method} {request.url} again with a new token")

    def _reschedule(self, seconds: float | None) -> None:
        if self.timer is None:
            return
        import asyncio

        when = None if seconds is None else asyncio.get_running_loop().time() + seconds
        self.timer.reschedule(when)


class ServerClock:
    """How far the server's clock is from this machine's, from the `Date` headers of its
    answers: each says the server's time to the second at some moment of the exchange, so
    the skew lies within [date - received, date + 1 - sent]; the bounds of all answers are
    intersected, and `skew` is the middle of what is left (None before any answer, or when
    the answers disagree: a clock that was set meanwhile)."""

    def __init__(self) -> None:
        self.low = -math.inf
        self.high = math.inf
        self._last: str | None = None

    def saw(self, date: str, took: float) -> None:
        if date == self._last:  # the same second again: nothing new
            return
        self._last = date
        from email.utils import parsedate_to_datetime

        try:
            server = parsedate_to_datetime(date).timestamp()
        except (TypeError, ValueError, IndexError, OverflowError):
            return
        received = time.time()
        low, high = server - received, server + 1 - (received - max(took, 0.0))
        if not (math.isfinite(low) and math.isfinite(high)):
            return
        if low > self.high or high < self.low:  # the clocks moved: start over
            self.low, self.high = low, high
        else:
            self.low, self.high = max(self.low, low), min(self.high, high)

    @property
    def skew(self) -> float | None:
        """Seconds the server's clock is ahead of this machine's (negative: behind)."""
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            return None
        return round((self.low + self.high) / 2, 3)


class HttpTransport(KeepsSession):
    """One connection pool to one endpoint. Credentials (the bearer token and `-H` headers) are
    attached only to requests for the endpoint's origin, redirects included."""

    def __init__(self, options: HttpOptions, client: httpx.AsyncClient | None = None) -> None:
        self.options = options
        #: the server's clock against this machine's, from the answers' `Date` headers
        self.clock = ServerClock()
        self.url = options.url
        self._origin = origin(options.url)
        self._own_client = client is None
        self._client = client
        #: the last `Mcp-Session-Id` the server gave (MCP 2025-11-25)
        self.session_id: str | None = None
        #: a `time.monotonic()` no request may outlast (`result --timeout`), or None
        self.deadline: float | None = None
        # a password in the URL (`http://user:pass@host/`, and the Basic-auth header httpx
        # makes of it) and secret-looking query values (`?api_key=...`) are secrets too
        in_url = redact.url_secrets(options.url)
        self._secrets = [options.token or "", *in_url, *options.headers.values()]
        #: the OAuth access token for the next request (`HttpOptions.auth`)
        self._bearer: str | None = None
        redact.hold(self._secrets)
        #: the polls' connections (`HttpOptions.many`, transports/poll_pool.py)
        self._polls: PollPool | None = None
        #: a poll's request line and headers for the token in use, and those headers (see
        #: `_poll_head`)
        self._lean: tuple[str | None, bytes, dict[str, str]] | None = None
        #: the names of the `-H` headers, which requests' own headers never replace
        self._given = frozenset(name.lower() for name in options.headers)
        #: a lean request's line per method and URL (None: that one goes the general way)
        self._lines: dict[tuple[str, str], bytes | None] = {}
        #: a lean POST's `Content-Type` and `Accept` (unless `-H` gives them)
        self._post_extra = b""
        #: the endpoint redirected a poll: its requests go through the client from now on
        self._lean_off = False

    # -- plumbing ---------------------------------------------------------------------------

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            o = self.options
            self._client = o.network.client(
                timeout=httpx.Timeout(o.read_timeout, connect=o.connect_timeout),
                # only what transports/body.py decodes in bounded pieces
                headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
                blocking=o.blocking,
                trace=self._trace,
                follow_redirects=True,
                max_redirects=MAX_REDIRECTS,
                event_hooks={"request": [self._credentials]},
            )
        return self._client

    def move_to(self, url: str) -> None:
        """`rpc.SwitchesUrl`: send to `url` from now on (the endpoint the agent card names, on
        the origin credentials go to: the caller checks)."""
        self.url = url

    def set_deadline(self, deadline: float | None) -> None:
        """`rpc.HasDeadline`: no request from now on outlasts `deadline`."""
        self.deadline = deadline

    async def use_many(self) -> None:
        """Send polls on the poll pool from now on (`HttpOptions.many`); the client made so
        far serves everything else."""
        if not self.options.blocking:
            self.options.many = True

    async def _credentials(self, request: httpx.Request) -> None:
        self.apply_credentials(request)

    def apply_credentials(self, request: httpx.Request) -> None:
        if origin(request.url) != self._origin:
            # a redirect to another origin: never carry credentials (nor the session) there
            for name in ["Authorization", "Mcp-Session-Id", *self.options.headers]:
                request.headers.pop(name, None)
            return
        for name, value in self.options.headers.items():
            request.headers[name] = value
        token = self.options.token or self._bearer
        if token:
            request.headers["Authorization"] = f"Bearer {token}"

    async def aclose(self) -> None:
        if self._polls is not None:
            await self._polls.aclose()
            self._polls = None
            self._lean = None  # made again with the next pool
        if self._client is not None and self._own_client:
            await self._client.aclose()
        self._client = None

    @property
    def clock_skew(self) -> float | None:
        return self.clock.skew

    def redact(self, message: str) -> str:
        auth = self.options.auth
        return redact.text(message, [*self._secrets, *(auth.secrets if auth else [])])

    # -- OAuth -------------------------------------------------------------------------------

    async def _send(self, request: httpx.Request) -> httpx.Response:
        """Send, with the OAuth bearer (`HttpOptions.auth`) and its resend loop as an
        `httpx.Auth` flow (`_OAuthFlow`); the status line and headers come within the
        request's `WITHIN` seconds (the blocking transport bounds each socket read by it; the
        async pools are cancelled), counted again for each send of the flow."""
        auth = self.options.auth
        flow = _OAuthFlow(self, auth) if auth is not None and not self.options.token else None
        within = request.extensions.get(WITHIN)
        if not isinstance(within, int | float):
            return await self.client.send(request, stream=True, auth=flow)
        request.extensions[UNTIL] = time.monotonic() + float(within)
        if self.options.blocking or not _can_wait():
            return await self.client.send(request, stream=True, auth=flow)
        import asyncio

        try:
            async with asyncio.timeout(float(within)) as timer:
                if flow is not None:
                    flow.timer = timer
                return await self.client.send(request, stream=True, auth=flow)
        except TimeoutError:
            raise httpx.ReadTimeout(f"no answer within {within:g} s", request=request) from None

    def _trace(self, line: str) -> None:
        if self.options.trace is not None:
            self.options.trace(self.redact(clean(line)))

    def trace(self, line: str) -> None:
        """A remark of mcptask's own on `--trace` (e.g. where requests now go)."""
        self._trace(line)

    def _trace_request(self, request: httpx.Request, body: Any) -> None:
        if self.options.trace is None:
            return
        self.apply_credentials(request)
        self._trace(f"> {request.method} {request.url}")
        for k, v in redact.headers(request.headers.items()):
            self._trace(f"> {k}: {v}")
        if body is not None:
            self._trace("> " + json.dumps(redact.data(body), ensure_ascii=False))

    def _trace_response(self, response: httpx.Response, started: float) -> None:
        date = response.headers.get("date")
        if date is not None:
            self.clock.saw(date, time.monotonic() - started)
        if self.options.trace is None:
            return
        ms = (time.monotonic() - started) * 1000
        self._trace(f"< {response.status_code} {response.reason_phrase} ({ms:.0f} ms)")
        for k, v in redact.headers(response.headers.items()):
            self._trace(f"< {k}: {v}")

    def _where(self) -> str:
        return urls.origin(self.url)

    def _connect_error(self, exc: httpx.HTTPError, url: str) -> TransportError | ProtocolError:
        """Every httpx exception, mapped once at the boundary (as httpx maps httpcore's)."""
        where = self._where()
        if isinstance(exc, httpx.DecodingError):  # not raised by body.py; kept for safety
            return ProtocolError(f"{where} sent an answer that does not decode: {exc}")
        if isinstance(exc, httpx.ConnectTimeout):
            return TransportError(f"timed out connecting to {where}")
        if isinstance(exc, httpx.TimeoutException):
            return TransportError(f"timed out waiting for {url} to answer")
        proxy = self.options.network.route(url).proxy if _origin_of(url) else None
        if proxy is not None and isinstance(exc, httpx.ConnectError | httpx.ProxyError):
            # the proxy refused, or could not reach the server: say which of the two
            where = f"{where} through the proxy {urls.safe_url(proxy)}"
        if isinstance(exc, httpx.ConnectError) and (reason := untrusted(exc)) is not None:
            return TransportError(f"cannot connect to {where}: {reason}")
        if isinstance(exc, httpx.ProxyError):
            return TransportError(f"cannot connect to {where}: {one_line(str(exc), 120)}")
        if isinstance(exc, httpx.ConnectError):
            reason = "connection refused" if _refused(exc) else str(exc) or "connection failed"
            if answered_in_plain_text(exc):
                # a TLS handshake answered in plain text: the server speaks http, not https
                return TransportError(
                    f"cannot connect to {where}: the server answered without TLS; it speaks "
                    f"http, not https (try --url {'http' + url.removeprefix('https')})"
                )
            err = TransportError(f"cannot connect to {where}: {one_line(reason, 120)}")
            err.refused = _refused(exc)
            return err
        if isinstance(exc, httpx.TooManyRedirects):
            return TransportError(f"too many redirects from {where} (more than {MAX_REDIRECTS})")
        detail = one_line(str(exc), 120) or type(exc).__name__
        cause: BaseException | None = exc
        while cause is not None:
            if isinstance(cause, ConnectionResetError):
                detail = "the connection was reset"
                break
            cause = cause.__cause__ or cause.__context__
        return TransportError(f"connection to {where} failed: {detail}")

    # -- reading answers --------------------------------------------------------------------

    async def _read_body(self, response: httpx.Response, *, cap: int | None = None) -> bytes:
        declared = response.headers.get("content-length")
        cap = min(cap, self.options.max_body) if cap is not None else self.options.max_body
        if declared and declared.isdigit() and int(declared) > cap:
            raise ProtocolError(
                f"the server's answer is {int(declared) // (1024 * 1024)} MiB, "
                f"over the {_limit(cap)} limit (MCPTASK_MAX_BODY)"
            )
        limit = _limit(cap)
        return await read_capped(
            response,
            cap,
            lambda: ProtocolError(
                f"the server's answer is over the {limit} limit (MCPTASK_MAX_BODY)"
            ),
        )

    def _parse(self, body: bytes, status: int, ctype: str) -> Any:
        """A JSON body (`status` and `ctype`, the content type, for the error)."""
        from mcptask.text import jsonsafe

        try:
            return jsonsafe.loads(body)
        except jsonsafe.Refused as exc:
            where = self._where()
            raise ProtocolError(f"{where} answered JSON that mcptask refuses: {exc}") from None
        except (ValueError, UnicodeDecodeError, RecursionError):
            snippet = one_line(body[:200].decode("utf-8", "replace"), 80)
            what = "an empty body" if not body.strip() else f"{ctype}: {snippet!r}"
            raise ProtocolError(
                f"{self._where()} answered HTTP {status} with {what}, not JSON-RPC"
            ) from None

    def error_for_status(self, response: httpx.Response, body: bytes) -> Exception:
        """The mcptask error for an answer that is not a success: a JSON-RPC error in its body
        as `RpcError`, 401/403 as `AuthError`, else `HttpStatusError` naming the URL asked,
        with an excerpt of the body, its retry-after and detail."""
        status = response.status_code
        parsed: Any = None
        from mcptask.text import jsonsafe

        try:
            parsed = jsonsafe.loads(body) if body else None
        except (ValueError, UnicodeDecodeError, RecursionError):
            parsed = None
        retry_after = _retry_after(response.headers.get("retry-after"))
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            err = parsed["error"]
            code = err.get("code")
            msg = err.get("message")
            if isinstance(code, int) and not isinstance(code, bool):
                if status in (401, 403):
                    return AuthError(self._auth_message(status, str(msg or ""), response))
                return RpcError(
                    code,
                    str(msg) if msg is not None else "",
                    err.get("data"),
                    http_status=status,
                    retry_after=retry_after,
                )
        reason = ""
        if isinstance(parsed, dict) and "detail" in parsed:
            d = parsed["detail"]
            reason = d if isinstance(d, str) else json.dumps(d)
        elif isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
            desc = parsed.get("error_description")  # an OAuth error body (RFC 6750)
            reason = parsed["error"] + (f": {desc}" if isinstance(desc, str) and desc else "")
        if status in (401, 403):
            return AuthError(self._auth_message(status, reason, response))
        ctype = response.headers.get("content-type", "").split(";")[0]
        reason = reason or body_excerpt(parsed, body, ctype)
        text = f": {one_line(reason, 200)}" if reason else (f" ({ctype})" if ctype else "")
        # the URL asked (an endpoint's path tells more than its origin: `/sse`, `/mcp`)
        try:
            where = urls.safe_url(str(response.request.url))
        except RuntimeError:  # a response made without its request
            where = self._where()
        # the server's reason phrase, or the standard one when it sent none
        phrase = response.reason_phrase or httpx.codes.get_reason_phrase(status)
        return HttpStatusError(
            f"{where} answered HTTP {status}{' ' + phrase if phrase else ''}{text}",
            status=status,
            retry_after=retry_after,
            detail=reason or None,
        )

    def _auth_message(self, status: int, reason: str, response: httpx.Response) -> str:
        what = "authentication required" if status == 401 else "permission denied"
        elsewhere = origin(response.url) != self._origin
        who = (
            f"{urls.origin(str(response.url))} (where {self._where()} redirected)"
            if elsewhere
            else self._where()
        )
        text = f"{who} refused the request: HTTP {status} {what}"
        if not reason:
            reason = _challenge_reason(response.headers.get_list("www-authenticate"))
        if reason:
            text += f" ({one_line(redact.scrub_text(reason), 160)})"
        if self.options.auth is not None and self._bearer and not elsewhere:
            text += (
                "; it refused the OAuth access token even after renewing it: log in again "
                "(mcptask auth login)"
            )
        elif elsewhere:
            text += (
                "; credentials never follow a redirect to another origin: give that server's "
                "address as the target"
            )
        elif status == 401 and not self.options.token:
            text += "; set MCPTASK_TOKEN or --token-file"
        return text

    def _timed(self, request: httpx.Request, timeout: float | None) -> httpx.Request:
        """`request` under `timeout` (else the read timeout): its status line and headers
        within it (`WITHIN`), and each read and the connect too when one was given."""
        request.extensions[WITHIN] = timeout or self.options.read_timeout
        if timeout is not None:
            request.extensions["timeout"] = httpx.Timeout(
                timeout, connect=min(timeout, self.options.connect_timeout)
            ).as_dict()
        return request

    def _build(self, method: str, url: str, **kwargs: Any) -> httpx.Request:
        """The request, or one line saying which header cannot be sent (a session id from a
        hand-edited task book, say): HTTP header values are visible ASCII."""
        _check_header_values(kwargs.get("headers") or {})
        return self.client.build_request(method, url, **kwargs)

    # -- the one operation --------------------------------------------------------------------

    async def send(
        self,
        message: Message,
        *,
        headers: Mapping[str, str] | None = None,
        url: str | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[Message, None]:
        """POST one JSON-RPC message; yield the messages that come back (none for 202)."""
        timeout = self._time_left(timeout)
        target = url or self.url
        content = _COMPACT(message).encode()
        line = (
            self._poll_line("POST", target)
            if _is_safe(message) or message.get("method") == "tasks/result"
            else None
        )
        if line is not None:
            answer = self._poll(line, message, content, headers, target, timeout)
        else:
            answer = self._post(message, content, headers, target, timeout)
        async with aclosing(answer):
            async for msg in answer:
                yield msg

    async def _post(
        self,
        message: Message,
        content: bytes,
        headers: Mapping[str, str] | None,
        target: str,
        timeout: float | None,
    ) -> AsyncGenerator[Message, None]:
        """The general way: through httpx's client (redirects, OAuth, cookies, traces)."""
        all_headers = {**POST_HEADERS, **(headers or {})}

        def build() -> httpx.Request:
            return self._timed(
                self._build("POST", target, content=content, headers=all_headers), timeout
            )

        try:
            response = await self._send_traced(build, _is_safe(message), message)
        except httpx.HTTPError as exc:
            raise self._connect_error(exc, target) from None
        answer = self._answer(response, message, target, timeout, all_headers)
        async with aclosing(answer):
            async for msg in answer:
                yield msg

    async def _answer(
        self,
        response: httpx.Response,
        message: Message,
        target: str,
        timeout: float | None,
        all_headers: Mapping[str, str],
    ) -> AsyncGenerator[Message, None]:
        """The messages of an answer (a JSON body or an event stream, resumed when it breaks
        before the answer), under the whole-answer deadline."""
        state = _StreamState(message.get("id") if "method" in message else None)
        try:
            self._keep_session(response)
            deadline = _bounded(response, timeout or self.options.read_timeout)
            messages = self._messages(response, target, state)
            async with aclosing(messages):
                async for msg in messages:
                    state.saw(msg)
                    deadline.restart()
                    yield msg
        except httpx.HTTPError as exc:
            if (
                not state.resumable
                or not isinstance(exc, httpx.TransportError)
                or isinstance(exc, httpx.TimeoutException)
                or not _can_wait()
            ):
                raise self._connect_error(exc, target) from None
            self._trace(f"* the event stream broke ({type(exc).__name__}): resuming")
        finally:
            await response.aclose()
        if state.resumable and _can_wait():
            resumed = self._resume(state, message, all_headers)
            async with aclosing(resumed):
                async for msg in resumed:
                    yield msg

    async def _send_safely(
        self, request: httpx.Request, build: Callable[[], httpx.Request], safe: bool
    ) -> httpx.Response:
        """Send; a request that is safe to repeat is sent once more when the connection dies
        before any answer (a pooled keep-alive connection the server has dropped: "Server
        disconnected without sending a response", a reset). The failed connection leaves the
        pool, so the second try goes out on a fresh one."""
        try:
            return await self._send(request)
        except DEAD_CONNECTION as exc:
            if not safe:
                raise
            self._trace(f"* {_dead_reason(exc)} before any answer: sending once more")
            return await self._send(build())

    async def _send_traced(
        self,
        build: Callable[[], httpx.Request],
        safe: bool,
        body: Any = None,
        request: httpx.Request | None = None,
    ) -> httpx.Response:
        """`_send_safely` the request `build` makes (or `request`, made by it already), both
        sides in `--trace` (`body`: what is sent)."""
        if request is None:
            request = build()
        self._trace_request(request, body)
        started = time.monotonic()
        response = await self._send_safely(request, build, safe)
        self._trace_response(response, started)
        return response

    # -- polls: the lean way of a large watch --------------------------------------------------
    #
    # A watch of 1,000 tasks sends the same POST to the same URL with the same headers again and
    # again, about 1,000 a second. Polls and result fetches (JSON-RPC reads, and A2A HTTP+JSON
    # GETs, on the endpoint's origin while no cookie is set) go on `transports/poll_pool.py`:
    # the headers made once per endpoint and credentials, request lines once per URL, the
    # answer parsed by llhttp. A plain JSON success is read here at once; any other answer goes
    # to the general reader as an httpx response; a redirect, or a refusal while OAuth is in
    # play, is sent again the general way (the client follows; OAuth renews).

    def _poll_line(self, method: str, target: str) -> bytes | None:
        """The one eligibility predicate of the lean lane: the request line of a lean request
        for `method` on `target`, or None when it goes the general way. Lean only while the
        endpoint has many tasks (`HttpOptions.many`), for a URL on the endpoint's own origin,
        reached without a proxy (transports/net.py), while no cookie is kept and no redirect
        was seen; credentials are the endpoint's static headers and bearer only: a refusal
        while OAuth is in play, a redirect and a cookie are had again the general way
        (`_not_lean`), where httpx follows, renews and keeps them."""
        o = self.options
        if not o.many or self._lean_off or (self._client is not None and self._client.cookies):
            return None
        key = (method, target)
        line = self._lines.get(key, b"")
        if line == b"":
            from mcptask.transports.poll_pool import request_line

            if len(self._lines) >= 4096:
                self._lines.clear()
            line = request_line(method, target)
            # on the endpoint's origin, as the client judges it (`origin`: an IDNA host in
            # either form is one host)
            if line is not None and _origin_of(target) != self._origin:
                line = None
            # a proxy is the general client's to speak (CONNECT, absolute-form, its auth)
            if line is not None and o.network.route(target).proxy is not None:
                line = None
            self._lines[key] = line
        return line

    def _poll_head(self) -> tuple[bytes, dict[str, str]]:
        """`Host`, the endpoint's own and `-H` headers and the credentials, made once per
        endpoint and token; those headers, for the trace."""
        key = self.options.token or self._bearer
        if self._lean is None or self._lean[0] != key:
            from mcptask.transports.poll_pool import PollPool

            if self._polls is None:
                verify = self.url.startswith("https")
                self._polls = PollPool(
                    self.url,
                    connect_timeout=self.options.connect_timeout,
                    ssl_context=self.options.network.ssl_context() if verify else None,
                )
                self._trace("* HTTP: polls on keep-alive connections of their own (many tasks)")
                self._post_extra = self._poll_extra(POST_HEADERS)
            # as the client sends them: the `-H` headers and the token over a header of the
            # same name whatever its case (one `User-Agent`, one `Authorization`)
            token = self.options.token or self._bearer
            named: dict[str, tuple[str, str]] = {}
            for given in (
                {"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
                self.options.headers,
                {"Authorization": f"Bearer {token}"} if token else {},
            ):
                for name, value in given.items():
                    named[name.lower()] = (name, value)
            base = dict(named.values())
            _check_header_values(base)
            self._lean = (key, self._polls.head(base), base)
        return self._lean[1], self._lean[2]

    def _poll_extra(self, headers: Mapping[str, str] | None) -> bytes:
        """A request's own headers (`Mcp-Name`, the session), but not over `-H` ones."""
        if not headers:
            return b""
        _check_header_values(headers)
        given = self._given
        return "".join(
            [f"{k}: {v}\r\n" for k, v in headers.items() if k.lower() not in given]
        ).encode("latin-1")

    async def _exchange(
        self,
        line: bytes,
        own: Mapping[str, str],
        content: bytes | None,
        within: float,
        *,
        safe: bool,
        target: str,
        body: Any,
    ) -> tuple[Exchange, float]:
        """Send a lean request (`own`: its own headers) and wait for its answer's status and
        headers; a safe request is sent once more when its connection dies before any answer.
        Failures are mcptask's errors; `--trace` shows both sides (`body`: what was sent). The
        `time.monotonic()` its whole answer is due by (`UNTIL`, as `_send` sets it)."""
        auth = self.options.auth
        if auth is not None and not self.options.token:
            self._bearer = await auth.bearer()
        head, base = self._poll_head()
        extra = self._poll_extra(own)
        if content is not None:
            extra = self._post_extra + extra
        pool = self._polls  # `aclose` may drop it meanwhile
        assert pool is not None
        tracing = self.options.trace is not None
        if tracing:
            self._trace(f"> {line.split(b' ', 1)[0].decode()} {target}")
            sent = {**(POST_HEADERS if content is not None else {}), **own, **base}
            for k, v in redact.headers(sent.items()):
                self._trace(f"> {k}: {v}")
            if body is not None:
                self._trace("> " + json.dumps(redact.data(body), ensure_ascii=False))
        started = time.monotonic()
        try:
            try:
                ex = await pool.send(line, head, extra, content, within)
            except DEAD_CONNECTION as exc:
                if not safe:
                    raise
                self._trace(f"* {_dead_reason(exc)} before any answer: sending once more")
                started = time.monotonic()
                ex = await pool.send(line, head, extra, content, within, fresh=True)
        except httpx.HTTPError as exc:
            raise self._connect_error(exc, target) from None
        if tracing:
            ms = (time.monotonic() - started) * 1000
            self._trace(f"< {ex.status} {ex.reason.decode('latin-1')} ({ms:.0f} ms)")
            for k, v in redact.headers(
                (k.decode("latin-1"), v.decode("latin-1")) for k, v in ex.headers
            ):
                self._trace(f"< {k}: {v}")
        return ex, started + within

    @staticmethod
    def _plain(ex: Exchange) -> bool:
        """Whether an answer's head is that of a plain JSON success (2xx, JSON, no
        Content-Encoding, no cookie)."""
        if not 200 <= ex.status < 300 or ex.header(b"set-cookie") is not None:
            return False  # a cookie is for the client to keep (`_not_lean`)
        ctype = ex.header(b"content-type")
        return (
            ctype is not None
            and ctype.partition(b";")[0].strip().lower() == b"application/json"
            and ex.header(b"content-encoding") is None
        )

    def _plain_json(self, ex: Exchange) -> bytes | None:
        """The body of an answer read whole that is a plain JSON success (`_plain`, within
        the cap): the connection is released. None for any other."""
        whole = ex.done and ex.error is None
        if not (whole and ex.buffered <= self.options.max_body and self._plain(ex)):
            return None
        body = ex.body()
        ex.release()
        if self.options.trace is not None:
            self._trace(f"< {body[:20000].decode('utf-8', 'replace')}")
        return body

    def _not_lean(self, response: httpx.Response) -> bool:
        """Whether a lean request's answer must be had again the general way: a redirect
        (the client follows it, by its origin rules; the endpoint's requests go that way from
        now on), or a refusal while OAuth is in play (it renews). A cookie the answer sets
        goes to the client, which sends it from now on (requests go its way then). A 3xx
        without a `Location` (304, say) is no redirect: the client would not follow it."""
        if "set-cookie" in response.headers:
            self.client.cookies.extract_cookies(response)
        if response.has_redirect_location:
            self._lean_off = True
            return True
        return self.options.auth is not None and response.status_code in (401, 403)

    async def _poll(
        self,
        line: bytes,
        message: Message,
        content: bytes,
        headers: Mapping[str, str] | None,
        target: str,
        timeout: float | None,
    ) -> AsyncGenerator[Message, None]:
        within = timeout or self.options.read_timeout
        ex, until = await self._exchange(
            line,
            headers or {},
            content,
            within,
            safe=_is_safe(message),
            target=target,
            body=message,
        )
        if not ex.done and ex.error is None and ex.small() and self._plain(ex):
            # the body comes after the headers (a server that writes them apart): a short one
            # is waited for here, within the whole answer's deadline, not handed over
            try:
                await ex.whole()
            except httpx.HTTPError as exc:
                ex.release()  # not done: closed
                raise self._connect_error(exc, target) from None
            except BaseException:
                ex.release()
                raise
        body = self._plain_json(ex)
        if body is not None:
            # every value, joined as httpx joins them (two ids are not one)
            sid = b", ".join(v for k, v in ex.headers if k.lower() == b"mcp-session-id")
            if sid:
                self._keep_session_id(sid.decode("latin-1"))
            if ex.status == 204 or (not body.strip() and ex.status in (200, 201, 202)):
                return  # as `_messages` reads it
            for item in self._items(self._parse(body, ex.status, "application/json")):
                yield item
            return
        from mcptask.transports.poll_pool import as_response

        all_headers = {**POST_HEADERS, **(headers or {})}
        request = self._build("POST", target, content=content, headers=all_headers)
        request.extensions[UNTIL] = until
        response = as_response(ex, request, within)
        if self._not_lean(response):
            await response.aclose()
            answer = self._post(message, content, headers, target, timeout)
        else:
            answer = self._answer(response, message, target, timeout, all_headers)
        async with aclosing(answer):
            async for msg in answer:
                yield msg

    def _time_left(self, timeout: float | None) -> float | None:
        """A request's timeout under `deadline`: what is left of it, when that is sooner."""
        if self.deadline is None:
            return timeout
        left = max(0.01, self.deadline - time.monotonic())
        return min(timeout or self.options.read_timeout, left)

    def _keep_session(self, response: httpx.Response) -> None:
        """Remember the `Mcp-Session-Id` of a successful answer. The spec allows only visible
        ASCII (0x21-0x7E) there: anything else would break every later request (and the task
        book), so it is not the protocol."""
        sid = response.headers.get("mcp-session-id")
        if sid and response.is_success:
            self._keep_session_id(sid)

    def _keep_session_id(self, sid: str) -> None:
        if len(sid) > 1024 or not all("!" <= c <= "~" for c in sid):
            raise ProtocolError(
                f"{self._where()} sent an Mcp-Session-Id that is not visible ASCII "
                "(the spec allows only characters 0x21-0x7E)"
            )
        self.session_id = sid

    async def _messages(
        self, response: httpx.Response, target: str, state: _StreamState | None = None
    ) -> AsyncGenerator[Message, None]:
        if response.status_code == 204:
            return
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if response.is_success and ctype == "text/event-stream":
            async for msg in self._sse(response, state):
                yield msg
            return
        body = await self._read_body(response)
        if not response.is_success:
            self._trace(f"< {body[:2000].decode('utf-8', 'replace')}")
            raise self.error_for_status(response, body)
        self._trace(f"< {body[:20000].decode('utf-8', 'replace')}")
        if not body.strip() and response.status_code in (200, 201, 202):
            return  # 202: accepted (a notification); Agno's 202 carries a task, read below
        ctype = response.headers.get("content-type", "no content type").split(";")[0]
        for item in self._items(self._parse(body, response.status_code, ctype)):
            yield item

    def _items(self, parsed: Any) -> Iterator[Message]:
        """The JSON-RPC messages of a parsed body (one, or a batch), each checked as it is
        taken."""
        for item in parsed if isinstance(parsed, list) else [parsed]:
            if not isinstance(item, dict):
                raise ProtocolError(f"{self._where()} answered JSON that is not a JSON-RPC message")
            yield item

    async def _sse(
        self, response: httpx.Response, state: _StreamState | None = None
    ) -> AsyncGenerator[Message, None]:
        from httpx_sse import EventSource, SSEError

        # the limit applies to the decoded bytes as they arrive, not only between events: one
        # endless line (or a compressed one) must not fill the memory before an event ends
        capped = httpx.Response(
            response.status_code,
            headers={"content-type": response.headers.get("content-type", "")},
            stream=_CappedStream(response, self.options.max_body),
        )
        try:
            async for event in EventSource(capped).aiter_sse():
                if state is not None:
                    state.event(event.id, event.retry)
                if not event.data.strip():
                    continue  # priming events and keep-alives carry no message
                self._trace(f"< event: {event.event} id: {event.id} data: {event.data[:20000]}")
                for item in self._event_messages(event.data):
                    yield item
        except SSEError as exc:
            raise ProtocolError(f"bad event stream from {self._where()}: {exc}") from None

    def _event_messages(self, data: str) -> list[Message]:
        """The JSON-RPC messages of one SSE event's data (one, or a batch)."""
        from mcptask.text import jsonsafe

        try:
            parsed = jsonsafe.loads(data)
        except jsonsafe.Refused as exc:
            where = self._where()
            raise ProtocolError(f"{where} sent an event that mcptask refuses: {exc}") from None
        except (ValueError, RecursionError):
            raise ProtocolError(
                f"{self._where()} sent an event that is not JSON: {one_line(data, 80)!r}"
            ) from None
        items = parsed if isinstance(parsed, list) else [parsed]
        for item in items:
            if not isinstance(item, dict):
                raise ProtocolError(f"{self._where()} sent an event that is not a JSON-RPC message")
        return items

    async def _resume(
        self, state: _StreamState, message: Message, sent_headers: Mapping[str, str]
    ) -> AsyncGenerator[Message, None]:
        """SSE resumption (SEP-1699): a request's event stream closed before its answer, after
        the server gave an event id. Reconnect with GET and `Last-Event-ID`, after the `retry`
        the server set (else a short backoff), at most RESUME_ATTEMPTS times, and take the
        rest of the stream (the answer included) from there."""
        import asyncio
        from contextlib import aclosing

        method = message.get("method")
        session = {k: v for k, v in sent_headers.items() if k.lower() == "mcp-session-id"}
        if not session and self.session_id:
            session = {"Mcp-Session-Id": self.session_id}
        unreachable = 0
        for attempt in range(RESUME_ATTEMPTS):
            delay = state.delay(attempt)
            self._trace(f"* resuming the {method} stream in {delay:g} s (Last-Event-ID)")
            await asyncio.sleep(delay)
            stream = self.event_stream(
                headers=session,
                last_event_id=state.last_id,
                answer_within=self._time_left(None) or self.options.read_timeout,
            )
            try:
                async with aclosing(stream):  # type: ignore[type-var]
                    async for event in stream:
                        if event.event == "open":
                            continue
                        state.event(event.id, event.retry)
                        if not event.data.strip():
                            continue
                        for item in self._event_messages(event.data):
                            state.saw(item)
                            yield item
                        if state.answered:
                            return
            except HttpStatusError as exc:
                raise ProtocolError(
                    f"the server closed the {method} stream without answering and refused to "
                    f"resume it (HTTP {exc.status})"
                ) from None
            except TransportError:
                unreachable += 1
                if unreachable >= 2:  # the server is gone, not pausing
                    raise
                continue
        raise ProtocolError(
            f"the server closed the {method} stream without answering, also after "
            f"{RESUME_ATTEMPTS} reconnections"
        )

    async def event_stream(
        self,
        *,
        headers: Mapping[str, str] | None = None,
        last_event_id: str | None = None,
        answer_within: float | None = None,
        method: str = "GET",
        url: str | None = None,
        body: Any = None,
    ) -> AsyncIterator[StreamEvent]:
        """The endpoint's standalone GET SSE stream (MCP 2025-11-25 server push). Yields each
        event with data; ends when the server closes it. 405 (no stream offered) and 409 (one
        already open for the session) raise `HttpStatusError` like any other status.
        `answer_within`: a stream that must bring an answer (a resumed request) gets the read
        timeout and the whole-answer deadline of `send`; a push stream has neither.
        `method`, `url` and a JSON `body`: another resource's stream (A2A HTTP+JSON
        `POST /tasks/{id}:subscribe`)."""
        from httpx_sse import EventSource, SSEError

        all_headers = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        if headers:
            all_headers.update(headers)
        if last_event_id:
            all_headers["Last-Event-ID"] = last_event_id
        content = None
        if body is not None:
            content = _COMPACT(body).encode()
            all_headers["Content-Type"] = "application/json"
        request = self._build(method, url or self.url, headers=all_headers, content=content)
        # no read timeout on a push stream: a healthy one may be quiet for a long time
        request.extensions["timeout"] = httpx.Timeout(
            answer_within, connect=self.options.connect_timeout
        ).as_dict()
        if answer_within:
            request.extensions[WITHIN] = answer_within
        self._trace_request(request, None)
        started = time.monotonic()
        try:
            response = await self._send(request)
        except httpx.HTTPError as exc:
            raise self._connect_error(exc, url or self.url) from None
        try:
            self._trace_response(response, started)
            ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if not response.is_success:
                raise self.error_for_status(response, await self._read_body(response))
            if ctype != "text/event-stream":
                raise ProtocolError(f"{self._where()} answered the event stream with {ctype!r}")
            yield StreamEvent("open", "", None, None)
            deadline = _bounded(response, answer_within) if answer_within else None
            counter = _CappedStream(response, self.options.max_body)
            capped = httpx.Response(
                response.status_code,
                headers={"content-type": ctype},
                stream=counter,
            )
            async for event in EventSource(capped).aiter_sse():
                counter.reset()  # the limit is per event on a stream that may live for hours
                if deadline is not None and event.data.strip():
                    deadline.restart()
                self._trace(f"< event: {event.event} id: {event.id} data: {event.data[:20000]}")
                yield StreamEvent(event.event, event.data, event.id or None, event.retry)
        except httpx.HTTPError as exc:
            raise self._connect_error(exc, self.url) from None
        except SSEError as exc:
            raise ProtocolError(f"bad event stream from {self._where()}: {exc}") from None
        finally:
            await response.aclose()

    async def get(
        self, path_or_url: str, *, max_body: int | None = None, json_only: bool = False
    ) -> httpx.Response:
        """A plain GET (agent cards); errors mapped like `send`. `max_body` caps what is read
        (a larger answer is `ProtocolError`); with `json_only`, an answer that says it is an
        event stream or HTML is not read at all: the response comes back with an empty body
        (a server that answers a card URL with an endless stream must not hold mcptask)."""

        def build() -> httpx.Request:
            request = self.client.build_request("GET", path_or_url)
            if json_only:
                request.headers["Accept"] = "application/json"
            request.extensions[WITHIN] = self._time_left(None) or self.options.read_timeout
            return request

        try:
            response = await self._send_traced(build, True)
            try:
                _bounded(response, self._time_left(None) or self.options.read_timeout)
                # a document is never an event stream (an MCP server's GET stream would
                # never end), nor HTML where JSON is wanted: its body is not read
                if _is_event_stream(response) or (json_only and _not_json(response)):
                    body = b""
                else:
                    body = await self._read_body(response, cap=max_body)
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            raise self._connect_error(exc, path_or_url) from None
        response._content = body
        return response

    async def rest(
        self,
        method: str,
        url: str,
        *,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """One HTTP+JSON exchange (A2A's REST binding): `method` on `url` with an optional
        JSON `body`; the answer comes back read (capped like every answer), whatever its
        status: the caller reads the binding's error shape. Connection failures are mapped
        like `send`'s. GETs are repeated once on a dead pooled connection. `headers` are the
        protocol's (its version header; `check` leaves it out); credentials are added as for
        every request."""
        headers = {"Accept": "application/json", **(headers or {})}
        content = None
        if body is not None:
            content = _COMPACT(body).encode()
            headers["Content-Type"] = "application/json"

        def build() -> httpx.Request:
            # the status line and headers too (`_send`), and the whole answer from the
            # request on (`UNTIL`), as a poll's
            request = self._build(method, url, headers=headers, content=content)
            return self._timed(request, self._time_left(None))

        request = build()
        line = self._poll_line(method, url) if method == "GET" else None
        try:
            if line is not None:
                response = await self._rest_lean(line, request, build, headers)
            else:
                response = await self._send_traced(build, method == "GET", body, request)
            try:
                _bounded(response, self._time_left(None) or self.options.read_timeout)
                if _is_event_stream(response):
                    raise ProtocolError(
                        f"{self._where()} answered {method} {urls.safe_url(url)} with an event "
                        "stream where a JSON document belongs"
                    )
                data = await self._read_body(response)
            finally:
                await response.aclose()
        except httpx.TransportError as exc:
            raise self._connect_error(exc, url) from None
        self._trace(f"< {data[:20000].decode('utf-8', 'replace')}")
        response._content = data
        return response

    async def _rest_lean(
        self,
        line: bytes,
        request: httpx.Request,
        build: Callable[[], httpx.Request],
        headers: Mapping[str, str],
    ) -> httpx.Response:
        """A GET of A2A's HTTP+JSON binding (a poll) the lean way; its answer as an httpx
        response (read by `rest` as any other)."""
        from mcptask.transports.poll_pool import as_response

        within = self._time_left(None) or self.options.read_timeout
        url = str(request.url)
        ex, until = await self._exchange(
            line, headers, None, within, safe=True, target=url, body=None
        )
        request.extensions[UNTIL] = until
        response = as_response(ex, request, within)
        if self._not_lean(response):
            await response.aclose()
            response = await self._send_traced(build, True)
        return response


#: the fields a JSON error body names its reason in (FastAPI, RFC 9457, OAuth, common APIs)
_ERROR_FIELDS = ("detail", "error_description", "message", "error", "title")


def body_excerpt(parsed: Any, body: bytes, ctype: str) -> str:
    """A short excerpt of an HTTP error's body that is not JSON-RPC, for its one-line error:
    the error field of a JSON body, an HTML page's title (else its text), a text body's
    start. Sanitised by the caller's `one_line`; "" when nothing readable came."""
    if isinstance(parsed, dict):
        for name in _ERROR_FIELDS:
            value = parsed.get(name)
            if isinstance(value, dict):
                code = value.get("code")
                said = next(
                    (value[k] for k in (*_ERROR_FIELDS, "status") if isinstance(value.get(k), str)),
                    None,
                )
                value = f"{code}: {said}" if said and isinstance(code, str | int) else said
            if isinstance(value, str) and value.strip():
                return value
    if parsed is not None:
        # JSON in no shape mcptask knows (an early draft's message, a framework's own): the
        # start of it, as curl would show it
        return one_line(json.dumps(parsed, ensure_ascii=False, separators=(", ", ": ")), 160)
    if not body.strip():
        return ""
    text = body[:4096].decode("utf-8", "replace")
    kind = ctype.strip().lower()
    if kind in ("text/html", "application/xhtml+xml") or text.lstrip().startswith("<"):
        import re

        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
        if title and title.group(1).strip():
            return title.group(1)
        text = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", text, flags=re.I | re.S)
        text = re.sub(r"<[^>]+>", " ", text)
    if kind and not (kind.startswith("text/") or kind in ("application/xhtml+xml", "")):
        return ""  # not text: nothing to show
    return one_line(text, 160)


#: a character an HTTP header value cannot carry (visible ASCII, space and tab can be sent)
_NOT_VISIBLE = re.compile(r"[^\t\x20-\x7e]")


def _check_header_values(headers: Mapping[str, str]) -> None:
    """One line saying which header cannot be sent (a session id from a hand-edited task book,
    say): HTTP header values are visible ASCII."""
    for name, value in headers.items():
        if _NOT_VISIBLE.search(value):
            raise ProtocolError(
                f"cannot send the {name} header: its value has a control or non-ASCII "
                "character (the value is not shown)"
            )


def _not_json(response: httpx.Response) -> bool:
    """The answer announces a type that is never a JSON document (an event stream, HTML)."""
    ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return ctype in ("text/event-stream", "text/html", "application/xhtml+xml")


#: what a JSON-RPC POST asks for (a JSON answer or an event stream)
POST_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

#: the connection died before any answer came: worth one more try for safe requests
DEAD_CONNECTION = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)

#: JSON-RPC reads, safe to send twice: detection probes, task look-ups, lists
SAFE_METHODS = frozenset(
    {"server/discover", "ping", "tasks/get", "GetTask", "tasks/list", "ListTasks", "tools/list"}
)


def _is_safe(message: Message) -> bool:
    return message.get("method") in SAFE_METHODS and "id" in message


def _dead_reason(exc: Exception) -> str:
    text = one_line(str(exc), 80)
    return f"the connection died ({text})" if text else "the connection died"
