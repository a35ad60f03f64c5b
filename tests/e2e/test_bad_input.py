"""Bad servers and bad input end in one clear line and the contract's exit status."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mcptask.demo.server import DemoServer

from conftest import RunCli, assert_one_line_error, watch_in_virtual_time
from servers.common import free_port


class NoTasksServer(DemoServer):
    """An MCP server that does not do tasks."""

    def dispatch(self, sid: str, method: Any, params: Any) -> dict[str, Any]:
        result = super().dispatch(sid, method, params)
        if method == "initialize":
            result = {**result, "capabilities": {"tools": {}, "prompts": {}}}
        return result


@pytest.fixture
def no_tasks_server() -> Iterator[DemoServer]:
    with NoTasksServer() as server:
        yield server


class _Canned(BaseHTTPRequestHandler):
    status = 200
    ctype = "text/html"
    body = b"<html><body>Welcome to nginx!</body></html>"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(self.status)
        self.send_header("Content-Type", self.ctype)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


def canned(status: int, ctype: str, body: bytes) -> Iterator[str]:
    handler = type("H", (_Canned,), {"status": status, "ctype": ctype, "body": body})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def html_200() -> Iterator[str]:
    yield from canned(200, "text/html", b"<html><body>Welcome to nginx!</body></html>")


@pytest.fixture
def html_502() -> Iterator[str]:
    yield from canned(502, "text/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>")


@pytest.fixture
def truncated_json() -> Iterator[str]:
    yield from canned(200, "application/json", b'{"jsonrpc": "2.0", "id": 1, "resu')


def test_server_without_tasks_capability_names_what_it_advertises(
    run_cli: RunCli, no_tasks_server: DemoServer
) -> None:
    r = run_cli("call", "build-report", "--url", no_tasks_server.url, "-p", "mcp-2025-11-25")
    assert r.code == 4
    assert_one_line_error(r)
    assert "does not support tasks" in r.stderr
    assert "prompts, tools" in r.stderr


def test_connection_refused(
    run_cli: RunCli, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    # watch retries transient failures with backoff (1 + 2 + 4 + 8 s, on a virtual clock
    # here), then ends the task with outcome error
    code, summary, clock = watch_in_virtual_time(
        ["abc"], url, "mcp-2025-11-25", state_dir, monkeypatch
    )
    assert code == 4, summary
    assert summary["tasks"][0]["outcome"] == "error"
    assert "connection refused" in summary["tasks"][0]["error"]
    assert len(clock.slept) >= 4 and clock.now >= 0.75 * (1 + 2 + 4 + 8)  # it backed off
    for args in (["get", "abc"], ["list"], ["call", "x"]):
        r = run_cli(*args, "--url", url, "-p", "mcp-2025-11-25")
        assert r.code == 4, (args, r.stderr)
        assert_one_line_error(r)
        assert "connection refused" in r.stderr


@pytest.mark.parametrize("fixture", ["html_200", "html_502", "truncated_json"])
def test_answers_that_are_not_json_rpc(
    run_cli: RunCli, request: pytest.FixtureRequest, fixture: str
) -> None:
    url = request.getfixturevalue(fixture)
    r = run_cli("get", "abc", "--url", url, "-p", "mcp-2025-11-25")
    assert r.code == 4, r.stderr
    assert_one_line_error(r)
    assert "<html>" not in r.stderr or "text/html" in r.stderr


def test_usage_errors(run_cli: RunCli) -> None:
    r = run_cli("get", "abc")
    assert r.code == 2
    assert_one_line_error(r)
    r = run_cli("get", "abc", "--url", "ftp://x")
    assert r.code == 2
    r = run_cli("get", "abc", "--url", "http://127.0.0.1:1/mcp", "-p", "smoke-signals")
    assert r.code == 2
    assert "smoke-signals" in r.stderr
    r = run_cli("get", "abc", "--url", "http://127.0.0.1:1/mcp", "-o", "yaml")
    assert r.code == 2


def test_an_id_that_looks_like_an_option_gets_a_hint(run_cli: RunCli) -> None:
    r = run_cli("get", "--url", "http://127.0.0.1:1/mcp", "-kE3xYz")
    assert r.code == 2
    assert "put -- before it" in r.stderr


def test_version_and_help(run_cli: RunCli) -> None:
    from mcptask import __version__

    r = run_cli("--version")
    assert r.code == 0
    assert r.stdout.strip() == f"mcptask {__version__}"
    h = run_cli("--help")
    assert h.code == 0
    for cmd in ("get", "watch", "result", "list", "cancel", "call", "demo"):
        assert cmd in h.stdout


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_import_neither_httpx_nor_pydantic(flag: str) -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from mcptask.cli import main\n"
        f"code = main([{flag!r}])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'httpx', 'pydantic', 'rich'})\n"
        "print('HEAVY', heavy, code)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "HEAVY [] 0", out.stdout + out.stderr


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["get"], "mcptask: error: get needs TASK_ID (mcptask get -h)"),
        (["call"], "mcptask: error: call needs TOOL (mcptask call -h)"),
        (["get", "--ur", "x"], "no such option: --ur; did you mean --url? (mcptask get -h)"),
        (["list", "--output"], "option '--output' requires an argument (mcptask list -h)"),
        (["wach", "x"], "no such command 'wach'; did you mean 'watch'? (mcptask -h)"),
        (["get", "a", "b"], "got unexpected extra argument(s) (b) (mcptask get -h)"),
        (["watch", "--interval", "x", "t"], "invalid value for '--interval'"),
    ],
)
def test_usage_errors_are_one_line_with_where_help_is(
    run_cli: RunCli, args: list[str], line: str
) -> None:
    r = run_cli(*args)
    assert r.code == 2
    assert_one_line_error(r)  # not Click's four lines (usage, a hint, a blank, Error:)
    assert line in r.stderr, r.stderr
    assert "Usage:" not in r.stderr and "Error:" not in r.stderr


def test_https_against_an_http_server_says_so(run_cli: RunCli, fastmcp4_server: Any) -> None:
    plain = fastmcp4_server.url
    r = run_cli("get", "abc", "--url", plain.replace("http://", "https://", 1))
    assert r.code == 4
    assert_one_line_error(r)
    assert "it speaks http, not https" in r.stderr and f"--url {plain}" in r.stderr
    assert "WRONG_VERSION_NUMBER" not in r.stderr


def test_a_silent_stdio_server_is_said_to_be_waited_for(run_cli: RunCli) -> None:
    """A `--stdio` server that says nothing: after a few seconds mcptask says it is waiting for
    it (not hanging), then times out as MCPTASK_READ_TIMEOUT says."""
    r = run_cli("tools", "--stdio", "sleep 30", env={"MCPTASK_READ_TIMEOUT": "5"})
    assert r.code == 4
    lines = r.stderr.splitlines()
    assert lines[0].startswith("mcptask: waiting for the stdio server sleep to answer")
    assert "it has said nothing for 3s" in lines[0]
    assert lines[1].startswith("mcptask: error: timed out waiting for the stdio server sleep")
    assert len(lines) == 2 and "Traceback" not in r.stderr
