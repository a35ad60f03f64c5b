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
