"""Issue 35 against a real trace backend: Arize Phoenix 20.26.1 (`servers.phoenix`), started by
the suite. Real tasks (the embedded demo server, server-everything, fastmcp 4 + fastmcp-tasks, an
a2a-sdk agent) are watched, their stories exported with the real CLI, and the spans read back
over Phoenix's REST API: the trace named by `--traceparent`, ids, parents, the conventions'
attributes, events in order at the server's times; an export sent twice is not two; a live
export (`--otlp`) lands while the watch goes on."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from mcptask.demo.server import DemoServer

from conftest import RunCli, ok
from servers.phoenix import PhoenixServer

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def demo() -> Iterator[str]:
    with DemoServer(task_seconds=3) as server:
        yield server.url


def at(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def by_id(spans: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {s["context"]["span_id"]: s for s in spans}


def exported(run_cli: RunCli, phoenix: PhoenixServer, tid: str, *args: str) -> dict[str, Any]:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.otlp_endpoint}
    # (a server's id may begin with `-`, as fastmcp's random ones do: after `--`)
    doc = ok(run_cli("export", *args, "-o", "json", "--", tid, env=env)).json()
    assert doc["destination"] == phoenix.traces_url
    [task] = doc["tasks"]
    return dict(task)


def test_a_demo_task_in_the_trace_its_call_named(
    run_cli: RunCli, phoenix: PhoenixServer, demo: str
) -> None:
    trace_id, parent = secrets.token_hex(16), secrets.token_hex(8)
    traceparent = f"00-{trace_id}-{parent}-01"
    created = ok(
        run_cli(
            "call",
            "build-report",
            "topic=otel",
            "--url",
            demo,
            "--traceparent",
            traceparent,
            "-o",
            "json",
        )
    ).json()
    tid = created["taskId"]
    assert created["traceId"] == trace_id
    ok(run_cli("watch", "-o", "ndjson", "--", tid))
    task = exported(run_cli, phoenix, tid)
    assert task["traceId"] == trace_id
    spans = by_id(phoenix.wait_spans(trace_id, task["spans"]))
    root = spans[task["spanId"]]
    assert root["parent_id"] == parent  # under the caller's span
    assert root["name"] == "execute_tool build-report"
    assert root["span_kind"] == "TOOL" and root["status_code"] == "OK"
    attrs = root["attributes"]
    assert attrs["gen_ai.tool.name"] == "build-report"
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["mcp.protocol.version"] == "2025-11-25"
    assert attrs["mcptask.task.id"] == tid and attrs["server.address"] == "127.0.0.1"
    # the status changes as events, in order, at the server's times
    names = [e["name"] for e in root["events"]]
    assert names[0] == "created" and "status completed" in names and names[-1] == "end"
    times = [at(e["timestamp"]) for e in root["events"]]
    assert times == sorted(times)
    done = root["events"][names.index("status completed")]
    assert done["attributes"]["mcptask.clock"] == "server"
    assert abs(at(done["timestamp"]) - at(created["createdAt"]) - 3) < 2  # the demo's 3 s
    # the calls under it, with the MCP method
    children = [s for s in spans.values() if s["parent_id"] == task["spanId"]]
    methods = {s["attributes"].get("mcp.method.name") for s in children}
    assert {"tools/call", "tasks/result"} <= methods
    assert all(s["attributes"]["mcptask.task.id"] == tid for s in children)
    # sent again: the same spans, not new ones
    again = exported(run_cli, phoenix, tid, "--again")
    assert again["spanId"] == task["spanId"]
    phoenix.settle()  # what was sent before this is written
    assert len(phoenix.spans(trace_id=trace_id)) == task["spans"]


@pytest.mark.parametrize("server", ["everything", "fastmcp4", "a2a"])
def test_real_servers_tasks_with_their_protocol_s_attributes(
    run_cli: RunCli, phoenix: PhoenixServer, request: pytest.FixtureRequest, server: str
) -> None:
    if server == "everything":
        url = request.getfixturevalue("everything_server").url
        args = ["call", "simulate-research-query", "topic=otel"]
    elif server == "fastmcp4":
        url = request.getfixturevalue("fastmcp4_server").url
        args = ["call", "slow_echo", "text=otel", "seconds=1"]
    else:
        url = request.getfixturevalue("a2a_server").url
        args = ["send", "hello otel"]
    created = ok(run_cli(*args, "--url", url, "-o", "json")).json()
    tid = created["taskId"]
    ok(run_cli("watch", "--url", url, "--result", "-o", "ndjson", "--", tid))
    task = exported(run_cli, phoenix, tid, "--url", url)
    spans = by_id(phoenix.wait_spans(task["traceId"], task["spans"]))
    root = spans[task["spanId"]]
    attrs = root["attributes"]
    assert attrs["mcptask.task.id"] == tid
    if server == "a2a":
        assert root["span_kind"] == "AGENT" and root["name"].startswith("invoke_agent")
        assert attrs["a2a.task.id"] == tid
        assert attrs["a2a.task.state"] == "completed"
        assert attrs["gen_ai.conversation.id"] == created["contextId"]
        methods = {s["attributes"].get("rpc.method") for s in spans.values() if s["parent_id"]}
        assert "SendMessage" in methods
    else:
        assert root["span_kind"] == "TOOL" and attrs["gen_ai.tool.name"] == args[1]
        version = "2026-07-28" if server == "fastmcp4" else "2025-11-25"
        assert attrs["mcp.protocol.version"] == version
    assert [e["name"] for e in root["events"]][-1] == "end"


def test_a_live_export_lands_as_the_watch_ends(
    run_cli: RunCli, phoenix: PhoenixServer, demo: str
) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.otlp_endpoint}
    lines = ok(
        run_cli(
            "call",
            "build-report",
            "topic=live",
            "--url",
            demo,
            "--watch",
            "--otlp",
            "-o",
            "ndjson",
            env=env,
        )
    ).lines()
    assert lines[-1]["outcome"] == "completed"
    tid = lines[-1]["taskId"]
    doc = ok(run_cli("get", "-o", "json", "--", tid)).json()
    spans = phoenix.wait_spans(doc["traceId"], 3)
    root = by_id(spans)[doc["spanId"]]
    assert root["attributes"]["mcptask.task.id"] == tid
    assert [e["name"] for e in root["events"]][-1] == "end"
    # the book knows it was sent: export has nothing new to send
    left = ok(run_cli("export", "-o", "json", "--", tid, env=env)).json()
    assert (left["exported"], left["skipped"]["unchanged"]) == (0, 1)
