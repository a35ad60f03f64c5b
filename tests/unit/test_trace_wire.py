"""Where a task's trace goes on the wire (issue 35), one protocol at a time over
`httpx.MockTransport`: MCP's `params._meta` (SEP-414, merged with the `_meta` already there),
A2A's HTTP headers and SendMessage's message `metadata`, gRPC's call metadata; made once per
task, and never on a request that is not about a task."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mcptask.model.refs import TaskRef
from mcptask.protocols.base import CallHooks
from mcptask.protocols.trace_context import TaskTrace, traced_message, traced_meta
from mcptask.text.traceparent import TraceIds
from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.rpc import RpcClient

URL = "http://mcp.test/mcp"
IDS = TraceIds("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", "00f067aa0ba902b7")
PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
STATE = "congo=t61rcWkgMzE"


def _rpc(handler: Any, url: str = URL) -> RpcClient:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return RpcClient(HttpTransport(HttpOptions(url=url), client))


def _answer(request: httpx.Request, result: Any) -> httpx.Response:
    body = json.loads(request.content)
    if "id" not in body:
        return httpx.Response(202)
    return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": result})


def test_the_trace_is_the_task_s_span_as_parent_made_once() -> None:
    trace = TaskTrace(IDS, STATE)
    assert trace.fields == {"traceparent": PARENT, "tracestate": STATE}
    assert TaskTrace(IDS).fields == {"traceparent": PARENT}
    # a poll's `_meta` is the trace's own mapping (no copy per poll); a `_meta` already
    # there is kept beside it
    assert traced_meta({"taskId": "t"}, trace)["_meta"] is trace.fields
    merged = traced_meta({"_meta": {"progressToken": "p"}}, trace)["_meta"]
    assert merged == {"progressToken": "p", "traceparent": PARENT, "tracestate": STATE}
    assert traced_meta({"taskId": "t"}, None) == {"taskId": "t"}
    made: list[int] = []
    for _ in range(3):
        trace.form("x", lambda fields: made.append(1) or dict(fields))
    assert made == [1]
    message = traced_message({"metadata": {"mine": 1}}, trace)
    assert message["metadata"] == {"mine": 1, "traceparent": PARENT, "tracestate": STATE}


# -- MCP 2025-11-25 ----------------------------------------------------------------------------


def _mcp2025_server(seen: list[dict[str, Any]]) -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        method = body.get("method")
        if method == "initialize":
            caps = {"tasks": {"list": {}}, "tools": {}}
            result = {"protocolVersion": "2025-11-25", "capabilities": caps}
            return _answer(request, result)
        if method == "tools/list":
            tools = [{"name": "slow", "execution": {"taskSupport": "optional"}}]
            return _answer(request, {"tools": tools})
        if method == "tools/call" and "task" in body["params"]:
            return _answer(request, {"task": {"taskId": "t1", "status": "working"}})
        if method == "tools/call":
            return _answer(request, {"content": []})
        if method == "tasks/result":
            return _answer(request, {"content": []})
        if method == "tasks/list":
            return _answer(request, {"tasks": []})
        return _answer(request, {"taskId": "t1", "status": "working"})

    return handler


def test_mcp_2025_puts_the_trace_in_every_task_request_s_meta() -> None:
    from mcptask.protocols.mcp2025 import Mcp2025

    seen: list[dict[str, Any]] = []
    proto = Mcp2025(_rpc(_mcp2025_server(seen)), URL)
    trace = TaskTrace(IDS, STATE)

    async def run() -> None:
        created = await proto.call_tool("slow", {}, ttl=None, trace=trace)
        assert created.task is not None
        ref = TaskRef("t1", trace=trace)
        task = await proto.get(ref)
        await proto.result(ref, task)
        await proto.list_tasks([ref])
        await proto.call_plain("slow", {}, CallHooks(trace=TaskTrace(IDS)))

    asyncio.run(run())
    metas = {b["method"]: b.get("params", {}).get("_meta") for b in seen if "method" in b}
    want = {"traceparent": PARENT, "tracestate": STATE}
    call = next(b for b in seen if b.get("method") == "tools/call" and "task" in b["params"])
    assert call["params"]["_meta"] == {
        "progressToken": call["params"]["_meta"]["progressToken"],
        **want,
    }
    assert metas["tasks/get"] == want
    assert metas["tasks/result"] == want
    plain = [b for b in seen if b.get("method") == "tools/call" and "task" not in b["params"]]
    assert plain[0]["params"]["_meta"]["traceparent"] == PARENT
    # not about one task: no trace
    assert metas["initialize"] is None and metas["tools/list"] is None
    assert metas["tasks/list"] is None


# -- MCP 2026-07-28 ----------------------------------------------------------------------------


def test_mcp_2026_adds_the_trace_beside_the_client_meta_once_per_task() -> None:
    from mcptask.protocols.mcp2026 import META_VERSION, NAME, Mcp2026

    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        if body["method"] == "tools/call":
            return _answer(request, {"resultType": "task", "taskId": "t1", "status": "working"})
        if body["method"] == "tasks/cancel":
            return _answer(request, {"resultType": "complete"})
        return _answer(request, {"taskId": "t1", "status": "working"})

    proto = Mcp2026(_rpc(handler), URL)
    trace = TaskTrace(IDS)

    async def run() -> None:
        await proto.call_tool("slow", {}, ttl=None, trace=trace)
        ref = TaskRef("t1", trace=trace)
        await proto.get(ref)
        await proto.get(ref)
        await proto.cancel(ref)

    asyncio.run(run())
    for body in seen:
        meta = body["params"]["_meta"]
        assert meta[META_VERSION] == "2026-07-28"  # the client `_meta` stays
        assert meta["traceparent"] == PARENT, body["method"]
    assert [b["method"] for b in seen] == [
        "tools/call",
        "tasks/get",
        "tasks/get",
        "tasks/get",
        "tasks/cancel",
    ]
    # the polls' whole `_meta` was made once, for the task
    assert trace.form(NAME, lambda fields: pytest.fail("made again"))["traceparent"] == PARENT


# -- A2A ---------------------------------------------------------------------------------------

A2A_URL = "http://agent.test/"
A2A_TASK = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}


def _a2a_server(seen: list[tuple[str, str, dict[str, str], Any]]) -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("agent-card.json"):
            return httpx.Response(404)
        body = json.loads(request.content) if request.content else None
        kept = {k: v for k, v in request.headers.items() if k in ("traceparent", "tracestate")}
        seen.append((request.method, request.url.path, kept, body))
        if isinstance(body, dict) and body.get("method") == "ListTasks":
            return _answer(request, {"tasks": [], "nextPageToken": ""})
        if request.method == "GET" and request.url.path.endswith("/tasks"):
            return httpx.Response(200, json={"tasks": [], "nextPageToken": ""})
        if isinstance(body, dict) and "jsonrpc" in body:
            task = dict(A2A_TASK)
            if body["method"] in ("message/send", "tasks/get", "tasks/cancel"):
                task = {
                    "id": "t1",
                    "contextId": "c1",
                    "kind": "task",
                    "status": {"state": "working"},
                }
            if body["method"] == "SendMessage":
                return _answer(request, {"task": task})
            return _answer(request, task)
        if request.url.path.endswith("message:send"):
            return httpx.Response(200, json={"task": A2A_TASK})
        return httpx.Response(200, json=A2A_TASK)

    return handler


@pytest.mark.parametrize("kind", ["A2A10", "A2A03", "A2ARest"])
def test_a2a_sends_the_trace_as_headers_and_in_the_message_s_metadata(kind: str) -> None:
    from mcptask.protocols import a2a, a2a_rest

    seen: list[tuple[str, str, dict[str, str], Any]] = []
    url = A2A_URL + ("rest" if kind == "A2ARest" else "")
    cls = getattr(a2a_rest if kind == "A2ARest" else a2a, kind)
    proto = cls(_rpc(_a2a_server(seen), url), url)
    proto._card_read = True
    trace = TaskTrace(IDS, STATE)
    want = {"traceparent": PARENT, "tracestate": STATE}

    async def run() -> None:
        created = await proto.send_message("hi", context_id=None, trace=trace)
        assert created.task is not None
        ref = TaskRef("t1", context_id="c1", trace=trace)
        await proto.get(ref)
        await proto.cancel(ref)
        await proto.list_tasks([])

    asyncio.run(run())
    send, get, cancel = seen[0], seen[1], seen[2]
    for _, path, headers, _ in (send, get, cancel):
        assert headers == want, path
    body = send[3]
    message = body["params"]["message"] if "jsonrpc" in body else body["message"]
    assert message["metadata"] == want
    for _, path, headers, _ in seen[3:]:
        assert headers == {}, path  # a list is about no task


def test_agno_sends_the_trace_as_headers() -> None:
    from mcptask.protocols.agno import Agno

    seen: list[tuple[str, str, dict[str, str], Any]] = []
    url = "http://agno.test/a2a/agents/echo"
    proto = Agno(_rpc(_a2a_server(seen), url), url)
    trace = TaskTrace(IDS)

    async def run() -> None:
        await proto.send_message("hi", context_id="c1", trace=trace)
        await proto.get(TaskRef("t1", context_id="c1", trace=trace))

    asyncio.run(run())
    assert [(path, headers) for _, path, headers, _ in seen] == [
        ("/a2a/agents/echo/v1/message:send", {"traceparent": PARENT}),
        ("/a2a/agents/echo/v1/tasks:get", {"traceparent": PARENT}),
    ]
    assert seen[0][3]["params"]["message"]["metadata"] == {"traceparent": PARENT}


def test_a2a_answer_carries_the_task_s_trace() -> None:
    from mcptask.protocols.a2a import A2A10

    seen: list[tuple[str, str, dict[str, str], Any]] = []
    proto = A2A10(_rpc(_a2a_server(seen), A2A_URL), A2A_URL)
    proto._card_read = True
    trace = TaskTrace(IDS)
    asking = proto._task(
        {
            "id": "t1",
            "contextId": "c1",
            "status": {
                "state": "TASK_STATE_INPUT_REQUIRED",
                "message": {"role": "ROLE_AGENT", "parts": [{"text": "which?"}], "messageId": "m"},
            },
        }
    )

    async def responder(request: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"text": "this one"}}

    asyncio.run(proto.answer(TaskRef("t1", context_id="c1", trace=trace), asking, responder))
    [(_, _, headers, body)] = seen
    assert headers == {"traceparent": PARENT}
    assert body["params"]["message"]["metadata"] == {"traceparent": PARENT}


def test_grpc_metadata_carries_the_trace_made_once_per_task() -> None:
    from mcptask.protocols.a2a_grpc import A2AGrpc

    proto = A2AGrpc(_rpc(lambda r: httpx.Response(404), A2A_URL), A2A_URL)
    proto._metadata = (("a2a-version", "1.0"),)
    trace = TaskTrace(IDS, STATE)
    first = proto._call_metadata(trace)
    assert first == (("a2a-version", "1.0"), ("traceparent", PARENT), ("tracestate", STATE))
    assert proto._call_metadata(trace) is first
    assert proto._call_metadata(None) == (("a2a-version", "1.0"),)
