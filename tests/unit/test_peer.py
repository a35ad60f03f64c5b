"""Issue 36: one router for what a peer sends on a channel of its own (transports/peer.py),
shared by the stdio and legacy HTTP+SSE transports: answers by id, ping answered, a request
nobody can answer refused with -32601 in one place, notifications kept (bounded)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.legacy_sse import LegacySseTransport
from mcptask.transports.peer import PeerRouter
from mcptask.transports.rpc import METHOD_NOT_FOUND
from mcptask.transports.stdio import StdioOptions, StdioTransport


def _router(kept: int = 3) -> tuple[PeerRouter, list[dict[str, Any]], list[str]]:
    replies: list[dict[str, Any]] = []
    traces: list[str] = []
    return PeerRouter(replies.append, trace=traces.append, kept=kept), replies, traces


def test_answers_go_to_their_request_and_an_unattributed_error_to_the_oldest() -> None:
    async def main() -> None:
        router, _, traces = _router()
        first, second = router.open(1), router.open(2)
        router.route({"jsonrpc": "2.0", "id": 2, "result": {"b": 1}})
        assert second.get_nowait() == {"jsonrpc": "2.0", "id": 2, "result": {"b": 1}}
        router.route({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}})
        assert first.get_nowait()["error"]["code"] == -32700
        router.close(1)
        router.close(2)
        router.route({"jsonrpc": "2.0", "id": 9, "result": {}})
        assert traces == ["< (an answer to request 9 nobody waits for)"]

    asyncio.run(main())


def test_ping_is_answered_and_an_unknown_request_refused_in_one_place() -> None:
    async def main() -> None:
        router, replies, _ = _router()
        router.route({"jsonrpc": "2.0", "id": "p", "method": "ping"})
        router.route({"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage"})
        assert replies == [
            {"jsonrpc": "2.0", "id": "p", "result": {}},
            {
                "jsonrpc": "2.0",
                "id": 7,
                "error": {
                    "code": METHOD_NOT_FOUND,
                    "message": "Method not found: sampling/createMessage",
                },
            },
        ]
        # while a request waits, the server's request goes on its stream (ServerRequests
        # answers it there), and a handler, when set, takes it first
        waiting = router.open(1)
        router.route({"jsonrpc": "2.0", "id": 8, "method": "elicitation/create"})
        assert waiting.get_nowait()["method"] == "elicitation/create"
        seen: list[str] = []
        router.on_unsolicited = lambda msg: seen.append(msg["method"])
        router.route({"jsonrpc": "2.0", "id": 9, "method": "elicitation/create"})
        assert seen == ["elicitation/create"] and waiting.empty()

    asyncio.run(main())


def test_notifications_go_to_the_handler_else_a_bounded_queue() -> None:
    async def main() -> None:
        router, _, _ = _router(kept=2)
        for n in range(3):
            router.route({"jsonrpc": "2.0", "method": "notifications/x", "params": {"n": n}})
        kept = [router.notifications.get_nowait()["params"]["n"] for _ in range(2)]
        assert kept == [1, 2]  # the oldest dropped
        got: list[dict[str, Any]] = []
        router.on_notification = got.append
        router.route({"jsonrpc": "2.0", "method": "notifications/y"})
        assert [m["method"] for m in got] == ["notifications/y"]

    asyncio.run(main())


def test_stdio_and_legacy_sse_share_the_router() -> None:
    stdio = StdioTransport(StdioOptions(command=["true"]))
    legacy = LegacySseTransport(HttpTransport(HttpOptions(url="http://x.test/sse")))
    for transport in (stdio, legacy):
        assert isinstance(transport.router, PeerRouter)
        assert transport.notifications is transport.router.notifications
        handler = print
        with transport.notifications_to(handler):
            assert transport.router.on_notification is handler
            assert transport.on_notification is handler
        assert transport.router.on_notification is None


# -- Streamable HTTP: the same answers, from the same place ------------------------------------

SERVER_REQUESTS = [
    {"jsonrpc": "2.0", "id": "p", "method": "ping"},
    {"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage", "params": {}},
]


def _stdio_answers(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the router stdio and legacy HTTP+SSE share answers to these requests."""
    router, replies, _ = _router()
    for message in messages:
        router.route(message)
    return replies


def _http(handler: Any) -> Any:
    import httpx

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return HttpTransport(HttpOptions(url="http://mcp.test/mcp"), client=client)


def _sse(*messages: dict[str, Any]) -> Any:
    import json

    import httpx

    body = "".join(f"event: message\ndata: {json.dumps(m)}\n\n" for m in messages)
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)


def test_a_ping_and_an_unknown_request_in_a_posts_event_stream_are_answered_as_over_stdio() -> None:
    """A plain call's POST answered by an event stream that carries a ping and a request
    mcptask does not do before its answer: each answer POSTed is the one stdio's router sends
    (transports/peer.py `own_answer`), with the session's header."""
    import json

    import httpx

    from mcptask.protocols.base import CallHooks
    from mcptask.protocols.mcp_calls import CallTalk
    from mcptask.transports.rpc import RpcClient

    answers: list[tuple[dict[str, Any], str | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        message = json.loads(request.content)
        if "method" not in message:  # an answer of ours
            answers.append((message, request.headers.get("mcp-session-id")))
            return httpx.Response(202)
        result = {"jsonrpc": "2.0", "id": message["id"], "result": {"content": []}}
        return _sse(*SERVER_REQUESTS, result)

    notes: list[str] = []

    async def main() -> Any:
        rpc = RpcClient(_http(handler))
        talk = CallTalk(
            rpc,
            CallHooks(on_note=notes.append),
            "tok",
            asker="tool t",
            headers={"Mcp-Session-Id": "s"},
        )
        try:
            return await rpc.request("tools/call", {"name": "t"}, on_message=talk.handle)
        finally:
            await rpc.aclose()

    assert asyncio.run(main()) == {"content": []}
    assert [a for a, _ in answers] == _stdio_answers(SERVER_REQUESTS)
    assert answers[1][0]["error"] == {
        "code": METHOD_NOT_FOUND,
        "message": "Method not found: sampling/createMessage",
    }
    assert all(session == "s" for _, session in answers)
    assert notes == [
        "the server sent a sampling/createMessage request, which mcptask does not support: refused"
    ]


def test_requests_on_the_get_stream_are_answered_as_over_stdio() -> None:
    """The session's GET stream (a watch's push feed): a ping and an unknown request get the
    router's answers (they were left unanswered); a question for a task is kept for `answer`,
    one that names no task is left (not this reader's); notifications are not answered."""
    import json

    import httpx

    from mcptask.protocols.mcp2025 import Mcp2025, SessionFeed
    from mcptask.transports.rpc import RpcClient

    answers: list[tuple[dict[str, Any], str | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        answers.append((json.loads(request.content), request.headers.get("mcp-session-id")))
        return httpx.Response(202)

    question = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "elicitation/create",
        "params": {"_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}},
    }
    stray = {"jsonrpc": "2.0", "id": 4, "method": "elicitation/create", "params": {}}
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}

    async def main() -> None:
        rpc = RpcClient(_http(handler))
        proto = Mcp2025(rpc, "http://mcp.test/mcp")
        feed = SessionFeed(proto, "s", {"t1"})

        async def deliver(task: Any) -> None:
            raise AssertionError("no status was pushed")

        try:
            for message in [*SERVER_REQUESTS, question, stray, note, SERVER_REQUESTS[0]]:
                await feed._handle(json.dumps(message), deliver)
            assert proto._mailbox("t1").get_nowait() == question
        finally:
            await rpc.aclose()

    asyncio.run(main())
    # the ping seen twice is answered once (ServerRequests: each id once)
    assert [a for a, _ in answers] == _stdio_answers(SERVER_REQUESTS)
    assert all(session == "s" for _, session in answers)


def _answered_on_a_plain_request(
    *,
    client_headers: dict[str, str],
    request_headers: dict[str, str],
    stream: list[dict[str, Any]] | None = None,
    answer_status: int = 202,
    **kwargs: Any,
) -> tuple[Any, list[tuple[dict[str, Any], dict[str, str]]]]:
    """A request sent with no handler for what its stream carries (`tasks/get`, `tools/list`,
    `initialize`...), answered by an event stream with a ping, an unknown request and a
    notification before its answer: what it returned, and each answer of ours with its
    headers."""
    import json

    import httpx

    from mcptask.transports.rpc import RpcClient

    answers: list[tuple[dict[str, Any], dict[str, str]]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        message = json.loads(request.content)
        if "method" not in message:  # an answer of ours
            answers.append((message, dict(request.headers)))
            return httpx.Response(answer_status)
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
        result = {"jsonrpc": "2.0", "id": message["id"], "result": {"status": "working"}}
        carried = stream if stream is not None else [SERVER_REQUESTS[0], note, SERVER_REQUESTS[1]]
        return _sse(*carried, result)

    async def main() -> Any:
        rpc = RpcClient(_http(handler), headers=client_headers)
        try:
            return await rpc.request(
                "tasks/get", {"taskId": "t"}, headers=request_headers, **kwargs
            )
        finally:
            await rpc.aclose()

    return asyncio.run(main()), answers


def test_requests_on_the_stream_of_a_request_with_no_handler_are_answered_as_over_stdio() -> None:
    """Issue 36: a `tasks/get` (or `tools/list`, `initialize`) whose POST is answered by an
    event stream carrying a ping and a request mcptask does not do: each gets stdio's answer
    (they were dropped, and the server waited), with the request's session and version
    headers; the notification is not answered; the request still returns its result."""
    result, answers = _answered_on_a_plain_request(
        client_headers={"MCP-Protocol-Version": "2025-11-25"},
        request_headers={"Mcp-Session-Id": "s"},
        answer_headers={"Mcp-Session-Id": "s"},  # as protocols/mcp2025.py's `_call` gives
    )
    assert result == {"status": "working"}
    assert [a for a, _ in answers] == _stdio_answers(SERVER_REQUESTS)
    for _, headers in answers:
        assert headers["mcp-session-id"] == "s"
        assert headers["mcp-protocol-version"] == "2025-11-25"


def test_an_answer_on_a_2026_request_s_stream_names_no_method() -> None:
    """MCP 2026-07-28's request headers name the request (`Mcp-Method`, `Mcp-Name`); an
    answer of ours carries the version only (`answer_headers`, as protocols/mcp2026.py
    gives it)."""
    from mcptask.protocols import mcp2026

    result, answers = _answered_on_a_plain_request(
        client_headers={},
        request_headers=mcp2026.request_headers("tasks/get", "t"),
        answer_headers={"MCP-Protocol-Version": mcp2026.VERSION},
    )
    assert result == {"status": "working"}
    assert [a for a, _ in answers] == _stdio_answers(SERVER_REQUESTS)
    for _, headers in answers:
        assert headers["mcp-protocol-version"] == mcp2026.VERSION
        assert "mcp-method" not in headers and "mcp-name" not in headers


def test_a_protocol_that_gives_no_answer_headers_answers_nothing() -> None:
    """A2A and Agno give no `answer_headers`: a message with a method and an id on their
    streams (an agent's, a proxy's) is let go, not answered with a refusal."""
    result, answers = _answered_on_a_plain_request(client_headers={}, request_headers={})
    assert result == {"status": "working"}
    assert answers == []


def test_a_request_replayed_on_the_stream_is_answered_once() -> None:
    """A resumed event stream may replay a request: one answer per id (ids of either type
    kept apart)."""
    ping = SERVER_REQUESTS[0]
    same_number_as_text = {"jsonrpc": "2.0", "id": "7", "method": "ping"}
    result, answers = _answered_on_a_plain_request(
        client_headers={},
        request_headers={},
        answer_headers={},
        stream=[ping, ping, SERVER_REQUESTS[1], SERVER_REQUESTS[1], same_number_as_text],
    )
    assert result == {"status": "working"}
    assert [a["id"] for a, _ in answers] == ["p", 7, "7"]


def test_an_answer_that_cannot_be_sent_does_not_fail_the_request() -> None:
    """The answer's POST refused (a 500): the request it came inside goes on to its answer."""
    result, answers = _answered_on_a_plain_request(
        client_headers={}, request_headers={}, answer_headers={}, answer_status=500
    )
    assert result == {"status": "working"}
    assert len(answers) == 2


def test_a_transport_whose_router_answers_gets_no_second_answer() -> None:
    """stdio and legacy SSE (`rpc.SharesOneStream`): their router answers pings and hands
    other requests to the request waiting longest, which may be another's to answer (a
    question for a task whose `tasks/result` is open): `RpcClient.request` refuses none."""
    from collections.abc import AsyncIterator, Mapping

    from mcptask.transports.rpc import RpcClient, SharesOneStream

    sent: list[dict[str, Any]] = []

    class Routed:
        shares_one_stream = True
        url = "stdio"

        async def send(
            self,
            message: dict[str, Any],
            *,
            headers: Mapping[str, str] | None = None,
            url: str | None = None,
            timeout: float | None = None,
        ) -> AsyncIterator[dict[str, Any]]:
            sent.append(message)
            if "method" in message:
                question = {"jsonrpc": "2.0", "id": 9, "method": "elicitation/create"}
                yield question
                yield {"jsonrpc": "2.0", "id": message["id"], "result": {}}

        async def aclose(self) -> None:
            pass

        def redact(self, message: str) -> str:
            return message

    transport = Routed()
    assert isinstance(transport, SharesOneStream)

    async def main() -> Any:
        return await RpcClient(transport).request("tasks/get", {}, answer_headers={})

    assert asyncio.run(main()) == {}
    assert [m.get("method") for m in sent] == ["tasks/get"]
