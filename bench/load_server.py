"""A fast local MCP task server for the benchmarks (standard library only): MCP 2025-11-25 and
MCP 2026-07-28 with the tasks extension, on the same port.

MCP 2025-11-25: just enough for mcptask: `initialize` (tasks capability, `Mcp-Session-Id`),
notifications (202), `tools/list`, `tools/call` with `task` (creates a task), `tasks/get`,
`tasks/result`, `tasks/list`, `tasks/cancel`. A task is `working` until its terminal time, then
`completed`; its state is computed when asked, so no timer runs per task. Requests without a
session (such as mcptask's `server/discover` probe without the 2026 header) get HTTP 400 with a
JSON-RPC error, as a 2025-11-25 server answers.

MCP 2026-07-28 (a request with the header `MCP-Protocol-Version: 2026-07-28`): no sessions;
`server/discover` (the tasks extension), `tools/list`, `tools/call` (answers a task,
`resultType: "task"`), `tasks/get` (`resultType: "complete"`, `ttlMs`, `pollIntervalMs`, the
result inline once completed), `tasks/cancel` and `tasks/update` (empty acks); `tasks/result`,
`tasks/list` and `subscriptions/listen` are 404 -32601, an unknown task 400 -32602, as
fastmcp 4.1.4 answers. Tasks made with `/admin/create` are reachable in both versions.

HTTP/1.1 keep-alive on a raw `asyncio.Protocol` with minimal parsing, one process: it uses a
few tens of microseconds of CPU per request (see `--self-test`), so it is not what limits a
watch of 1,000 tasks.

Side channel (same port, outside the MCP path), times are `time.monotonic()` seconds, which on
Linux is one clock for every process of the machine:
- `GET /stats`: every task's `tasks/get` arrival times (`gets`), its terminal time
  (`terminalAt`), the arrival of the first get that answered terminal (`observedAt`);
- `POST /admin/create` `{"n", "duration", "pollIntervalMs", "stagger"}`: a new session with n
  tasks, answering `{"session", "ids", "createdAt"}`; task i ends at
  `createdAt + duration + stagger * i / n` (spread completions over `stagger` seconds);
- `POST /admin/restart` `{"session"}`: start that session's task clocks again from now;
- `POST /admin/reset`: forget every session and task; `POST /admin/shutdown`: stop.

Answers: in one write with `TCP_NODELAY` (the default); with `--two-writes`, headers and body in
two writes with Nagle on, as Python's `http.server` answers (the body waits for the client's ACK of
the headers: about 40 ms on a kept-alive connection unless the client ACKs at once); with
`--limit-rps R`, MCP requests past R a second get HTTP 429 with `Retry-After: 1`. `/stats` also
counts the 429s (`refused429`), the connections accepted (`connections`) and the most open at once
(`peakConnections`).

Run it alone: `python bench/load_server.py [--port 8765] [--precreate 1000 --duration 10]`
prints the URL, the session and the task ids. `--self-test` measures its own throughput.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

VERSION = "2025-11-25"
VERSION_2026 = "2026-07-28"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
MCP_PATH = "/mcp"
PAGE_SIZE = 100
TOOL = "sleep"
TOOLS = [
    {
        "name": TOOL,
        "description": "Wait for `seconds` (default: the server's --duration); runs as a task.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
        "execution": {"taskSupport": "required"},
    }
]
INIT_RESULT = {
    "protocolVersion": VERSION,
    "capabilities": {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}},
    "serverInfo": {"name": "mcptask-bench-load", "version": "1"},
}
REASONS = {
    200: "OK",
    202: "Accepted",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    429: "Too Many Requests",
}
Json = dict[str, Any]


def iso(mono: float) -> str:
    """A monotonic time as ISO 8601 UTC (what the wire shows)."""
    wall = mono + (time.time() - time.monotonic())
    text = datetime.fromtimestamp(wall, UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


@dataclass(slots=True)
class Task:
    task_id: str
    session: str
    created: float
    terminal_at: float
    poll_ms: int
    ttl: int = 3_600_000
    cancelled_at: float | None = None
    gets: list[float] = field(default_factory=list)
    observed_at: float | None = None
    created_iso: str = ""
    ended_iso: str = ""

    def to_json_2026(self, now: float) -> Json:
        """The task as MCP 2026-07-28 sends it (`tasks/get`, `tools/call`)."""
        old = self.to_json(now)
        out: Json = {
            "taskId": self.task_id,
            "status": old["status"],
            "statusMessage": old["statusMessage"],
            "createdAt": old["createdAt"],
            "lastUpdatedAt": old["lastUpdatedAt"],
            "ttlMs": self.ttl,
            "pollIntervalMs": self.poll_ms,
        }
        if old["status"] == "completed":
            out["result"] = {
                "content": [{"type": "text", "text": f"slept until {self.terminal_at:.3f}"}],
                "isError": False,
            }
        return out

    def status(self, now: float) -> str:
        if self.cancelled_at is not None:
            return "cancelled"
        return "completed" if now >= self.terminal_at else "working"

    def to_json(self, now: float) -> Json:
        status = self.status(now)
        if status == "working":
            message, updated = "working", self.created_iso
        else:
            if not self.ended_iso:
                end = self.cancelled_at if self.cancelled_at is not None else self.terminal_at
                self.ended_iso = iso(end)
            message, updated = ("done" if status == "completed" else "cancelled"), self.ended_iso
        return {
            "taskId": self.task_id,
            "status": status,
            "statusMessage": message,
            "createdAt": self.created_iso,
            "lastUpdatedAt": updated,
            "ttl": self.ttl,
            "pollInterval": self.poll_ms,
        }


class RpcError(Exception):
    def __init__(self, code: int, message: str, http_status: int = 200) -> None:
        super().__init__(message)
        self.code, self.message, self.http_status = code, message, http_status


#: the session of tasks made over MCP 2026-07-28 (which has none)
NO_SESSION = ""
#: stands for the session of a 2026-07-28 request (a value no session id takes)
NEW_PROTOCOL = "\x00" + VERSION_2026


class State:
    """Sessions, tasks and the counters; everything runs on the one event loop thread."""

    def __init__(
        self, duration: float, poll_ms: int, two_writes: bool = False, limit_rps: float = 0.0
    ) -> None:
        self.duration = duration
        self.poll_ms = poll_ms
        #: answer in two `send` calls (headers, then body) with Nagle on, as Python's
        #: `http.server` does: the body waits for the client's ACK of the headers
        self.two_writes = two_writes
        #: answer MCP requests past this many a second (a token bucket of one second's worth)
        #: with HTTP 429 and `Retry-After: 1`; 0: no limit
        self.limit_rps = limit_rps
        self.bucket = limit_rps
        self.bucket_at = time.monotonic()
        self.refused = 0
        self.connections = 0
        self.open_connections = 0
        self.peak_connections = 0
        self.sessions: set[str] = set()
        self.tasks: dict[str, Task] = {}
        self.requests = 0
        self.methods: dict[str, int] = {}
        self.stop = asyncio.Event()

    def new_session(self) -> str:
        sid = uuid.uuid4().hex
        self.sessions.add(sid)
        return sid

    def create(self, sid: str, n: int, duration: float, poll_ms: int, stagger: float) -> list[str]:
        now = time.monotonic()
        created_iso = iso(now)
        ids = []
        for i in range(n):
            end = now + duration + (stagger * i / n if n else 0.0)
            t = Task(uuid.uuid4().hex, sid, now, end, poll_ms, created_iso=created_iso)
            self.tasks[t.task_id] = t
            ids.append(t.task_id)
        return ids

    def stats(self) -> Json:
        return {
            "now": time.monotonic(),
            "requests": self.requests,
            "methods": self.methods,
            "refused429": self.refused,
            "connections": self.connections,
            "peakConnections": self.peak_connections,
            "tasks": {
                t.task_id: {
                    "session": t.session,
                    "createdAt": t.created,
                    "terminalAt": t.terminal_at,
                    "pollInterval": t.poll_ms,
                    "gets": t.gets,
                    "observedAt": t.observed_at,
                }
                for t in self.tasks.values()
            },
        }

    # -- MCP ------------------------------------------------------------------------------------

    def lookup(self, sid: str, params: Json) -> Task:
        t = self.tasks.get(str(params.get("taskId")))
        if t is None or t.session != sid:
            raise RpcError(-32602, "Task not found")
        return t

    def dispatch(self, sid: str, method: str, params: Json, arrived: float) -> Json:
        if method == "tasks/get":
            t = self.lookup(sid, params)
            t.gets.append(arrived)
            answer = t.to_json(arrived)
            if t.observed_at is None and answer["status"] != "working":
                t.observed_at = arrived
            return answer
        if method == "initialize":
            return INIT_RESULT
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": TOOLS}
        if method == "tools/call":
            if params.get("name") != TOOL:
                raise RpcError(-32602, f"Unknown tool: {params.get('name')}")
            if not isinstance(params.get("task"), dict):
                raise RpcError(-32601, "Task augmentation required")
            args = params.get("arguments") or {}
            seconds = args.get("seconds", self.duration) if isinstance(args, dict) else None
            if not isinstance(seconds, int | float) or isinstance(seconds, bool):
                raise RpcError(-32602, "Invalid arguments: seconds must be a number")
            (tid,) = self.create(sid, 1, float(seconds), self.poll_ms, 0.0)
            return {"task": self.tasks[tid].to_json(arrived)}
        if method == "tasks/list":
            mine = [t for t in self.tasks.values() if t.session == sid]
            cursor = params.get("cursor")
            start = int(cursor) if isinstance(cursor, str) and cursor.isdigit() else 0
            page: Json = {"tasks": [t.to_json(arrived) for t in mine[start : start + PAGE_SIZE]]}
            if start + PAGE_SIZE < len(mine):
                page["nextCursor"] = str(start + PAGE_SIZE)
            return page
        if method == "tasks/cancel":
            t = self.lookup(sid, params)
            if t.status(arrived) != "working":
                raise RpcError(
                    -32602, f"Cannot cancel task in terminal status: {t.status(arrived)}"
                )
            t.cancelled_at = arrived
            return t.to_json(arrived)
        raise RpcError(-32601, f"Method not found: {method}")

    def dispatch_2026(self, method: str, params: Json, arrived: float) -> Json:
        """MCP 2026-07-28: no sessions; every result carries `resultType`."""
        if method == "tasks/get":
            t = self.tasks.get(str(params.get("taskId")))
            if t is None:
                raise RpcError(-32602, "Task not found", 400)
            t.gets.append(arrived)
            answer = t.to_json_2026(arrived)
            if t.observed_at is None and answer["status"] != "working":
                t.observed_at = arrived
            return {"resultType": "complete", **answer}
        if method in ("tasks/cancel", "tasks/update"):
            t = self.tasks.get(str(params.get("taskId")))
            if t is None:
                raise RpcError(-32602, "Task not found", 400)
            if method == "tasks/cancel" and t.status(arrived) == "working":
                t.cancelled_at = arrived
            return {"resultType": "complete"}
        if method == "server/discover":
            return {
                "resultType": "complete",
                "supportedVersions": [VERSION_2026],
                "capabilities": {"tools": {}, "extensions": {TASKS_EXTENSION: {}}},
                "serverInfo": INIT_RESULT["serverInfo"],
            }
        if method == "ping":
            return {"resultType": "complete"}
        if method == "tools/list":
            return {"resultType": "complete", "tools": TOOLS}
        if method == "tools/call":
            if params.get("name") != TOOL:
                raise RpcError(-32602, f"Unknown tool: {params.get('name')}", 400)
            args = params.get("arguments") or {}
            seconds = args.get("seconds", self.duration) if isinstance(args, dict) else None
            if not isinstance(seconds, int | float) or isinstance(seconds, bool):
                raise RpcError(-32602, "Invalid arguments: seconds must be a number", 400)
            (tid,) = self.create(NO_SESSION, 1, float(seconds), self.poll_ms, 0.0)
            return {"resultType": "task", **self.tasks[tid].to_json_2026(arrived)}
        raise RpcError(-32601, f"Method not found: {method}", 404)

    def result_json(self, t: Task) -> Json:
        return {
            "content": [{"type": "text", "text": f"slept until {t.terminal_at:.3f}"}],
            "isError": False,
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": t.task_id}},
        }


def response(status: int, body: bytes, extra: str = "", close: bool = False) -> bytes:
    head = f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}\r\nContent-Length: {len(body)}\r\n"
    if body:
        head += "Content-Type: application/json\r\n"
    if close:
        head += "Connection: close\r\n"
    return (head + extra + "\r\n").encode() + body


def rpc_error(code: int, message: str, msg_id: Any = None) -> bytes:
    err = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
    return json.dumps(err).encode()


class Conn(asyncio.Protocol):
    """One HTTP/1.1 connection; requests are answered in order (no pipelining reorder)."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None
        self.busy = False  # a tasks/result is waiting: later requests queue behind it
        self.queue: list[tuple[bytes, bytes, str | None, bytes, float, bool]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        st = self.state
        st.connections += 1
        st.open_connections += 1
        st.peak_connections = max(st.peak_connections, st.open_connections)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            # asyncio sets TCP_NODELAY on every connection: two writes turn it off again
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0 if st.two_writes else 1)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.state.open_connections -= 1

    def data_received(self, data: bytes) -> None:
        arrived = time.monotonic()
        buf = self.buf
        buf += data
        while True:
            i = buf.find(b"\r\n\r\n")
            if i < 0:
                return
            lines = bytes(buf[:i]).split(b"\r\n")
            try:
                method, path, _ = lines[0].split(b" ", 2)
            except ValueError:
                self.send(response(400, b"", close=True), close=True)
                return
            length, sid, close, chunked = 0, None, False, False
            version: bytes | None = None
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"mcp-session-id":
                    sid = value.strip().decode("latin-1")
                elif name == b"mcp-protocol-version":
                    version = value.strip()
                elif name == b"connection":
                    close = value.strip().lower() == b"close"
                elif name == b"transfer-encoding":
                    chunked = True
            if chunked:
                self.send(response(411, b"", close=True), close=True)
                return
            end = i + 4 + length
            if len(buf) < end:
                return
            body = bytes(buf[i + 4 : end])
            del buf[:end]
            if version == VERSION_2026.encode():
                sid = NEW_PROTOCOL  # no sessions in 2026-07-28
            item = (method, path, sid, body, arrived, close)
            if self.busy:
                self.queue.append(item)
            else:
                self.handle(*item)

    def send(self, data: bytes, close: bool = False) -> None:
        if self.transport is not None:
            if self.state.two_writes:
                cut = data.find(b"\r\n\r\n") + 4
                self.transport.write(data[:cut])
                data = data[cut:]
            if data:
                self.transport.write(data)
            if close:
                self.transport.close()

    def handle(
        self, method: bytes, path: bytes, sid: str | None, body: bytes, arrived: float, close: bool
    ) -> None:
        st = self.state
        path_only = path.split(b"?", 1)[0]
        if path_only != MCP_PATH.encode():
            self.admin(method, path_only, body, close)
            return
        st.requests += 1
        if st.limit_rps > 0:
            st.bucket = min(st.limit_rps, st.bucket + (arrived - st.bucket_at) * st.limit_rps)
            st.bucket_at = arrived
            if st.bucket < 1:
                st.refused += 1
                err = b'{"error":"too many requests"}'
                self.send(response(429, err, "Retry-After: 1\r\n", close), close)
                return
            st.bucket -= 1
        if method != b"POST":
            self.send(response(405, rpc_error(-32000, "Method not allowed"), close=close), close)
            return
        try:
            msg = json.loads(body)
        except ValueError:
            self.send(response(400, rpc_error(-32700, "Parse error"), close=close), close)
            return
        if not isinstance(msg, dict):
            self.send(response(400, rpc_error(-32600, "Invalid Request"), close=close), close)
            return
        rpc_method = msg.get("method")
        msg_id = msg.get("id")
        st.methods[str(rpc_method)] = st.methods.get(str(rpc_method), 0) + 1
        if sid == NEW_PROTOCOL:
            self.handle_2026(msg, arrived, close)
            return
        extra = ""
        if rpc_method == "initialize" and "id" in msg:
            sid = st.new_session()
            extra = f"Mcp-Session-Id: {sid}\r\n"
        elif sid is None:
            err = rpc_error(-32000, "Bad Request: No valid session ID provided", msg_id)
            self.send(response(400, err, close=close), close)
            return
        elif sid not in st.sessions:
            err = rpc_error(-32001, "Session not found", msg_id)
            self.send(response(404, err, close=close), close)
            return
        if "id" not in msg or rpc_method is None:  # a notification or a response
            self.send(response(202, b"", close=close), close)
            return
        params = msg.get("params") or {}
        if not isinstance(params, dict) or not isinstance(rpc_method, str):
            err = rpc_error(-32602, "Invalid params", msg_id)
            self.send(response(200, err, close=close), close)
            return
        if rpc_method == "tasks/result":
            self.result(sid, params, msg_id, close)
            return
        try:
            out = {
                "jsonrpc": "2.0",
                "id": msg_id,
                "result": st.dispatch(sid, rpc_method, params, arrived),
            }
            data = json.dumps(out, separators=(",", ":")).encode()
        except RpcError as exc:
            data = rpc_error(exc.code, exc.message, msg_id)
        self.send(response(200, data, extra, close), close)

    def handle_2026(self, msg: Json, arrived: float, close: bool) -> None:
        rpc_method, msg_id = msg.get("method"), msg.get("id")
        if "id" not in msg or rpc_method is None:  # a notification or a response
            self.send(response(202, b"", close=close), close)
            return
        params = msg.get("params") or {}
        if not isinstance(params, dict) or not isinstance(rpc_method, str):
            self.send(
                response(400, rpc_error(-32602, "Invalid params", msg_id), close=close), close
            )
            return
        try:
            out = {
                "jsonrpc": "2.0",
                "id": msg_id,
                "result": self.state.dispatch_2026(rpc_method, params, arrived),
            }
            status, data = 200, json.dumps(out, separators=(",", ":")).encode()
        except RpcError as exc:
            status, data = exc.http_status, rpc_error(exc.code, exc.message, msg_id)
        self.send(response(status, data, close=close), close)

    def result(self, sid: str, params: Json, msg_id: Any, close: bool) -> None:
        """`tasks/result` blocks until the task is terminal (the spec's behaviour)."""
        st = self.state
        try:
            t = st.lookup(sid, params)
        except RpcError as exc:
            self.send(response(200, rpc_error(exc.code, exc.message, msg_id), close=close), close)
            return
        wait = t.terminal_at - time.monotonic()
        if t.cancelled_at is None and wait > 0:
            self.busy = True
            loop = asyncio.get_running_loop()
            loop.call_later(wait, self.result_later, sid, params, msg_id, close)
            return
        if t.cancelled_at is not None:
            data = rpc_error(-32602, "Task was cancelled", msg_id)
        else:
            out = {"jsonrpc": "2.0", "id": msg_id, "result": st.result_json(t)}
            data = json.dumps(out, separators=(",", ":")).encode()
        self.send(response(200, data, close=close), close)

    def result_later(self, sid: str, params: Json, msg_id: Any, close: bool) -> None:
        self.busy = False
        self.result(sid, params, msg_id, close)
        while self.queue and not self.busy:
            self.handle(*self.queue.pop(0))

    def admin(self, method: bytes, path: bytes, body: bytes, close: bool) -> None:
        st = self.state
        if method == b"GET" and path == b"/stats":
            data = json.dumps(st.stats(), separators=(",", ":")).encode()
        elif method == b"POST" and path == b"/admin/create":
            req = json.loads(body or b"{}")
            sid = st.new_session()
            n = int(req.get("n", 1))
            ids = st.create(
                sid,
                n,
                float(req.get("duration", st.duration)),
                int(req.get("pollIntervalMs", st.poll_ms)),
                float(req.get("stagger", 0.0)),
            )
            now = st.tasks[ids[0]].created if ids else time.monotonic()
            data = json.dumps({"session": sid, "ids": ids, "createdAt": now}).encode()
        elif method == b"POST" and path == b"/admin/restart":
            # start a session's tasks' clocks again from now (same durations), forget their polls
            sid = json.loads(body or b"{}").get("session")
            now = time.monotonic()
            for t in st.tasks.values():
                if t.session == sid:
                    t.terminal_at, t.created = now + (t.terminal_at - t.created), now
                    t.created_iso, t.ended_iso = iso(now), ""
                    t.gets, t.observed_at = [], None
            data = json.dumps({"session": sid, "createdAt": now}).encode()
        elif method == b"POST" and path == b"/admin/reset":
            st.sessions.clear()
            st.tasks.clear()
            st.requests = st.refused = st.connections = 0
            st.peak_connections = st.open_connections
            st.methods.clear()
            data = b"{}"
        elif method == b"POST" and path == b"/admin/shutdown":
            st.stop.set()
            data = b"{}"
        else:
            self.send(response(404, b'{"error":"not found"}', close=close), close)
            return
        self.send(response(200, data, close=close), close)


async def serve(
    host: str,
    port: int,
    duration: float,
    poll_ms: int,
    precreate: int,
    stagger: float,
    as_json: bool,
    two_writes: bool = False,
    limit_rps: float = 0.0,
) -> None:
    state = State(duration, poll_ms, two_writes, limit_rps)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Conn(state), host, port, backlog=1024)
    real_port = server.sockets[0].getsockname()[1]
    base = f"http://{host}:{real_port}"
    info: Json = {"url": base + MCP_PATH, "admin": base, "pid": os.getpid()}
    if precreate:
        sid = state.new_session()
        info["session"] = sid
        info["ids"] = state.create(sid, precreate, duration, poll_ms, stagger)
    if as_json:
        print(json.dumps(info), flush=True)
    else:
        print(f"url     {info['url']}\nstats   {base}/stats", flush=True)
        if precreate:
            print(f"session {info['session']}", flush=True)
            print("\n".join(info["ids"]), flush=True)
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, state.stop.set)
    async with server:
        await state.stop.wait()


# -- using it from another script -------------------------------------------------------------


class LoadServer:
    """The load server in a subprocess: `with LoadServer() as s: s.create(...)`."""

    def __init__(
        self,
        duration: float = 10.0,
        poll_ms: int = 1000,
        two_writes: bool = False,
        limit_rps: float = 0.0,
    ) -> None:
        self.duration, self.poll_ms = duration, poll_ms
        self.two_writes, self.limit_rps = two_writes, limit_rps
        self.proc: subprocess.Popen[str] | None = None
        self.url = self.admin = ""
        self.pid = 0

    def __enter__(self) -> LoadServer:
        cmd = [sys.executable, os.path.abspath(__file__), "--json"]
        cmd += ["--duration", str(self.duration), "--poll-interval-ms", str(self.poll_ms)]
        if self.two_writes:
            cmd.append("--two-writes")
        if self.limit_rps:
            cmd += ["--limit-rps", str(self.limit_rps)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        info = json.loads(self.proc.stdout.readline())
        self.url, self.admin, self.pid = info["url"], info["admin"], info["pid"]
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def _call(self, method: str, path: str, body: Json | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.admin + path, data=data, method=method)
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.loads(resp.read())

    def create(self, n: int, duration: float, poll_ms: int, stagger: float = 0.0) -> Json:
        body = {"n": n, "duration": duration, "pollIntervalMs": poll_ms, "stagger": stagger}
        return dict(self._call("POST", "/admin/create", body))

    def restart(self, session: str) -> Json:
        return dict(self._call("POST", "/admin/restart", {"session": session}))

    def stats(self) -> Json:
        return dict(self._call("GET", "/stats"))

    def reset(self) -> None:
        self._call("POST", "/admin/reset", {})

    def cpu_seconds(self) -> float:
        return proc_cpu(self.pid)


def proc_cpu(pid: int) -> float:
    """utime + stime of a live process, from /proc (clock ticks)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- self-test: how many requests a second, and how much CPU each -----------------------------


async def _client(host: str, port: int, path: str, sid: str, tid: str, count: int) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": tid}}
    ).encode()
    req = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Mcp-Session-Id: {sid}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    for _ in range(count):
        writer.write(req)
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        await reader.readexactly(length)
    writer.close()


def self_test(requests: int, connections: int, as_json: bool) -> int:
    with LoadServer(duration=3600) as server:
        made = server.create(connections, 3600, 1000)
        host, port = server.admin.removeprefix("http://").split(":")

        async def run() -> float:
            per = requests // connections
            started = time.perf_counter()
            await asyncio.gather(
                *(
                    _client(host, int(port), MCP_PATH, made["session"], tid, per)
                    for tid in made["ids"]
                )
            )
            return time.perf_counter() - started

        cpu0 = server.cpu_seconds()
        wall = asyncio.run(run())
        cpu = server.cpu_seconds() - cpu0
        served = server.stats()["requests"]
    figures = {
        "requests": served,
        "connections": connections,
        "wallSeconds": round(wall, 3),
        "requestsPerSecond": round(served / wall),
        "serverCpuMicrosPerRequest": round(cpu / served * 1e6, 1),
        "serverMaxRequestsPerCoreSecond": round(served / cpu) if cpu else None,
    }
    if as_json:
        print(json.dumps(figures))
    else:
        print("load server self-test (client and server on the same machine)")
        for k, v in figures.items():
            print(f"  {k:32} {v}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--duration", type=float, default=10.0, help="seconds a task runs")
    p.add_argument("--poll-interval-ms", type=int, default=1000)
    p.add_argument("--precreate", type=int, default=0, help="create N tasks in one session")
    p.add_argument("--stagger", type=float, default=0.0, help="spread their ends over S seconds")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    p.add_argument(
        "--two-writes",
        action="store_true",
        help="answer in two writes, headers then body, with Nagle on (as http.server does)",
    )
    p.add_argument(
        "--limit-rps",
        type=float,
        default=0.0,
        help="answer MCP requests past this many a second with 429 and Retry-After: 1",
    )
    p.add_argument("--self-test", action="store_true", help="measure the server's throughput")
    p.add_argument("--requests", type=int, default=20_000, help="self-test: requests in all")
    p.add_argument("--connections", type=int, default=16, help="self-test: connections")
    a = p.parse_args(argv)
    if a.self_test:
        return self_test(a.requests, a.connections, a.json)
    asyncio.run(
        serve(
            a.host,
            a.port,
            a.duration,
            a.poll_interval_ms,
            a.precreate,
            a.stagger,
            a.json,
            a.two_writes,
            a.limit_rps,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
