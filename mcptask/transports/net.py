"""The network as every HTTP request of mcptask sees it: which proxy a URL goes through and
which certificate authorities are trusted, decided here once, for the MCP/A2A endpoint's client,
OAuth's, the blocking one-shot requests and the poll lane's eligibility alike.

The environment is read as httpx, curl and pip read it: `https_proxy`/`HTTPS_PROXY` for https
URLs, `http_proxy`/`HTTP_PROXY` for http ones (the upper-case `HTTP_PROXY` is ignored in a CGI
process, as urllib does: `REQUEST_METHOD` set), `all_proxy`/`ALL_PROXY` for both, the lower-case
spelling first; `no_proxy`/`NO_PROXY` lists hosts reached directly (`*`, a host and its
subdomains, `.domain`, an IP address or CIDR block, each optionally with `:port`);
`SSL_CERT_FILE` (a PEM bundle) or else `SSL_CERT_DIR` (a hashed directory) replace the default CA
bundle. `--proxy` and `--cacert` (or a config entry's `proxy` and `cacert`) beat the environment;
`NO_PROXY` still applies to an explicit proxy, as with curl.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpcore
import httpx

from mcptask.errors import UsageError
from mcptask.text import redact
from mcptask.text.urls import safe_url

if TYPE_CHECKING:
    import ssl

Tracer = Callable[[str], None]

#: a request's extension: the `time.monotonic()` its whole answer is due by (set by
#: transports/http.py; the blocking transport bounds each socket read by it)
UNTIL = "mcptask.until"

#: the proxy schemes httpx/httpcore speak
_PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")


@dataclass(frozen=True)
class Route:
    """Where a request goes: through `proxy` (a URL, None: directly), and why (`source`: the
    flag, config key or variable that named the proxy, or the `NO_PROXY` that bypassed it)."""

    proxy: str | None
    source: str

    def describe(self, host: str) -> str:
        if self.proxy is not None:
            return f"* proxy {safe_url(self.proxy)} (from {self.source})"
        return f"* no proxy for {host} ({self.source})"


@dataclass
class Network:
    """Proxies and trusted CAs: `proxy`/`cacert` given explicitly (flag or config key, with
    `proxy_from`/`cacert_from` naming which), else the environment `env` (os.environ)."""

    proxy: str | None = None
    cacert: str | None = None
    proxy_from: str = "--proxy"
    cacert_from: str = "--cacert"
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)
    _ssl: ssl.SSLContext | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.proxy is not None:
            self.proxy = _proxy_url(self.proxy, self.proxy_from)

    # -- proxies -------------------------------------------------------------------------------

    def _variable(self, *names: str) -> tuple[str, str] | None:
        for name in names:
            if name == "HTTP_PROXY" and self.env.get("REQUEST_METHOD"):
                continue  # httpoxy: a CGI request's `Proxy:` header would land here
            value = self.env.get(name, "").strip()
            if value:
                return name, value
        return None

    def route(self, url: str | httpx.URL) -> Route:
        """The proxy a request for `url` goes through (none: `Route(None, ...)`)."""
        u = httpx.URL(str(url)) if not isinstance(url, httpx.URL) else url
        scheme = u.scheme
        if self.proxy is not None:
            chosen: tuple[str, str] | None = (self.proxy_from, self.proxy)
        else:
            names = ("https_proxy", "HTTPS_PROXY") if scheme == "https" else ()
            if scheme == "http":
                names = ("http_proxy", "HTTP_PROXY")
            found = self._variable(*names, "all_proxy", "ALL_PROXY")
            chosen = None if found is None else (found[0], _proxy_url(found[1], found[0]))
        if chosen is None:
            return Route(None, "no proxy set")
        bypass = self._variable("no_proxy", "NO_PROXY")
        port = u.port or (443 if scheme == "https" else 80)
        if bypass is not None and _bypassed(u.host, port, bypass[1]):
            return Route(None, bypass[0])
        return Route(chosen[1], chosen[0])

    def proxied(self) -> bool:
        """Whether any proxy is set at all (a trace line then says which each request took)."""
        return self.proxy is not None or (
            self._variable(
                "https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"
            )
            is not None
        )

    # -- certificate authorities ---------------------------------------------------------------

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context of every https request (made once): `--cacert`, else
        `SSL_CERT_FILE`, else `SSL_CERT_DIR`, else certifi's bundle (httpx's default)."""
        if self._ssl is None:
            import ssl

            if self.cacert is not None:
                where, path = self.cacert_from, os.path.expanduser(self.cacert)
            elif self.env.get("SSL_CERT_FILE"):
                where, path = "SSL_CERT_FILE", self.env["SSL_CERT_FILE"]
            elif self.env.get("SSL_CERT_DIR"):
                where, path = "SSL_CERT_DIR", self.env["SSL_CERT_DIR"]
            else:
                import certifi

                where, path = "", certifi.where()
            try:
                if os.path.isdir(path):
                    self._ssl = ssl.create_default_context(capath=path)
                else:
                    self._ssl = ssl.create_default_context(cafile=path)
            except (OSError, ssl.SSLError, ValueError) as exc:
                reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
                raise UsageError(
                    f"cannot use the CA certificates of {where} {path!r}: {reason}"
                ) from None
        return self._ssl

    # -- clients -------------------------------------------------------------------------------

    def client(
        self,
        *,
        timeout: httpx.Timeout,
        headers: Mapping[str, str],
        blocking: bool = False,
        trace: Tracer | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        **kwargs: Any,
    ) -> httpx.AsyncClient:
        """The one client configuration: requests routed by `route` (a trace line names the
        proxy when one is set), TLS by `ssl_context`; `blocking`: one request at a time on a
        blocking connection (one-shot commands: no anyio, no async pool). `transport`: a
        test's own (httpx.MockTransport)."""
        return httpx.AsyncClient(
            timeout=timeout,
            headers=dict(headers),
            transport=transport or Router(self, blocking=blocking, trace=trace),
            **kwargs,
        )


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and what lies beneath it (`__cause__`, `__context__`, anyio's exception groups)."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        cause = todo.pop()
        if id(cause) in seen:
            continue
        seen.add(id(cause))
        yield cause
        if isinstance(cause, BaseExceptionGroup):
            todo.extend(cause.exceptions)
        todo.extend(c for c in (cause.__cause__, cause.__context__) if c is not None)


def untrusted(exc: BaseException) -> str | None:
    """What a failed TLS handshake says when the server's certificate did not verify (by the
    `ssl.SSLCertVerificationError` beneath httpx's error, never by its words): its reason and
    how to name the CA; None for any other failure."""
    import ssl

    for cause in _causes(exc):
        if isinstance(cause, ssl.SSLCertVerificationError):
            reason = cause.verify_message or cause.reason or "certificate verify failed"
            return (
                f"its TLS certificate is not trusted ({reason}); name its CA with --cacert "
                "or SSL_CERT_FILE"
            )
    return None


#: OpenSSL's reasons for a TLS handshake answered in plain text
_PLAIN_TEXT = frozenset({"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "HTTP_REQUEST"})


def answered_in_plain_text(exc: BaseException) -> bool:
    """Whether a TLS handshake failed because the server answered without TLS (by the
    `ssl.SSLError`'s `reason` field beneath httpx's error)."""
    import ssl

    return any(
        isinstance(cause, ssl.SSLError) and cause.reason in _PLAIN_TEXT for cause in _causes(exc)
    )


def _proxy_url(value: str, where: str) -> str:
    """A proxy as curl takes it: a bare `host:port` is an http proxy."""
    text = value.strip()
    if "://" not in text:
        text = "http://" + text
    try:
        u = httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise UsageError(f"{where}: {safe_url(value)!r} is not a proxy URL: {exc}") from None
    if u.scheme not in _PROXY_SCHEMES or not u.host:
        raise UsageError(
            f"{where}: {safe_url(value)!r} is not a proxy URL (http://, https:// or socks5://"
            " with a host)"
        )
    redact.hold(redact.url_secrets(text))  # a proxy's password is a secret too
    if u.scheme.startswith("socks"):
        from importlib.util import find_spec

        if find_spec("socksio") is None:
            raise UsageError(
                f"{where}: SOCKS proxies need the socksio package (pip install socksio)"
            )
    return text


def _bypassed(host: str, port: int, no_proxy: str) -> bool:
    """Whether `host` (port `port`) is listed in a `NO_PROXY` value (curl's rules)."""
    import ipaddress

    host = host.lower().strip("[]").rstrip(".")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        want_port: int | None = None
        if entry.startswith("["):  # [::1]:8080
            inner, _, rest = entry[1:].partition("]")
            entry = inner
            if rest.startswith(":") and rest[1:].isdigit():
                want_port = int(rest[1:])
        elif entry.count(":") == 1:
            name, _, p = entry.partition(":")
            if p.isdigit():
                entry, want_port = name, int(p)
        if want_port is not None and want_port != port:
            continue
        if address is not None:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
            continue
        name = entry.lstrip("*").lstrip(".").rstrip(".")
        if name and (host == name or host.endswith("." + name)):
            return True
    return False


class Router(httpx.AsyncBaseTransport):
    """Each request to the transport of its route (direct or through a proxy), made once per
    route: httpx's async transport, or the blocking one. The route's trace line comes first."""

    def __init__(self, network: Network, *, blocking: bool, trace: Tracer | None) -> None:
        self.network = network
        self.blocking = blocking
        self.trace = trace if network.proxied() else None
        self._transports: dict[tuple[str | None, bool], httpx.AsyncBaseTransport] = {}

    def _for(self, request: httpx.Request) -> httpx.AsyncBaseTransport:
        route = self.network.route(request.url)
        if self.trace is not None:
            self.trace(route.describe(request.url.host))
        # a context that loads no CA bundle where none is needed (plain http, no TLS proxy)
        tls = request.url.scheme == "https" or (route.proxy or "").startswith("https:")
        key = (route.proxy, tls)
        transport = self._transports.get(key)
        if transport is None:
            verify: ssl.SSLContext | bool = self.network.ssl_context() if tls else False
            if self.blocking:
                transport = BlockingTransport(verify, route.proxy)
            else:
                transport = httpx.AsyncHTTPTransport(verify=verify, proxy=route.proxy)
            self._transports[key] = transport
        return transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._for(request).handle_async_request(request)

    async def aclose(self) -> None:
        transports, self._transports = list(self._transports.values()), {}
        for transport in transports:
            await transport.aclose()


# -- the blocking transport: httpcore's public pool behind httpx's async client -------------------

#: httpcore's exceptions as httpx's (the classes httpx's own transports map them to)
_MAPPED: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextmanager
def _mapped(request: httpx.Request) -> Iterator[None]:
    try:
        yield
    except httpcore.ConnectionNotAvailable as exc:  # pragma: no cover (retries=0 pools)
        raise httpx.ConnectError(str(exc), request=request) from exc
    except Exception as exc:
        for source, target in _MAPPED:
            if isinstance(exc, source):
                raise target(str(exc), request=request) from exc
        raise


class BlockingTransport(httpx.AsyncBaseTransport):
    """One request at a time on httpcore's blocking connection pool (its public API), behind
    the async client, for one-shot commands: it skips the async pool and anyio (start-up time
    and CPU; bench/startup.py). Every socket read waits at most until the request's deadline
    (`UNTIL`): a server that trickles its status line and headers cannot stretch them past it."""

    def __init__(self, verify: ssl.SSLContext | bool, proxy: str | None) -> None:
        self._backend = _DeadlineBackend(httpcore.SyncBackend())
        context = verify if not isinstance(verify, bool) else None
        self._pool = httpcore.ConnectionPool(
            ssl_context=context,
            proxy=httpcore.Proxy(proxy) if proxy else None,
            network_backend=self._backend,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        until = request.extensions.get(UNTIL)
        self._backend.until = until if isinstance(until, float) else None
        url = request.url
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=await request.aread(),  # a redirect's request is a stream not read
            extensions=request.extensions,
        )
        try:
            with _mapped(request):
                response = self._pool.handle_request(core)
        finally:
            self._backend.until = None  # the body: transports/http.py's `_DeadlineStream`
        return httpx.Response(
            response.status,
            headers=response.headers,
            stream=_AsyncOverSync(response, request),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        self._pool.close()


class _AsyncOverSync(httpx.AsyncByteStream):
    def __init__(self, response: httpcore.Response, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _mapped(self._request):
            for chunk in self._response.iter_stream():
                yield chunk

    async def aclose(self) -> None:
        self._response.close()


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's blocking network, each read given no more time than `until` leaves."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self.inner = inner
        self.until: float | None = None

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        stream = self.inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return _DeadlineNetStream(stream, self)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        return _DeadlineNetStream(
            self.inner.connect_unix_socket(path, timeout, socket_options), self
        )

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


class _DeadlineNetStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, backend: _DeadlineBackend) -> None:
        self.inner = inner
        self.backend = backend

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        until = self.backend.until
        if until is not None:
            left = until - time.monotonic()
            if left <= 0:
                raise httpcore.ReadTimeout("no whole answer before the deadline")
            timeout = left if timeout is None else min(timeout, left)
        return self.inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, timeout)

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls = self.inner.start_tls(ssl_context, server_hostname, timeout)
        return _DeadlineNetStream(tls, self.backend)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)
