"""Issue 25 ("the field"), one layer at a time over `httpx.MockTransport`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mcptask.errors import ServerError
from mcptask.model.refs import TaskRef
from mcptask.protocols.mcp2025 import Mcp2025
from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.rpc import RpcClient

URL = "http://mcp.test/mcp"


def _mcp2025(handler: Any) -> Mcp2025:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return Mcp2025(RpcClient(HttpTransport(HttpOptions(url=URL), client)), URL)


def _answer(request: httpx.Request, result: Any) -> httpx.Response:
    body = json.loads(request.content)
    if "id" not in body:
        return httpx.Response(202)
    return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": result})


TASK = {"taskId": "t1", "status": "working"}


def test_a_reused_session_speaks_the_version_kept_with_its_task() -> None:
    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("mcp-protocol-version"))
        return _answer(request, TASK)

    proto = _mcp2025(handler)
    asyncio.run(proto.get(TaskRef("t1", session="s1", version="2025-06-18")))
    asyncio.run(proto.get(TaskRef("t1", session="s1")))
    assert seen == ["2025-06-18", "2025-11-25"]


def test_initialize_agrees_on_an_older_version() -> None:
    seen: list[tuple[str, str | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append((body.get("method", ""), request.headers.get("mcp-protocol-version")))
        if body.get("method") == "initialize":
            result = {"protocolVersion": "2025-03-26", "capabilities": {"tools": {}}}
            resp = _answer(request, result)
            resp.headers["Mcp-Session-Id"] = "abc"
            return resp
        return _answer(request, {"tools": []})

    proto = _mcp2025(handler)
    assert asyncio.run(proto.list_tools()) == []
    assert proto.protocol_version == "2025-03-26"
    assert seen[1:] == [
        ("notifications/initialized", "2025-03-26"),
        ("tools/list", "2025-03-26"),
    ]
    assert proto.book_fields(TaskRef("t", session="abc", version="2025-03-26")) == {
        "protocol": "mcp-2025-11-25",
        "session": "abc",
        "contextId": None,
        "protocolVersion": "2025-03-26",
    }


def test_initialize_with_a_version_mcptask_does_not_speak() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return _answer(request, {"protocolVersion": "1999-01-01", "capabilities": {}})

    proto = _mcp2025(handler)
    with pytest.raises(ServerError, match="MCP 1999-01-01, which mcptask does not speak"):
        asyncio.run(proto.list_tools())


def test_lost_after_tells_a_lost_task_from_an_expired_one() -> None:
    from datetime import UTC, datetime, timedelta

    from mcptask.scheduler.watcher import lost_after

    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    created = (now - timedelta(seconds=3)).isoformat()
    said = lost_after("t", created, 60_000, now)
    assert said is not None and "3.0 s after it was created" in said and "ttl of 60 s" in said
    assert lost_after("t", created, 1_000, now) is None  # the ttl has run out: expired
    assert lost_after("t", created, None, now) is not None  # unlimited
    assert lost_after("t", None, 60_000, now) is None
    assert lost_after("t", "not a time", 60_000, now) is None
    assert lost_after("t", (now + timedelta(seconds=5)).isoformat(), 60_000, now) is None


def _rest(handler: Any) -> Any:
    from mcptask.protocols.a2a_rest import A2ARest

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    base = "http://agent.test/rest"
    return A2ARest(RpcClient(HttpTransport(HttpOptions(url=base), client)), base)


def _status(code: int, status: str, reason: str | None, message: str) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "status": status, "message": message}
    if reason:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}]
    return {"error": error}


def test_rest_maps_methods_to_resources_and_quotes_ids() -> None:
    from mcptask.model.refs import TaskRef

    seen: list[tuple[str, str, str | None]] = []
    task = {"id": "a/b c", "status": {"state": "TASK_STATE_WORKING"}}

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, str(request.url), request.headers.get("a2a-version")))
        if request.url.path.endswith(":cancel"):
            return httpx.Response(200, json={**task, "status": {"state": "TASK_STATE_CANCELED"}})
        return httpx.Response(200, json=task)

    proto = _rest(handler)
    asyncio.run(proto.get(TaskRef("a/b c")))
    asyncio.run(proto.cancel(TaskRef("a/b c")))
    assert seen == [
        ("GET", "http://agent.test/rest/tasks/a%2Fb%20c", "1.0"),
        ("POST", "http://agent.test/rest/tasks/a%2Fb%20c:cancel", "1.0"),
    ]


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (404, _status(404, "NOT_FOUND", "TASK_NOT_FOUND", "Task not found"), "TaskNotFound"),
        (404, _status(404, "NOT_FOUND", None, "no such task"), "TaskNotFound"),
        (400, _status(400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED", "no"), "ServerError"),
        (401, {"error": {"message": "who are you"}}, "AuthError"),
        (502, None, "HttpStatusError"),
    ],
)
def test_rest_errors_read_as_the_a2a_errors_they_name(
    status: int, body: dict[str, Any] | None, error: str
) -> None:
    from mcptask.model.refs import TaskRef

    def handler(request: httpx.Request) -> httpx.Response:
        if body is None:
            return httpx.Response(status, text="<html>bad gateway</html>")
        return httpx.Response(status, json=body)

    proto = _rest(handler)
    with pytest.raises(Exception) as caught:
        asyncio.run(proto.get(TaskRef("t1")))
    assert type(caught.value).__name__ == error, caught.value
