"""The JSON-RPC client over a scripted transport: what it sends, how it matches answers, the
errors it raises, and the server's own messages on a request's stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import pytest

from mcptask.errors import ProtocolError, RpcError
from mcptask.transports.rpc import Message, RpcClient, error_from


class FakeTransport:
    """Answers each `send` with the next scripted list of messages, and records what was sent,
    with its options, and whether each answer stream was closed."""

    url = "http://fake.example/mcp"

    def __init__(self, *answers: list[Message]) -> None:
        self.headers: dict[str, str] = {}
        self.answers = list(answers)
        self.sent: list[Message] = []
        self.options: list[dict[str, Any]] = []
        self.streams_closed = 0
        self.closed = False

    def send(
        self,
        message: Message,
        *,
        headers: Mapping[str, str] | None = None,
        url: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[Message]:
        self.sent.append(message)
        self.options.append({"headers": headers, "url": url, "timeout": timeout})
        answer = self.answers.pop(0) if self.answers else []
        return self._stream(answer)

    async def _stream(self, answer: list[Message]) -> AsyncIterator[Message]:
        try:
            for msg in answer:
                yield msg
        finally:
            self.streams_closed += 1

    async def aclose(self) -> None:
        self.closed = True

    def redact(self, message: str) -> str:
        return message


def run(coro: Awaitable[Any]) -> Any:
    async def main() -> Any:
        return await coro

    return asyncio.run(main())


def answer(result: Any, req_id: Any = 1) -> Message:
    return {"jsonrpc": "2.0", "id": req_id, "result": result}


# -- requests -----------------------------------------------------------------------------------


def test_a_request_returns_its_result() -> None:
    t = FakeTransport([answer({"tasks": []})])
    rpc = RpcClient(t)
    assert run(rpc.request("tasks/list", {"cursor": "c1"})) == {"tasks": []}
    assert t.sent == [
        {"jsonrpc": "2.0", "id": 1, "method": "tasks/list", "params": {"cursor": "c1"}}
    ]
    assert t.streams_closed == 1


def test_a_request_without_params_sends_none() -> None:
    t = FakeTransport([answer(None)])
    assert run(RpcClient(t).request("ping")) is None
    assert t.sent == [{"jsonrpc": "2.0", "id": 1, "method": "ping"}]


def test_each_request_has_a_new_id() -> None:
    t = FakeTransport([answer("a", 1)], [answer("b", 2)], [answer("c", 3)])
    rpc = RpcClient(t)
    assert [run(rpc.request("ping")) for _ in range(3)] == ["a", "b", "c"]
    assert [m["id"] for m in t.sent] == [1, 2, 3]


def test_request_options_reach_the_transport() -> None:
    t = FakeTransport([answer({})])
    run(
        RpcClient(t).request(
            "tasks/get", {"taskId": "t1"}, headers={"X-A": "1"}, url="http://other/", timeout=2.5
        )
    )
    assert t.options == [{"headers": {"X-A": "1"}, "url": "http://other/", "timeout": 2.5}]


def test_an_error_object_raises_rpc_error() -> None:
    err = {"code": -32602, "message": "no such task", "data": {"taskId": "t1"}}
    t = FakeTransport([{"jsonrpc": "2.0", "id": 1, "error": err}])
    with pytest.raises(RpcError) as caught:
        run(RpcClient(t).request("tasks/get", {"taskId": "t1"}))
    assert caught.value.code == -32602
    assert caught.value.rpc_message == "no such task"
    assert caught.value.data == {"taskId": "t1"}
    assert str(caught.value) == "server error -32602: no such task"
    assert caught.value.to_json() == err
    assert t.streams_closed == 1


def test_a_null_error_beside_a_result_is_the_result() -> None:
    t = FakeTransport([{"jsonrpc": "2.0", "id": 1, "result": {"ok": True}, "error": None}])
    assert run(RpcClient(t).request("ping")) == {"ok": True}


@pytest.mark.parametrize(
    ("error", "says"),
    [
        ("boom", "not an object"),
        ({"message": "no code"}, "without an integer code"),
        ({"code": "-32000", "message": "text code"}, "without an integer code"),
        ({"code": True, "message": "bool code"}, "without an integer code"),
        ({"code": 1.5, "message": "float code"}, "without an integer code"),
    ],
)
def test_a_malformed_error_is_a_protocol_error(error: Any, says: str) -> None:
    t = FakeTransport([{"jsonrpc": "2.0", "id": 1, "error": error}])
    with pytest.raises(ProtocolError, match=says):
        run(RpcClient(t).request("ping"))


def test_error_from_takes_a_missing_message_as_empty() -> None:
    err = error_from({"code": -32000})
    assert (err.code, err.rpc_message, err.data) == (-32000, "", None)
    assert error_from({"code": 5, "message": 7}).rpc_message == "7"


@pytest.mark.parametrize("wrong_id", [2, 0, "1", None])
def test_an_answer_to_another_id_is_a_protocol_error(wrong_id: Any) -> None:
    t = FakeTransport([answer({}, wrong_id)])
    with pytest.raises(ProtocolError) as caught:
        run(RpcClient(t).request("tasks/get"))
    assert str(caught.value) == (f"the server answered request id {wrong_id!r} to tasks/get (id 1)")
    assert t.streams_closed == 1


def test_server_messages_before_the_answer_go_to_on_message_in_order() -> None:
    progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
    ask = {"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {"message": "?"}}
    t = FakeTransport([progress, ask, answer({"done": True})])
    seen: list[Message] = []

    async def on_message(msg: Message) -> None:
        seen.append(msg)

    assert run(RpcClient(t).request("tools/call", on_message=on_message)) == {"done": True}
    assert seen == [progress, ask]


def test_server_messages_are_skipped_without_a_handler() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
    t = FakeTransport([note, note, answer(42)])
    assert run(RpcClient(t).request("tools/call")) == 42


def test_a_handler_that_raises_ends_the_request_and_closes_the_stream() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
    t = FakeTransport([note, answer(42)])

    async def on_message(msg: Message) -> None:
        raise RuntimeError("handler failed")

    with pytest.raises(RuntimeError, match="handler failed"):
        run(RpcClient(t).request("tools/call", on_message=on_message))
    assert t.streams_closed == 1


@pytest.mark.parametrize("junk", [{"jsonrpc": "2.0", "id": 1}, {"hello": "world"}, {}])
def test_something_that_is_not_json_rpc_is_a_protocol_error(junk: Message) -> None:
    t = FakeTransport([junk, answer({})])
    with pytest.raises(ProtocolError, match="not JSON-RPC to tasks/get"):
        run(RpcClient(t).request("tasks/get"))


@pytest.mark.parametrize(
    "stream",
    [[], [{"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}]],
)
def test_a_stream_that_ends_without_an_answer_is_a_protocol_error(stream: list[Message]) -> None:
    t = FakeTransport(stream)
    with pytest.raises(ProtocolError, match="closed the connection without answering tasks/get"):
        run(RpcClient(t).request("tasks/get"))
    assert t.streams_closed == 1


def test_the_stream_is_closed_once_the_answer_came() -> None:
    late = {"jsonrpc": "2.0", "method": "notifications/late", "params": {}}
    t = FakeTransport([answer("first"), late, answer("second")])
    seen: list[Message] = []

    async def on_message(msg: Message) -> None:
        seen.append(msg)

    assert run(RpcClient(t).request("ping", on_message=on_message)) == "first"
    assert seen == []
    assert t.streams_closed == 1


# -- notifications and answers to the server --------------------------------------------------


def test_notify_sends_no_id_and_reads_the_stream_to_its_end() -> None:
    t = FakeTransport([{"jsonrpc": "2.0", "method": "ignored", "params": {}}])
    rpc = RpcClient(t)
    assert run(rpc.notify("notifications/initialized", headers={"X-A": "1"})) is None
    run(rpc.notify("notifications/cancelled", {"requestId": 3}))
    assert t.sent == [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}},
    ]
    assert t.options[0]["headers"] == {"X-A": "1"}
    assert t.streams_closed == 2


def test_notify_does_not_use_a_request_id() -> None:
    t = FakeTransport([], [answer("x", 1)])
    rpc = RpcClient(t)
    run(rpc.notify("notifications/initialized"))
    assert run(rpc.request("ping")) == "x"


@pytest.mark.parametrize("req_id", [0, 7, "abc", -1])
def test_respond_echoes_the_id_as_received(req_id: Any) -> None:
    t = FakeTransport([])
    run(RpcClient(t).respond(req_id, {"action": "accept", "content": {"x": 1}}))
    assert t.sent == [
        {"jsonrpc": "2.0", "id": req_id, "result": {"action": "accept", "content": {"x": 1}}}
    ]
    assert t.streams_closed == 1


def test_respond_with_no_result_sends_null() -> None:
    t = FakeTransport([{"jsonrpc": "2.0", "method": "notifications/ignored"}])
    run(RpcClient(t).respond(0))
    assert t.sent == [{"jsonrpc": "2.0", "id": 0, "result": None}]
    assert t.streams_closed == 1


def test_respond_with_an_error_sends_only_the_error() -> None:
    t = FakeTransport([])
    err = {"code": -32601, "message": "not supported"}
    run(RpcClient(t).respond(0, {"ignored": True}, error=err, headers={"X-A": "1"}))
    assert t.sent == [{"jsonrpc": "2.0", "id": 0, "error": err}]
    assert t.options[0]["headers"] == {"X-A": "1"}


def test_the_client_shows_the_transport_url_and_closes_it() -> None:
    t = FakeTransport()
    rpc = RpcClient(t)
    assert rpc.url == "http://fake.example/mcp"
    run(rpc.aclose())
    assert t.closed


def test_respond_and_request_can_run_while_a_request_is_open() -> None:
    """An elicitation answered from inside `on_message`, as `answer` does it."""
    ask = {"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {}}
    t = FakeTransport([ask, answer({"done": True})], [])
    rpc = RpcClient(t)

    def responder(client: RpcClient) -> Callable[[Message], Awaitable[None]]:
        async def on_message(msg: Message) -> None:
            await client.respond(msg["id"], {"action": "decline"})

        return on_message

    assert run(rpc.request("tools/call", on_message=responder(rpc))) == {"done": True}
    assert t.sent[1] == {"jsonrpc": "2.0", "id": 0, "result": {"action": "decline"}}
