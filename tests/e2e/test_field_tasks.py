"""MCP task shapes seen in the field (issue 25, items 4 and 5), scripted on the fault server:
a task in a draft shape (a `CallToolResult` whose `_meta` names the task) is followed, never
reported as the result; a task that vanishes inside its ttl is said to be lost, not expired."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from conftest import RunCli, assert_one_line_error
from servers.fault_server import FaultServer, rpc_error, task, tool_result

P = ("-p", "mcp-2025-11-25")
TOOL = {
    "name": "slow",
    "inputSchema": {"type": "object", "properties": {}},
    "execution": {"taskSupport": "optional"},
}
DRAFT = {
    "content": [],
    "_meta": {"modelcontextprotocol.io/task": {"taskId": "t-1", "status": "working"}},
}


@pytest.fixture(scope="module")
def fault() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs


def _end(stdout: str) -> dict[str, Any]:
    import json

    end: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    assert end["event"] == "end", stdout
    return end


@pytest.mark.parametrize(("last", "code"), [("completed", 0), ("failed", 5)])
def test_a_draft_shaped_task_is_followed(
    run_cli: RunCli, fault: FaultServer, last: str, code: int
) -> None:
    url = fault.url(
        tools=[{"tools": [TOOL]}],
        call=[DRAFT],
        get=[task(status="working"), task(status=last)],
        result=[tool_result("done", is_error=last == "failed")],
    )
    r = run_cli("call", "slow", "--url", url, *P, "--watch", "--result", "-o", "ndjson")
    assert r.code == code, r.stderr
    assert "draft shape of MCP tasks" in r.stderr and "following that task" in r.stderr
    assert "without creating a task" not in r.stderr
    end = _end(r.stdout)
    assert (end["taskId"], end["outcome"]) == ("t-1", last)
    # without --watch: the task is printed (and kept), not a result
    plain = run_cli("call", "slow", "--url", url, *P, "-o", "json")
    assert plain.code == 0, plain.stderr
    assert plain.json()["taskId"] == "t-1"


def test_a_task_lost_inside_its_ttl_is_not_called_expired(
    run_cli: RunCli, fault: FaultServer
) -> None:
    now = datetime.now(UTC).isoformat()
    made = task(createdAt=now, ttl=300_000)
    url = fault.url(
        tools=[{"tools": [TOOL]}],
        call=[{"task": made}],
        get=[made, rpc_error(-32602, "Task not found")],
    )
    r = run_cli("call", "slow", "--url", url, *P, "--watch", "-o", "ndjson")
    assert r.code == 9, r.stderr
    end = _end(r.stdout)
    assert end["outcome"] == "unknown"
    assert "the server no longer knows task t-1" in end["error"]
    assert "well inside its ttl of 300 s" in end["error"]
    assert "expired" not in end["error"].replace("did not expire", "")
    later = run_cli("get", "t-1", "--url", url, *P, "-o", "json")
    assert later.code == 9
    assert_one_line_error(later)
    assert "no longer knows task t-1" in later.stderr and "has expired" not in later.stderr


def test_tasks_on_a_2025_06_18_server_keep_its_version(run_cli: RunCli, fault: FaultServer) -> None:
    """A server that agrees to 2025-06-18 and still announces tasks (item 1): every request
    after `initialize` carries that version, in this run and in a later one that reuses the
    task's session from the task book."""
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}},
        "serverInfo": {"name": "older", "version": "1"},
    }
    url = fault.url(
        init=[init],
        tools=[{"tools": [TOOL]}],
        call=[{"task": task()}],
        get=[task(status="completed")],
    )
    made = run_cli("call", "slow", "--url", url, *P, "-o", "json")
    assert made.code == 0, made.stderr
    later = run_cli("get", "t-1", "--url", url, *P, "-o", "json")
    assert later.code == 0, later.stderr
    sid = FaultServer.sid(url)
    sent = [
        (r.method, r.headers.get("mcp-protocol-version"))
        for r in fault.requests
        if r.scenario == sid and r.method != "initialize"
    ]
    assert sent and all(version == "2025-06-18" for _, version in sent), sent
    assert ("tasks/get", "2025-06-18") in sent
