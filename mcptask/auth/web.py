"""HTTP for the authorization steps (metadata, registration, token requests): its own client,
so the MCP endpoint's bearer token and `-H` headers never reach an authorization server.

Failures to connect are `TransportError` (exit 4) naming the host; answers are read up to
`MAX_BODY` and parsed as JSON where they are JSON. `--trace` shows each exchange with every
token, secret, code and assertion redacted.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

from mcptask.errors import TransportError
from mcptask.text import jsonsafe, redact
from mcptask.text.sanitize import clean, one_line
from mcptask.transports.net import Network, untrusted

MAX_BODY = 1024 * 1024
MAX_REDIRECTS = 5
USER_AGENT = "mcptask"
#: fields whose values are secrets, in forms and JSON answers
SECRET_FIELDS = {
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "registration_access_token",
    "client_assertion",
    "code",
    "code_verifier",
    "password",
    "token",
}


def said(text: str, limit: int) -> str:
    """An authorization server's text for an error: every secret this process sent or holds
    scrubbed first (a server may echo the request: the client secret, the code, the verifier),
    then made one short line."""
    return one_line(redact.scrub_text(text), limit)


def hold_sent(headers: Mapping[str, str], content: bytes | None) -> None:
    """Every secret a request carries (form and JSON fields, the `Authorization` header and
    what a Basic header encodes), held so that nothing mcptask prints shows it, even where a
    server echoes the request in its refusal."""
    from urllib.parse import quote, quote_plus, unquote

    found: list[str] = []
    for name, value in headers.items():
        if name.lower() != "authorization":
            continue
        scheme, _, cred = value.partition(" ")
        found += [value, cred]
        if scheme.lower() == "basic":
            import base64
            import binascii

            try:
                pair = base64.b64decode(cred, validate=True).decode("utf-8")
            except (binascii.Error, ValueError):
                pair = ""
            user, _, password = pair.partition(":")
            found += [pair, password, unquote(password), unquote(pair)]
            found += [f"{unquote(user)}:{unquote(password)}"]
    if content:
        text = content.decode("utf-8", "replace")
        pairs: list[tuple[str, str]] = []
        try:
            doc = json.loads(text)
        except ValueError:
            pairs = parse_qsl(text, keep_blank_values=True)
        else:
            if isinstance(doc, dict):
                pairs = [(k, v) for k, v in doc.items() if isinstance(v, str)]
        for key, value in pairs:
            if key in SECRET_FIELDS and value:
                found += [value, quote(value, safe=""), quote_plus(value, safe="")]
    redact.hold(found)


def hold_received(data: Any) -> None:
    """The secrets in an authorization server's answer (tokens, a registered client's
    secret), held as `hold_sent` holds what was sent."""
    if isinstance(data, dict):
        redact.hold(v for k, v in data.items() if k in SECRET_FIELDS and isinstance(v, str))


def redacted(data: Any) -> Any:
    """A copy of an OAuth JSON document with its secret fields redacted."""
    if isinstance(data, dict):
        return {
            k: redact.REDACTED if k in SECRET_FIELDS and v else redacted(v) for k, v in data.items()
        }
    if isinstance(data, list):
        return [redacted(v) for v in data]
    return data


Tracer = Callable[[str], None]


@dataclass
class Answer:
    status: int
    data: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    text: str = ""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def json_object(self) -> dict[str, Any] | None:
        return self.data if isinstance(self.data, dict) else None


def where(url: str) -> str:
    u = urlsplit(url)
    return f"{u.scheme}://{u.netloc.rpartition('@')[2]}"


def _origin(url: str) -> str:
    return where(url).lower()


class Web:
    def __init__(
        self,
        *,
        trace: Tracer | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
        blocking: bool = False,
        transport: httpx.AsyncBaseTransport | None = None,
        network: Network | None = None,
    ) -> None:
        self._trace_to = trace
        self._timeout = httpx.Timeout(read_timeout, connect=connect_timeout)
        self._blocking = blocking
        self._transport = transport
        #: proxies and CAs: the endpoint's (transports/net.py), so an authorization server is
        #: reached the way the MCP server is
        self.network = network or Network()
        self._client_made: httpx.AsyncClient | None = None

    def _client(self, url: str) -> httpx.AsyncClient:
        if self._client_made is None:
            self._client_made = self.network.client(
                timeout=self._timeout,
                headers={"User-Agent": USER_AGENT},
                blocking=self._blocking,
                trace=self.trace,
                transport=self._transport,
            )
        return self._client_made

    async def aclose(self) -> None:
        client, self._client_made = self._client_made, None
        if client is not None:
            await client.aclose()

    def trace(self, line: str) -> None:
        if self._trace_to is not None:
            self._trace_to(clean(line))

    # -- requests ---------------------------------------------------------------------------

    async def get(self, url: str, headers: Mapping[str, str] | None = None) -> Answer:
        """A GET that follows redirects on the URL's own origin only: metadata found by
        following a redirect to another origin would speak for a server that was not asked
        (RFC 9728 §3.3); the redirect itself is the answer then."""
        for _ in range(MAX_REDIRECTS):
            answer = await self._request("GET", url, headers=headers)
            location = answer.headers.get("location")
            if answer.status not in (301, 302, 303, 307, 308) or not location:
                return answer
            from urllib.parse import urljoin

            target = urljoin(url, location)
            if _origin(target) != _origin(url):
                self.trace(f"* not following the redirect to another origin ({where(target)})")
                return answer
            url = target
        raise TransportError(f"too many redirects from {where(url)} (authorization)")

    async def post_form(
        self, url: str, form: str, headers: Mapping[str, str] | None = None
    ) -> Answer:
        all_headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
            **(headers or {}),
        }
        return await self._request("POST", url, headers=all_headers, content=form.encode())

    async def post_json(
        self, url: str, data: Any, headers: Mapping[str, str] | None = None
    ) -> Answer:
        all_headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {}),
        }
        return await self._request(
            "POST", url, headers=all_headers, content=json.dumps(data).encode()
        )

    async def _request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
    ) -> Answer:
        client = self._client(url)
        hold_sent(headers or {}, content)
        self._trace_request(method, url, headers or {}, content)
        started = time.monotonic()
        try:
            async with client.stream(
                method,
                url,
                headers=headers,
                content=content,
                follow_redirects=False,
            ) as response:
                body = await _read(response)
        except (httpx.InvalidURL, ValueError):
            raise TransportError(f"cannot use {one_line(url, 120)!r}: not a valid URL") from None
        except httpx.HTTPError as exc:
            raise _connect_error(exc, url) from None
        answer = _answer(response, body)
        hold_received(answer.data)
        self._trace_response(answer, started)
        return answer

    def _trace_request(
        self, method: str, url: str, headers: Mapping[str, str], content: bytes | None
    ) -> None:
        if self._trace_to is None:
            return
        self.trace(f"> {method} {url}")
        for k, v in redact.headers(headers.items()):
            self.trace(f"> {k}: {v}")
        if content:
            self.trace("> " + _redacted_body(content, headers.get("Content-Type", "")))

    def _trace_response(self, answer: Answer, started: float) -> None:
        if self._trace_to is None:
            return
        ms = (time.monotonic() - started) * 1000
        self.trace(f"< {answer.status} ({ms:.0f} ms)")
        if answer.data is not None:
            self.trace("< " + json.dumps(redacted(answer.data), ensure_ascii=False)[:4000])


def _redacted_body(content: bytes, ctype: str) -> str:
    text = content.decode("utf-8", "replace")
    if ctype.startswith("application/x-www-form-urlencoded"):
        pairs = parse_qsl(text, keep_blank_values=True)
        return "&".join(f"{k}={redact.REDACTED if k in SECRET_FIELDS else v}" for k, v in pairs)
    try:
        return json.dumps(redacted(json.loads(text)), ensure_ascii=False)
    except ValueError:
        return "(body not shown)"


async def _read(response: httpx.Response) -> bytes:
    from mcptask.transports.http import read_capped

    return await read_capped(
        response,
        MAX_BODY,
        lambda: TransportError(
            f"{where(str(response.url))} answered more than 1 MiB to an authorization request"
        ),
    )


def _answer(response: httpx.Response, body: bytes) -> Answer:
    text = body.decode("utf-8", "replace")
    data: Any = None
    if body.strip():
        try:
            # numbers are bounded where they are read (flows.expires_at)
            data = jsonsafe.loads(body, finite=False)
        except (ValueError, UnicodeDecodeError, RecursionError):
            data = None
    headers = {k.lower(): v for k, v in response.headers.items()}
    return Answer(response.status_code, data, headers, text)


def _connect_error(exc: httpx.HTTPError, url: str) -> TransportError:
    if isinstance(exc, httpx.TimeoutException):
        return TransportError(f"timed out waiting for {where(url)} (authorization)")
    reason = untrusted(exc) or one_line(str(exc), 120) or type(exc).__name__
    return TransportError(f"cannot reach {where(url)} (authorization): {reason}")
