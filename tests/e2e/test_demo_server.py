"""Tests for the embedded MCP 2025-11-25 demo task server."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcptask.demo.server import DemoServer, iso

REPO = Path(__file__).resolve().parents[2]
ACCEPT = {"Accept": "application/json, text/event-stream"}
ISO_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
STEPS = ["Queued", "Collecting sources", "Reading 12 documents", "Drafting report"]
STEPS += ["Checking citations", "Finalizing"]


def parse_sse(text: str) -> list[dict[str, str]]:
    """Split an SSE body into events ({field: value}, data lines joined)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        event: dict[str, str] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            event[name] = event[name] + "\n" + value if name in event else value
        events.append(event)
    return events


def body_of(resp: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response, JSON or SSE (skipping events without data)."""
    if resp.headers["content-type"].startswith("text/event-stream"):
        messages = [e for e in parse_sse(resp.text) if e.get("data")]
        assert len(messages) == 1
        return dict(json.loads(messages[0]["data"]))
    return dict(resp.json())


class Session:
    def __init__(self, server: DemoServer) -> None:
        self.server = server
        self.http = httpx.Client(timeout=10)
        self.next_id = 0
        resp = self.post(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}},
        )
        assert resp.status_code == 200
        self.init = body_of(resp)
        self.sid = resp.headers["mcp-session-id"]
        assert self.post("notifications/initialized", notify=True).status_code == 202

    def post(
        self, method: str, params: dict[str, Any] | None = None, *, notify: bool = False
    ) -> httpx.Response:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notify:
            msg["id"] = self.next_id
            self.next_id += 1
        headers = dict(ACCEPT)
        if getattr(self, "sid", None):
            headers |= {"Mcp-Session-Id": self.sid, "MCP-Protocol-Version": "2025-11-25"}
        return self.http.post(self.server.url, json=msg, headers=headers)

    def rpc(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        resp = self.post(method, params)
        assert resp.status_code == 200, resp.text
        return body_of(resp)

    def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        body = self.rpc(method, params)
        assert "result" in body, body
        return dict(body["result"])

    def error(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        body = self.rpc(method, params)
        assert "error" in body, body
        return dict(body["error"])

    def create(self, **args: Any) -> dict[str, Any]:
        res = self.result("tools/call", {"name": "build-report", "arguments": args, "task": {}})
        return dict(res["task"])


@pytest.fixture(scope="module")
def server() -> Iterator[DemoServer]:
    with DemoServer(task_seconds=1.2, poll_interval_ms=200) as srv:
        yield srv


@pytest.fixture(scope="module")
def instant() -> Iterator[DemoServer]:
    """Tasks finish at once."""
    with DemoServer(task_seconds=0) as srv:
        yield srv


def test_initialize_and_session_header(server: DemoServer) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", server.url)
    s = Session(server)
    assert re.fullmatch(r"[0-9a-f]{32}", s.sid)
    res = s.init["result"]
    assert res["protocolVersion"] == "2025-11-25"
    assert res["capabilities"]["tasks"] == {
        "list": {},
        "cancel": {},
        "requests": {"tools": {"call": {}}},
    }
    assert res["serverInfo"] == {"name": "mcptask-demo", "version": "1"}
    assert s.result("ping") == {}
    assert Session(server).sid != s.sid


def test_requests_are_recorded_with_headers(server: DemoServer) -> None:
    s = Session(server)
    s.rpc("ping")
    mine = [r for r in server.requests if r["headers"].get("mcp-session-id") == s.sid]
    assert [r["message"]["method"] for r in mine] == ["notifications/initialized", "ping"]
    assert mine[-1]["headers"]["mcp-protocol-version"] == "2025-11-25"


def test_tools_list_and_echo(server: DemoServer) -> None:
    s = Session(server)
    tools = {t["name"]: t for t in s.result("tools/list")["tools"]}
    report = tools["build-report"]
    assert report["execution"] == {"taskSupport": "required"}
    props = report["inputSchema"]["properties"]
    assert props["topic"]["type"] == "string" and props["topic"]["default"] == "demo"
    assert props["fail"]["type"] == "boolean" and props["fail"]["default"] is False
    assert "execution" not in tools["echo"]
    res = s.result("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    assert res["content"] == [{"type": "text", "text": "hi"}]
    # the spec: taskSupport "required" without a task, or a task for a forbidden tool -> -32601
    err = s.error("tools/call", {"name": "build-report", "arguments": {}})
    assert err == {"code": -32601, "message": "Task augmentation required"}
    assert s.error("tools/call", {"name": "echo", "arguments": {}, "task": {}})["code"] == -32601
    assert s.error("tools/call", {"name": "nope", "arguments": {}})["code"] == -32602


def until(get: Any, done: Any, timeout: float = 20.0) -> Any:
    """`get()` again until `done(value)`: a wait on the condition, not a sleep."""
    deadline = time.monotonic() + timeout
    while True:
        value = get()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.02)


def test_task_lifecycle_completed_and_failed(server: DemoServer) -> None:
    s = Session(server)
    started = time.monotonic()
    params = {"name": "build-report", "arguments": {"topic": "otters"}, "task": {"ttl": 60_000}}
    task = s.result("tools/call", params)["task"]
    failing = s.create(fail=True)
    assert task["status"] == "working" and task["statusMessage"] == "Queued"
    assert task["ttl"] == 60_000 and task["pollInterval"] == 200
    assert failing["ttl"] == 300_000  # the server default
    assert ISO_RE.match(task["createdAt"]) and ISO_RE.match(task["lastUpdatedAt"])
    tid = task["taskId"]

    # wait for the task to move on (a condition, not a sleep)
    mid = until(
        lambda: s.result("tasks/get", {"taskId": tid}), lambda t: t["statusMessage"] != "Queued"
    )
    assert mid["status"] == "working"
    assert mid["statusMessage"] in STEPS[1:]
    assert mid["lastUpdatedAt"] > mid["createdAt"] == task["createdAt"]

    res = s.result("tasks/result", {"taskId": tid})  # blocks until the task is done
    assert time.monotonic() - started >= 1.1
    assert res["isError"] is False
    assert res["content"][0]["type"] == "text"
    assert res["content"][0]["text"].startswith("Report on otters: ")
    assert res["_meta"] == {"io.modelcontextprotocol/related-task": {"taskId": tid}}
    done = s.result("tasks/get", {"taskId": tid})
    assert done["status"] == "completed"
    created = datetime.fromisoformat(done["createdAt"])
    finished = datetime.fromisoformat(done["lastUpdatedAt"])
    assert abs((finished - created).total_seconds() - 1.2) < 0.01

    ended = until(
        lambda: s.result("tasks/get", {"taskId": failing["taskId"]}),
        lambda t: t["status"] != "working",
    )
    assert ended["status"] == "failed"
    bad = s.result("tasks/result", {"taskId": failing["taskId"]})
    assert bad["isError"] is True and "failed" in bad["content"][0]["text"]


def test_tasks_are_bound_to_their_session(server: DemoServer) -> None:
    a, b = Session(server), Session(server)
    tid = a.create()["taskId"]
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        assert b.error(method, {"taskId": tid}) == {"code": -32602, "message": "Task not found"}
    assert b.result("tasks/list") == {"tasks": []}
    assert a.result("tasks/get", {"taskId": tid})["taskId"] == tid
    assert a.error("tasks/get", {"taskId": "nope"})["code"] == -32602


def test_cancel(server: DemoServer, instant: DemoServer) -> None:
    s = Session(server)
    tid = s.create()["taskId"]
    got = s.result("tasks/cancel", {"taskId": tid})
    assert got["status"] == "cancelled" and got["statusMessage"] == "Cancelled by client"
    assert s.result("tasks/get", {"taskId": tid})["status"] == "cancelled"
    assert s.error("tasks/result", {"taskId": tid}) == {
        "code": -32602,
        "message": "Task was cancelled",
    }
    err = s.error("tasks/cancel", {"taskId": tid})
    assert err["code"] == -32602 and "terminal status" in err["message"]
    fast = Session(instant)
    done = fast.create()["taskId"]
    assert fast.result("tasks/get", {"taskId": done})["status"] == "completed"
    assert fast.error("tasks/cancel", {"taskId": done})["code"] == -32602


def test_result_waits_without_blocking_others_and_ends_on_cancel(server: DemoServer) -> None:
    s = Session(server)
    tid = s.create()["taskId"]
    out: dict[str, Any] = {}
    waiter = threading.Thread(target=lambda: out.update(s.rpc("tasks/result", {"taskId": tid})))
    waiter.start()
    time.sleep(0.1)
    assert s.result("tasks/get", {"taskId": tid})["status"] == "working"
    # answered while the result still waits: not blocked behind it (an event, not a deadline)
    assert waiter.is_alive()
    s.result("tasks/cancel", {"taskId": tid})
    waiter.join(timeout=30)
    assert not waiter.is_alive()
    assert out["error"]["message"] == "Task was cancelled"


def test_list_pagination(instant: DemoServer) -> None:
    s = Session(instant)
    created = [s.create(topic=str(i))["taskId"] for i in range(120)]
    pages: list[list[dict[str, Any]]] = []
    params: dict[str, Any] = {}
    while True:
        page = s.result("tasks/list", params)
        pages.append(page["tasks"])
        if "nextCursor" not in page:
            break
        params = {"cursor": page["nextCursor"]}
    assert [len(p) for p in pages] == [50, 50, 20]
    assert [t["taskId"] for p in pages for t in p] == created
    assert all(t["status"] == "completed" for p in pages for t in p)
    assert s.error("tasks/list", {"cursor": "garbage"})["code"] == -32602


def test_expired_tasks_stop_existing(instant: DemoServer) -> None:
    s = Session(instant)
    params = {"name": "build-report", "arguments": {}, "task": {"ttl": 300}}
    tid = s.result("tools/call", params)["task"]["taskId"]
    assert s.result("tasks/get", {"taskId": tid})["status"] == "completed"
    gone = until(lambda: s.rpc("tasks/get", {"taskId": tid}), lambda answer: "error" in answer)
    assert gone["error"] == {"code": -32602, "message": "Task not found"}
    assert s.result("tasks/list")["tasks"] == []


def test_sse_mode() -> None:
    with DemoServer(task_seconds=0.4, sse=True) as srv:
        s = Session(srv)
        assert s.init["result"]["protocolVersion"] == "2025-11-25"
        resp = s.post("tasks/list", {})
        assert resp.headers["content-type"].startswith("text/event-stream")
        events = parse_sse(resp.text)
        assert len(events) == 2
        assert events[0]["id"] and events[0]["data"] == "" and "event" not in events[0]
        assert events[1]["event"] == "message"
        assert json.loads(events[1]["data"]) == {"jsonrpc": "2.0", "id": 1, "result": {"tasks": []}}
        tid = s.create(topic="sse")["taskId"]
        res = s.result("tasks/result", {"taskId": tid})
        assert res["content"][0]["text"].startswith("Report on sse: ")
        assert s.error("tasks/get", {"taskId": "nope"})["code"] == -32602
        assert s.post("notifications/initialized", notify=True).status_code == 202


def test_http_errors(server: DemoServer) -> None:
    http = httpx.Client(timeout=5, headers=ACCEPT)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    resp = http.post(server.url, json=ping)
    assert resp.status_code == 400
    assert resp.json()["error"] == {"code": -32000, "message": "Bad Request: missing session"}
    resp = http.post(server.url, json=ping, headers={"Mcp-Session-Id": "0" * 32})
    assert resp.status_code == 404 and resp.json()["error"]["code"] == -32001
    resp = http.post(server.url, content=b"{not json", headers={"Content-Type": "application/json"})
    assert resp.status_code == 400 and resp.json()["error"]["code"] == -32700
    assert http.get(server.url).status_code == 400  # the GET stream needs a session
    with DemoServer(push=False) as quiet:
        assert http.get(quiet.url).status_code == 405

    s = Session(server)
    assert s.error("no/such/method")["code"] == -32601
    assert http.delete(server.url).status_code == 400
    assert http.delete(server.url, headers={"Mcp-Session-Id": s.sid}).status_code == 200
    assert s.post("ping").status_code == 404  # the session is gone


def test_iso() -> None:
    assert iso(0) == "1970-01-01T00:00:00.000Z"
    assert iso(1.2345) == "1970-01-01T00:00:01.234Z"


def test_main_serves_until_interrupted() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcptask.demo.server", "--port", "0", "--task-seconds", "1"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url)
        resp = httpx.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize"})
        assert resp.json()["result"]["protocolVersion"] == "2025-11-25"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
