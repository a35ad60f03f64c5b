"""An embedded MCP task server (Streamable HTTP, standard library only): MCP 2025-11-25 (tasks
in the core, sessions, push on the session's GET stream), or with ``protocol="2026-07-28"`` MCP
2026-07-28 with the tasks extension (no sessions; push through ``subscriptions/listen`` with
``notifications.taskIds``).

Used by ``mcptask demo`` and by the tests as a small, predictable server. Tasks advance through
their steps by wall-clock time since creation (computed lazily on every access), so no background
worker is needed. Run it alone with ``python -m mcptask.demo.server --port 8765``
(``--protocol 2026-07-28`` for the other version).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast

PROTOCOL_VERSION = "2025-11-25"
VERSION_2026 = "2026-07-28"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "mcptask-demo", "version": "1"}}
PATH = "/mcp"
PAGE_SIZE = 50
RELATED_TASK = "io.modelcontextprotocol/related-task"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
DEFAULT_STEPS = ["Queued", "Collecting sources", "Reading 12 documents"]
DEFAULT_STEPS += ["Drafting report", "Checking citations", "Finalizing"]
TOOLS: list[dict[str, Any]] = [
    {
        "name": "build-report",
        "title": "Build report",
        "description": "Research a topic and write a short report. Slow: always runs as a task.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "topic": {"type": "string", "default": "demo", "description": "What to report on"},
                "fail": {"type": "boolean", "default": False, "description": "End as failed"},
            },
        },
        "execution": {"taskSupport": "required"},
    },
    {
        "name": "echo",
        "description": "Return the given text at once.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
]

INIT_RESULT: dict[str, Any] = {
    "protocolVersion": PROTOCOL_VERSION,
    "capabilities": {
        "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        "tools": {},
    },
    "serverInfo": {"name": "mcptask-demo", "version": "1"},
}
Json = dict[str, Any]


class RpcError(Exception):
    """A JSON-RPC error answered inside a normal (HTTP 200) response."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def iso(ts: float) -> str:
    """ISO 8601 UTC with milliseconds and ``Z``."""
    text = datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def _error(code: int, message: str, msg_id: Any = None) -> Json:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


@dataclass
class _Task:
    task_id: str
    session: str
    topic: str
    fail: bool
    created: float
    ttl: int | None
    cancelled_at: float | None = None
    #: the call's `_meta.progressToken`: progress notifications go with the status pushes
    progress_token: Any = None


class DemoServer:
    """An MCP task server on a daemon thread; ``url`` is valid after :meth:`start`."""

    def __init__(
        self,
        *,
        task_seconds: float = 8.0,
        poll_interval_ms: int = 1000,
        ttl_ms: int = 300_000,
        steps: list[str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        sse: bool = False,
        push: bool = True,
        push_retry_ms: int | None = None,
        push_drop_after: int | None = None,
        protocol: str = PROTOCOL_VERSION,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if protocol not in (PROTOCOL_VERSION, VERSION_2026):
            raise ValueError(f"protocol must be {PROTOCOL_VERSION} or {VERSION_2026}")
        self.protocol = protocol
        #: the tasks' clock (a test's own steps a task one stage at a time)
        self.clock = clock
        #: `subscriptions/listen` requests: the task ids each asked for
        self.task_seconds = max(0.0, task_seconds)
        self.poll_interval_ms = poll_interval_ms
        self.ttl_ms = ttl_ms
        self.steps = list(steps) if steps else list(DEFAULT_STEPS)
        self.host, self.port, self.sse = host, port, sse
        # server push: `notifications/tasks/status` on the session's GET stream
        self.push, self.push_retry_ms, self.push_drop_after = push, push_retry_ms, push_drop_after
        self.listens: list[list[str]] = []
        self.stream_requests: list[dict[str, str]] = []  # headers of every GET stream request
        self._events: dict[str, list[str]] = {}  # session -> notification payloads (id = index+1)
        self._seen: dict[str, tuple[str, str]] = {}  # task -> last (status, message) observed
        self._streams: set[str] = set()  # sessions with an open GET stream
        self.url = ""
        self.requests: list[Json] = []  # {"message": <JSON-RPC>, "headers": {lower-name: value}}
        self._cond = threading.Condition()
        self._sessions: set[str] = set()
        self._tasks: dict[str, _Task] = {}
        self._stopping = False
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> DemoServer:
        if self._httpd is not None:
            raise RuntimeError("DemoServer already started")
        httpd = _HTTPServer((self.host, self.port), _Handler)
        httpd.demo = self
        self._httpd, self.port = httpd, int(httpd.server_address[1])
        self.url = f"http://{self.host}:{self.port}{PATH}"
        serve = lambda: httpd.serve_forever(poll_interval=0.05)  # noqa: E731 (fast stop())
        self._thread = threading.Thread(target=serve, name="mcptask-demo", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> DemoServer:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # sessions (called by the HTTP handler)
    def record(self, message: Json, headers: dict[str, str]) -> None:
        with self._cond:
            self.requests.append({"message": message, "headers": headers})

    def new_session(self) -> str:
        sid = uuid.uuid4().hex
        with self._cond:
            self._sessions.add(sid)
        return sid

    def has_session(self, sid: str) -> bool:
        with self._cond:
            return sid in self._sessions

    def end_session(self, sid: str) -> bool:
        with self._cond:
            if sid not in self._sessions:
                return False
            self._sessions.discard(sid)
            for tid in [t.task_id for t in self._tasks.values() if t.session == sid]:
                del self._tasks[tid]
            self._cond.notify_all()
            return True

    # task state (call with the lock held)
    def _state(self, t: _Task, now: float) -> tuple[str, str, float]:
        """(status, statusMessage, lastUpdated) of a task at time ``now``."""
        if t.cancelled_at is not None:
            return "cancelled", "Cancelled by client", t.cancelled_at
        elapsed = max(0.0, now - t.created)
        if elapsed >= self.task_seconds:
            done = t.created + self.task_seconds
            return (
                ("failed", "Report failed", done) if t.fail else ("completed", "Report ready", done)
            )
        per = self.task_seconds / len(self.steps)
        i = min(int(elapsed / per), len(self.steps) - 1)
        return "working", self.steps[i], t.created + i * per

    def _alive(self, t: _Task | None, sid: str, now: float) -> bool:
        """Whether ``t`` exists for session ``sid``; deletes it once its ttl has run out."""
        if t is None or t.session != sid:
            return False
        status, _, last = self._state(t, now)
        if status not in TERMINAL or t.ttl is None or now < last + t.ttl / 1000:
            return True
        del self._tasks[t.task_id]  # expired tasks simply stop existing
        return False

    def _lookup(self, sid: str, params: Json, now: float) -> _Task:
        t = self._tasks.get(str(params.get("taskId")))
        if not self._alive(t, sid, now):
            raise RpcError(-32602, "Task not found")
        assert t is not None
        return t

    def _task_json(self, t: _Task, now: float) -> Json:
        status, message, last = self._state(t, now)
        return {
            "taskId": t.task_id,
            "status": status,
            "statusMessage": message,
            "createdAt": iso(t.created),
            "lastUpdatedAt": iso(last),
            "ttl": t.ttl,
            "pollInterval": self.poll_interval_ms,
        }

    def _result_json(self, t: _Task) -> Json:
        if t.fail:
            text = f"Report on {t.topic} failed: 3 of 12 citations could not be verified."
        else:
            text = f"Report on {t.topic}: 12 documents read, 4 key findings, all citations checked."
        return {
            "content": [{"type": "text", "text": text}],
            "isError": t.fail,
            "_meta": {RELATED_TASK: {"taskId": t.task_id}},
        }

    # server push
    def observe(self, sid: str) -> list[str]:
        """Append a notification for every task of ``sid`` whose status or message changed
        since last observed; return the session's whole event log."""
        now = self.clock()
        with self._cond:
            log = self._events.setdefault(sid, [])
            for t in list(self._tasks.values()):
                if t.session != sid:
                    continue
                status, message, _ = self._state(t, now)
                if self._seen.get(t.task_id) != (status, message):
                    self._seen[t.task_id] = (status, message)
                    note = {
                        "jsonrpc": "2.0",
                        "method": "notifications/tasks/status",
                        "params": self._task_json(t, now),
                    }
                    log.append(json.dumps(note))
                    if t.progress_token is not None and status in ("working", "completed"):
                        log.append(json.dumps(self._progress_note(t, status, message)))
            return list(log)

    def _progress_note(self, t: _Task, status: str, message: str) -> Json:
        """`notifications/progress` for a task-augmented call: one step per stage, tied to
        the task by its `related-task` `_meta`."""
        total = len(self.steps)
        done = total if status == "completed" else self.steps.index(message) + 1
        return {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {
                "progressToken": t.progress_token,
                "progress": done,
                "total": total,
                "message": message,
                "_meta": {RELATED_TASK: {"taskId": t.task_id}},
            },
        }

    def open_stream(self, sid: str, headers: dict[str, str]) -> bool:
        with self._cond:
            self.stream_requests.append(headers)
            if sid in self._streams:
                return False
            self._streams.add(sid)
            return True

    def close_stream(self, sid: str) -> None:
        with self._cond:
            self._streams.discard(sid)

    @property
    def stopping(self) -> bool:
        return self._stopping

    # JSON-RPC methods
    def dispatch(self, sid: str, method: Any, params: Any) -> Json:
        """Answer one request of an existing session; raises :class:`RpcError`."""
        params = {} if params is None else params
        if not isinstance(params, dict) or not isinstance(method, str):
            raise RpcError(-32602, "Invalid params")
        if method == "initialize":
            return copy.deepcopy(INIT_RESULT)
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": copy.deepcopy(TOOLS)}
        if method == "tools/call":
            return self._call_tool(sid, params)
        if method == "tasks/result":
            return self._wait_result(sid, params)
        with self._cond:
            now = self.clock()
            if method == "tasks/get":
                return self._task_json(self._lookup(sid, params, now), now)
            if method == "tasks/cancel":
                t = self._lookup(sid, params, now)
                status = self._state(t, now)[0]
                if status in TERMINAL:
                    raise RpcError(-32602, f"Cannot cancel task in terminal status: {status}")
                t.cancelled_at = now
                self._cond.notify_all()
                return self._task_json(t, now)
            if method == "tasks/list":
                return self._list(sid, params, now)
        raise RpcError(-32601, f"Method not found: {method}")

    def _call_tool(self, sid: str, params: Json) -> Json:
        name, args, task = params.get("name"), params.get("arguments") or {}, params.get("task")
        if not isinstance(args, dict) or (task is not None and not isinstance(task, dict)):
            raise RpcError(-32602, "Invalid params")
        if name == "echo":
            if task is not None:
                raise RpcError(-32601, "Tool echo does not support task augmentation")
            return {
                "content": [{"type": "text", "text": str(args.get("text", ""))}],
                "isError": False,
            }
        if name != "build-report":
            raise RpcError(-32602, f"Unknown tool: {name}")
        if task is None:  # spec: taskSupport "required" and no task -> -32601
            raise RpcError(-32601, "Task augmentation required")
        topic, fail = args.get("topic", "demo"), args.get("fail", False)
        ttl = task.get("ttl", self.ttl_ms)
        if not isinstance(topic, str) or not isinstance(fail, bool):
            raise RpcError(-32602, "Invalid arguments: topic must be a string, fail a boolean")
        if ttl is not None and (not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0):
            raise RpcError(-32602, "Invalid params: task.ttl must be a non-negative integer")
        with self._cond:
            now = self.clock()
            t = _Task(uuid.uuid4().hex, sid, topic, fail, now, ttl)
            meta = params.get("_meta")
            if isinstance(meta, dict):
                t.progress_token = meta.get("progressToken")
            self._tasks[t.task_id] = t
            return {"task": self._task_json(t, now)}

    def _wait_result(self, sid: str, params: Json) -> Json:
        with self._cond:
            while True:
                now = self.clock()
                t = self._lookup(sid, params, now)
                status = self._state(t, now)[0]
                if status == "cancelled":
                    raise RpcError(-32602, "Task was cancelled")
                if status in TERMINAL:
                    return self._result_json(t)
                if self._stopping:
                    raise RpcError(-32603, "Server is shutting down")
                remaining = t.created + self.task_seconds - now
                self._cond.wait(timeout=min(max(remaining, 0.005), 0.1))

    def _list(self, sid: str, params: Json, now: float) -> Json:
        cursor = params.get("cursor")
        try:
            start = 0 if cursor is None else int(str(cursor))
        except ValueError:
            start = -1
        if start < 0:
            raise RpcError(-32602, "Invalid cursor")
        tasks = [t for t in list(self._tasks.values()) if self._alive(t, sid, now)]
        page: Json = {"tasks": [self._task_json(t, now) for t in tasks[start : start + PAGE_SIZE]]}
        if start + PAGE_SIZE < len(tasks):
            page["nextCursor"] = str(start + PAGE_SIZE)
        return page

    # MCP 2026-07-28 with the tasks extension (no sessions: every task is in session "")
    def dispatch_2026(self, method: Any, params: Any) -> Json:
        """Answer one 2026-07-28 request; raises :class:`RpcError`."""
        params = {} if params is None else params
        if not isinstance(params, dict) or not isinstance(method, str):
            raise RpcError(-32602, "Invalid params")
        if method == "server/discover":
            return {
                "supportedVersions": [VERSION_2026],
                "capabilities": {"tools": {}, "extensions": {TASKS_EXTENSION: {}}},
                "resultType": "complete",
                "_meta": SERVER_INFO,
            }
        if method == "tools/list":
            tools = [{k: v for k, v in t.items() if k != "execution"} for t in TOOLS]
            return {"tools": copy.deepcopy(tools), "resultType": "complete", "_meta": SERVER_INFO}
        if method == "tools/call":
            if params.get("name") == "build-report":  # the server decides: a task
                params = {**params, "task": {}}
            created = self._call_tool("", params)
            if "task" not in created:
                return {**created, "resultType": "complete", "_meta": SERVER_INFO}
            with self._cond:
                t = self._tasks[created["task"]["taskId"]]
                return {**self._task_json_2026(t, self.clock()), "resultType": "task"}
        with self._cond:
            now = self.clock()
            if method == "tasks/get":
                return {**self._task_json_2026(self._lookup("", params, now), now)}
            if method == "tasks/cancel":
                t = self._lookup("", params, now)
                if self._state(t, now)[0] not in TERMINAL:
                    t.cancelled_at = now
                    self._cond.notify_all()
                return {"resultType": "complete", "_meta": SERVER_INFO}
        raise RpcError(-32601, f"Method not found: {method}")

    def _task_json_2026(self, t: _Task, now: float) -> Json:
        status, message, last = self._state(t, now)
        out: Json = {
            "taskId": t.task_id,
            "status": status,
            "statusMessage": message,
            "createdAt": iso(t.created),
            "lastUpdatedAt": iso(last),
            "ttlMs": t.ttl,
            "pollIntervalMs": self.poll_interval_ms,
            "resultType": "complete",
            "_meta": SERVER_INFO,
        }
        if status == "completed":
            result = self._result_json(t)
            del result["_meta"]
            out["result"] = {**result, "resultType": "complete"}
        elif status == "failed":
            out["error"] = {"code": -32603, "message": self._result_json(t)["content"][0]["text"]}
        return out

    def accept_listen(self, params: Any) -> list[str]:
        """The task ids of a `subscriptions/listen` this server accepts: those it knows."""
        notifications = params.get("notifications") if isinstance(params, dict) else None
        wanted = notifications.get("taskIds") if isinstance(notifications, dict) else None
        with self._cond:
            self.listens.append([str(i) for i in wanted] if isinstance(wanted, list) else [])
            now = self.clock()
            return [
                i
                for i in (wanted if isinstance(wanted, list) else [])
                if isinstance(i, str) and self._alive(self._tasks.get(i), "", now)
            ]

    def task_changes(self, ids: list[str], seen: dict[str, tuple[str, str]]) -> list[Json]:
        """`notifications/tasks` params for each of ``ids`` whose status or message changed
        since ``seen`` (updated)."""
        out = []
        with self._cond:
            now = self.clock()
            for task_id in ids:
                t = self._tasks.get(task_id)
                if t is None:
                    continue
                status, message, _ = self._state(t, now)
                if seen.get(task_id) != (status, message):
                    seen[task_id] = (status, message)
                    out.append(self._task_json_2026(t, now))
        return out


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    demo: DemoServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mcptask-demo/1"

    @property
    def demo(self) -> DemoServer:
        return cast(_HTTPServer, self.server).demo

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Json | None = None, sid: str | None = None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        if sid:
            self.send_header("Mcp-Session-Id", sid)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _session(self) -> str | None:
        """The request's valid session id, or None after answering 400/404."""
        sid = self.headers.get("Mcp-Session-Id")
        if not sid:
            self._send(400, _error(-32000, "Bad Request: missing session"))
        elif not self.demo.has_session(sid):
            self._send(404, _error(-32001, "Session not found"))
        else:
            return sid
        return None

    def _off_path(self) -> bool:
        if self.path.split("?")[0] == PATH:
            return False
        self._send(404, _error(-32000, "Not found"))
        return True

    def do_GET(self) -> None:
        if self._off_path():
            return
        demo = self.demo
        if demo.protocol == VERSION_2026:
            return self._send(405, _error(-32000, "Method not allowed: MCP 2026-07-28 has no GET"))
        if not demo.push:
            return self._send(405, _error(-32000, "Method not allowed: no standalone SSE stream"))
        if (sid := self._session()) is None:
            return
        if not demo.open_stream(sid, {k.lower(): v for k, v in self.headers.items()}):
            return self._send(409, _error(-32000, "Conflict: a stream is already open"))
        try:
            self._stream(sid)
        except OSError:
            pass
        finally:
            demo.close_stream(sid)
            self.close_connection = True

    def _stream(self, sid: str) -> None:
        demo = self.demo
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        if demo.push_retry_ms is not None:
            self.wfile.write(f"retry: {demo.push_retry_ms}\n\n".encode())
        self.wfile.write(b": stream open\n\n")
        self.wfile.flush()
        last = self.headers.get("Last-Event-ID")
        log = demo.observe(sid)
        sent = int(last) if last and last.isdigit() else len(log)
        count = 0
        while not demo.stopping:
            for i in range(sent, len(log)):
                self.wfile.write(f"id: {i + 1}\nevent: message\ndata: {log[i]}\n\n".encode())
                self.wfile.flush()
                sent = i + 1
                count += 1
                if demo.push_drop_after is not None and count >= demo.push_drop_after:
                    return  # drop the stream (tests of reconnection)
            time.sleep(0.05)
            log = demo.observe(sid)

    def do_DELETE(self) -> None:
        if not self._off_path() and (sid := self._session()) is not None:
            self.demo.end_session(sid)
            self._send(200)

    def do_POST(self) -> None:
        if self._off_path():
            return None
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            msg = json.loads(raw)
        except ValueError:
            return self._send(400, _error(-32700, "Parse error"))
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return self._send(400, _error(-32600, "Invalid Request"))
        self.demo.record(msg, {k.lower(): v for k, v in self.headers.items()})
        if self.demo.protocol == VERSION_2026:
            return self._post_2026(msg)
        method = msg.get("method")
        if method is None and "result" not in msg and "error" not in msg:
            return self._send(400, _error(-32600, "Invalid Request"))
        is_init = method == "initialize" and "id" in msg
        sid = self.demo.new_session() if is_init else self._session()
        if sid is None:
            return None
        if "id" not in msg or method is None:  # notification or a response from the client
            return self._send(202, sid=sid)
        self._answer(sid, msg["id"], lambda: self.demo.dispatch(sid, method, msg.get("params")))

    def _post_2026(self, msg: Json) -> None:
        if "id" not in msg or "method" not in msg:
            return self._send(202)
        version = self.headers.get("MCP-Protocol-Version")
        if version != VERSION_2026:
            error = _error(-32022, f"Unsupported protocol version: {version}", msg["id"])
            error["error"]["data"] = {"supported": [VERSION_2026], "requested": version}
            return self._send(400, error)
        if msg["method"] == "subscriptions/listen":
            return self._listen(msg)
        try:
            body: Json = {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "result": self.demo.dispatch_2026(msg["method"], msg.get("params")),
            }
        except RpcError as e:
            status = 404 if e.code == -32601 else 400
            return self._send(status, _error(e.code, e.message, msg["id"]))
        self._send(200, body)

    def _listen(self, msg: Json) -> None:
        """`subscriptions/listen`: the acknowledgement (the ids accepted), then each accepted
        task's `notifications/tasks` at every change, until the server stops (or after
        ``push_drop_after`` notifications: a dropped stream)."""
        demo = self.demo
        if not demo.push:
            return self._send(404, _error(-32601, "Method not found: subscriptions/listen"))
        accepted = demo.accept_listen(msg.get("params"))
        meta = {SUBSCRIPTION_ID: msg["id"]}
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def frame(method: str, params: Json) -> bytes:
            note = {"jsonrpc": "2.0", "method": method, "params": {**params, "_meta": meta}}
            return f"event: message\ndata: {json.dumps(note)}\n\n".encode()

        seen: dict[str, tuple[str, str]] = {}
        count = 0
        try:
            ack = {"notifications": {"taskIds": accepted}}
            self.wfile.write(frame("notifications/subscriptions/acknowledged", ack))
            self.wfile.flush()
            demo.task_changes(accepted, seen)  # the state as of now: the client has it
            while not demo.stopping:
                for task in demo.task_changes(accepted, seen):
                    self.wfile.write(frame("notifications/tasks", task))
                    self.wfile.flush()
                    count += 1
                    if demo.push_drop_after is not None and count >= demo.push_drop_after:
                        return  # drop the stream (tests of listening again)
                time.sleep(0.05)
        except OSError:
            pass

    def _answer(self, sid: str, msg_id: Any, compute: Callable[[], Json]) -> None:
        """Run ``compute`` and answer as JSON, or as SSE (priming event first) in SSE mode."""
        if self.demo.sse:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Mcp-Session-Id", sid)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                self.wfile.write(f"id: {uuid.uuid4().hex}\ndata: \n\n".encode())
                self.wfile.flush()
            except OSError:
                return
        try:
            body: Json = {"jsonrpc": "2.0", "id": msg_id, "result": compute()}
        except RpcError as e:
            body = _error(e.code, e.message, msg_id)
        if not self.demo.sse:
            return self._send(200, body, sid)
        event = f"event: message\nid: {uuid.uuid4().hex}\ndata: {json.dumps(body)}\n\n"
        try:
            self.wfile.write(event.encode())
            self.wfile.flush()
        except OSError:
            pass


def main(argv: list[str] | None = None) -> int:
    """Serve until Ctrl-C; print the URL first."""
    from mcptask.errors import ExitCode

    p = argparse.ArgumentParser(prog="python -m mcptask.demo.server", description=__doc__)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--task-seconds", type=float, default=8.0)
    p.add_argument("--poll-interval-ms", type=int, default=1000)
    p.add_argument("--ttl-ms", type=int, default=300_000)
    p.add_argument("--sse", action="store_true", help="answer as text/event-stream")
    p.add_argument("--protocol", default=PROTOCOL_VERSION, choices=[PROTOCOL_VERSION, VERSION_2026])
    args = p.parse_args(argv)
    server = DemoServer(**vars(args))  # the option names are the constructor's keywords
    try:
        server.start()
    except OSError as e:
        print(f"error: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return ExitCode.INTERNAL
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return ExitCode.OK


if __name__ == "__main__":
    raise SystemExit(main())
