"""Issue 36: OAuth's resend loop is an `httpx.Auth` flow (transports/http.py `_OAuthFlow`): the
request goes again with the renewed token, a refusal's body is never read, a refusal from
another origin is the answer, and the answer's deadline is not spent while the provider renews."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from mcptask.errors import AuthError
from mcptask.transports.http import HttpOptions, HttpTransport, _OAuthFlow

URL = "http://mcp.test/mcp"
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


class Provider:
    def __init__(self, tokens: list[str], renew_seconds: float = 0.0) -> None:
        self.tokens = tokens
        self.renew_seconds = renew_seconds
        self.refusals: list[tuple[int, str | None]] = []

    @property
    def secrets(self) -> list[str]:
        return []

    async def bearer(self) -> str | None:
        return self.tokens[0]

    async def refused(self, status: int, headers: list[str], sent: str | None) -> bool:
        self.refusals.append((status, sent))
        await asyncio.sleep(self.renew_seconds)  # a refresh, or a login in a browser
        if len(self.tokens) > 1:
            self.tokens.pop(0)
            return True
        return False


class Endless(httpx.AsyncByteStream):
    """A refusal's body that never ends: reading it would hang the test."""

    def __init__(self) -> None:
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            yield b"x" * 65536

    async def aclose(self) -> None:
        self.closed = True


def _transport(handler: httpx.MockTransport, provider: Provider, **extra: object) -> HttpTransport:
    t = HttpTransport(HttpOptions(url=URL, auth=provider, **extra))  # type: ignore[arg-type]
    t._client = httpx.AsyncClient(
        transport=handler, event_hooks={"request": [t._credentials]}, follow_redirects=True
    )
    return t


async def _ping(t: HttpTransport) -> list[dict[str, object]]:
    return [m async for m in t.send(PING)]


def test_a_refused_request_goes_again_with_the_renewed_token_and_its_body_is_never_read() -> None:
    seen: list[str | None] = []
    bodies: list[Endless] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        if request.headers.get("authorization") == "Bearer old":
            bodies.append(Endless())
            return httpx.Response(401, headers={"WWW-Authenticate": "Bearer"}, stream=bodies[-1])
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": {}})

    provider = Provider(["old", "new"])
    t = _transport(httpx.MockTransport(handle), provider)
    assert asyncio.run(_ping(t)) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    assert seen == ["Bearer old", "Bearer new"]
    assert provider.refusals == [(401, "old")]
    assert bodies[0].closed


def test_the_last_refusal_is_the_answer() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(403, json={"error": "insufficient_scope"})

    provider = Provider(["a", "b", "c", "d", "e", "f"])
    t = _transport(httpx.MockTransport(handle), provider)
    with pytest.raises(AuthError, match="insufficient_scope"):
        asyncio.run(_ping(t))
    assert len(provider.refusals) == 3  # four sends in all (MAX_AUTH_TRIES)


def test_a_refusal_where_a_redirect_led_is_the_answer_at_once() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.host == "mcp.test":
            return httpx.Response(307, headers={"Location": "http://elsewhere.test/mcp"})
        assert "authorization" not in request.headers  # never carried to another origin
        return httpx.Response(401)

    provider = Provider(["a", "b"])
    t = _transport(httpx.MockTransport(handle), provider)
    with pytest.raises(AuthError, match=r"elsewhere\.test"):
        asyncio.run(_ping(t))
    assert provider.refusals == []


def test_renewing_does_not_spend_the_answer_s_time() -> None:
    """The request must answer within 0.5 s; renewing takes 1 s: the clock is paused then."""
    sent: list[str | None] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers.get("authorization"))
        if len(sent) == 1:
            return httpx.Response(401)
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": {}})

    provider = Provider(["old", "new"], renew_seconds=1.0)
    t = _transport(httpx.MockTransport(handle), provider)

    async def main() -> list[dict[str, object]]:
        return [m async for m in t.send(PING, timeout=0.5)]

    assert asyncio.run(main()) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    assert sent == ["Bearer old", "Bearer new"]


def test_the_flow_is_httpx_s_auth() -> None:
    assert issubclass(_OAuthFlow, httpx.Auth)
