"""Scripted servers for behaviours real implementations showed and the suite's real servers do
not (issue 18): standard library only, on 127.0.0.1, in a thread of the test process.

Every scenario gets its own path prefix (``http://127.0.0.1:PORT/<id>/``), so one server serves
many tests and each scenario keeps its own state:

- ``agent(version, **quirks)``: a small A2A agent (0.3 or 1.0 JSON-RPC) with an agent card, tasks
  that finish after ``seconds``, questions, cancel, list, subscriptions; each quirk is one
  behaviour seen on some real agent (see `Quirks`). ``rest_without_push`` makes it speak 1.0
  over HTTP+JSON instead (send, get, cancel), without the push config routes.
- ``endless_card()``: an endpoint whose agent-card URL answers with an endless event stream.
- ``stream_questions()``: an MCP 2025-11-25 server that sends a task's ``elicitation/create`` on
  the session's standalone GET stream (with the task's ``related-task`` ``_meta``) instead of on
  ``tasks/result``.

Everything is recorded in ``requests`` (scenario id, HTTP method, path, JSON-RPC method, headers).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import struct
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast

Json = dict[str, Any]
CARD_PATH = "/.well-known/agent-card.json"
RELATED_TASK = "io.modelcontextprotocol/related-task"
TERMINAL = {"completed", "canceled", "failed", "rejected"}
#: the answers an agent with ``refuse_unknown_city`` takes
CITIES = {"paris", "oslo", "lima"}


@dataclass
class Quirks:
    #: the card names ``<prefix>/rpc`` as the endpoint; the prefix itself answers 404 HTML
    endpoint_elsewhere: bool = False
    #: an unknown method (the MCP probe) gets HTTP 500, and the next request on that
    #: keep-alive connection is read and dropped without an answer
    dead_after_500: bool = False
    #: every request after the first on a keep-alive connection is dropped (an agent that
    #: closes idle connections as the next request arrives)
    drop_reused: bool = False
    #: ListTasks (1.0) answers -32004 UnsupportedOperation
    list_unsupported: bool = False
    #: cancelling a finished task answers the task instead of -32002
    cancel_answers_task: bool = False
    #: questions (``ask ...``) carry a data part (a function call) besides their text
    ask_with_data: bool = False
    #: a question carries only the data part, no text
    ask_data_only: bool = False
    #: an answer starts a new task (completed) instead of continuing the old one
    answer_new_task: bool = False
    #: the subscription's first event is a status update, not the Task (legal in 0.3)
    status_first: bool = False
    #: an ``input-required`` status carries no message: the question is the agent's last
    #: message in the task's ``history`` (issue 25)
    question_in_history: bool = False
    #: an answer that is not a city the agent knows is refused with a JSON-RPC error (-32602)
    #: and the task keeps waiting (issue 25)
    refuse_unknown_city: bool = False
    #: A2A 1.0 over HTTP+JSON instead of JSON-RPC (`POST /message:send`, `GET /tasks/{id}`,
    #: `POST /tasks/{id}:cancel`, errors as `google.rpc.Status`), its card saying
    #: `pushNotifications: true` and `streaming: false`, yet no `/tasks/{id}/
    #: pushNotificationConfigs` routes: 404 HTML, as a binding mounted without them
    rest_without_push: bool = False
    #: a message that starts with ``hi`` is answered with a Message and no task (A2A allows it:
    #: an agent that replies at once); every message, with ``message_only`` (no task support)
    message_reply: bool = False
    message_only: bool = False


@dataclass
class _Task:
    task_id: str
    context_id: str
    text: str
    created: float
    seconds: float
    asking: bool = False
    answer_parts: list[Any] | None = None
    cancelled: bool = False


@dataclass
class Agent:
    version: str
    quirks: Quirks
    seconds: float
    prefix: str = ""
    tasks: dict[str, _Task] = field(default_factory=dict)
    #: the parts of every answer received (a message with a taskId)
    answers: list[list[Any]] = field(default_factory=list)

    @property
    def v10(self) -> bool:
        return self.version == "1.0"

    # -- wire shapes --------------------------------------------------------------------------

    def state(self, word: str) -> str:
        if not self.v10:
            return word
        return "TASK_STATE_" + {"input-required": "INPUT_REQUIRED"}.get(word, word.upper())

    def part(self, text: str | None = None, data: Any = None) -> Json:
        if data is not None:
            return {"data": data} if self.v10 else {"kind": "data", "data": data}
        return {"text": text} if self.v10 else {"kind": "text", "text": text}

    def role(self, who: str) -> str:
        return f"ROLE_{who.upper()}" if self.v10 else who

    def message(self, parts: list[Json], t: _Task) -> Json:
        out: Json = {
            "messageId": uuid.uuid4().hex,
            "role": "ROLE_AGENT" if self.v10 else "agent",
            "parts": parts,
            "taskId": t.task_id,
            "contextId": t.context_id,
        }
        if not self.v10:
            out["kind"] = "message"
        return out

    def word(self, t: _Task, now: float) -> str:
        if t.cancelled:
            return "canceled"
        if t.asking and t.answer_parts is None:
            return "input-required"
        return "completed" if now - t.created >= t.seconds else "working"

    def task_json(self, t: _Task, now: float | None = None) -> Json:
        now = time.time() if now is None else now
        word = self.word(t, now)
        status: Json = {"state": self.state(word)}
        history: list[Json] = []
        if word == "input-required":
            parts = [] if self.quirks.ask_data_only else [self.part("Which city?")]
            if self.quirks.ask_with_data or self.quirks.ask_data_only:
                call = {"name": "get_weather", "arguments": {"city": None, "unit": "celsius"}}
                parts.append(self.part(data=call))
            if self.quirks.question_in_history:
                history = [
                    {**self.message([self.part(t.text)], t), "role": self.role("user")},
                    self.message([self.part("thinking")], t),
                    self.message(parts, t),
                ]
            else:
                status["message"] = self.message(parts, t)
        elif word == "working":
            status["message"] = self.message([self.part("step 1/1")], t)
        elif word == "canceled":
            status["message"] = self.message([self.part("cancelled by request")], t)
        out: Json = {"id": t.task_id, "contextId": t.context_id, "status": status}
        if history:
            out["history"] = history
        if word == "completed":
            out["artifacts"] = [
                {"artifactId": "a1", "name": "echo", "parts": [self.part(f"echo: {t.text}")]}
            ]
        if not self.v10:
            out["kind"] = "task"
        return out

    def card(self, base: str) -> Json:
        endpoint = (
            f"{base}{self.prefix}/rpc"
            if self.quirks.endpoint_elsewhere
            else base + self.prefix + "/"
        )
        card: Json = {
            "name": "odd agent",
            "description": "a scripted A2A agent (mcptask tests)",
            "version": "1.0.0",
            "capabilities": {"streaming": True},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [],
        }
        if self.quirks.rest_without_push:
            card["capabilities"] = {"streaming": False, "pushNotifications": True}
            card["supportedInterfaces"] = [
                {"url": endpoint, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
            ]
        elif self.v10:
            card["supportedInterfaces"] = [
                {"url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ]
        else:
            card.update(url=endpoint, preferredTransport="JSONRPC", protocolVersion="0.3.0")
        return card

    # -- methods ------------------------------------------------------------------------------

    def dispatch(self, method: str, params: Json) -> Json:
        """The JSON-RPC result; raises `_Rpc` for an error."""
        send = "SendMessage" if self.v10 else "message/send"
        names = {
            send: self._send,
            ("GetTask" if self.v10 else "tasks/get"): self._get,
            ("CancelTask" if self.v10 else "tasks/cancel"): self._cancel,
        }
        if self.v10:
            names["ListTasks"] = self._list
        if method not in names:
            raise _Rpc(-32601, f"Method not found: {method}")
        return names[method](params)

    def _lookup(self, params: Json) -> _Task:
        t = self.tasks.get(str(params.get("id")))
        if t is None:
            raise _Rpc(-32001, "Task not found")
        return t

    def _send(self, params: Json) -> Json:
        message = params.get("message") or {}
        parts = message.get("parts") or []
        text = " ".join(str(p.get("text")) for p in parts if isinstance(p, dict) and "text" in p)
        now = time.time()
        if message.get("taskId"):
            old = self._lookup({"id": message["taskId"]})
            self.answers.append(parts)
            if self.quirks.refuse_unknown_city and text.strip().lower() not in CITIES:
                raise _Rpc(-32602, f"unknown city {text.strip()!r}: try Paris, Oslo or Lima")
            if self.quirks.answer_new_task:
                t = _Task(uuid.uuid4().hex, old.context_id, text or "answer", now, 0.0)
                self.tasks[t.task_id] = t
            else:
                old.answer_parts = parts
                old.created, old.seconds = now, 0.0
                t = old
        elif self.quirks.message_only or (
            self.quirks.message_reply and text.lower().startswith("hi")
        ):
            context = str(message.get("contextId") or uuid.uuid4().hex)
            reply: Json = {
                "messageId": uuid.uuid4().hex,
                "contextId": context,
                "role": self.role("agent"),
                "parts": [self.part(f"hello back: {text}")],
            }
            if not self.v10:
                reply["kind"] = "message"
            return {"message": reply} if self.v10 else reply
        else:
            context = str(message.get("contextId") or uuid.uuid4().hex)
            t = _Task(uuid.uuid4().hex, context, text, now, self.seconds)
            t.asking = text.lower().startswith("ask")
            self.tasks[t.task_id] = t
        body = self.task_json(t, now)
        return {"task": body} if self.v10 else body

    def _get(self, params: Json) -> Json:
        return self.task_json(self._lookup(params))

    def _cancel(self, params: Json) -> Json:
        t = self._lookup(params)
        if self.word(t, time.time()) in TERMINAL:
            if self.quirks.cancel_answers_task:
                return self.task_json(t)
            raise _Rpc(-32002, "Task cannot be canceled")
        t.cancelled = True
        return self.task_json(t)

    def _list(self, params: Json) -> Json:
        if self.quirks.list_unsupported:
            raise _Rpc(-32004, "Unsupported operation")
        tasks = [self.task_json(t) for t in self.tasks.values()]
        return {"tasks": tasks, "nextPageToken": "", "pageSize": len(tasks)}

    def events(self, params: Json) -> list[tuple[float, Json]]:
        """A subscription's events: (delay before it, the event)."""
        t = self._lookup(params)
        remaining = max(0.0, t.created + t.seconds - time.time())
        status = {
            "taskId": t.task_id,
            "contextId": t.context_id,
            "status": {"state": self.state("working")},
            "final": False,
        }
        done = {**status, "status": {"state": self.state("completed")}, "final": True}
        if not self.v10:
            status["kind"] = done["kind"] = "status-update"
            first: Json = status if self.quirks.status_first else self.task_json(t)
            return [(0.0, first), (remaining, done)]
        wrap = {"statusUpdate": status}
        first = wrap if self.quirks.status_first else {"task": self.task_json(t)}
        return [(0.0, first), (remaining, {"statusUpdate": done})]


class _Rpc(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class StreamQuestions:
    """MCP 2025-11-25 whose tool `ask` makes a task that asks its question on the session's GET
    stream; `answers` holds what came back."""

    session: str = "odd-session"
    tasks: dict[str, str] = field(default_factory=dict)  # task id -> status
    asked: set[str] = field(default_factory=set)
    answers: list[Json] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # task id -> the name given
    cond: threading.Condition = field(default_factory=threading.Condition)
    request_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(0))
    pending: dict[Any, str] = field(default_factory=dict)  # request id -> task id

    def task_json(self, task_id: str) -> Json:
        return {
            "taskId": task_id,
            "status": self.tasks[task_id],
            "createdAt": "2026-12-01T08:00:00Z",
            "lastUpdatedAt": "2026-12-01T08:00:00Z",
            "ttl": 60_000,
            "pollInterval": 300,
        }

    def question(self, task_id: str) -> Json:
        req_id = next(self.request_ids)
        self.pending[req_id] = task_id
        return {
            "jsonrpc": "2.0",
            "id": req_id,
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "What is your name?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
                "_meta": {RELATED_TASK: {"taskId": task_id}},
            },
        }

    def dispatch(self, method: str, params: Json) -> Json:
        with self.cond:
            if method == "initialize":
                return {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {
                        "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
                        "tools": {},
                    },
                    "serverInfo": {"name": "odd-stream-questions", "version": "1"},
                }
            if method == "tools/list":
                tool = {
                    "name": "ask",
                    "inputSchema": {"type": "object", "properties": {}},
                    "execution": {"taskSupport": "required"},
                }
                return {"tools": [tool]}
            if method == "tools/call":
                task_id = uuid.uuid4().hex
                self.tasks[task_id] = "input_required"
                self.cond.notify_all()
                return {"task": self.task_json(task_id)}
            task_id = str(params.get("taskId"))
            if task_id not in self.tasks:
                raise _Rpc(-32602, "Task not found")
            if method == "tasks/get":
                return self.task_json(task_id)
            if method == "tasks/result":  # holds the answer until the task ends
                while self.tasks[task_id] == "input_required":
                    self.cond.wait(0.1)
                name = self.names.get(task_id, "nobody")
                return {
                    "content": [{"type": "text", "text": f"Hello, {name}!"}],
                    "isError": False,
                    "_meta": {RELATED_TASK: {"taskId": task_id}},
                }
            if method == "tasks/cancel":
                self.tasks[task_id] = "cancelled"
                self.cond.notify_all()
                return self.task_json(task_id)
        raise _Rpc(-32601, f"Method not found: {method}")

    def take_answer(self, message: Json) -> None:
        with self.cond:
            task_id = self.pending.pop(message.get("id"), None)
            if task_id is None:
                return
            self.answers.append(message)
            result = message.get("result") or {}
            content = result.get("content") or {}
            if result.get("action") == "accept" and isinstance(content.get("name"), str):
                self.names[task_id] = content["name"]
            self.tasks[task_id] = "completed"
            self.cond.notify_all()

    def next_question(self, stopping: threading.Event) -> Json | None:
        """The next question to send on the GET stream (each task asks once)."""
        with self.cond:
            while not stopping.is_set():
                for task_id, status in self.tasks.items():
                    if status == "input_required" and task_id not in self.asked:
                        self.asked.add(task_id)
                        return self.question(task_id)
                self.cond.wait(0.1)
        return None


@dataclass
class Request:
    scenario: str
    http_method: str
    path: str
    method: str | None
    headers: dict[str, str]


class OddServer:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.base = ""
        self.scenarios: dict[str, Any] = {}
        self.requests: list[Request] = []
        #: bytes an endless answer sent before the client hung up, by scenario id
        self.sent: dict[str, int] = {}
        self.stopping = threading.Event()
        self._ids = itertools.count(1)
        self.lock = threading.Lock()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> OddServer:
        httpd = _HTTPServer((self.host, 0), OddHandler)
        httpd.odd = self
        self._httpd = httpd
        self.base = f"http://{self.host}:{httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=lambda: httpd.serve_forever(poll_interval=0.05), name="odd", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OddServer:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _add(self, name: str, scenario: Any) -> str:
        sid = f"s{next(self._ids)}-{name}"
        with self.lock:
            self.scenarios[sid] = scenario
        return sid

    def agent(self, version: str = "1.0", *, seconds: float = 0.5, **quirks: bool) -> str:
        """A scripted agent; returns the URL a person would type (the card's base)."""
        agent = Agent(version, Quirks(**quirks), seconds)
        sid = self._add("agent" + version, agent)
        agent.prefix = f"/{sid}"
        return f"{self.base}/{sid}/"

    def endless_card(self) -> str:
        return f"{self.base}/{self._add('endless-card', 'endless-card')}/"

    def stream_questions(self) -> str:
        return f"{self.base}/{self._add('stream-questions', StreamQuestions())}/mcp"

    def scenario(self, url: str) -> Any:
        return self.scenarios[url.split("/")[3]]

    def seen(self, url: str) -> list[Request]:
        sid = url.split("/")[3]
        with self.lock:
            return [r for r in self.requests if r.scenario == sid]


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    odd: OddServer


class OddHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "odd/1"
    #: set on this connection: drop the next request without answering
    dead = False
    answered = 0

    @property
    def odd(self) -> OddServer:
        return cast(_HTTPServer, self.server).odd

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- writing ------------------------------------------------------------------------------

    def send_body(self, status: int, body: bytes, ctype: str, *, close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(body)
            self.wfile.flush()
        self.answered += 1

    def send_json(self, obj: Any, status: int = 200, **kw: Any) -> None:
        self.send_body(status, json.dumps(obj).encode(), "application/json", **kw)

    def drop(self) -> None:
        """Close the connection without answering (with a reset)."""
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        self.close_connection = True

    def open_stream(self, extra: dict[str, str] | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def event(self, data: Any) -> bool:
        try:
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
            return True
        except OSError:
            return False

    # -- reading ------------------------------------------------------------------------------

    def _route(self) -> tuple[str, str, Any]:
        path = self.path.split("?")[0]
        parts = path.strip("/").split("/", 1)
        sid = parts[0] if parts else ""
        rest = "/" + parts[1] if len(parts) > 1 else "/"
        with self.odd.lock:
            scenario = self.odd.scenarios.get(sid)
        return sid, rest, scenario

    def _record(self, sid: str, rest: str, method: str | None) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.odd.lock:
            self.odd.requests.append(Request(sid, self.command, rest, method, headers))

    def _gate(self, scenario: Any) -> bool:
        """Connection quirks before answering: True when the request was dropped."""
        if not isinstance(scenario, Agent):
            return False
        if self.dead or (scenario.quirks.drop_reused and self.answered > 0):
            self.drop()
            return True
        return False

    def do_GET(self) -> None:
        sid, rest, scenario = self._route()
        self._record(sid, rest, None)
        if self._gate(scenario):
            return
        if scenario == "endless-card" and rest == CARD_PATH:
            return self._endless(sid)
        if isinstance(scenario, Agent) and rest == CARD_PATH:
            return self.send_json(scenario.card(self.odd.base))
        if isinstance(scenario, Agent) and scenario.quirks.rest_without_push:
            return self._rest(scenario, rest, {})
        if isinstance(scenario, StreamQuestions):
            return self._question_stream(scenario)
        page = b"<html><body><h1>404 Not Found</h1></body></html>"
        self.send_body(404, page, "text/html")

    def _endless(self, sid: str) -> None:
        self.open_stream()
        sent = 0
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"tick": 0}}
        while not self.odd.stopping.is_set() and sent < 64 * 1024 * 1024:
            chunk = f"data: {json.dumps(note)}\n\n".encode() * 64
            try:
                self.wfile.write(chunk)
                self.wfile.flush()
            except OSError:
                break
            sent += len(chunk)
            time.sleep(0.005)
        self.odd.sent[sid] = sent

    def _question_stream(self, scenario: StreamQuestions) -> None:
        if self.headers.get("Mcp-Session-Id") != scenario.session:
            return self.send_json({"error": "no session"}, 400)
        self.open_stream()
        with contextlib.suppress(OSError):
            self.wfile.write(b": open\n\n")
            self.wfile.flush()
        while not self.odd.stopping.is_set():
            question = scenario.next_question(self.odd.stopping)
            if question is None or not self.event(question):
                return

    def do_DELETE(self) -> None:
        sid, rest, scenario = self._route()
        self._record(sid, rest, None)
        if isinstance(scenario, Agent) and scenario.quirks.rest_without_push:
            return self._rest(scenario, rest, {})
        self.send_body(200, b"", "text/plain")

    def do_POST(self) -> None:
        sid, rest, scenario = self._route()
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            msg = json.loads(body)
        except ValueError:
            msg = None
        method = msg.get("method") if isinstance(msg, dict) else None
        self._record(sid, rest, method)
        if self._gate(scenario):
            return
        if isinstance(scenario, Agent) and scenario.quirks.rest_without_push:
            return self._rest(scenario, rest, msg if isinstance(msg, dict) else {})
        if not isinstance(msg, dict):
            return self.send_body(404, b"<html>404</html>", "text/html")
        if isinstance(scenario, StreamQuestions):
            return self._mcp(scenario, msg)
        if not isinstance(scenario, Agent):
            return self.send_body(404, b"<html><h1>404 Not Found</h1></html>", "text/html")
        if scenario.quirks.endpoint_elsewhere and rest != "/rpc":
            return self.send_body(404, b"<html><h1>404 Not Found</h1></html>", "text/html")
        self._agent(scenario, msg)

    def _agent(self, agent: Agent, msg: Json) -> None:
        method = str(msg.get("method"))
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if method in ("SubscribeToTask", "tasks/resubscribe"):
            return self._subscribe(agent, msg, params)
        with self.odd.lock:
            try:
                result = agent.dispatch(method, params)
                answer: Json = {"jsonrpc": "2.0", "id": msg.get("id"), "result": result}
            except _Rpc as exc:
                if exc.code == -32601 and agent.quirks.dead_after_500:
                    self.dead = True  # the connection stays open, and is dead
                    page = b"<html><h1>500 Internal Server Error</h1></html>"
                    return self.send_body(500, page, "text/html")
                error = {"code": exc.code, "message": exc.message}
                answer = {"jsonrpc": "2.0", "id": msg.get("id"), "error": error}
        self.send_json(answer)

    def _rest(self, agent: Agent, rest: str, body: Json) -> None:
        """The HTTP+JSON binding's send, get and cancel; anything else 404 HTML."""
        verb = self.command
        call: tuple[str, Json] | None = None
        if verb == "POST" and rest == "/message:send":
            call = ("SendMessage", body)
        elif verb == "GET" and rest.startswith("/tasks/") and rest.count("/") == 2:
            call = ("GetTask", {"id": rest.removeprefix("/tasks/")})
        elif verb == "POST" and rest.startswith("/tasks/") and rest.endswith(":cancel"):
            call = ("CancelTask", {"id": rest.removeprefix("/tasks/").removesuffix(":cancel")})
        if call is None:
            return self.send_body(404, b"<html><h1>404 Not Found</h1></html>", "text/html")
        with self.odd.lock:
            try:
                result = agent.dispatch(*call)
            except _Rpc as exc:
                reason = {-32001: "TASK_NOT_FOUND", -32002: "TASK_NOT_CANCELABLE"}
                status = 404 if exc.code == -32001 else 400
                info = {"reason": reason.get(exc.code, "INVALID_PARAMS")}
                error = {"code": status, "message": exc.message, "details": [info]}
                return self.send_json({"error": error}, status)
        self.send_json(result)

    def _subscribe(self, agent: Agent, msg: Json, params: Json) -> None:
        with self.odd.lock:
            try:
                events = agent.events(params)
            except _Rpc as exc:
                error = {"code": exc.code, "message": exc.message}
                return self.send_json({"jsonrpc": "2.0", "id": msg.get("id"), "error": error})
        self.open_stream()
        for delay, event in events:
            if self.odd.stopping.wait(delay):
                return
            if not self.event({"jsonrpc": "2.0", "id": msg.get("id"), "result": event}):
                return

    def _mcp(self, scenario: StreamQuestions, msg: Json) -> None:
        if "method" not in msg:  # a response to one of the server's requests
            scenario.take_answer(msg)
            return self.send_body(202, b"", "application/json")
        if "id" not in msg:
            return self.send_body(202, b"", "application/json")
        method = str(msg["method"])
        if method != "initialize" and self.headers.get("Mcp-Session-Id") != scenario.session:
            err = {"code": -32000, "message": "Bad Request: no session"}
            return self.send_json({"jsonrpc": "2.0", "id": msg["id"], "error": err}, 400)
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        try:
            answer: Json = {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "result": scenario.dispatch(method, params),
            }
        except _Rpc as exc:
            error = {"code": exc.code, "message": exc.message}
            answer = {"jsonrpc": "2.0", "id": msg["id"], "error": error}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Mcp-Session-Id", scenario.session)
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(data)
            self.wfile.flush()
