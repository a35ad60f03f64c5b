"""Issue 36: one network configuration (transports/net.py). Which proxy a URL takes, as curl,
pip and httpx read the environment; `--proxy` over the environment; NO_PROXY's forms; the lean
poll lane's one eligibility predicate sends a proxied endpoint the general way."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from mcptask.errors import UsageError
from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.net import Network, Router, _bypassed


def route(env: dict[str, str], url: str, proxy: str | None = None) -> tuple[str | None, str]:
    r = Network(proxy=proxy, env=env).route(url)
    return r.proxy, r.source


def test_the_environment_is_read_as_curl_pip_and_httpx_read_it() -> None:
    env = {"HTTPS_PROXY": "http://p:3128", "HTTP_PROXY": "http://h:3128"}
    assert route(env, "https://x.test/mcp") == ("http://p:3128", "HTTPS_PROXY")
    assert route(env, "http://x.test/mcp") == ("http://h:3128", "HTTP_PROXY")
    # the lower-case spelling first; ALL_PROXY for what has none of its own
    env = {"https_proxy": "http://low:1", "HTTPS_PROXY": "http://up:1", "ALL_PROXY": "a:9"}
    assert route(env, "https://x.test/") == ("http://low:1", "https_proxy")
    assert route(env, "http://x.test/") == ("http://a:9", "ALL_PROXY")  # bare host:port: http
    # nothing set, or set empty: direct
    assert route({}, "https://x.test/")[0] is None
    assert route({"HTTPS_PROXY": "  "}, "https://x.test/")[0] is None
    # httpoxy: in a CGI process HTTP_PROXY may come from a request's `Proxy:` header
    assert route({"HTTP_PROXY": "http://evil:1", "REQUEST_METHOD": "GET"}, "http://x/")[0] is None


def test_the_flag_beats_the_environment_and_no_proxy_still_applies() -> None:
    env = {"HTTPS_PROXY": "http://env:1", "NO_PROXY": "internal.test"}
    assert route(env, "https://x.test/", proxy="http://flag:2") == ("http://flag:2", "--proxy")
    assert route(env, "https://api.internal.test/", proxy="http://flag:2") == (None, "NO_PROXY")


@pytest.mark.parametrize(
    ("host", "port", "no_proxy", "bypassed"),
    [
        ("example.com", 443, "example.com", True),
        ("api.example.com", 443, "example.com", True),
        ("api.example.com", 443, ".example.com", True),
        ("api.example.com", 443, "*.example.com", True),
        ("notexample.com", 443, "example.com", False),
        ("EXAMPLE.com", 443, "example.COM", True),
        ("anything", 80, "*", True),
        ("10.1.2.3", 443, "10.0.0.0/8", True),
        ("11.1.2.3", 443, "10.0.0.0/8", False),
        ("127.0.0.1", 8443, "127.0.0.1:8443", True),
        ("127.0.0.1", 9443, "127.0.0.1:8443", False),
        ("::1", 443, "[::1]", True),
        ("::1", 443, "::1", True),
        ("x.test", 443, " a.test , x.test ", True),
        ("x.test", 443, "", False),
    ],
)
def test_no_proxy_forms(host: str, port: int, no_proxy: str, bypassed: bool) -> None:
    assert _bypassed(host, port, no_proxy) is bypassed


def test_a_bad_proxy_is_a_usage_error() -> None:
    for bad in ("ftp://p:1", "http://"):
        with pytest.raises(UsageError, match="--proxy"):
            Network(proxy=bad)
    with pytest.raises(UsageError, match="HTTPS_PROXY"):
        Network(env={"HTTPS_PROXY": "gopher://x"}).route("https://x.test/")
    # a password in a proxy URL is never shown
    with pytest.raises(UsageError) as caught:
        Network(proxy="ftp://me:hunter2@p:1")
    assert "hunter2" not in str(caught.value)


def test_a_missing_ca_file_is_a_usage_error_naming_where_it_came_from(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="SSL_CERT_FILE"):
        Network(env={"SSL_CERT_FILE": str(tmp_path / "none.pem")}).ssl_context()
    with pytest.raises(UsageError, match="--cacert"):
        Network(cacert=str(tmp_path / "none.pem"), env={}).ssl_context()


def test_the_router_sends_each_request_by_its_route_and_traces_it() -> None:
    lines: list[str] = []
    net = Network(
        env={"HTTPS_PROXY": "http://me:secret@proxy.test:3128", "NO_PROXY": "direct.test"}
    )
    router = Router(net, blocking=False, trace=lines.append)
    proxied = router._for(httpx.Request("GET", "https://x.test/"))
    direct = router._for(httpx.Request("GET", "https://direct.test/"))
    assert proxied is not direct
    assert router._for(httpx.Request("GET", "https://y.test/")) is proxied  # made once
    assert lines[0] == "* proxy http://me:[redacted]@proxy.test:3128 (from HTTPS_PROXY)"
    assert lines[1] == "* no proxy for direct.test (NO_PROXY)"
    # nothing set: no trace line at all
    quiet: list[str] = []
    Router(Network(env={}), blocking=True, trace=quiet.append)._for(
        httpx.Request("GET", "http://x.test/")
    )
    assert quiet == []
    asyncio.run(router.aclose())


def test_the_lean_lane_is_for_endpoints_reached_without_a_proxy() -> None:
    """The one eligibility predicate: a proxied URL goes the general way (httpx speaks the
    proxy), a direct one (NO_PROXY) may go lean."""
    url = "http://tasks.test/mcp"
    proxied = HttpTransport(
        HttpOptions(url=url, many=True, network=Network(env={"HTTP_PROXY": "http://p.test:1"}))
    )
    assert proxied._poll_line("POST", url) is None
    bypassed = HttpTransport(
        HttpOptions(
            url=url,
            many=True,
            network=Network(env={"HTTP_PROXY": "http://p.test:1", "NO_PROXY": "tasks.test"}),
        )
    )
    assert bypassed._poll_line("POST", url) is not None
    direct = HttpTransport(HttpOptions(url=url, many=True, network=Network(env={})))
    assert direct._poll_line("POST", url) is not None


def test_an_https_request_from_an_http_endpoint_is_verified() -> None:
    """The TLS context is chosen per request (a redirect from an http endpoint to https is
    checked), and a plain http request loads no CA bundle."""
    import ssl

    net = Network(env={})
    router = Router(net, blocking=True, trace=None)
    router._for(httpx.Request("GET", "http://x.test/mcp"))
    assert net._ssl is None  # no CA work for plain http
    router._for(httpx.Request("GET", "https://x.test/mcp"))
    assert net._ssl is not None and net._ssl.verify_mode == ssl.CERT_REQUIRED
    assert net._ssl.check_hostname
    assert set(router._transports) == {(None, False), (None, True)}
