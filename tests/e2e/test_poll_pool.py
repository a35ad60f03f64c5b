"""The polls of a large watch (`HttpOptions(many=True)`) go over `transports/poll_pool.py`:
plain asyncio connections, answers parsed by llhttp. Against hostile and odd servers, every
outcome is the one the general path (httpx's default transport, `many=False`) gives for the
same answer: the same result, or the same mcptask error class and one-line message."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcptask.errors import McptaskError
from mcptask.session.endpoint import MANY_TASKS
from mcptask.transports import poll_pool
from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.rpc import RpcClient

from servers.fault_server import (
    MIB,
    SESSION,
    TASK_ID,
    Answer,
    FaultHandler,
    FaultServer,
    Json,
    base_env,
    encoded,
    endless_head,
    endless_trailer,
    gzip_bomb,
    hang,
    html,
    huge,
    huge_chunked,
    keepalive,
    one_per_connection,
    raw,
    raw_server,
    redirect,
    reset,
    reset_at_once,
    rpc_error,
    short_body,
    sse_result,
    task,
    too_many,
    trickle,
    wire,
    wire_answer,
)
from servers.many_watch import POLLS_LINE, P, few_and_many, norm, retries


@pytest.fixture(scope="module")
def fault() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs


def closed() -> Answer:
    """The connection closes before any answer."""

    def answer(h: FaultHandler, msg: Json) -> None:
        h.close_connection = True

    return answer


@dataclass
class Seen:
    """What a transport did: the outcome and the state of its poll pool."""

    outcome: tuple[Any, ...]
    #: the poll pool was made (the poll went the lean way)
    polled: bool
    #: a redirect turned the lean way off
    lean_off: bool
    #: connections the pool holds open (idle or in use) after the requests
    conns: int
    idle: int


async def _ask(
    url: str,
    *,
    many: bool,
    method: str = "tasks/get",
    times: int = 1,
    timeout: float | None = None,
    client_headers: dict[str, str] | None = None,
    **options: Any,
) -> Seen:
    t = HttpTransport(HttpOptions(url=url, many=many, **options))
    rpc = RpcClient(t, headers={"Mcp-Session-Id": SESSION, **(client_headers or {})})
    outcomes: list[tuple[Any, ...]] = []
    try:
        for _ in range(times):
            try:
                got = await rpc.request(method, {"taskId": TASK_ID}, timeout=timeout)
                outcomes.append(("ok", got))
            except McptaskError as exc:
                assert "\n" not in exc.message, exc.message  # one line (printing sanitises it)
                outcomes.append((type(exc).__name__, norm(exc.message), exc.exit_code))
        pool = t._polls
        seen = Seen(
            tuple(outcomes) if times > 1 else outcomes[0],
            pool is not None,
            t._lean_off,
            len([c for c in pool.conns if not c.dead]) if pool is not None else 0,
            len([c for c in pool._idle if not c.dead]) if pool is not None else 0,
        )
    finally:
        await rpc.aclose()
    if pool is not None:
        assert not pool.conns, "aclose left connections open"
    return seen


def both(fault: FaultServer, answers: dict[str, list[Answer]], **kwargs: Any) -> tuple[Seen, Seen]:
    """The same scenario (fresh counters each) through the general path and the poll path."""
    general = asyncio.run(_ask(fault.url(**answers), many=False, **kwargs))
    polled = asyncio.run(_ask(fault.url(**answers), many=True, **kwargs))
    assert not general.polled
    assert polled.polled and not polled.lean_off
    return general, polled


def same(fault: FaultServer, answers: dict[str, list[Answer]], **kwargs: Any) -> Seen:
    general, polled = both(fault, answers, **kwargs)
    assert polled.outcome == general.outcome
    return polled


def error(seen: Seen) -> str:
    assert seen.outcome[0] != "ok", seen.outcome
    return str(seen.outcome[1])


COMPLETED = task(status="completed", statusMessage="done")


# -- 1. dropped connections ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "drop", [closed, reset_at_once], ids=["closed-before-answer", "reset-before-answer"]
)
def test_a_safe_poll_is_sent_once_more_when_the_connection_dies_before_any_answer(
    fault: FaultServer, drop: Callable[[], Answer]
) -> None:
    url = fault.url(get=[drop(), COMPLETED])
    seen = asyncio.run(_ask(url, many=True))
    assert seen.polled and seen.outcome == ("ok", COMPLETED)
    assert len(fault.seen(url, "tasks/get")) == 2
    assert same(fault, {"get": [drop(), COMPLETED]}).outcome == ("ok", COMPLETED)


@pytest.mark.parametrize(
    "drop", [closed, reset_at_once], ids=["closed-before-answer", "reset-before-answer"]
)
def test_a_result_fetch_is_not_sent_again_when_the_connection_dies(
    fault: FaultServer, drop: Callable[[], Answer]
) -> None:
    answers = {"result": [drop(), {"content": [], "isError": False}]}
    url = fault.url(**answers)
    seen = asyncio.run(_ask(url, many=True, method="tasks/result"))
    assert seen.polled
    assert len(fault.seen(url, "tasks/result")) == 1
    general, polled = both(fault, answers, method="tasks/result")
    assert polled.outcome == general.outcome
    assert polled.outcome[0] == "TransportError"


CUT = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


@pytest.mark.parametrize(
    "answer",
    [
        short_body,
        reset,
        lambda: wire(CUT + b'Transfer-Encoding: chunked\r\n\r\n5\r\n{"jso'),
        lambda: wire(CUT + b'Transfer-Encoding: chunked\r\n\r\n5\r\n{"jso\r\n'),
        lambda: wire(CUT + b"Transfer-Encoding: chunked\r\n\r\n"),
        lambda: wire(CUT + b'Content-Length: 100\r\n\r\n{"jsonrpc": "2.0"'),
    ],
    ids=["content-length", "reset", "chunk", "chunk-end", "no-chunk", "raw-length"],
)
def test_a_connection_cut_mid_body_fails_the_same(
    fault: FaultServer, answer: Callable[[], Answer]
) -> None:
    seen = same(fault, {"get": [answer()]})
    assert seen.outcome[0] == "TransportError", seen.outcome
    assert seen.conns == 0


def test_a_keep_alive_connection_the_server_closed_while_idle_is_not_used(
    fault: FaultServer,
) -> None:
    url = fault.url(get=[keepalive(then_close=True), keepalive(COMPLETED)])
    seen = asyncio.run(_ask(url, many=True, times=2))
    assert seen.outcome == (("ok", task()), ("ok", COMPLETED))
    assert len(fault.seen(url, "tasks/get")) == 2


def test_a_keep_alive_connection_is_used_again(fault: FaultServer) -> None:
    url = fault.url(get=[keepalive()])
    seen = asyncio.run(_ask(url, many=True, times=5))
    assert seen.outcome == (("ok", task()),) * 5
    assert seen.conns == 1 and seen.idle == 1


# -- 2. malformed HTTP ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        lambda: wire(b"HTTP/1.1 OK\r\n\r\n"),
        lambda: wire(b"SSH-2.0-OpenSSH_9.6\r\n"),
        lambda: wire_answer(head=b"Bad Header\r\n"),
        lambda: wire_answer(head=b"X-Ok: 1\r\n: no name\r\n"),
        lambda: wire_answer(head=b"Content-Length: 3\r\n"),
        lambda: wire(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\n\r\n\x81\x05hello"
        ),
        lambda: wire(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"),
        lambda: wire(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
    ],
    ids=[
        "bad-status",
        "not-http",
        "bad-header",
        "empty-name",
        "two-lengths",
        "upgrade",
        "negative-length",
        "bad-chunk",
    ],
)
def test_malformed_http_is_the_same_error_class(
    fault: FaultServer, answer: Callable[[], Answer]
) -> None:
    general, polled = both(fault, {"get": [answer()]})
    assert polled.outcome[0] == general.outcome[0] == "TransportError", (general, polled)
    assert polled.outcome[2] == general.outcome[2]
    # "connection to HOST failed: ..." both ways; the two HTTP parsers word the detail in
    # their own terms
    assert error(polled).split(":")[0] == error(general).split(":")[0]
    assert polled.conns == 0


def test_an_interim_100_continue_is_skipped(fault: FaultServer) -> None:
    answer = wire_answer(status=b"200 OK")
    continued = wire(lambda msg: b"HTTP/1.1 100 Continue\r\n\r\n" + _bytes_of(answer, msg))
    seen = same(fault, {"get": [continued]})
    assert seen.outcome == ("ok", task())


def _bytes_of(answer: Answer, msg: Json) -> bytes:
    """The bytes a `wire` answer sends for `msg`."""

    class Sink:
        close_connection = False

        def __init__(self) -> None:
            self.out = b""

        def write(self, data: bytes) -> None:
            self.out += data

    sink = Sink()
    assert callable(answer)
    answer(sink, msg)  # type: ignore[arg-type]
    return sink.out


def test_bytes_sent_when_no_request_is_pending_close_the_connection(
    fault: FaultServer,
) -> None:
    # an answer, then bytes nobody asked for on a connection said to stay open
    extra = wire_answer(head=b"", keep=True)
    trailing = wire(lambda msg: _bytes_of(extra, msg) + b"HTTP/1.1 200 OK\r\n\r\n", keep=True)
    url = fault.url(get=[trailing, keepalive(COMPLETED)])
    seen = asyncio.run(_ask(url, many=True, times=2))
    assert seen.outcome == (("ok", task()), ("ok", COMPLETED))
    assert seen.conns <= 1


@pytest.mark.parametrize(
    "answer",
    [
        lambda: wire_answer(head=b"Connection: close\r\n", keep=True),
        lambda: wire(
            lambda msg: _bytes_of(wire_answer(), msg).replace(b"HTTP/1.1", b"HTTP/1.0", 1),
            keep=True,
        ),
    ],
    ids=["connection-close", "http-1.0"],
)
def test_an_answer_that_closes_leaves_no_connection_to_reuse(
    fault: FaultServer, answer: Callable[[], Answer]
) -> None:
    url = fault.url(get=[answer(), answer()])
    seen = asyncio.run(_ask(url, many=True, times=2))
    assert seen.outcome == (("ok", task()), ("ok", task()))
    assert seen.conns == 0 and seen.idle == 0
    assert same(fault, {"get": [answer()]}).outcome == ("ok", task())


# -- 3. slow or hung servers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [hang, lambda: hang(after_headers=True), lambda: trickle(every=0.2)],
    ids=["no-status-line", "hung-body", "trickled-body"],
)
@pytest.mark.parametrize("how", ["read_timeout", "timeout"])
def test_a_slow_server_times_out_the_same(
    fault: FaultServer, answer: Callable[[], Answer], how: str
) -> None:
    kwargs: dict[str, Any] = {"read_timeout": 0.6} if how == "read_timeout" else {"timeout": 0.6}
    seen = same(fault, {"get": [answer()]}, **kwargs)
    assert seen.outcome[0] == "TransportError"
    assert "timed out waiting for" in error(seen)
    assert seen.conns == 0  # the connection is not used again


def _late_head_then_late_body(h: FaultHandler, msg: Json) -> None:
    """The status line and headers at 0.7 s, the body at 1.4 s: each part within a 1 s
    timeout of the last, the whole not."""
    body = json.dumps({"jsonrpc": "2.0", "id": msg.get("id"), "result": task()}).encode()
    if h.fault_server.stopping.wait(0.7):
        return
    h.send_head(200, "application/json", length=len(body))
    h.wfile.flush()
    if not h.fault_server.stopping.wait(0.7):
        h.write(body)
    h.close_connection = True


def test_the_whole_answer_deadline_counts_from_the_request_the_same(fault: FaultServer) -> None:
    """The whole-answer deadline runs from when the poll went out, its wait for the headers
    included, not from when they came (which would let a poll take twice its timeout)."""
    seen = same(fault, {"get": [_late_head_then_late_body]}, timeout=1.0)
    assert seen.outcome[0] == "TransportError"
    assert "timed out waiting for" in error(seen)


@pytest.mark.parametrize("many", [False, True], ids=["general", "polled"])
def test_a_rest_get_is_held_to_the_whole_answer_deadline(fault: FaultServer, many: bool) -> None:
    """A GET of A2A's HTTP+JSON binding (`rest`) has the same bound as a poll: its answer,
    headers included, comes whole within the timeout of the request (no read may wait long,
    but a late head and a late body together may not stretch it)."""
    url = fault.url(stream=[_late_head_then_late_body])

    async def go() -> str:
        t = HttpTransport(HttpOptions(url=url, many=many, read_timeout=1.0))
        try:
            await t.rest("GET", url)
            return "ok"
        except McptaskError as exc:
            return f"{type(exc).__name__}: {exc.message}"
        finally:
            await t.aclose()

    got = asyncio.run(go())
    assert got.startswith("TransportError: timed out waiting for"), got


# -- 4. huge bodies ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        lambda: huge(8 * MIB, declared=True),
        lambda: huge(8 * MIB, declared=False),
        lambda: huge_chunked(8 * MIB),
        lambda: encoded(body=gzip_bomb(64 * MIB, layers=1)),
    ],
    ids=["declared", "close-delimited", "chunked", "gzip-bomb"],
)
def test_a_body_over_max_body_is_refused_the_same(
    fault: FaultServer, answer: Callable[[], Answer]
) -> None:
    seen = same(fault, {"get": [answer()]}, max_body=MIB)
    assert seen.outcome[0] == "ProtocolError", seen.outcome
    assert "MCPTASK_MAX_BODY" in error(seen)


def test_a_gzip_answer_is_decoded(fault: FaultServer) -> None:
    assert same(fault, {"get": [encoded(COMPLETED)]}).outcome == ("ok", COMPLETED)


def test_reading_a_huge_body_pauses_at_the_high_water_mark(fault: FaultServer) -> None:
    """While nobody reads the body, the connection stops reading: the buffered body stays
    near HIGH_WATER however much the server has to send."""
    url = fault.url(get=[huge(64 * MIB, declared=True)])
    buffered: list[int] = []

    async def go() -> None:
        t = HttpTransport(HttpOptions(url=url, many=True))
        try:
            head, _ = t._poll_head()
            line = poll_pool.request_line("POST", url)
            assert t._polls is not None and line is not None
            ex = await t._polls.send(
                line, head, b"", b'{"jsonrpc":"2.0","id":1,"method":"tasks/get"}', 10
            )
            for _ in range(200):
                if ex.conn.paused:
                    break
                await asyncio.sleep(0.01)
            for _ in range(20):  # the server keeps writing; nothing more comes in
                await asyncio.sleep(0.01)
                buffered.append(ex.buffered)
            assert ex.conn.paused
            ex.release()
        finally:
            await t.aclose()

    asyncio.run(go())
    # llhttp hands over what one read gave (up to 256 KiB) past the mark at most
    assert max(buffered) <= 2 * poll_pool.HIGH_WATER + 256 * 1024


# -- 5. answers that are not plain JSON ----------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        lambda: sse_result(COMPLETED),
        lambda: sse_result(COMPLETED, truncate=True),
        lambda: html(502),
        lambda: html(200),
        lambda: raw(202, b""),
        lambda: raw(200, b""),
        lambda: raw(204, b""),
        lambda: rpc_error(-32602, "Task not found", status=404),
        lambda: rpc_error(-32603, "boom", status=500),
        lambda: rpc_error(-32602, "no such task"),
        lambda: too_many("3"),
        lambda: raw(503, b'{"detail": "down for maintenance"}', headers={"Retry-After": "7"}),
        lambda: raw(401, b'{"error": "invalid_token"}'),
        lambda: raw(403, b"forbidden", "text/plain"),
        lambda: raw(200, b"[1, 2]"),
        lambda: raw(200, b"{nope"),
        lambda: raw(200, b'{"jsonrpc": "2.0", "id": 1, "result": {}}', "text/plain"),
        lambda: wire_answer(head=b"Content-Type: application/json\r\n"),
    ],
    ids=[
        "sse",
        "sse-cut",
        "html-502",
        "html-200",
        "202-empty",
        "200-empty",
        "204",
        "rpc-404",
        "rpc-500",
        "rpc-200",
        "429",
        "503-retry-after",
        "401",
        "403",
        "not-messages",
        "not-json",
        "text-plain",
        "two-types",
    ],
)
def test_an_answer_that_is_not_plain_json_reads_the_same(
    fault: FaultServer, answer: Callable[[], Answer]
) -> None:
    same(fault, {"get": [answer()]})


def test_retry_after_is_kept(fault: FaultServer) -> None:
    async def retry_after(many: bool) -> float | None:
        t = HttpTransport(HttpOptions(url=fault.url(get=[too_many("3")]), many=many))
        try:
            async for _ in t.send({"jsonrpc": "2.0", "id": 1, "method": "tasks/get"}):
                pass
        except McptaskError as exc:
            return getattr(exc, "retry_after", None)
        finally:
            await t.aclose()
        raise AssertionError("no error")

    assert asyncio.run(retry_after(True)) == asyncio.run(retry_after(False)) == 3.0


@pytest.mark.parametrize(
    "session",
    ["sess-2", b"bad\x01id", b"caf\xc3\xa9", b"two words", b"one\r\nMcp-Session-Id: two"],
    ids=str,
)
def test_the_session_id_is_kept_or_refused_the_same(
    fault: FaultServer, session: str | bytes
) -> None:
    async def go(many: bool) -> tuple[Any, str | None]:
        url = fault.url(get=[task()])
        fault.scenarios[FaultServer.sid(url)].session = session
        t = HttpTransport(HttpOptions(url=url, many=many))
        try:
            async for msg in t.send({"jsonrpc": "2.0", "id": 1, "method": "tasks/get"}):
                return msg.get("result"), t.session_id
        except McptaskError as exc:
            return (type(exc).__name__, norm(exc.message)), t.session_id
        finally:
            await t.aclose()
        return None, t.session_id

    general, polled = asyncio.run(go(False)), asyncio.run(go(True))
    assert polled == general
    if session == "sess-2":
        assert polled == (task(), "sess-2")


def test_a_real_event_stream_server_answers_polls_the_same(everything_server: Any) -> None:
    """server-everything answers every POST with an event stream: a task's polls and its
    result read the same both ways."""
    import httpx

    url = everything_server.url
    head = {"Accept": "application/json, text/event-stream"}
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    with httpx.Client(timeout=10) as c:
        msg = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
        sid = c.post(url, json=msg, headers=head).headers["mcp-session-id"]
    session = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}

    async def go() -> None:
        general = HttpTransport(HttpOptions(url=url))
        polls = HttpTransport(HttpOptions(url=url, many=True))
        g, p = RpcClient(general, headers=session), RpcClient(polls, headers=session)
        try:
            await g.notify("notifications/initialized")
            params = {"name": "simulate-research-query", "arguments": {"topic": "kelp"}, "task": {}}
            created = await g.request("tools/call", params)
            tid = created["task"]["taskId"]
            got = await p.request("tasks/get", {"taskId": tid})
            assert polls._polls is not None and polls._polls.conns  # the lean way
            assert (
                got["taskId"] == tid
                and got.keys() == (await g.request("tasks/get", {"taskId": tid})).keys()
            )
            # tasks/result blocks until the task is done, then answers on its stream
            polled = await p.request("tasks/result", {"taskId": tid})
            assert polled == await g.request("tasks/result", {"taskId": tid})
            for name in ("tasks/get", "tasks/result"):
                errors = []
                for client in (g, p):
                    try:
                        await client.request(name, {"taskId": "no-such-task"})
                    except McptaskError as exc:
                        errors.append((type(exc).__name__, exc.message))
                assert len(errors) == 2 and errors[0] == errors[1], errors
            assert not polls._lean_off
        finally:
            await g.aclose()
            await p.aclose()

    asyncio.run(go())


# -- 6. credentials ------------------------------------------------------------------------------


def test_given_headers_win_over_a_requests_own(fault: FaultServer) -> None:
    url = fault.url(get=[task()])
    asyncio.run(
        _ask(
            url,
            many=True,
            headers={"Mcp-Session-Id": "given", "X-Team": "kelp"},
            token="tok-9",
            client_headers={"X-Team": "own", "X-Own": "1"},
        )
    )
    (seen,) = fault.seen(url, "tasks/get")
    h = seen.headers
    assert h["mcp-session-id"] == "given" and h["x-team"] == "kelp" and h["x-own"] == "1"
    assert h["authorization"] == "Bearer tok-9"


class FakeAuth:
    """OAuth as the transport sees it: a token, renewed once refused."""

    def __init__(self) -> None:
        self.tokens = ["old-token", "new-token"]
        self.refusals: list[tuple[int, str | None]] = []

    @property
    def secrets(self) -> list[str]:
        return list(self.tokens)

    async def bearer(self) -> str | None:
        return self.tokens[0]

    async def refused(self, status: int, headers: list[str], sent: str | None) -> bool:
        self.refusals.append((status, sent))
        if len(self.tokens) > 1:
            self.tokens.pop(0)
            return True
        return False


def test_an_oauth_refusal_goes_the_general_way_and_is_renewed(fault: FaultServer) -> None:
    refused = raw(
        401, b'{"error": "invalid_token"}', headers={"WWW-Authenticate": 'Bearer error="x"'}
    )
    # the lean poll is refused; sent again the general way (the same token, refused again),
    # OAuth renews and the request goes out once more; the next poll goes the lean way
    url = fault.url(get=[refused, refused, COMPLETED, task(status="failed")])
    auth = FakeAuth()
    seen = asyncio.run(_ask(url, many=True, auth=auth, times=2))
    assert seen.outcome == (("ok", COMPLETED), ("ok", task(status="failed")))
    assert auth.refusals == [(401, "old-token")]
    sent = [r.headers["authorization"] for r in fault.seen(url, "tasks/get")]
    assert sent == ["Bearer old-token"] * 2 + ["Bearer new-token"] * 2
    assert seen.polled and not seen.lean_off
    # a refusal OAuth cannot mend reads as the general path reads it
    general, polled = both(fault, {"get": [refused]}, auth=FakeAuth())
    assert polled.outcome == general.outcome and polled.outcome[0] == "AuthError"


def test_nothing_reaches_another_origin(fault: FaultServer) -> None:
    with FaultServer() as other:
        elsewhere = other.url(get=[COMPLETED])
        url = fault.url(get=[redirect(elsewhere)])
        seen = asyncio.run(_ask(url, many=True, token="tok-1", headers={"X-Key": "k-1"}, times=2))
        assert seen.outcome == (("ok", COMPLETED), ("ok", COMPLETED))
        assert seen.lean_off
        for r in other.seen(elsewhere):
            assert "authorization" not in r.headers and "x-key" not in r.headers
            assert "mcp-session-id" not in r.headers


@pytest.mark.parametrize(
    "head",
    [b"HTTP/1.1 304 Not Modified\r\n\r\n", b"HTTP/1.1 300 Multiple Choices\r\n\r\n"],
    ids=["304", "300-without-location"],
)
def test_a_3xx_that_redirects_nowhere_is_read_as_it_is(fault: FaultServer, head: bytes) -> None:
    """Only a 3xx with a `Location` is a redirect (the client follows no other): any other is
    read where it came, not sent again, and polls go on the lean way."""
    seen = same(fault, {"get": [wire(head)]})  # `both`: the lean way is still on
    assert seen.outcome[0] == "HttpStatusError"
    url = fault.url(get=[wire(head)])
    asyncio.run(_ask(url, many=True))
    assert len(fault.seen(url, "tasks/get")) == 1


def test_a_rest_get_sent_again_the_general_way_is_traced(fault: FaultServer) -> None:
    """A lean GET of the HTTP+JSON binding that is redirected goes again through the client,
    and `--trace` shows that exchange too (and nothing of the token)."""
    done = fault.url(stream=[raw(200, b'{"id": "t-1"}')])
    url = fault.url(stream=[redirect(done), redirect(done)])
    lines: list[str] = []

    async def go() -> Any:
        t = HttpTransport(HttpOptions(url=url, many=True, token="tok-9", trace=lines.append))
        try:
            return (await t.rest("GET", url)).json()
        finally:
            await t.aclose()

    assert asyncio.run(go()) == {"id": "t-1"}
    assert [line for line in lines if line.startswith("> GET ")] == [f"> GET {url}"] * 2
    statuses = [line.split()[1] for line in lines if re.match(r"< \d{3} ", line)]
    assert statuses[0] == "307" and statuses[-1] == "200", lines
    assert not any("tok-9" in line for line in lines)


def test_a_host_name_beyond_ascii_goes_out_in_idna_as_httpx_sends_it() -> None:
    """An internationalised host name: the poll pool connects to, and names in `Host`, its
    IDNA form (as httpx does), and fails as the general path fails where it does not resolve."""
    pool = poll_pool.PollPool("http://B\u00fccher.invalid:8080/mcp", connect_timeout=1.0)
    assert pool.host == "xn--bcher-kva.invalid"
    assert pool.head({}) == b"Host: xn--bcher-kva.invalid:8080\r\n"
    url = "http://b\u00fccher.invalid:9/mcp"
    general = asyncio.run(_ask(url, many=False, connect_timeout=2.0))
    polled = asyncio.run(_ask(url, many=True, connect_timeout=2.0))
    assert polled.polled
    assert polled.outcome == general.outcome
    assert polled.outcome[0] == "TransportError"


def test_a_host_name_given_in_idna_takes_the_poll_pool_too() -> None:
    """The same host given in its IDNA form is on the endpoint's origin (httpx reads both
    forms as one host): its polls take the pool, and fail as the general path fails."""
    url = "http://xn--bcher-kva.invalid:9/mcp"
    general = asyncio.run(_ask(url, many=False, connect_timeout=2.0))
    polled = asyncio.run(_ask(url, many=True, connect_timeout=2.0))
    assert polled.polled
    assert polled.outcome == general.outcome
    assert polled.outcome[0] == "TransportError"


# -- 7. many at once -----------------------------------------------------------------------------


def test_200_polls_at_once_share_at_most_max_connections(fault: FaultServer) -> None:
    url = fault.url(get=[keepalive()])
    most = 0

    async def go() -> None:
        nonlocal most
        t = HttpTransport(HttpOptions(url=url, many=True))
        rpc = RpcClient(t, headers={"Mcp-Session-Id": SESSION})
        try:

            async def one() -> Any:
                nonlocal most
                got = await rpc.request("tasks/get", {"taskId": TASK_ID})
                assert t._polls is not None
                most = max(most, len(t._polls.conns))
                return got

            got = await asyncio.gather(*[one() for _ in range(200)])
            assert got == [task()] * 200
            pool = t._polls
            assert pool is not None and pool.conns
        finally:
            await rpc.aclose()
        assert not pool.conns

    asyncio.run(go())
    assert 0 < most <= poll_pool.MAX_CONNECTIONS


def test_polls_cancelled_mid_way_leave_no_broken_connection(fault: FaultServer) -> None:
    slow_url = fault.url(get=[hang(after_headers=False)])

    async def go() -> None:
        t = HttpTransport(HttpOptions(url=slow_url, many=True))
        rpc = RpcClient(t, headers={"Mcp-Session-Id": SESSION})
        try:
            polls = [
                asyncio.ensure_future(rpc.request("tasks/get", {"taskId": TASK_ID}))
                for _ in range(10)
            ]
            while len(fault.seen(slow_url, "tasks/get")) < 10:
                await asyncio.sleep(0.02)
            for p in polls:
                p.cancel()
            await asyncio.gather(*polls, return_exceptions=True)
            pool = t._polls
            assert pool is not None
            # every connection a cancelled poll held is closed, none waits in the pool
            assert not [c for c in pool._idle if not c.dead]
            assert all(c.exchange is None or c.dead for c in pool.conns)
        finally:
            await rpc.aclose()

    asyncio.run(go())


# -- 8. https ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key."""
    d: Path = tmp_path_factory.mktemp("tls")
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(d / "key.pem"),
            "-out",
            str(d / "cert.pem"),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return d / "cert.pem", d / "key.pem"


@pytest.fixture(scope="module")
def tls_server(tls_files: tuple[Path, Path]) -> Iterator[str]:
    """A TLS server with a self-signed certificate (answers nothing after the handshake)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*tls_files)

    def handshake(conn: socket.socket) -> None:
        try:
            with ctx.wrap_socket(conn, server_side=True):
                pass
        except (OSError, ssl.SSLError):
            conn.close()

    url, close = raw_server(handshake, scheme="https")
    try:
        yield url
    finally:
        close()


def test_a_self_signed_certificate_is_refused_the_same(tls_server: str) -> None:
    general = asyncio.run(_ask(tls_server, many=False))
    polled = asyncio.run(_ask(tls_server, many=True))
    assert polled.polled
    assert polled.outcome == general.outcome
    assert "TLS certificate is not trusted (self-signed certificate)" in error(polled)


def test_tls_to_a_plain_http_port_says_the_server_answered_without_tls(
    fault: FaultServer,
) -> None:
    url = fault.url(get=[task()]).replace("http://", "https://")
    general = asyncio.run(_ask(url, many=False))
    polled = asyncio.run(_ask(url, many=True))
    assert polled.polled
    assert polled.outcome == general.outcome
    assert "the server answered without TLS" in error(polled)


# -- found by these tests ------------------------------------------------------------------------


def _sent(fault: FaultServer, url: str) -> int:
    """How many bytes the server sent on `url` before the client stopped reading (it notes
    that once its write fails)."""
    sid = FaultServer.sid(url)
    for _ in range(1000):
        if sid in fault.sent:
            break
        threading.Event().wait(0.01)
    return fault.sent[sid]


@pytest.mark.parametrize("line", [False, True], ids=["many-lines", "one-line"])
def test_an_endless_header_section_is_refused_without_filling_the_memory(
    fault: FaultServer, line: bool
) -> None:
    url = fault.url(get=[endless_head(line=line)])
    general, polled = both(fault, {"get": [endless_head(line=line)]}, read_timeout=20)
    assert polled.outcome[0] == general.outcome[0] == "TransportError", (general, polled)
    assert error(polled).split(":")[0] == error(general).split(":")[0]
    asyncio.run(_ask(url, many=True, read_timeout=20))
    assert _sent(fault, url) < 64 * MIB


def test_a_password_in_the_url_is_sent_as_basic_auth(fault: FaultServer) -> None:
    # (such a URL's requests go the general way: request_line refuses it)
    url = fault.url(get=[task()]).replace("http://", "http://ann:s%40cret@")
    other = fault.url(get=[task()]).replace("http://", "http://ann:s%40cret@")
    asyncio.run(_ask(url, many=False))
    seen = asyncio.run(_ask(other, many=True))
    assert seen.outcome == ("ok", task())
    (general,) = fault.seen(url, "tasks/get")
    (polled,) = fault.seen(other, "tasks/get")
    assert polled.headers["authorization"] == general.headers["authorization"]
    assert general.headers["authorization"].startswith("Basic ")
    assert polled.headers["host"] == general.headers["host"]


@pytest.mark.parametrize("tail", ["?q=caf\u00e9 au lait", "/caf\u00e9", "?a=1&b=%2F"])
def test_a_url_with_non_ascii_or_spaces_is_sent_as_httpx_sends_it(
    fault: FaultServer, tail: str
) -> None:
    url = fault.url(get=[task()]) + tail
    other = fault.url(get=[task()]) + tail
    general = asyncio.run(_ask(url, many=False))
    polled = asyncio.run(_ask(other, many=True))
    assert polled.outcome == general.outcome == ("ok", task())
    # a target that needs quoting goes the general way (httpx quotes it); a plain one not
    assert polled.polled == tail.isascii()
    (g,) = fault.seen(url, "tasks/get")
    (p,) = fault.seen(other, "tasks/get")
    assert g.headers["host"] == p.headers["host"]


def _lines(r: Any, *names: str) -> list[tuple[str, str]]:
    return sorted((k.lower(), v) for k, v in r.raw_headers if k.lower() in names)


def test_given_headers_replace_the_defaults_whatever_their_case(fault: FaultServer) -> None:
    given = {"user-agent": "probe/1", "accept": "application/json", "authorization": "Basic x"}
    names = ("user-agent", "accept", "authorization", "content-type")
    for token in (None, "tok-2"):
        url, other = fault.url(get=[task()]), fault.url(get=[task()])
        asyncio.run(_ask(url, many=False, headers=given, token=token))
        asyncio.run(_ask(other, many=True, headers=given, token=token))
        (general,) = fault.seen(url, "tasks/get")
        (polled,) = fault.seen(other, "tasks/get")
        assert _lines(polled, *names) == _lines(general, *names), token


def test_a_cookie_set_by_a_poll_answer_is_sent_back(fault: FaultServer) -> None:
    def answer() -> list[Answer]:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": task()}).encode()
        return [
            raw(200, body, headers={"Set-Cookie": "lb=node-7; Path=/"}),
            keepalive(COMPLETED),
        ]

    url, other = fault.url(get=answer()), fault.url(get=answer())
    general = asyncio.run(_ask(url, many=False, times=2))
    polled = asyncio.run(_ask(other, many=True, times=2))
    assert polled.polled and polled.outcome == general.outcome
    sent = [r.headers.get("cookie") for r in fault.seen(other, "tasks/get")]
    assert sent == [r.headers.get("cookie") for r in fault.seen(url, "tasks/get")]
    assert sent == [None, "lb=node-7"]


def test_a_transport_closed_and_used_again_polls_again(fault: FaultServer) -> None:
    url = fault.url(get=[keepalive()])

    async def go() -> list[Any]:
        t = HttpTransport(HttpOptions(url=url, many=True))
        rpc = RpcClient(t, headers={"Mcp-Session-Id": SESSION})
        out = [await rpc.request("tasks/get", {"taskId": TASK_ID})]
        await t.aclose()
        try:
            out.append(await rpc.request("tasks/get", {"taskId": TASK_ID}))
            assert t._polls is not None
        finally:
            await rpc.aclose()
        return out

    assert asyncio.run(go()) == [task(), task()]


def test_a_transport_closed_under_polls_in_flight_leaves_no_connection(
    fault: FaultServer,
) -> None:
    url = fault.url(get=[hang()])

    async def go() -> None:
        t = HttpTransport(HttpOptions(url=url, many=True))
        rpc = RpcClient(t, headers={"Mcp-Session-Id": SESSION})
        polls = [
            asyncio.ensure_future(rpc.request("tasks/get", {"taskId": TASK_ID})) for _ in range(5)
        ]
        while len(fault.seen(url, "tasks/get")) < 5:
            await asyncio.sleep(0.02)
        pool = t._polls
        assert pool is not None
        await rpc.aclose()
        got = await asyncio.gather(*polls, return_exceptions=True)
        assert all(isinstance(g, McptaskError) for g in got), got
        assert not pool.conns
        assert len(fault.seen(url, "tasks/get")) <= 10

    asyncio.run(go())


def test_a_cancelled_wait_for_a_connection_passes_its_turn_on(
    fault: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With every connection busy, polls wait their turn; one cancelled just as its turn came
    does not keep the others waiting."""
    monkeypatch.setattr(poll_pool, "MAX_CONNECTIONS", 1)
    url = fault.url(get=[keepalive()])

    async def go() -> None:
        t = HttpTransport(HttpOptions(url=url, many=True, read_timeout=10))
        rpc = RpcClient(t, headers={"Mcp-Session-Id": SESSION})
        try:
            await rpc.request("tasks/get", {"taskId": TASK_ID})  # one connection, idle
            pool = t._polls
            assert pool is not None
            (conn,) = pool._idle
            pool._idle.clear()  # busy
            first = asyncio.ensure_future(pool._acquire(asyncio.get_running_loop().time() + 5))
            second = asyncio.ensure_future(pool._acquire(asyncio.get_running_loop().time() + 5))
            while len(pool._waiters) < 2:
                await asyncio.sleep(0)
            pool.put_back(conn)  # wakes the first waiter ...
            first.cancel()  # ... which is cancelled before it runs
            got = await asyncio.wait_for(second, 3)
            assert got is conn
            with pytest.raises(asyncio.CancelledError):
                await first
            pool.put_back(got)
        finally:
            await rpc.aclose()

    asyncio.run(go())


# -- whole watches of many tasks (the poll pool) beside small ones (httpx's transport) ----------


def _odd_but_fine(tid: str) -> list[Callable[[], Answer]]:
    """Answers a poll may get that are odd but readable: each is followed by completion."""
    working = task(taskId=tid)
    return [
        lambda: wire(
            lambda msg: (
                b"HTTP/1.1 100 Continue\r\n\r\n" + _bytes_of(wire_answer(result=working), msg)
            )
        ),
        lambda: wire(
            lambda msg: _bytes_of(wire_answer(result=working), msg).replace(
                b"HTTP/1.1", b"HTTP/1.0", 1
            ),
            keep=True,
        ),
        lambda: keepalive(working, then_close=True),
        lambda: sse_result(working),
        lambda: encoded(working),
        lambda: html(502),
        lambda: too_many("1"),
        lambda: short_body(),
    ]


def test_a_watch_of_many_tasks_reads_odd_answers_like_a_small_watch(
    fault: FaultServer, run_cli: Any
) -> None:
    kinds = len(_odd_but_fine("t"))

    def scenario(n: int) -> tuple[str, list[str]]:
        ids = [f"t{i}" for i in range(n)]
        get: dict[str, list[Answer]] = {
            tid: [
                _odd_but_fine(tid)[i % kinds](),
                keepalive(task(taskId=tid, status="completed")),
            ]
            for i, tid in enumerate(ids)
        }
        return fault.url("odd", get=get), ids

    (few, _), (many, _) = few_and_many(run_cli, scenario, kinds, SESSION)
    for r in (few, many):
        assert {e["outcome"] for e in r.lines() if e["event"] == "end"} == {"completed"}
    assert sorted(set(retries(many.stderr))) == sorted(set(retries(few.stderr))), (
        sorted(set(retries(many.stderr))),
        sorted(set(retries(few.stderr))),
    )


@pytest.mark.parametrize(
    "answer",
    [
        lambda: raw(401, b'{"error": "invalid_token"}'),
        lambda: html(403),
        lambda: rpc_error(-32602, "Task not found", status=404),
        lambda: raw(200, b"{nope"),
    ],
    ids=["401", "403-html", "rpc-404", "not-json"],
)
def test_a_watch_of_many_tasks_fails_like_a_small_watch(
    fault: FaultServer, run_cli: Any, answer: Callable[[], Answer]
) -> None:
    few_ids = ["t0", "t1"]
    many_ids = [f"t{i}" for i in range(MANY_TASKS + 10)]
    few = run_cli("watch", *few_ids, "--url", fault.url(every=answer()), "--session", SESSION, *P)
    many = run_cli("watch", *many_ids, "--url", fault.url(every=answer()), "--session", SESSION, *P)
    assert many.code == few.code != 0
    for r in (few, many):
        assert "Traceback" not in r.stderr
    assert norm(many.stderr).replace("t1", "tN") == norm(few.stderr).replace("t1", "tN")


def test_a_poll_sent_again_goes_on_a_fresh_connection(fault: FaultServer) -> None:
    """Two idle connections the server drops as they are used again: the poll sent once more
    after the first died goes on a new connection, not on the other dropped one."""
    url = fault.url(get=[one_per_connection()])

    async def go() -> Any:
        t = HttpTransport(HttpOptions(url=url, many=True))
        rpc = RpcClient(t, headers={"Mcp-Session-Id": SESSION})
        try:
            two = [rpc.request("tasks/get", {"taskId": TASK_ID}) for _ in range(2)]
            await asyncio.gather(*two)
            assert t._polls is not None and len(t._polls._idle) == 2
            return await rpc.request("tasks/get", {"taskId": TASK_ID})
        finally:
            await rpc.aclose()

    assert asyncio.run(go()) == task()


@pytest.mark.parametrize(
    "answer",
    [
        lambda: wire_answer(status=b"502 Bad \x1b]0;pwned\x07Gateway"),
        lambda: wire_answer(status=b"502 Mauvaise passerelle \xc3\xa9"),
        lambda: wire_answer(status=b"502"),
        lambda: wire_answer(status=b"299 Odd"),
        lambda: wire_answer(status=b"600 Beyond"),
        lambda: wire(
            lambda msg: (
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\nTrailer: X-Done\r\n\r\n"
                + b"%x\r\n%s\r\n0\r\nX-Done: yes\r\n\r\n"
                % (len(_json(msg)), _json(msg))
            )
        ),
        lambda: wire(
            lambda msg: (
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n"
                % (len(_json(msg)), len(_json(msg)), _json(msg))
            )
        ),
        lambda: wire(
            lambda msg: (
                b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n" + _bytes_of(wire_answer(), msg)
            )
        ),
        lambda: wire_answer(head=b"X-Long: " + b"v" * 12000 + b"\r\n"),
        lambda: wire(lambda msg: _bytes_of(wire_answer(), msg).replace(b"\r\n", b"\n")),
        lambda: wire(
            lambda msg: b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + _json(msg)
        ),
        lambda: wire(
            lambda msg: (
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Connection: close\r\n\r\n" + _json(msg)
            )
        ),
        lambda: wire(
            lambda msg: (
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: gzip, chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n"
                % (len(_json(msg)), _json(msg))
            )
        ),
        lambda: wire(
            lambda msg: (
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: identity\r\n\r\n" + _json(msg)
            )
        ),
        lambda: raw(203, b""),
        lambda: raw(206, b""),
        lambda: wire_answer(head=b"X-Odd: a\x00b\r\n"),
        lambda: wire_answer(head=b"X-Odd: a\x0cb\r\n"),
        lambda: wire_answer(head=b"X-Odd: a\x01b\x7f\r\n"),
        lambda: wire_answer(status=b"500 Bad\x00Thing"),
        lambda: wire(
            lambda msg: (
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\nX-Done: a\x00b\r\n\r\n"
                % (len(_json(msg)), _json(msg))
            )
        ),
    ],
    ids=[
        "escape-in-reason",
        "utf8-reason",
        "no-reason",
        "status-299",
        "status-600",
        "chunked-trailer",
        "length-and-chunked",
        "early-hints",
        "long-header",
        "bare-lf",
        "http-1.0-until-close",
        "until-close",
        "transfer-coding-not-only-chunked",
        "transfer-coding-identity",
        "empty-203",
        "empty-206",
        "nul-in-header-value",
        "form-feed-in-header-value",
        "other-control-bytes-in-header-value",
        "nul-in-reason",
        "nul-in-trailer",
    ],
)
def test_odd_status_lines_and_framing_read_the_same(
    fault: FaultServer, answer: Callable[[], Answer]
) -> None:
    general, polled = both(fault, {"get": [answer()]})
    assert polled.outcome[0] == general.outcome[0], (general, polled)
    if polled.outcome[0] == "ok" or not error(general).startswith("connection to"):
        assert polled.outcome == general.outcome


def _json(msg: Json) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg.get("id"), "result": task()}).encode()


def test_polls_over_tls_reuse_their_connection_and_close_it(
    tls_files: tuple[Path, Path], recwarn: pytest.WarningsRecorder
) -> None:
    """A TLS endpoint whose certificate is trusted: polls share one kept-alive connection,
    the odd answers read as over plain http, and `aclose` closes it (no unclosed socket)."""
    with FaultServer() as fs:
        assert fs._httpd is not None
        server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server_ctx.load_cert_chain(*tls_files)
        fs._httpd.socket = server_ctx.wrap_socket(fs._httpd.socket, server_side=True)
        url = fs.url(get=[keepalive(), keepalive(), html(502), keepalive(COMPLETED)])
        url = url.replace("http://", "https://")

        async def go() -> list[Any]:
            t = HttpTransport(HttpOptions(url=url, many=True))
            t._poll_head()
            assert t._polls is not None and t._polls.ssl_context is not None
            t._polls.ssl_context.load_verify_locations(tls_files[0])
            rpc = RpcClient(t, headers={"Mcp-Session-Id": SESSION})
            out: list[Any] = []
            try:
                for _ in range(2):
                    out.append(await rpc.request("tasks/get", {"taskId": TASK_ID}))
                assert len(t._polls.conns) == 1 and len(t._polls._idle) == 1
                try:
                    await rpc.request("tasks/get", {"taskId": TASK_ID})
                except McptaskError as exc:
                    out.append(norm(exc.message))
                out.append(await rpc.request("tasks/get", {"taskId": TASK_ID}))
                pool = t._polls
            finally:
                await rpc.aclose()
            assert not pool.conns
            return out

        got = asyncio.run(go())
        port = url.split(":")[2].split("/")[0]
        assert got == [
            task(),
            task(),
            f"https://127.0.0.1:{port}/S/mcp answered HTTP 502 Bad Gateway: 502 nginx",
            COMPLETED,
        ]
    assert not [w for w in recwarn if issubclass(w.category, ResourceWarning)]


@pytest.mark.parametrize(
    "given",
    [{"Host": "api.example.com"}, {"host": "api.example.com:8443"}, {"Connection": "close"}],
    ids=["host", "host-lower", "connection-close"],
)
def test_given_transport_headers_are_sent_as_the_client_sends_them(
    fault: FaultServer, given: dict[str, str]
) -> None:
    names = (*(n.lower() for n in given), "content-length", "host")
    url, other = fault.url(get=[keepalive()]), fault.url(get=[keepalive()])
    general = asyncio.run(_ask(url, many=False, headers=given, times=2))
    polled = asyncio.run(_ask(other, many=True, headers=given, times=2))
    assert polled.polled and polled.outcome == general.outcome == (("ok", task()),) * 2
    g = [_lines(r, *names) for r in fault.seen(url, "tasks/get")]
    p = [_lines(r, *names) for r in fault.seen(other, "tasks/get")]
    assert p == g


@pytest.mark.parametrize("header", ["Content-Length: 3", "transfer-encoding: chunked"])
def test_a_framing_header_of_ones_own_is_refused(run_cli: Any, header: str) -> None:
    """A body's length is the client's to set: the general path's h11 would raise, the poll
    path would send two lengths (the server reads the body wrong, and the next request)."""
    ids = [f"t{i}" for i in range(MANY_TASKS)]
    for args in (ids[:1], ids):
        r = run_cli("watch", *args, "--url", "http://127.0.0.1:9/mcp", "-H", header)
        assert r.code == 2, r.stderr
        assert "is set by mcptask" in r.stderr and "Traceback" not in r.stderr


def test_a_watch_of_many_tasks_times_out_like_a_small_watch(
    fault: FaultServer, run_cli: Any
) -> None:
    """MCPTASK_READ_TIMEOUT bounds a poll the server never answers (or answers the headers
    of, and no more); the watch notes it and polls again, on another connection."""
    stalls = [hang, lambda: hang(after_headers=True)]

    def scenario(n: int) -> tuple[str, list[str]]:
        ids = [f"t{i}" for i in range(n)]
        get: dict[str, list[Answer]] = {
            tid: [stalls[i % 2](), keepalive(task(taskId=tid, status="completed"))]
            for i, tid in enumerate(ids)
        }
        return fault.url("stall", get=get), ids

    env = {"MCPTASK_READ_TIMEOUT": "1"}
    runs = few_and_many(run_cli, scenario, 2, SESSION, env)
    for r, ids in runs:
        assert len(retries(r.stderr)) == len(ids)
    (few, _), (many, _) = runs
    assert sorted(set(retries(many.stderr))) == sorted(set(retries(few.stderr)))


@pytest.mark.parametrize("line", [False, True], ids=["many-lines", "one-line"])
def test_an_endless_trailer_is_refused_without_filling_the_memory(
    fault: FaultServer, line: bool
) -> None:
    general, polled = both(fault, {"get": [endless_trailer(line=line)]}, read_timeout=20)
    assert polled.outcome == general.outcome, (general, polled)
    assert polled.outcome[0] == "TransportError"
    url = fault.url(get=[endless_trailer(line=line)])
    asyncio.run(_ask(url, many=True, read_timeout=20))
    assert _sent(fault, url) < 64 * MIB


def test_trailers_are_not_headers(fault: FaultServer) -> None:
    """A session id (or a cookie) in a trailer is not taken: httpx drops trailers."""

    def answer() -> Answer:
        return wire(
            lambda msg: (
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n"
                b"Mcp-Session-Id: from-trailer\r\nSet-Cookie: t=1\r\n\r\n"
                % (len(_json(msg)), _json(msg))
            )
        )

    async def go(many: bool) -> tuple[Any, str | None, bool]:
        t = HttpTransport(HttpOptions(url=fault.url(get=[answer()]), many=many))
        try:
            async for msg in t.send({"jsonrpc": "2.0", "id": 1, "method": "tasks/get"}):
                return msg.get("result"), t.session_id, bool(t._client and t._client.cookies)
        finally:
            await t.aclose()
        raise AssertionError("no answer")

    assert asyncio.run(go(True)) == asyncio.run(go(False)) == (task(), None, False)


def test_a_connection_opened_while_the_pool_closes_is_closed(fault: FaultServer) -> None:
    url = fault.url(get=[keepalive()])

    async def go() -> None:
        t = HttpTransport(HttpOptions(url=url, many=True))
        t._poll_head()
        pool = t._polls
        assert pool is not None
        opening = asyncio.ensure_future(pool._acquire(asyncio.get_running_loop().time() + 5))
        while not pool._connecting:
            await asyncio.sleep(0)
        await t.aclose()
        with pytest.raises(httpx.ConnectError):
            await opening
        for _ in range(100):  # its close is seen on a later turn of the loop
            if not pool.conns:
                break
            await asyncio.sleep(0.01)
        assert not pool.conns

    asyncio.run(go())


def test_a_watch_of_many_tasks_on_a_real_event_stream_server(
    everything_server: Any, run_cli: Any
) -> None:
    """server-everything answers every poll with an event stream: a watch of 50+ of its
    tasks goes on the poll pool and sees every task end."""
    url = everything_server.url
    head = {"Accept": "application/json, text/event-stream"}
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    ids: list[str] = []
    with httpx.Client(timeout=30) as c:
        msg = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
        sid = c.post(url, json=msg, headers=head).headers["mcp-session-id"]
        session = {**head, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        c.post(url, json=note, headers=session)
        for i in range(MANY_TASKS + 2):
            params = {
                "name": "simulate-research-query",
                "arguments": {"topic": f"t{i}"},
                "task": {},
            }
            call = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": params}
            text = c.post(url, json=call, headers=session).text
            found = re.search(r'"taskId"\s*:\s*"([^"]+)"', text)
            assert found, text[:500]
            ids.append(found[1])
    r = run_cli("watch", *ids, "--url", url, "--session", sid, *P, "-o", "json", "--trace")
    assert r.code == 0, r.stderr[-2000:]
    assert POLLS_LINE in r.stderr
    assert "Traceback" not in r.stderr and "Unclosed" not in r.stderr
    tasks = r.json()["tasks"]
    assert sorted(t["taskId"] for t in tasks) == sorted(ids)
    assert {t["outcome"] for t in tasks} == {"completed"}


def test_bytes_sent_on_an_idle_connection_retire_it(fault: FaultServer) -> None:
    """Bytes a server sends while no request is pending: the connection is closed, the next
    poll goes on a new one."""

    def then_junk(h: FaultHandler, msg: Json) -> None:
        keepalive()(h, msg)
        h.fault_server.stopping.wait(0.2)
        h.write(b"HTTP/1.1 200 OK\r\n\r\n")

    url = fault.url(get=[then_junk, keepalive(COMPLETED)])

    async def go() -> list[Any]:
        t = HttpTransport(HttpOptions(url=url, many=True))
        rpc = RpcClient(t, headers={"Mcp-Session-Id": SESSION})
        try:
            out = [await rpc.request("tasks/get", {"taskId": TASK_ID})]
            pool = t._polls
            assert pool is not None
            while pool.conns:  # closed once the junk comes
                await asyncio.sleep(0.01)
            out.append(await rpc.request("tasks/get", {"taskId": TASK_ID}))
            return out
        finally:
            await rpc.aclose()

    assert asyncio.run(go()) == [task(), COMPLETED]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_watch_of_many_tasks_interrupted_with_polls_in_flight_ends_cleanly(
    fault: FaultServer, tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    ids = [f"t{i}" for i in range(MANY_TASKS + 10)]
    get: dict[str, list[Answer]] = {
        tid: [keepalive(task(taskId=tid, pollInterval=100)), hang()] for tid in ids
    }
    url = fault.url("stop", get=get)
    args = ["watch", *ids, "--url", url, "--session", SESSION, *P, "-o", "ndjson", "--trace"]
    p = subprocess.Popen(
        [sys.executable, "-m", "mcptask", *args],
        env=base_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # every task polled, then polls that hang, in flight on the pool
        while len(fault.seen(url, "tasks/get")) < len(ids) + 5 and p.poll() is None:
            threading.Event().wait(0.05)
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == code, err[-2000:]
    assert POLLS_LINE in err
    for bad in ("Traceback", "Unclosed", "Task was destroyed", "Exception ignored"):
        assert bad not in err, err[-3000:]
    ends = [json.loads(line) for line in out.splitlines() if '"end"' in line]
    assert {e["outcome"] for e in ends if e.get("event") == "end"} == {"interrupted"}
