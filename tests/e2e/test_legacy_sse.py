"""The deprecated HTTP+SSE transport (MCP 2024-11-05; issue 25, item 2), reached by the fallback
the 2025-11-25 spec describes (the POST refused with 400/404/405, then a GET whose event stream
names the endpoint): server-everything's `sse` mode and the Python SDK 1.22.0's."""

from __future__ import annotations

import json

import pytest

from conftest import RunCli, assert_one_line_error
from servers.common import ServerProcess


def _events(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


@pytest.fixture(params=["everything", "mcpsdk"])
def sse_server(request: pytest.FixtureRequest) -> ServerProcess:
    name = "everything_sse_server" if request.param == "everything" else "mcpsdk_sse_server"
    server: ServerProcess = request.getfixturevalue(name)
    return server


def test_tools_over_http_sse(run_cli: RunCli, sse_server: ServerProcess) -> None:
    r = run_cli("tools", "--url", sse_server.url, "-o", "json", "--trace")
    assert r.code == 0, r.stderr
    assert json.loads(r.stdout)["tools"]
    assert "is the deprecated HTTP+SSE transport (MCP 2024-11-05): posting to" in r.stderr
    pretty = run_cli("tools", "--url", sse_server.url, "-o", "pretty", env={"COLUMNS": "160"})
    assert pretty.code == 0, pretty.stderr
    assert "over the deprecated HTTP+SSE transport" in pretty.stdout


def test_forced_protocol_falls_back_too(run_cli: RunCli, sse_server: ServerProcess) -> None:
    r = run_cli("tools", "-p", "mcp-2025-11-25", "--url", sse_server.url, "-o", "json")
    assert r.code == 0, r.stderr
    assert json.loads(r.stdout)["tools"]


def test_plain_call_with_progress_over_http_sse(
    run_cli: RunCli, everything_sse_server: ServerProcess, mcpsdk_sse_server: ServerProcess
) -> None:
    r = run_cli(
        "call",
        "trigger-long-running-operation",
        "duration=1",
        "steps=2",
        "--url",
        everything_sse_server.url,
        "-o",
        "ndjson",
    )
    assert r.code == 0, r.stderr
    events = _events(r.stdout)
    assert [e["progress"] for e in events if e["event"] == "progress"] == [1, 2]
    assert events[-1]["event"] == "end" and events[-1]["outcome"] == "completed"
    s = run_cli(
        "call",
        "slow_echo",
        "text=hi",
        "seconds=0.4",
        "--url",
        mcpsdk_sse_server.url,
        "-o",
        "ndjson",
    )
    assert s.code == 0, s.stderr
    assert [e["message"] for e in _events(s.stdout) if e["event"] == "progress"] == [
        "step 1/2",
        "step 2/2",
    ]
    asked = run_cli(
        "call",
        "ask_name",
        "--json",
        '{"name": "Ada"}',
        "--url",
        mcpsdk_sse_server.url,
        "-o",
        "json",
    )
    assert asked.code == 0, asked.stderr
    assert "Hello, Ada!" in asked.stdout


def test_a_task_is_followed_in_the_run_that_made_it(
    run_cli: RunCli, everything_sse_server: ServerProcess
) -> None:
    url = everything_sse_server.url
    r = run_cli("call", "simulate-research-query", "topic=x", "--url", url, "-o", "ndjson")
    assert r.code == 0, r.stderr
    assert "lives only as long as this connection" in r.stderr
    end = _events(r.stdout)[-1]
    assert end["event"] == "end" and end["outcome"] == "completed"
    # a later run cannot reach it: said plainly
    later = run_cli("get", "--url", url, "-o", "json", "--", str(end["taskId"]))
    assert later.code == 4
    assert_one_line_error(later)
    assert "deprecated HTTP+SSE transport" in later.stderr


def test_an_url_that_is_nothing_names_the_url_typed(
    run_cli: RunCli, everything_sse_server: ServerProcess
) -> None:
    url = everything_sse_server.url.removesuffix("/sse") + "/nothing"
    r = run_cli("tools", "-p", "mcp-2025-11-25", "--url", url, "-o", "json")
    assert r.code == 4
    assert_one_line_error(r)
    assert f"{url} answered HTTP 404" in r.stderr
