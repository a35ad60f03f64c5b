"""Edges of the poll pool's connection reuse (transports/poll_pool.py), on a raw keep-alive
HTTP/1.1 server: an answer big enough to pause reading leaves the connection readable for the
next poll, an exchange released twice enters the pool once, a second answer nobody asked for
closes the connection."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable

import pytest

from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.rpc import RpcClient

from servers.fault_server import raw_server, read_request

Reply = Callable[[int], bytes]


def _answer(req_id: int, size: int) -> bytes:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": req_id, "result": {"pad": "x" * size, "n": req_id}}
    ).encode()
    head = (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class KeepAlive:
    """Answers each request on a connection with `reply(request id)`; counts connections."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.connections = 0
        self.url, self.close = raw_server(self._serve)

    def _serve(self, conn: socket.socket) -> None:
        self.connections += 1
        data = b""
        with conn:
            while (got := read_request(conn, data)) is not None:
                body, data = got
                conn.sendall(self.reply(json.loads(body)["id"]))


def _polls(url: str, n: int) -> tuple[list[int], HttpTransport]:
    async def go() -> tuple[list[int], HttpTransport]:
        transport = HttpTransport(HttpOptions(url=url, many=True, read_timeout=5))
        rpc = RpcClient(transport)
        try:
            got = [(await rpc.request("tasks/get", {"taskId": "t"}))["n"] for _ in range(n)]
            assert transport._polls is not None
            return got, transport
        finally:
            await rpc.aclose()

    return asyncio.run(go())


def test_an_answer_that_paused_reading_leaves_the_connection_readable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An answer that arrives whole in one read past the high-water mark pauses reading just
    as it ends (the mark is lowered here: asyncio reads at most 256 KiB at a time); the next
    poll on that connection still gets its answer."""
    from mcptask.transports import poll_pool

    monkeypatch.setattr(poll_pool, "HIGH_WATER", 1024)
    server = KeepAlive(lambda req_id: _answer(req_id, 4096))
    try:
        got, _ = _polls(server.url, 3)
    finally:
        server.close()
    assert got == [1, 2, 3]
    assert server.connections == 1  # one keep-alive connection, reused


def test_an_exchange_released_twice_enters_the_pool_once() -> None:
    server = KeepAlive(lambda req_id: _answer(req_id, 10))

    async def go() -> None:
        from mcptask.transports.poll_pool import PollPool, request_line

        pool = PollPool(server.url, connect_timeout=5)
        line = request_line("POST", server.url)
        assert line is not None
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        ex = await pool.send(line, pool.head({}), b"", body, 5)
        ex.release()
        ex.release()
        assert len(pool._idle) == 1
        first, second = await asyncio.gather(
            pool.send(line, pool.head({}), b"", body, 5),
            pool.send(line, pool.head({}), b"", body, 5),
        )
        assert first.conn is not second.conn
        for done in (first, second):
            done.release()
        await pool.aclose()

    try:
        asyncio.run(go())
    finally:
        server.close()


def test_a_second_answer_nobody_asked_for_closes_the_connection() -> None:
    """An answer followed at once by another (a broken server or proxy): the first is read as
    sent, and the connection is not used again."""
    server = KeepAlive(lambda req_id: _answer(req_id, 10) + _answer(99, 10))
    try:
        got, _ = _polls(server.url, 2)
    finally:
        server.close()
    assert got == [1, 2]
    assert server.connections == 2
