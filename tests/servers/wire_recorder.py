"""What a real test server received, one JSON line per request in a file (`--record FILE` of
``fastmcp3_server.py``, ``fastmcp4_server.py`` and ``a2a_server.py``): the tests read it to
prove what reached the server (a task's W3C `traceparent` in MCP's `params._meta`, in A2A's
HTTP headers, gRPC metadata and message metadata).

Standard library only: it runs in every server venv. Each record is written as soon as the
request's body has arrived (or the server begins its answer without reading it), before the
server answers: once mcptask has its answer, the line is in the file (tests read it then,
without waiting).

Lines: ``{"via": "http", "method", "path", "headers": {...}, "body": <JSON or null>}`` (the
headers named in `HEADERS`, lower-case), ``{"via": "grpc", "rpc": "/a2a.v1.A2AService/GetTask",
"headers": {...}}`` (gRPC metadata), and whatever a server adds with `record` (the A2A agent:
``{"via": "executor", "taskId", "metadata"}``, the message metadata its executor saw).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

#: the headers (and gRPC metadata keys) a record keeps
HEADERS = ("traceparent", "tracestate", "mcp-method", "a2a-version")

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def record(path: str, entry: dict[str, Any]) -> None:
    """Append one record (one `write` of one line)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, sort_keys=True) + "\n")


def kept_headers(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {k.lower(): v for k, v in pairs if k.lower() in HEADERS}


class RecordWire:
    """ASGI middleware: records every HTTP request (its kept headers and JSON body) to
    `path`, then hands it on unchanged."""

    def __init__(self, app: App, path: str) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        headers = kept_headers(
            (k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", [])
        )
        chunks: list[bytes] = []
        done = False

        async def receiving() -> Message:
            nonlocal done
            message = await receive()
            if message.get("type") == "http.request" and not done:
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    done = True
                    self._write(scope, headers, b"".join(chunks))
            return message

        async def sending(message: Message) -> None:
            nonlocal done
            if message.get("type") == "http.response.start" and not done:
                done = True  # answered without reading the body (a2a-sdk's REST cancel)
                self._write(scope, headers, b"".join(chunks))
            await send(message)

        if scope.get("method") in ("GET", "DELETE", "HEAD"):
            done = True
            self._write(scope, headers, b"")
        await self.app(scope, receiving, sending)

    def _write(self, scope: Scope, headers: dict[str, str], body: bytes) -> None:
        try:
            parsed = json.loads(body) if body.strip() else None
        except ValueError:
            parsed = None
        record(
            self.path,
            {
                "via": "http",
                "method": scope.get("method"),
                "path": scope.get("path"),
                "headers": headers,
                "body": parsed,
            },
        )


def middleware(path: str | None) -> list[Any] | None:
    """The Starlette middleware list of a fastmcp server started with `--record PATH` (None
    without it); Starlette is imported only then (it is in every fastmcp venv)."""
    if not path:
        return None
    from starlette.middleware import Middleware

    return [Middleware(RecordWire, path=path)]
