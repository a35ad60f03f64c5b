"""HTTP errors that are not JSON-RPC show a short, sanitised excerpt of their body (issue 25,
item 10): a JSON error field, an HTML page's title, a text body's start; scripted on the fault
server (a proxy in front of an MCP server answers this way)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcptask.transports.http import body_excerpt

from conftest import RunCli, assert_one_line_error
from servers.fault_server import FaultServer, raw


@pytest.fixture(scope="module")
def fault() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs


QUOTA = b'{"error": "upstream quota exceeded"}'
DOWN = b'{"error": {"status": "UNAVAILABLE", "message": "backend down"}}'
PROBLEM = b'{"type": "about:blank", "title": "Unprocessable"}'
PAGE = b"<html><head><title>504 Gateway Time-out</title></head><body>x</body></html>"
CASES = [
    (raw(503, QUOTA), "HTTP 503 Service Unavailable: upstream quota exceeded"),
    (raw(502, DOWN), "HTTP 502 Bad Gateway: backend down"),
    (raw(422, PROBLEM, "application/problem+json"), "HTTP 422 Unprocessable Entity: Unprocessable"),
    (
        raw(500, b"upstream timed out\x1b[31m (red)\n", "text/plain"),
        "HTTP 500 Internal Server Error: upstream timed out",
    ),
    (raw(504, PAGE, "text/html"), "HTTP 504 Gateway Timeout: 504 Gateway Time-out"),
]


@pytest.mark.parametrize(("answer", "expected"), CASES)
def test_error_bodies_are_shown_in_short(
    run_cli: RunCli, fault: FaultServer, answer: object, expected: str
) -> None:
    url = fault.url(get=[answer])
    r = run_cli("get", "t-1", "--url", url, "-p", "mcp-2025-11-25", "-o", "json")
    assert r.code == 4, r.stderr
    assert_one_line_error(r)
    assert f"{url} answered {expected}" in r.stderr
    assert "\x1b" not in r.stderr


def test_body_excerpt_rules() -> None:
    assert body_excerpt({"detail": "nope"}, b"", "application/json") == "nope"
    # JSON of no known shape: its start, as curl would show it (issue 39)
    assert body_excerpt({"unrelated": 1}, b"", "application/json") == '{"unrelated": 1}'
    assert body_excerpt(None, b"\x00\x01binary", "application/octet-stream") == ""
    long = body_excerpt(None, b"x" * 5000, "text/plain")
    assert len(long) <= 160 and long.endswith("…")
    assert body_excerpt(None, b"<p>plain <b>page</b></p>", "text/html") == "plain page"
