"""MCP 2026-07-28 + tasks extension (`mcptask.protocols.mcp2026`) and protocol auto-detection.

The real CLI runs in subprocesses (`run_cli`, private state directory) against fastmcp 4.1.4 +
fastmcp-tasks (`fastmcp4_server`), server-everything (2025-11-25) and fastmcp 3.4.11. A small
recording reverse proxy shows what mcptask really puts on the wire (headers, `_meta`, how
many requests detection costs). A few in-process tests drive `probe` and the error mapping
with `httpx.MockTransport` for answers no real server here gives.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise
from typing import Any

import httpx
import pytest

from mcptask.errors import AuthError, ProtocolError, ServerError, TaskNotFound, TransportError
from mcptask.model.refs import TaskRef
from mcptask.protocols import mcp2026
from mcptask.protocols.base import Unrecognised
from mcptask.protocols.mcp2026 import Mcp2026, header_value, normalize, probe
from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.rpc import RpcClient

from conftest import CliResult, RunCli, assert_one_line_error
from servers.common import ServerProcess, free_port, start_on_free_port
from servers.mcp_envs import fastmcp4_python

pytestmark = pytest.mark.timeout(180)

V2026 = "mcp-2026-07-28"
V2025 = "mcp-2025-11-25"
TASKS_EXT = "io.modelcontextprotocol/tasks"


# -- a recording reverse proxy -----------------------------------------------------------------


@dataclass
class Recorded:
    headers: dict[str, list[str]]  # lower-case name -> every value sent under that name
    body: dict[str, Any]

    @property
    def method(self) -> str:
        return str(self.body.get("method"))

    @property
    def params(self) -> dict[str, Any]:
        params = self.body.get("params")
        return params if isinstance(params, dict) else {}

    def header(self, name: str) -> str | None:
        values = self.headers.get(name.lower())
        assert values is None or len(values) == 1, (name, values)
        return values[0] if values else None


class RecordingProxy:
    """Forwards each POST to `upstream` and records its headers and JSON body."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.requests: list[Recorded] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                seen: dict[str, list[str]] = {}
                for name, value in self.headers.items():
                    seen.setdefault(name.lower(), []).append(value)
                proxy.requests.append(Recorded(seen, json.loads(body)))
                forward = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in ("host", "content-length", "connection", "accept-encoding")
                }
                with httpx.Client(timeout=60) as client:
                    answer = client.post(proxy.upstream, content=body, headers=forward)
                self.send_response(answer.status_code)
                for name in ("content-type", "mcp-session-id"):
                    if name in answer.headers:
                        self.send_header(name, answer.headers[name])
                self.send_header("content-length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/mcp"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def methods(self) -> list[str]:
        return [r.method for r in self.requests]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def proxy4(fastmcp4_server: ServerProcess) -> Iterator[RecordingProxy]:
    proxy = RecordingProxy(fastmcp4_server.url)
    try:
        yield proxy
    finally:
        proxy.close()


# -- helpers -----------------------------------------------------------------------------------


def ok(result: CliResult, code: int = 0) -> CliResult:
    assert result.code == code, (result.code, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def create(run_cli: RunCli, url: str, *args: str) -> dict[str, Any]:
    """`call` a tool (auto-detected protocol) and return the created task (json)."""
    task: dict[str, Any] = ok(run_cli("call", *args, "--url", url, "-o", "json")).json()
    assert task["protocol"] == V2026, task
    return task


def end_line(result: CliResult) -> dict[str, Any]:
    lines = result.lines()
    assert lines and lines[-1]["event"] == "end", result.stdout
    end: dict[str, Any] = lines[-1]
    return end


def wait_for_status(
    run_cli: RunCli, url: str, task_id: str, status: str, deadline: float = 15.0
) -> dict[str, Any]:
    end = time.monotonic() + deadline
    while True:
        task: dict[str, Any] = ok(run_cli("get", "--url", url, "-o", "json", "--", task_id)).json()
        if task["status"] == status or time.monotonic() > end:
            assert task["status"] == status, task
            return task
        time.sleep(0.3)


def assert_2026_wire(requests: list[Recorded]) -> None:
    """Every request carries the 2026 headers and `_meta`; `Mcp-Name` mirrors the taskId on
    every `tasks/*` request and the tool name on `tools/call`."""
    assert requests
    for r in requests:
        assert r.header("MCP-Protocol-Version") == "2026-07-28", r
        assert r.header("Mcp-Method") == r.method, r
        assert r.header("Mcp-Session-Id") is None, r
        meta = r.params["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientCapabilities"] == {
            "elicitation": {"form": {}},
            "extensions": {TASKS_EXT: {}},
        }
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcptask"
        if r.method.startswith("tasks/"):
            assert r.header("Mcp-Name") == r.params["taskId"], r
        elif r.method == "tools/call":
            assert r.header("Mcp-Name") == r.params["name"], r
        else:
            assert r.header("Mcp-Name") is None, r


# -- the whole life of tasks, through the real CLI ---------------------------------------------


def test_call_detects_2026_then_watch_and_result(run_cli: RunCli, proxy4: RecordingProxy) -> None:
    """`call` auto-detects 2026-07-28 with one request; later processes reuse the remembered
    protocol (no second `server/discover`); `watch` exits 0; `result` prints the echo."""
    url = proxy4.url
    # long enough that the watch (a new process, on a busy machine too) sees it running
    task = create(run_cli, url, "slow_echo", "text=hi", "seconds=6")
    assert task["status"] == "working"
    assert task["ttl"] == 900000 and task["pollInterval"] == 1000  # from ttlMs / pollIntervalMs
    assert task["raw"]["resultType"] == "task"
    # detection is one request; `k=v` needs the schema (tools/list) to coerce seconds=6
    assert proxy4.methods() == ["server/discover", "tools/list", "tools/call"]
    assert proxy4.requests[2].params["arguments"] == {"text": "hi", "seconds": 6}

    watched = ok(run_cli("watch", "--url", url, "-o", "ndjson", "--", task["taskId"]))
    end = end_line(watched)
    assert (end["outcome"], end["exitCode"]) == ("completed", 0)
    statuses = [line for line in watched.lines() if line.get("event") == "status"]
    assert statuses[-1]["status"] == "completed"
    if any(s["status"] == "working" for s in statuses):  # (a busy machine may start it late)
        assert any((s["statusMessage"] or "").startswith("step ") for s in statuses), statuses
    # fastmcp-tasks stamps lastUpdatedAt on every read: only status/message changes are lines
    shown = [(s["status"], s["statusMessage"]) for s in statuses]
    assert all(a != b for a, b in pairwise(shown)), shown

    result = ok(run_cli("result", "--url", url, "-o", "json", "--", task["taskId"])).json()
    assert result["content"][0]["text"] == "echo: hi" and result["isError"] is False
    pretty = ok(run_cli("result", "--url", url, "-o", "pretty", "--", task["taskId"]))
    assert pretty.stdout.strip() == "echo: hi"

    assert proxy4.methods().count("server/discover") == 1
    assert "tasks/result" not in proxy4.methods()  # the result comes inline with tasks/get
    assert_2026_wire(proxy4.requests)


def test_mcp_name_is_the_task_id_on_every_tasks_request(
    run_cli: RunCli, proxy4: RecordingProxy
) -> None:
    """Recorded on the wire: get, cancel and watch's polls all send `Mcp-Name: <taskId>`."""
    url = proxy4.url
    task_id = create(run_cli, url, "slow_echo", "text=x", "seconds=20")["taskId"]
    ok(run_cli("get", "--url", url, "-o", "json", "--", task_id))
    ok(run_cli("cancel", "--url", url, "-o", "json", "--", task_id))
    ok(run_cli("watch", "--url", url, "-o", "ndjson", "--", task_id), 8)
    tasks_requests = [r for r in proxy4.requests if r.method.startswith("tasks/")]
    assert {r.method for r in tasks_requests} == {"tasks/get", "tasks/cancel"}
    assert len(tasks_requests) >= 4  # get, cancel's look-up, cancel, watch's poll
    assert all(r.header("Mcp-Name") == task_id for r in tasks_requests)
    assert_2026_wire(proxy4.requests)


def test_rpc_error_task_fails_with_exit_5(run_cli: RunCli, fastmcp4_server: ServerProcess) -> None:
    url = fastmcp4_server.url
    task_id = create(run_cli, url, "rpc_error")["taskId"]

    end = end_line(ok(run_cli("watch", "--url", url, "-o", "ndjson", "--", task_id), 5))
    assert (end["outcome"], end["exitCode"]) == ("failed", 5)

    result = ok(run_cli("result", "--url", url, "-o", "json", "--", task_id), 5).json()
    assert result == {
        "error": {"code": -32603, "message": "rpc_error: deliberate protocol failure"}
    }
    pretty = ok(run_cli("result", "--url", url, "-o", "pretty", "--", task_id), 5)
    assert "rpc_error: deliberate protocol failure" in pretty.stdout
    assert "-32603" in pretty.stdout


def test_tool_error_is_completed_and_shown_as_an_error(
    run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    """On 2026-07-28 an `isError` result is `completed` (exit 0); cancelling it then is 11."""
    url = fastmcp4_server.url
    task_id = create(run_cli, url, "tool_error")["taskId"]

    result = ok(run_cli("result", "--url", url, "-o", "json", "--", task_id)).json()
    assert result["isError"] is True
    assert result["content"][0]["text"] == "tool_error: deliberate tool failure"
    pretty = ok(run_cli("result", "--url", url, "-o", "pretty", "--", task_id))
    assert "tool_error: deliberate tool failure" in pretty.stdout

    end = end_line(ok(run_cli("watch", "--url", url, "-o", "ndjson", "--result", "--", task_id)))
    assert end["outcome"] == "completed" and end["result"]["isError"] is True

    cancelled = ok(run_cli("cancel", "--url", url, "--", task_id), 11)
    assert_one_line_error(cancelled)
    assert "already ended: completed" in cancelled.stderr


def test_cancel_a_running_task(run_cli: RunCli, fastmcp4_server: ServerProcess) -> None:
    url = fastmcp4_server.url
    task_id = create(run_cli, url, "slow_echo", "text=x", "seconds=20")["taskId"]

    cancel = ok(run_cli("cancel", "--url", url, "-o", "json", "--", task_id))
    assert "cancellation" in cancel.stderr and "requested" in cancel.stderr
    assert cancel.json() == {"taskId": task_id, "cancelRequested": True}

    end = end_line(ok(run_cli("watch", "--url", url, "-o", "ndjson", "--", task_id), 8))
    assert (end["outcome"], end["exitCode"]) == ("cancelled", 8)

    again = ok(run_cli("cancel", "--url", url, "--", task_id), 11)
    assert_one_line_error(again)
    assert "already ended: cancelled" in again.stderr
    ok(run_cli("result", "--url", url, "-o", "json", "--", task_id), 8)


def test_unknown_task_id_exits_9(run_cli: RunCli, fastmcp4_server: ServerProcess) -> None:
    url = fastmcp4_server.url
    create(run_cli, url, "slow_echo", "text=x", "seconds=0.5")  # detect + remember first
    task_id = "nope-" + secrets.token_hex(4)
    for command in ("get", "result", "cancel"):
        result = ok(run_cli(command, "--url", url, "-o", "json", "--", task_id), 9)
        assert_one_line_error(result)
        assert f"Task {task_id} not found" in result.stderr
    end = end_line(ok(run_cli("watch", "--url", url, "-o", "ndjson", "--", task_id), 9))
    assert end["outcome"] == "unknown"


def test_task_id_beginning_with_dash(run_cli: RunCli, fastmcp4_server: ServerProcess) -> None:
    """Ids come from `secrets.token_urlsafe` and may begin with `-`: after `--` such an id
    reaches the server (its own "not found" text comes back, exit 9); without `--` the usage
    error (exit 2) says to put `--` before it."""
    url = fastmcp4_server.url
    task_id = "-kE3" + secrets.token_hex(8)  # one dash: "--x" ids get no hint (see report)
    reached = ok(run_cli("get", "--url", url, "-o", "json", "--", task_id), 9)
    assert_one_line_error(reached)
    assert f"Task {task_id} not found" in reached.stderr

    refused = ok(run_cli("get", "--url", url, task_id), 2)
    assert "put -- before it" in refused.stderr and task_id in refused.stderr


def test_list_shows_the_task_book(run_cli: RunCli, fastmcp4_server: ServerProcess) -> None:
    url = fastmcp4_server.url
    first = create(run_cli, url, "slow_echo", "text=a", "seconds=0.5")["taskId"]
    second = create(run_cli, url, "tool_error")["taskId"]
    listed = ok(run_cli("list", "--url", url, "-o", "json"))
    notes = [line for line in listed.stderr.splitlines() if line.strip()]
    assert notes == [
        "mcptask: mcp-2026-07-28 has no method to list tasks; showing the task book's tasks"
    ]
    ids = {t["taskId"] for t in listed.json()["tasks"]}
    assert {first, second} <= ids


def test_ttl_is_a_usage_error(run_cli: RunCli, proxy4: RecordingProxy) -> None:
    result = ok(run_cli("call", "tool_error", "--ttl", "60000", "--url", proxy4.url), 2)
    assert_one_line_error(result)
    assert "the server owns the ttl on 2026-07-28" in result.stderr
    assert "tools/call" not in proxy4.methods()


def test_input_required_shows_input_requests(
    run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    url = fastmcp4_server.url
    task_id = create(run_cli, url, "ask_name")["taskId"]
    task = wait_for_status(run_cli, url, task_id, "input_required")
    [(key, request)] = task["inputRequests"].items()
    assert key.startswith(f"{task_id}:")  # fastmcp-tasks rewrites the tool's own key
    assert request["method"] == "elicitation/create"
    assert request["params"]["requestedSchema"]["required"] == ["name"]
    pretty = ok(run_cli("get", "--url", url, "-o", "pretty", "--", task_id))
    assert "input requests" in pretty.stdout and "What is your name?" in pretty.stdout

    end = end_line(ok(run_cli("watch", "--url", url, "-o", "ndjson", "--", task_id), 6))
    assert (end["outcome"], end["exitCode"]) == ("input_required", 6)
    ok(run_cli("result", "--url", url, "--", task_id), 6)


def test_non_ascii_task_id_is_encoded_in_mcp_name(
    run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    """A value that cannot ride in a header goes as `=?base64?...?=` (SEP-2243); the server
    decodes it and matches the body (else it would answer -32020): the lookup says not found."""
    result = ok(run_cli("get", "tâche\u00e9", "--url", fastmcp4_server.url, "-p", V2026), 9)
    assert "Task tâcheé not found" in result.stderr


# -- detection and forcing ---------------------------------------------------------------------


def test_everything_server_still_detects_2025(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    url = everything_server.url
    task = ok(run_cli("call", "simulate-research-query", "topic=x", "--url", url, "-o", "json"))
    assert task.json()["protocol"] == V2025
    again = ok(run_cli("get", "--url", url, "-o", "json", "--", task.json()["taskId"]))
    assert again.json()["protocol"] == V2025  # remembered, session reused


def test_protocol_can_be_forced(
    run_cli: RunCli, proxy4: RecordingProxy, everything_server: ServerProcess
) -> None:
    forced = ok(run_cli("call", "tool_error", "-p", V2026, "--url", proxy4.url, "-o", "json"))
    assert forced.json()["protocol"] == V2026
    # no detection when forced; `server/discover` says whether the server makes tasks at all
    # (issue 25: without the tasks extension, `call` makes a plain call); the tool list is
    # read for the arguments' checks
    assert proxy4.methods() == ["server/discover", "tools/list", "tools/call"]

    as_2025 = ok(run_cli("call", "tool_error", "--task", "-p", V2025, "--url", proxy4.url), 4)
    assert_one_line_error(as_2025)
    assert "does not support tasks (MCP 2025-11-25)" in as_2025.stderr
    # without --task, a server that does no tasks gets a plain call (isError: exit 5)
    plain = ok(run_cli("call", "tool_error", "-p", V2025, "--url", proxy4.url, "-o", "json"), 5)
    assert plain.json()["isError"] is True

    wrong = ok(
        run_cli(
            "call",
            "simulate-research-query",
            "topic=x",
            "-p",
            V2026,
            "--url",
            everything_server.url,
        ),
        4,
    )
    assert_one_line_error(wrong)
    assert f"try -p {V2025}" in wrong.stderr


def test_a_session_means_mcp_2025(run_cli: RunCli, proxy4: RecordingProxy) -> None:
    """`--session` names an MCP 2025-11-25 session (2026-07-28 has none): it is not probed
    for 2026-07-28 (which would drop the session), the request goes in 2025-11-25 with it."""
    r = run_cli("get", "t-1", "--url", proxy4.url, "--session", "s-123", "-o", "json")
    assert r.code != 0 and "Traceback" not in r.stderr, r  # fastmcp 4 knows no such session
    assert "server/discover" not in proxy4.methods()
    (sent,) = [q for q in proxy4.requests if q.method == "tasks/get"]
    assert sent.headers["mcp-session-id"] == ["s-123"]
    assert sent.headers["mcp-protocol-version"] == ["2025-11-25"]


def test_connection_refused_is_one_line_exit_4(run_cli: RunCli) -> None:
    result = run_cli("get", "x", "--url", f"http://127.0.0.1:{free_port()}/mcp")
    assert result.code == 4, result
    assert_one_line_error(result)
    assert "connection refused" in result.stderr


# A fastmcp 4 server that speaks 2026-07-28 but has no tasks extension (so no task tools).
NO_TASKS_SERVER = """
import argparse
from fastmcp import FastMCP

mcp = FastMCP("mcptask-fastmcp4-notasks")

@mcp.tool()
async def echo(text: str) -> str:
    return f"echo: {text}"

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
mcp.run(transport="http", host="127.0.0.1", port=parser.parse_args().port, show_banner=False)
"""


@pytest.fixture(scope="module")
def no_tasks_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    script = tmp_path_factory.mktemp("notasks") / "server.py"
    script.write_text(NO_TASKS_SERVER)
    python = str(fastmcp4_python())
    server = start_on_free_port(lambda port: [python, str(script), "--port", str(port)])
    try:
        yield server
    finally:
        server.stop()


def test_2026_server_without_the_tasks_extension(
    run_cli: RunCli, no_tasks_server: ServerProcess
) -> None:
    """Detection falls back to 2025-11-25 (the server may do tasks there); this one does
    none: `call` makes a plain call, and `--task` says plainly that there are no tasks.
    Forced to 2026-07-28, `call` makes a plain call at once (the server said it has no tasks
    extension; issue 25) and `get` explains that the tasks extension is missing."""
    url = no_tasks_server.url
    auto = ok(run_cli("call", "echo", "text=hi", "--url", url, "-o", "json"))
    assert auto.json()["content"][0]["text"] == "echo: hi"
    forced = ok(run_cli("call", "echo", "text=hi", "--task", "--url", url), 4)
    assert_one_line_error(forced)
    assert "does not support tasks" in forced.stderr

    plain = ok(run_cli("call", "echo", "text=hi", "--url", url, "-p", V2026, "-o", "json"))
    assert plain.json()["content"][0]["text"] == "echo: hi"
    assert "without creating a task" not in plain.stderr  # a plain call from the start

    get = ok(run_cli("get", "x", "--url", url, "-p", V2026), 4)
    assert_one_line_error(get)
    assert f"does not offer the MCP tasks extension ({TASKS_EXT})" in get.stderr


# -- probe, error mapping, wire parsing: in process --------------------------------------------


def _rpc(url: str) -> RpcClient:
    return RpcClient(HttpTransport(HttpOptions(url=url)))


async def _probe_real(url: str) -> str | None:
    rpc = _rpc(url)
    try:
        return await probe(rpc, url)
    finally:
        await rpc.aclose()


def test_probe_against_real_servers(
    fastmcp4_server: ServerProcess,
    everything_server: ServerProcess,
    fastmcp3_server: ServerProcess,
    a2a_server: ServerProcess,
) -> None:
    assert asyncio.run(_probe_real(fastmcp4_server.url)) == V2026
    assert asyncio.run(_probe_real(everything_server.url)) == V2025  # 400 -32000
    assert asyncio.run(_probe_real(fastmcp3_server.url)) == V2025  # 400 -32600
    # 200 -32601: not 2026-07-28, and not yet MCP: the A2A probe, then `initialize`, decide
    with pytest.raises(Unrecognised) as caught:
        asyncio.run(_probe_real(a2a_server.url))
    assert caught.value.confirm and not caught.value.decisive
    with pytest.raises(TransportError, match="connection refused"):
        asyncio.run(_probe_real(f"http://127.0.0.1:{free_port()}/mcp"))


Handler = Callable[[httpx.Request], httpx.Response]


def _mocked(handler: Handler, url: str = "http://mock.test/mcp") -> tuple[RpcClient, list[Any]]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(record))
    return RpcClient(HttpTransport(HttpOptions(url=url), client=client)), seen


def _rpc_error(status: int, code: int, message: str, data: Any = None) -> Handler:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return lambda request: httpx.Response(
        status, json={"jsonrpc": "2.0", "id": json.loads(request.content)["id"], "error": error}
    )


def _result(result: Any) -> Handler:
    return lambda request: httpx.Response(
        200, json={"jsonrpc": "2.0", "id": json.loads(request.content)["id"], "result": result}
    )


DISCOVER_TASKS = {
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}, "extensions": {TASKS_EXT: {}}},
    "resultType": "complete",
}
DISCOVER_NO_TASKS = {
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}, "extensions": {"io.modelcontextprotocol/ui": {}}},
    "resultType": "complete",
}


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (_result(DISCOVER_TASKS), V2026),
        (_result(DISCOVER_NO_TASKS), V2025),
        (_result({**DISCOVER_NO_TASKS, "supportedVersions": ["2026-07-28", "2025-11-25"]}), V2025),
        (_rpc_error(400, -32600, "Bad Request: Missing session ID"), V2025),
        (_rpc_error(400, -32000, "Bad Request: Server not initialized"), V2025),
        (_rpc_error(400, -32022, "Unsupported", {"supported": ["2025-11-25"]}), V2025),
        (_rpc_error(200, -32601, "Method not found"), "confirm"),
        (_rpc_error(400, -32601, "Unknown method 'server/discover'"), "confirm"),
        (lambda r: httpx.Response(404, json={"detail": "Not Found"}), "unrecognised"),
        (lambda r: httpx.Response(404, text="no such page"), "unrecognised"),
        (lambda r: httpx.Response(405, text=""), "unrecognised"),
        (lambda r: httpx.Response(200, html="<html><body>hello</body></html>"), "unrecognised"),
        (_result({"something": "else"}), None),
    ],
    ids=[
        "2026-tasks",
        "2026-no-tasks",
        "2026-and-2025-no-tasks",
        "fastmcp3",
        "everything",
        "unsupported-2025-ok",
        "a2a-200-32601",
        "a2a-400-32601",
        "agno-404",
        "404-text",
        "405",
        "html",
        "not-discover",
    ],
)
def test_probe_decisions(handler: Handler, expected: str | None) -> None:
    """`unrecognised`: not JSON-RPC at all (`Unrecognised`, decisive: not MCP); `confirm`:
    -32601, which says only "not 2026-07-28" (`Unrecognised` asking for `initialize`)."""
    rpc, seen = _mocked(handler)
    if expected in ("unrecognised", "confirm"):
        with pytest.raises(Unrecognised) as caught:
            asyncio.run(probe(rpc, rpc.url))
        assert caught.value.decisive == (expected == "unrecognised")
        assert caught.value.confirm == (expected == "confirm")
    else:
        assert asyncio.run(probe(rpc, rpc.url)) == expected
    [request] = seen  # at most one request
    assert request.headers["MCP-Protocol-Version"] == "2026-07-28"
    assert request.headers["Mcp-Method"] == "server/discover"
    body = json.loads(request.content)
    assert body["method"] == "server/discover"
    assert body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


def test_probe_over_stdio_takes_any_json_rpc_error_as_mcp_2025() -> None:
    """server-everything over stdio answers `server/discover` with a plain -32601."""
    rpc, _ = _mocked(_rpc_error(200, -32601, "Method not found"))
    assert asyncio.run(probe(rpc, "stdio:node dist/index.js stdio")) == V2025


def test_probe_errors_propagate() -> None:
    rpc, _ = _mocked(_rpc_error(401, -32001, "unauthorized"))
    with pytest.raises(AuthError):
        asyncio.run(probe(rpc, rpc.url))
    rpc, _ = _mocked(_rpc_error(400, -32022, "Unsupported", {"supported": ["2027-01-01"]}))
    with pytest.raises(ServerError, match="server supports protocol versions: 2027-01-01"):
        asyncio.run(probe(rpc, rpc.url))


def test_probe_does_not_keep_a_refusals_session_id() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no session"}}
        return httpx.Response(400, json=body, headers={"mcp-session-id": "fresh-from-refusal"})

    rpc, _ = _mocked(handler)
    assert asyncio.run(probe(rpc, rpc.url)) == V2025
    assert rpc.transport.session_id is None


@pytest.mark.parametrize(
    ("code", "data", "text"),
    [
        (-32020, None, "a proxy between mcptask and the server may be changing"),
        (
            -32021,
            {"requiredCapabilities": {"extensions": {TASKS_EXT: {}}}},
            f"requires a client capability mcptask does not declare for tasks/get "
            f"(extensions.{TASKS_EXT})",
        ),
        (
            -32022,
            {"supported": ["2025-11-25"], "requested": "2026-07-28"},
            "server supports protocol versions: 2025-11-25",
        ),
        (-32601, "tasks/get", f"does not offer the MCP tasks extension ({TASKS_EXT})"),
    ],
)
def test_2026_errors_become_plain_messages(code: int, data: Any, text: str) -> None:
    rpc, _ = _mocked(_rpc_error(400, code, "server words", data))
    proto = Mcp2026(rpc, rpc.url)
    with pytest.raises(ServerError) as info:
        asyncio.run(proto.get(TaskRef("t1")))
    assert text in info.value.message
    assert type(info.value) is ServerError  # not transient, exit 4, no "server error -320xx"
    if code == -32022:
        assert info.value.hint == f"try -p {V2025}"


def _task(**fields: Any) -> dict[str, Any]:
    return {"taskId": "t1", "status": "working", "resultType": "complete", **fields}


def test_result_fetches_tasks_get_when_the_inline_result_is_missing() -> None:
    done = _task(status="completed", result={"content": [{"type": "text", "text": "ok"}]})
    rpc, seen = _mocked(_result(done))
    proto = Mcp2026(rpc, rpc.url)
    stale = normalize(_task(status="completed"), server=rpc.url)
    result = asyncio.run(proto.result(TaskRef("t1"), stale))
    assert result.payload == done["result"] and result.error is None
    assert [json.loads(r.content)["method"] for r in seen] == ["tasks/get"]
    assert seen[0].headers["Mcp-Name"] == "t1"

    # a task that already carries its outcome costs no request
    failed = normalize(
        _task(status="failed", error={"code": -32603, "message": "boom"}), server=rpc.url
    )
    assert asyncio.run(proto.result(TaskRef("t1"), failed)).error == {
        "code": -32603,
        "message": "boom",
    }
    assert len(seen) == 1


def test_failed_task_without_error_object_is_still_failed() -> None:
    rpc, _ = _mocked(_result(_task(status="failed", statusMessage="it broke")))
    proto = Mcp2026(rpc, rpc.url)
    task = normalize(_task(status="failed", statusMessage="it broke"), server=rpc.url)
    result = asyncio.run(proto.result(TaskRef("t1"), task))
    assert result.error == {"message": "it broke"}


def test_unknown_task_on_cancel_is_not_found() -> None:
    rpc, seen = _mocked(_rpc_error(400, -32602, "Task t1 not found"))
    with pytest.raises(TaskNotFound, match="Task t1 not found"):
        asyncio.run(Mcp2026(rpc, rpc.url).cancel(TaskRef("t1")))
    assert [json.loads(r.content)["method"] for r in seen] == ["tasks/get"]  # looked up first


def test_wire_task_is_validated_and_read_leniently() -> None:
    task = normalize(
        _task(
            ttlMs=None,
            pollIntervalMs="soon",
            statusMessage=3,
            inputRequests=["not", "a", "map"],
            extra={"kept": True},
        ),
        server="s",
    )
    assert (task.ttl, task.pollInterval, task.statusMessage, task.inputRequests) == (
        None,
        None,
        "3",
        None,
    )
    assert task.raw["extra"] == {"kept": True} and task.protocol == V2026
    assert normalize(_task(status="Canceled"), server="s").status == "cancelled"
    for bad in (_task(status=None), _task(taskId=7), {"status": "working"}, ["x"]):
        with pytest.raises(ProtocolError):
            normalize(bad, server="s")


@pytest.mark.parametrize(
    ("value", "sent"),
    [
        ("slow_echo", "slow_echo"),
        ("-kE3abc_", "-kE3abc_"),
        ("a b", "a b"),
        (" edge", "=?base64?IGVkZ2U=?="),
        ("tâche", "=?base64?dMOiY2hl?="),
        ("a\r\nX-Evil: 1", "=?base64?YQ0KWC1FdmlsOiAx?="),
        ("=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="),
    ],
)
def test_mcp_name_header_value_encoding(value: str, sent: str) -> None:
    assert header_value(value) == sent


def test_client_meta_is_a_fresh_copy() -> None:
    first = mcp2026.client_meta()
    first["io.modelcontextprotocol/clientCapabilities"]["extensions"].clear()
    assert (
        TASKS_EXT
        in mcp2026.client_meta()["io.modelcontextprotocol/clientCapabilities"]["extensions"]
    )


def test_module_is_registered() -> None:
    from mcptask import protocols

    assert protocols.protocol_class(V2026) is Mcp2026
    assert Mcp2026.can_list is False
