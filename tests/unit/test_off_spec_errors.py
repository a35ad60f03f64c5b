"""A -32603 where the spec has codes of its own (issue 39): read as "not found" only when the
server answers a task that cannot exist the same way (`protocols.base.read_status`)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mcptask.errors import RpcError, TaskNotFound
from mcptask.model.refs import TaskRef
from mcptask.protocols.a2a import A2A10
from mcptask.protocols.base import read_status
from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.rpc import RpcClient


def _agent(answer_absent: int) -> RpcClient:
    """An agent answering -32603 for task `t1` and `answer_absent` for any other id."""

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        code = -32603 if body["params"]["id"] == "t1" else answer_absent
        error: dict[str, Any] = {"code": code, "message": "boom"}
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "error": error})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    return RpcClient(HttpTransport(HttpOptions(url="http://mock.test/"), client=client))


def _read(rpc: RpcClient) -> None:
    async def go() -> None:
        try:
            await read_status(A2A10(rpc, "http://mock.test/"), TaskRef("t1"))
        finally:
            await rpc.aclose()

    asyncio.run(go())


def test_minus_32603_is_not_found_when_an_impossible_task_gets_it_too() -> None:
    with pytest.raises(TaskNotFound, match="not the spec's -32001"):
        _read(_agent(-32603))


def test_minus_32603_stands_when_the_server_says_not_found_its_own_way() -> None:
    with pytest.raises(RpcError) as caught:
        _read(_agent(-32001))
    assert caught.value.code == -32603


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ({"error": {"code": "BACKEND_DOWN", "detail": "no"}}, "BACKEND_DOWN: no"),
        ({"message": {"role": "agent", "parts": [{"text": "down"}]}}, '"text": "down"'),
        ([1, 2], "[1, 2]"),
        ({"detail": "plain"}, "plain"),
    ],
)
def test_an_http_error_s_json_body_is_shown(body: Any, shown: str) -> None:
    from mcptask.transports.http import body_excerpt

    raw = json.dumps(body).encode()
    assert shown in body_excerpt(body, raw, "application/json")
