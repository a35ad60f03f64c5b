"""Smoke tests of the real-MCP-server fixtures, in raw httpx (no mcptask code).

They prove that each fixture starts its server and that the server does tasks the way
tests/servers/README.md describes.
"""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

import httpx
import pytest

from servers.common import ServerProcess

# The fixtures are imported by name (the test functions' parameters then shadow them: F811).
# ruff: noqa: F811
from servers.plugin import (  # noqa: F401
    everything_server,
    everything_stdio_cmd,
    fastmcp3_server,
    fastmcp4_server,
)

pytestmark = pytest.mark.timeout(120)

ACCEPT = "application/json, text/event-stream"
V2025 = "2025-11-25"
V2026 = "2026-07-28"
TASKS_EXT = "io.modelcontextprotocol/tasks"


def sse_messages(text: str) -> list[dict[str, Any]]:
    """JSON-RPC messages of an SSE body; events without data (priming events) are skipped."""
    messages: list[dict[str, Any]] = []
    data: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line == "":
            payload = "\n".join(data).strip()
            data = []
            if payload:
                messages.append(json.loads(payload))
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    return messages


def answer(resp: httpx.Response, request_id: int) -> dict[str, Any]:
    """The JSON-RPC response with ``request_id`` from a JSON or SSE answer."""
    if resp.headers.get("content-type", "").startswith("text/event-stream"):
        messages = sse_messages(resp.text)
    else:
        messages = [resp.json()]
    for msg in messages:
        if msg.get("id") == request_id and ("result" in msg or "error" in msg):
            return msg
    raise AssertionError(
        f"no response with id {request_id} in HTTP {resp.status_code}: {resp.text}"
    )


class Session2025:
    """Minimal MCP 2025-11-25 Streamable HTTP client session."""

    def __init__(self, server: ServerProcess, capabilities: dict[str, Any] | None = None) -> None:
        self.server = server
        self.http = httpx.Client(timeout=30)
        self.session_id: str | None = None
        self.next_id = 0
        init = self.request(
            "initialize",
            {
                "protocolVersion": V2025,
                "capabilities": capabilities if capabilities is not None else {"tasks": {}},
                "clientInfo": {"name": "mcptask-smoke", "version": "0"},
            },
        )
        assert init["result"]["protocolVersion"] == V2025, init
        self.server_capabilities: dict[str, Any] = init["result"]["capabilities"]
        self.notify("notifications/initialized")

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
            headers["MCP-Protocol-Version"] = V2025
        return headers

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        resp = self.http.post(self.server.url, json=msg, headers=self._headers())
        assert resp.status_code == 200, (resp.status_code, resp.text, self.server.stderr_tail())
        if self.session_id is None:
            self.session_id = resp.headers.get("mcp-session-id")
            assert self.session_id, "initialize answer has no Mcp-Session-Id"
        return answer(resp, self.next_id)

    def notify(self, method: str) -> None:
        msg = {"jsonrpc": "2.0", "method": method}
        resp = self.http.post(self.server.url, json=msg, headers=self._headers())
        assert resp.status_code == 202, (resp.status_code, resp.text)

    def wait_task(self, task_id: str, deadline: float = 20.0) -> list[dict[str, Any]]:
        """Poll tasks/get until the task leaves ``working``; return every Task seen."""
        seen: list[dict[str, Any]] = []
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            task = self.request("tasks/get", {"taskId": task_id})["result"]
            seen.append(task)
            if task["status"] != "working":
                return seen
            time.sleep(0.3)
        raise AssertionError(f"task {task_id} still working after {deadline} s: {seen[-1]}")

    def close(self) -> None:
        self.http.close()


def test_everything_server_task(everything_server: ServerProcess) -> None:
    s = Session2025(everything_server)
    try:
        assert "tasks" in s.server_capabilities
        created = s.request(
            "tools/call",
            {
                "name": "simulate-research-query",
                "arguments": {"topic": "smoke"},
                "task": {"ttl": 60000},
            },
        )
        task = created["result"]["task"]
        assert task["status"] == "working"
        assert task["pollInterval"] == 1000
        seen = s.wait_task(task["taskId"])
        assert seen[-1]["status"] == "completed", seen[-1]
        result = s.request("tasks/result", {"taskId": task["taskId"]})["result"]
        assert "Research Report" in result["content"][0]["text"]
        meta = result["_meta"]["io.modelcontextprotocol/related-task"]
        assert meta["taskId"] == task["taskId"]
    finally:
        s.close()


def test_everything_stdio(everything_stdio_cmd: list[str]) -> None:
    proc = subprocess.Popen(
        everything_stdio_cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": V2025,
                "capabilities": {},
                "clientInfo": {"name": "mcptask-smoke", "version": "0"},
            },
        }
        proc.stdin.write(json.dumps(init).encode() + b"\n")
        proc.stdin.flush()
        for _ in range(20):  # skip any notifications/log lines before the answer
            line = proc.stdout.readline()
            assert line, "server-everything closed stdout"
            msg = json.loads(line)
            if msg.get("id") == 1:
                break
        assert msg["result"]["protocolVersion"] == V2025
        assert "tasks" in msg["result"]["capabilities"]
    finally:
        proc.terminate()  # it does not exit when stdin closes
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_fastmcp3_server_task(fastmcp3_server: ServerProcess) -> None:
    s = Session2025(fastmcp3_server)
    try:
        assert s.server_capabilities["tasks"]["requests"]["tools"]["call"] == {}
        tools = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}
        assert set(tools) >= {"slow_echo", "fail_tool", "quick"}
        assert all(t["execution"]["taskSupport"] == "optional" for t in tools.values())

        created = s.request(
            "tools/call",
            {
                "name": "slow_echo",
                "arguments": {"text": "hi", "seconds": 1.5},
                "task": {"ttl": 60000},
            },
        )
        task = created["result"]["task"]
        assert task["status"] == "working" and task["pollInterval"] == 1000
        # fastmcp 3 does not block tasks/result on a running task (spec deviation)
        early = s.request("tasks/result", {"taskId": task["taskId"]})
        assert early["error"]["code"] == -32602, early
        seen = s.wait_task(task["taskId"])
        assert seen[-1]["status"] == "completed", seen[-1]
        assert {t.get("statusMessage") for t in seen} & {"step 1/3", "step 2/3", "step 3/3"}
        result = s.request("tasks/result", {"taskId": task["taskId"]})["result"]
        assert result["content"][0]["text"] == "echo: hi"

        failing = s.request(
            "tools/call",
            {"name": "fail_tool", "arguments": {"reason": "nope"}, "task": {"ttl": 60000}},
        )["result"]["task"]
        assert s.wait_task(failing["taskId"])[-1]["status"] == "failed"
        failed = s.request("tasks/result", {"taskId": failing["taskId"]})["result"]
        assert failed["isError"] is True and failed["content"][0]["text"] == "nope"

        quick = s.request("tools/call", {"name": "quick", "arguments": {"x": 21}})["result"]
        assert quick["structuredContent"] == {"result": 42}
    finally:
        s.close()


class Client2026:
    """Minimal MCP 2026-07-28 client (no session) declaring the tasks extension."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.http = httpx.Client(timeout=30)
        self.next_id = 0
        self.meta = {
            "io.modelcontextprotocol/protocolVersion": V2026,
            "io.modelcontextprotocol/clientCapabilities": {
                "elicitation": {"form": {}},
                "extensions": {TASKS_EXT: {}},
            },
            "io.modelcontextprotocol/clientInfo": {"name": "mcptask-smoke", "version": "0"},
        }

    def request(
        self, method: str, params: dict[str, Any] | None = None, *, name: str | None = None
    ) -> dict[str, Any]:
        self.next_id += 1
        headers = {
            "Content-Type": "application/json",
            "Accept": ACCEPT,
            "MCP-Protocol-Version": V2026,
            "Mcp-Method": method,
        }
        if name is not None:
            headers["Mcp-Name"] = name
        msg = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": method,
            "params": {**(params or {}), "_meta": self.meta},
        }
        resp = self.http.post(self.server.url, json=msg, headers=headers)
        assert resp.status_code == 200, (resp.status_code, resp.text, self.server.stderr_tail())
        return answer(resp, self.next_id)

    def call_task(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self.request("tools/call", {"name": tool, "arguments": arguments}, name=tool)
        task = result["result"]
        assert task["resultType"] == "task", task
        return task

    def get(self, task_id: str) -> dict[str, Any]:
        task = self.request("tasks/get", {"taskId": task_id}, name=task_id)["result"]
        assert task["resultType"] == "complete"
        return task

    def wait(self, task_id: str, deadline: float = 20.0) -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = []
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            task = self.get(task_id)
            seen.append(task)
            if task["status"] != "working":
                return seen
            time.sleep(0.3)
        raise AssertionError(f"task {task_id} still working after {deadline} s: {seen[-1]}")

    def close(self) -> None:
        self.http.close()


def test_fastmcp4_server_tasks(fastmcp4_server: ServerProcess) -> None:
    c = Client2026(fastmcp4_server)
    try:
        discover = c.request("server/discover")["result"]
        assert V2026 in discover["supportedVersions"]
        assert TASKS_EXT in discover["capabilities"]["extensions"]

        task = c.call_task("slow_echo", {"text": "hi", "seconds": 1.5})
        assert task["status"] == "working"
        assert task["pollIntervalMs"] == 1000
        seen = c.wait(task["taskId"])
        done = seen[-1]
        assert {t.get("statusMessage") for t in seen} & {"step 1/3", "step 2/3", "step 3/3"}
        assert done["status"] == "completed", done
        assert done["result"]["content"][0]["text"] == "echo: hi"
        assert done["result"]["isError"] is False

        failed = c.wait(c.call_task("rpc_error", {})["taskId"])[-1]
        assert failed["status"] == "failed", failed
        assert failed["error"]["code"] == -32603
        assert "result" not in failed

        tool_error = c.wait(c.call_task("tool_error", {})["taskId"])[-1]
        assert tool_error["status"] == "completed", tool_error
        assert tool_error["result"]["isError"] is True
    finally:
        c.close()


def test_fastmcp4_server_input_loop(fastmcp4_server: ServerProcess) -> None:
    c = Client2026(fastmcp4_server)
    try:
        task_id = c.call_task("ask_name", {})["taskId"]
        waiting = c.wait(task_id)[-1]
        assert waiting["status"] == "input_required", waiting
        [(key, request)] = waiting["inputRequests"].items()
        assert key.startswith(f"{task_id}:")
        assert request["method"] == "elicitation/create"
        assert request["params"]["mode"] == "form"
        assert request["params"]["requestedSchema"]["required"] == ["name"]

        ack = c.request(
            "tasks/update",
            {
                "taskId": task_id,
                "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}},
            },
            name=task_id,
        )
        assert ack["result"]["resultType"] == "complete"

        end = time.monotonic() + 20
        task = c.get(task_id)
        while task["status"] in ("working", "input_required") and time.monotonic() < end:
            time.sleep(0.3)
            task = c.get(task_id)
        assert task["status"] == "completed", task
        assert task["result"]["content"][0]["text"] == "Hello, Ada!"
    finally:
        c.close()
