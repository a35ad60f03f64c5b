"""A scripted, hostile MCP 2025-11-25 server for fault-injection tests (standard library only).

It runs on 127.0.0.1 on a free port, in a thread of the test process. Each test asks for a
*scenario* and gets a URL of its own (``http://127.0.0.1:PORT/<id>/mcp``): the path selects the
scenario, so one server serves many tests and every scenario keeps its own counters.

A scenario says, per method, what to answer to the n-th request: a list of *answers*, the last
one repeating. An answer is a task (a dict, sent as a JSON-RPC result), or one of the faults
below (a callable that gets the request handler and the JSON-RPC request)::

    with FaultServer() as fs:
        url = fs.url(get=[task(status="working"), html(502), task(status="completed")])
        url = fs.preset("html-502")

Slow faults: ``hang``, ``slow``, ``trickle`` (a whole answer, one byte at a time) and
``keepalive_sse`` (keep-alive comments for ever); ``echo_headers`` leaks what it was sent (into
an error or a result); ``Scenario.session`` is the ``Mcp-Session-Id`` sent (bytes go raw).

Wire-level faults (for the poll pool, transports/poll_pool.py): ``wire`` (bytes as they are,
status line included), ``wire_answer`` (a JSON-RPC answer with a raw status line and extra
header lines), ``keepalive`` (an answer that keeps the connection open, or closes it anyway),
``one_per_connection`` (a connection's second request finds it closed), ``huge_chunked``,
``endless_head`` and ``endless_trailer``. ``Request.raw_headers`` keeps every header line as
sent (repeats included); the listen backlog is 128 (a pool opens up to 100 connections at once).

`initialize` answers normally (with an ``Mcp-Session-Id``) unless the scenario gives ``init``;
notifications get 202. Everything is recorded in ``fs.requests`` (scenario id, method, headers,
arrival time), so tests can check pacing and which headers reached which origin.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import re
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast

Json = dict[str, Any]
Answer = Callable[["FaultHandler", Json], None] | Json
#: a method's answers in order (the last repeats), or such lists by task id
Answers = list[Answer] | dict[str, list[Answer]]

SESSION = "fault-session-1"
TASK_ID = "t-1"
MIB = 1024 * 1024
INIT_RESULT: Json = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}},
    "serverInfo": {"name": "fault-server", "version": "1"},
}
#: JSON-RPC method -> the scenario field holding its answers
FIELDS = {
    "initialize": "init",
    "tasks/get": "get",
    "tasks/result": "result",
    "tasks/cancel": "cancel",
    "tasks/list": "list",
    "tools/list": "tools",
    "tools/call": "call",
}

#: escape sequences and control bytes a hostile server might put in text, each followed by a
#: marker word that must never appear right after the sequence in pretty output
HOSTILE: dict[str, str] = {
    "osc52": "\x1b]52;c;ZWNobyBwd25lZA==\x07",  # clipboard write
    "title": "\x1b]0;pwned-title\x07",  # window title
    "title_st": "\x1b]2;pwned-title2\x1b\\",  # window title, ST-terminated
    "clear": "\x1b[2J\x1b[H",  # clear screen, cursor home
    "csi8": "\x9b31m",  # 8-bit CSI
    "dsr": "\x1b[6n",  # device status report (makes the terminal type back)
    "dcs": "\x1bP+q544e\x1b\\",  # DCS request
    "cr": "\r",  # overwrite the line
    "bs": "\x08\x08\x08",  # backspaces
    "bidi": "\u202e",  # right-to-left override
    "nul": "\x00",
    "bell": "\x07",
}


def hostile_text(prefix: str = "msg") -> str:
    """Text with every hostile sequence, each followed by a marker ``<prefix>-<name>``."""
    return " ".join(f"{seq}{prefix.upper()}{name.upper()}" for name, seq in HOSTILE.items())


def task(**fields: Any) -> Json:
    """A well-formed task; keyword arguments override or add fields (``None`` deletes)."""
    out: Json = {
        "taskId": TASK_ID,
        "status": "working",
        "statusMessage": "Working",
        "createdAt": "2025-11-25T10:00:00.000Z",
        "lastUpdatedAt": "2025-11-25T10:00:01.000Z",
        "ttl": 60_000,
        "pollInterval": 250,
    }
    for k, v in fields.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def tool_result(text: str = "all done", *, is_error: bool = False) -> Json:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


# -- answers ------------------------------------------------------------------------------------


def ok(result: Any) -> Answer:
    """A JSON-RPC result that is not a dict (a dict alone is already a result)."""
    return lambda h, msg: h.send_json({"jsonrpc": "2.0", "id": msg.get("id"), "result": result})


def rpc_error(code: int, message: str, *, status: int = 200, data: Any = None) -> Answer:
    def answer(h: FaultHandler, msg: Json) -> None:
        err: Json = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        h.send_json({"jsonrpc": "2.0", "id": msg.get("id"), "error": err}, status=status)

    return answer


def raw(
    status: int,
    body: bytes,
    ctype: str = "application/json",
    headers: dict[str, str] | None = None,
) -> Answer:
    return lambda h, msg: h.send_raw(status, body, ctype, headers)


def html(status: int = 200) -> Answer:
    page = f"<html><body><h1>{status} nginx</h1></body></html>".encode()
    return raw(status, page, "text/html")


def truncated_json() -> Answer:
    """A complete HTTP answer whose JSON body stops half way."""
    return lambda h, msg: h.send_raw(200, b'{"jsonrpc": "2.0", "id": %d, "resu' % msg["id"])


def short_body() -> Answer:
    """Content-Length promises more than is sent, then the connection closes."""

    def answer(h: FaultHandler, msg: Json) -> None:
        h.send_head(200, "application/json", length=500)
        h.write(b'{"jsonrpc": "2.0", "id": 1, "re')
        h.close_connection = True

    return answer


def reset() -> Answer:
    """Headers and part of the body, then a TCP reset."""

    def answer(h: FaultHandler, msg: Json) -> None:
        h.send_head(200, "application/json", length=1000)
        h.write(b'{"jsonrpc": "2.0", "id": ')
        h.reset()

    return answer


def reset_at_once() -> Answer:
    """A TCP reset before any answer."""
    return lambda h, msg: h.reset()


def hang(*, after_headers: bool = False) -> Answer:
    """Never answer (until the server stops)."""

    def answer(h: FaultHandler, msg: Json) -> None:
        if after_headers:
            h.send_head(200, "application/json", length=100)
            h.wfile.flush()
        h.fault_server.stopping.wait(120)
        h.close_connection = True

    return answer


def sse(*messages: Any, truncate: bool = False, priming: bool = True) -> Answer:
    """An SSE answer; `{"id": "$"}` inside a message is replaced by the request id. With
    `truncate`, the last event stops half way and the connection closes."""

    def answer(h: FaultHandler, msg: Json) -> None:
        h.send_head(200, "text/event-stream", length=None)
        if priming:
            h.write(b"id: prime\ndata: \n\n")
        for i, m in enumerate(messages):
            if isinstance(m, dict) and m.get("id") == "$":
                m = {**m, "id": msg.get("id")}
            data = m if isinstance(m, str) else json.dumps(m)
            event = f"event: message\ndata: {data}\n\n".encode()
            if truncate and i == len(messages) - 1:
                event = event[: len(event) // 2]
            h.write(event)
        h.close_connection = True

    return answer


def sse_result(result: Any, *, truncate: bool = False) -> Answer:
    return sse({"jsonrpc": "2.0", "id": "$", "result": result}, truncate=truncate)


def wrong_id(result: Any = None) -> Answer:
    return lambda h, msg: h.send_json(
        {"jsonrpc": "2.0", "id": int(msg.get("id") or 0) + 1000, "result": result or task()}
    )


def batch(*items: Any) -> Answer:
    """A JSON array; `"$"` items become a response to the request with a working task."""

    def answer(h: FaultHandler, msg: Json) -> None:
        out = [
            {"jsonrpc": "2.0", "id": msg.get("id"), "result": task()} if i == "$" else i
            for i in items
        ]
        h.send_json(out)

    return answer


def huge(size: int = 100 * MIB, *, declared: bool = True, kind: str = "json") -> Answer:
    """A body of `size` bytes, streamed 1 MiB at a time (never built in memory). `kind`:
    ``json`` (a JSON-RPC answer padded with spaces), ``sse-line`` (one endless data line),
    ``sse-events`` (valid notifications of 1 MiB each, never the answer)."""

    def answer(h: FaultHandler, msg: Json) -> None:
        ctype = "application/json" if kind == "json" else "text/event-stream"
        h.send_head(200, ctype, length=size if declared else None)
        sent = 0
        if kind == "json":
            head = b'{"jsonrpc": "2.0", "id": %d, "result": ' % msg["id"]
            h.write(head)
            sent = len(head)
            chunk = b" " * MIB
        elif kind == "sse-line":
            h.write(b"data: ")
            sent = 6
            chunk = b"a" * MIB
        else:
            pad = "x" * (MIB - 200)
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"p": pad}}
            chunk = f"data: {json.dumps(note)}\n\n".encode()
        try:
            while sent < size:
                piece = chunk[: size - sent]
                h.wfile.write(piece)
                sent += len(piece)
        except OSError:
            pass  # the client hung up: the point of the test
        h.fault_server.sent[h.sid] = sent
        h.close_connection = True

    return answer


def redirect(location: str, status: int = 307) -> Answer:
    return lambda h, msg: h.send_raw(status, b"", "text/plain", {"Location": location})


def too_many(retry_after: str | None = None) -> Answer:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return raw(429, b"slow down", "text/plain", headers)


def deep(depth: int = 100_000) -> Answer:
    """JSON nested `depth` levels deep (a parser's recursion limit)."""
    return lambda h, msg: h.send_raw(200, b"[" * depth + b"]" * depth)


def trickle(result: Any = None, *, every: float = 0.5) -> Answer:
    """A whole, valid answer sent one byte every `every` seconds (each read is quick: only
    the answer as a whole takes for ever)."""

    def answer(h: FaultHandler, msg: Json) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": msg.get("id"), "result": result or task()})
        h.send_head(200, "application/json", length=len(body))
        for byte in body.encode():
            if h.fault_server.stopping.wait(every) or not h.write_ok(bytes([byte])):
                break
        h.close_connection = True

    return answer


def trickle_head(result: Any = None, *, every: float = 0.3) -> Answer:
    """The status line and headers sent one byte every `every` seconds (never a gap as long
    as a read timeout), then the answer: only the whole takes for ever."""

    def answer(h: FaultHandler, msg: Json) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": msg.get("id"), "result": result or task()})
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            f"X-Padding: {'p' * 200}\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        for byte in head:
            if h.fault_server.stopping.wait(every) or not h.write_ok(bytes([byte])):
                break
        else:
            h.write(body.encode())
        h.close_connection = True

    return answer


def encoded(
    result: Any = None,
    *,
    encoding: str = "gzip",
    layers: int = 1,
    body: bytes | None = None,
    ctype: str = "application/json",
) -> Answer:
    """An answer with `Content-Encoding: <encoding>` `layers` times over. `body`: the bytes
    sent as they are (a body that is not what its encoding says, or a prepared bomb)."""
    import gzip
    import zlib

    def answer(h: FaultHandler, msg: Json) -> None:
        data = body
        if data is None:
            data = json.dumps(
                {"jsonrpc": "2.0", "id": msg.get("id"), "result": result or task()}
            ).encode()
            for _ in range(layers):
                data = gzip.compress(data) if encoding == "gzip" else zlib.compress(data)
        value = ", ".join([encoding] * layers)
        h.send_raw(200, data, ctype, {"Content-Encoding": value})

    return answer


@functools.cache
def gzip_bomb(decoded: int = 1024 * MIB, layers: int = 3) -> bytes:
    """A body that decodes, through `layers` of gzip, to `decoded` bytes of spaces (built in
    pieces: never `decoded` bytes in memory; a few seconds, so built once)."""
    import gzip
    import io

    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as gz:
        piece = b" " * MIB
        for _ in range(decoded // MIB):
            gz.write(piece)
    data = buf.getvalue()
    for _ in range(layers - 1):
        data = gzip.compress(data, compresslevel=9)
    return data


def raw_result(text: str) -> Answer:
    """A JSON-RPC answer whose `result` is `text` as it is (JSON a Python `json.dumps` would
    not write: `1e999`, `NaN`, nesting past the recursion limit)."""

    def answer(h: FaultHandler, msg: Json) -> None:
        body = '{"jsonrpc": "2.0", "id": ' + json.dumps(msg.get("id")) + ', "result": ' + text + "}"
        h.send_raw(200, body.encode())

    return answer


def nested(depth: int, leaf: str = '"deep"') -> str:
    """JSON text of objects nested `depth` deep: {"a": {"a": ... leaf ...}}."""
    return '{"a": ' * depth + leaf + "}" * depth


def endless_pages(key: str, *, loop: int = 0, item: Callable[[int], Any] | None = None) -> Answer:
    """A page of one `key` item with a `nextCursor` that never ends (`loop`: the cursors go
    round a cycle of that many)."""
    counter = itertools.count()

    def answer(h: FaultHandler, msg: Json) -> None:
        n = next(counter)
        cursor = f"c{n % loop}" if loop else f"c{n}"
        one = item(n) if item is not None else task(taskId=f"t-{n}")
        h.send_json(
            {"jsonrpc": "2.0", "id": msg.get("id"), "result": {key: [one], "nextCursor": cursor}}
        )

    return answer


def keepalive_sse(*, every: float = 0.3) -> Answer:
    """An SSE answer of keep-alive comments (and empty events) that never ends."""

    def answer(h: FaultHandler, msg: Json) -> None:
        h.send_head(200, "text/event-stream", length=None)
        n = 0
        while not h.fault_server.stopping.wait(every):
            n += 1
            chunk = b": keep-alive\n\n" if n % 2 else b"data: \n\n"
            if not h.write_ok(chunk):
                break
        h.close_connection = True

    return answer


def echo_headers(*, as_error: bool = True) -> Answer:
    """Echo every request header back: in a JSON-RPC error's message (`as_error`), else in a
    tool result's text and structured content (a server that leaks what it was sent)."""

    def answer(h: FaultHandler, msg: Json) -> None:
        sent = "; ".join(f"{k}: {v}" for k, v in h.headers.items())
        if as_error:
            rpc_error(-32000, f"you sent {sent}")(h, msg)
            return
        result = {**tool_result(f"you sent {sent}"), "structuredContent": dict(h.headers.items())}
        h.send_json({"jsonrpc": "2.0", "id": msg.get("id"), "result": result})

    return answer


def slow(seconds: float, then: Answer) -> Answer:
    def answer(h: FaultHandler, msg: Json) -> None:
        h.fault_server.stopping.wait(seconds)
        h.answer(then, msg)

    return answer


def keepalive(result: Any = None, *, then_close: bool = False) -> Answer:
    """A JSON answer that keeps the connection open (no ``Connection: close``); with
    `then_close` the server closes it anyway once the answer is out (a keep-alive connection
    dropped while idle)."""

    def answer(h: FaultHandler, msg: Json) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": msg.get("id"), "result": result or task()})
        data = body.encode()
        h.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Mcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n%s"
            % (SESSION.encode(), len(data), data)
        )
        h.close_connection = then_close

    return answer


def one_per_connection(result: Any = None) -> Answer:
    """A keep-alive answer to a connection's first request; its next request finds the
    connection closed without an answer (a server that dropped the idle connection just as
    the client used it again)."""
    first = keepalive(result)

    def answer(h: FaultHandler, msg: Json) -> None:
        if getattr(h, "served", False):
            h.close_connection = True
            return
        h.served = True  # type: ignore[attr-defined]
        first(h, msg)

    return answer


def endless_trailer(*, line: bool = False) -> Answer:
    """A chunked JSON answer whose trailer section never ends (`line`: one trailer line
    without end), until the client hangs up or the server stops."""

    def answer(h: FaultHandler, msg: Json) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": msg.get("id"), "result": task()}).encode()
        h.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n"
            % (len(body), body)
            + (b"X-Trailer: " if line else b"")
        )
        _without_end(h, b"t" * 8192 if line else b"X-Trailer: %s\r\n" % (b"t" * 8000))

    return answer


def wire(data: bytes | Callable[[Json], bytes], *, keep: bool = False) -> Answer:
    """These bytes as they are, status line included (`data` may be made from the request:
    ``{id}`` in it is the request id); the connection closes after them unless `keep`."""

    def answer(h: FaultHandler, msg: Json) -> None:
        out = data(msg) if callable(data) else data.replace(b"{id}", b"%d" % msg.get("id", 0))
        h.write(out)
        h.close_connection = not keep

    return answer


def wire_answer(
    body: bytes = b"",
    *,
    status: bytes = b"200 OK",
    head: bytes = b"",
    keep: bool = False,
    result: Any = None,
) -> Answer:
    """A JSON-RPC answer (`body` empty: `result`, else a working task) with the status line
    `status` and the extra raw header lines `head` (each ending in CRLF), sent as bytes."""

    def make(msg: Json) -> bytes:
        answer = {"jsonrpc": "2.0", "id": msg.get("id"), "result": result or task()}
        data = body or json.dumps(answer).encode()
        return (
            b"HTTP/1.1 %s\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s"
            % (
                status,
                head,
                len(data),
                data,
            )
        )

    return wire(make, keep=keep)


def huge_chunked(size: int = 100 * MIB) -> Answer:
    """A JSON answer of `size` bytes in 1 MiB chunks (`Transfer-Encoding: chunked`)."""

    def answer(h: FaultHandler, msg: Json) -> None:
        h.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        start = b'{"jsonrpc": "2.0", "id": %d, "result": ' % msg["id"]
        sent = 0
        try:
            h.wfile.write(b"%x\r\n%s\r\n" % (len(start), start))
            sent = len(start)
            chunk = b"%x\r\n%s\r\n" % (MIB, b" " * MIB)
            while sent < size:
                h.wfile.write(chunk)
                sent += MIB
        except OSError:
            pass
        h.fault_server.sent[h.sid] = sent
        h.close_connection = True

    return answer


def _without_end(h: FaultHandler, piece: bytes) -> None:
    """Write `piece` again and again (up to 512 MiB) until the client hangs up or the server
    stops; what was sent is kept in `sent`, and the connection closes."""
    sent = 0
    while not h.fault_server.stopping.is_set() and h.write_ok(piece):
        sent += len(piece)
        if sent > 512 * MIB:
            break
    h.fault_server.sent[h.sid] = sent
    h.close_connection = True


def endless_head(*, line: bool = False) -> Answer:
    """A status line, then header lines without end (`line`: one header line without end),
    until the client hangs up or the server stops."""

    def answer(h: FaultHandler, msg: Json) -> None:
        h.write(b"HTTP/1.1 200 OK\r\n" + (b"X-Pad: " if line else b""))
        _without_end(h, b"p" * 8192 if line else b"X-Pad: %s\r\n" % (b"p" * 8000))

    return answer


# -- scenarios --------------------------------------------------------------------------------


def read_request(conn: socket.socket, data: bytes = b"") -> tuple[bytes, bytes] | None:
    """One whole request from `conn` (`data`: what was read of it already), body included
    (closing with unread bytes would send a reset): its body, and what came after it. None
    when the client hung up first."""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    m = re.search(rb"(?i)content-length:\s*(\d+)", head)
    length = int(m[1]) if m else 0
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        rest += chunk
    return rest[:length], rest[length:]


def raw_server(
    handler: Callable[[socket.socket], None], *, scheme: str = "http"
) -> tuple[str, Callable[[], None]]:
    """A raw TCP server on a thread, for what `FaultServer` cannot say (bytes before any
    request, TLS): each connection goes to `handler` on a thread of its own. Returns the URL
    (``SCHEME://127.0.0.1:PORT/mcp``) and a function that stops it."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    stop = threading.Event()

    def loop() -> None:
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=handler, args=(conn,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()

    def close() -> None:
        stop.set()
        srv.close()

    return f"{scheme}://127.0.0.1:{srv.getsockname()[1]}/mcp", close


@dataclass
class Scenario:
    init: Answers = field(default_factory=lambda: [dict(INIT_RESULT)])
    get: Answers = field(default_factory=lambda: [task()])
    result: Answers = field(default_factory=lambda: [tool_result()])
    cancel: Answers = field(default_factory=lambda: [task(status="cancelled")])
    list: Answers = field(default_factory=lambda: [{"tasks": [task()]}])
    tools: Answers = field(default_factory=lambda: [{"tools": []}])
    call: Answers = field(default_factory=lambda: [{"task": task()}])
    #: the standalone GET stream (also where a broken POST stream resumes): 405 by default
    stream: Answers = field(default_factory=lambda: [raw(405, b'{"error": "no GET stream"}')])
    #: the `Mcp-Session-Id` header on every answer (a str; bytes are sent as they are)
    session: str | bytes = SESSION
    #: an answer to every request whatever its method (GET included): a redirect loop, say
    every: Answer | None = None
    counts: dict[tuple[str, str], int] = field(default_factory=dict)

    def next_answer(self, method_field: str, task_id: str = "") -> Answer:
        """The answer to the next request; a field may also map task ids to their own
        answers (`get={"a": [...], "b": [...]}`), for watching several tasks at once."""
        answers: list[Answer] | dict[str, list[Answer]] = getattr(self, method_field)
        if isinstance(answers, dict):
            answers = answers.get(task_id) or [rpc_error(-32602, "Task not found")]
        n = self.counts.get((method_field, task_id), 0)
        self.counts[(method_field, task_id)] = n + 1
        return answers[min(n, len(answers) - 1)]


def _preset(name: str) -> dict[str, list[Answer]]:
    """Named scenarios: the same fault on every task method (`initialize` answers normally)."""
    one: dict[str, Callable[[], Answer]] = {
        "html-200": lambda: html(200),
        "html-502": lambda: html(502),
        "truncated-json": truncated_json,
        "short-body": short_body,
        "truncated-sse": lambda: sse_result(task(), truncate=True),
        "reset": reset,
        "reset-at-once": reset_at_once,
        "hang": hang,
        "hang-after-headers": lambda: hang(after_headers=True),
        "wrong-id": wrong_id,
        "batch": lambda: batch("$"),
        "batch-empty": lambda: batch(),
        "batch-junk": lambda: batch(1, "two", None),
        "huge": lambda: huge(declared=True),
        "huge-chunked": lambda: huge(declared=False),
        "huge-sse-line": lambda: huge(declared=False, kind="sse-line"),
        "huge-sse-events": lambda: huge(declared=False, kind="sse-events"),
        "429": lambda: too_many(),
        "429-retry-after": lambda: too_many("1"),
        "-32429": lambda: rpc_error(-32429, "rate limited"),
        "deep-json": deep,
        "null-result": lambda: ok(None),
    }
    if name not in one:
        raise KeyError(f"no preset scenario {name!r}; known: {', '.join(sorted(one))}")
    fault = one[name]()
    return {f: [fault] for f in ("get", "result", "cancel", "list")}


# -- the server -----------------------------------------------------------------------------


@dataclass
class Request:
    scenario: str
    method: str | None
    headers: dict[str, str]
    at: float
    message: Any
    #: every header line as sent (names as spelt, repeats kept)
    raw_headers: list[tuple[str, str]] = field(default_factory=list)


class FaultServer:
    """See the module docstring. `url(**answers)` and `preset(name)` make scenarios."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = 0
        self.base = ""
        self.requests: list[Request] = []
        self.scenarios: dict[str, Scenario] = {}
        #: bytes a `huge` answer managed to send before the client hung up, by scenario id
        self.sent: dict[str, int] = {}
        self.stopping = threading.Event()
        self._ids = itertools.count(1)
        self._lock = threading.RLock()  # `wait_seen` reads `seen` while it holds it
        #: notified on every request recorded (`wait_seen`)
        self._arrived = threading.Condition(self._lock)
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FaultServer:
        httpd = _HTTPServer((self.host, 0), FaultHandler)
        httpd.fault_server = self
        self._httpd = httpd
        self.port = int(httpd.server_address[1])
        self.base = f"http://{self.host}:{self.port}"
        self._thread = threading.Thread(
            target=lambda: httpd.serve_forever(poll_interval=0.05), name="fault", daemon=True
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

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def url(self, name: str = "custom", **answers: Any) -> str:
        """A fresh scenario; each keyword is a method field (`init`, `get`, `result`, `cancel`,
        `list`, `tools`, `call`) with its answers."""
        sid = f"s{next(self._ids)}-{name}"
        with self._lock:
            self.scenarios[sid] = Scenario(**answers)
        return f"{self.base}/{sid}/mcp"

    def preset(self, name: str, **answers: Any) -> str:
        return self.url(name, **{**_preset(name), **answers})

    @staticmethod
    def sid(url: str) -> str:
        return url.split("/")[3]

    def seen(
        self, url: str, method: str | None = None, task_id: str | None = None
    ) -> list[Request]:
        sid = self.sid(url)
        with self._lock:
            return [
                r
                for r in self.requests
                if r.scenario == sid
                # GET streams only when asked for (`method="GET"`): the counts of messages
                # that tests check stay what the client sent by POST
                and (r.method == method if method is not None else r.method != "GET")
                and (task_id is None or _task_id(r.message) == task_id)
            ]

    def wait_seen(self, url: str, method: str, count: int, timeout: float = 60.0) -> list[Request]:
        """`seen` once it holds at least `count` requests (or `timeout` passed): woken by each
        request as it is recorded, never by a clock."""
        with self._arrived:
            self._arrived.wait_for(lambda: len(self.seen(url, method)) >= count, timeout)
            return self.seen(url, method)

    def _record(self, req: Request) -> None:
        with self._lock:
            self.requests.append(req)
            self._arrived.notify_all()

    def _scenario(self, sid: str) -> Scenario | None:
        with self._lock:
            return self.scenarios.get(sid)


def _task_id(message: Any) -> Any:
    params = message.get("params") if isinstance(message, dict) else None
    return params.get("taskId") if isinstance(params, dict) else None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    #: the listen backlog: a poll pool opens up to 100 connections at once (the default 5
    #: drops connects, which then wait for the client's timeout)
    request_queue_size = 128
    fault_server: FaultServer


class FaultHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fault/1"
    sid = ""

    @property
    def fault_server(self) -> FaultServer:
        return cast(_HTTPServer, self.server).fault_server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- writing ----------------------------------------------------------------------------

    def send_head(self, status: int, ctype: str, *, length: int | None, extra: Any = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        scenario = self.fault_server._scenario(self.sid)
        session = scenario.session if scenario is not None else SESSION
        if isinstance(session, bytes):  # raw bytes: a non-ASCII or control byte, as it is
            self._headers_buffer.append(b"Mcp-Session-Id: " + session + b"\r\n")
        else:
            self.send_header("Mcp-Session-Id", session)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def write(self, data: bytes) -> None:
        with contextlib.suppress(OSError):
            self.wfile.write(data)
            self.wfile.flush()

    def write_ok(self, data: bytes) -> bool:
        """Write and flush; False once the client has gone."""
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            return False
        return True

    def send_raw(
        self,
        status: int,
        body: bytes,
        ctype: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_head(status, ctype, length=len(body), extra=headers)
        self.write(body)

    def send_json(self, obj: Any, status: int = 200) -> None:
        # raw UTF-8 (JSON must escape C0 controls, but C1 and bidi controls may come raw)
        self.send_raw(status, json.dumps(obj, ensure_ascii=False).encode())

    def reset(self) -> None:
        """Close with a TCP RST (SO_LINGER 0)."""
        with contextlib.suppress(OSError):
            self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    # -- reading ------------------------------------------------------------------------------

    def do_GET(self) -> None:
        sid = self.sid = self.path.split("?")[0].strip("/").split("/")[0]
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.fault_server._record(Request(sid, "GET", headers, time.monotonic(), None))
        scenario = self.fault_server._scenario(sid)
        if scenario is None:
            return self.send_raw(404, b'{"detail": "no such scenario"}')
        if scenario.every is not None:
            return self.answer(scenario.every, {})
        with self.fault_server._lock:
            answer = scenario.next_answer("stream")
        self.answer(answer, {})

    def do_DELETE(self) -> None:
        self.send_raw(200, b"")

    def do_POST(self) -> None:
        parts = self.path.split("?")[0].strip("/").split("/")
        sid = self.sid = parts[0] if parts else ""
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            msg = json.loads(body)
        except ValueError:
            msg = None
        method = msg.get("method") if isinstance(msg, dict) else None
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.fault_server._record(
            Request(sid, method, headers, time.monotonic(), msg, list(self.headers.items()))
        )
        scenario = self.fault_server._scenario(sid)
        if scenario is None or not isinstance(msg, dict):
            return self.send_raw(404, b'{"detail": "no such scenario"}')
        if scenario.every is not None:
            return self.answer(scenario.every, msg)
        if "id" not in msg or method is None:
            return self.send_raw(202, b"")
        fld = FIELDS.get(method)
        if fld is None:
            return rpc_error(-32601, f"Method not found: {method}")(self, msg)
        params = msg.get("params")
        task_id = params.get("taskId") if isinstance(params, dict) else None
        with self.fault_server._lock:
            answer = scenario.next_answer(fld, task_id if isinstance(task_id, str) else "")
        self.answer(answer, msg)

    def answer(self, answer: Answer, msg: Json) -> None:
        if isinstance(answer, dict):
            self.send_json({"jsonrpc": "2.0", "id": msg.get("id"), "result": answer})
        else:
            answer(self, msg)


@contextlib.contextmanager
def running() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs


@contextlib.contextmanager
def listen_backlog_full() -> Iterator[str]:
    """A URL whose TCP connects hang: a listening socket that never accepts, with its
    accept queue already full (connect timeouts on loopback)."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = srv.getsockname()[1]
    fillers: list[socket.socket] = []
    try:
        for _ in range(8):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            with contextlib.suppress(BlockingIOError, OSError):
                s.connect(("127.0.0.1", port))
            fillers.append(s)
        time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        for s in fillers:
            s.close()
        srv.close()


# -- running the CLI against it -------------------------------------------------------------------


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    seconds: float = 0.0

    def json(self) -> Any:
        return json.loads(self.stdout)

    def lines(self) -> list[Any]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def base_env(
    state_dir: str | os.PathLike[str], extra: dict[str, str] | None = None
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    env["MCPTASK_STATE_DIR"] = str(state_dir)
    env["MCPTASK_CONFIG"] = os.path.join(str(state_dir), "no-config.toml")
    env.update(extra or {})
    return env


def run_inprocess(
    *args: str, state_dir: str | os.PathLike[str], env: dict[str, str] | None = None
) -> Run:
    """The real CLI entry point (`mcptask.cli.main`) in this process: much faster than a
    subprocess, for scenario matrices. Output goes to StringIOs (so `auto` means json)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from mcptask.cli import main

    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(base_env(state_dir, env))
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(list(args))
    finally:
        os.environ.clear()
        os.environ.update(saved)
        from mcptask.text import redact

        redact.release_all()  # the next run holds its own secrets
    return Run(code, out.getvalue(), err.getvalue(), time.monotonic() - started)


def run_pty(
    *args: str,
    state_dir: str | os.PathLike[str],
    env: dict[str, str] | None = None,
    timeout: float = 30.0,
    columns: int = 160,
) -> tuple[int, str]:
    """The CLI in a subprocess whose stdin, stdout and stderr are a pseudo-terminal (so
    `auto` output is pretty, with Rich's live view). Returns the exit status and every byte
    the terminal received, decoded."""
    import fcntl
    import pty
    import select
    import subprocess
    import sys
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    extra = {"TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": "50"}
    extra.update(env or {})
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcptask", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=base_env(state_dir, extra),
        close_fds=True,
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: every writer has gone
                    break
                if not data:
                    break
                chunks.append(data)
            elif proc.poll() is not None:
                # drained what was there; the child has exited
                break
        else:
            proc.kill()
            raise TimeoutError(f"mcptask {' '.join(args)} did not end in {timeout} s")
        code = proc.wait(timeout=10)
    finally:
        os.close(master)
    return code, b"".join(chunks).decode("utf-8", "replace")
