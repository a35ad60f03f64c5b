"""Watches of many tasks (>= MANY_TASKS) send their polls on the poll pool
(transports/poll_pool.py): the same results, the same errors and retries as httpx's own
transport, and one-shot commands never import it."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from mcptask.demo.server import DemoServer
from mcptask.errors import TransportError
from mcptask.session.endpoint import MANY_TASKS
from mcptask.transports.http import HttpOptions, HttpTransport

from conftest import CliResult, RunCli, assert_one_line_error
from servers.fault_server import (
    SESSION,
    FaultHandler,
    FaultServer,
    Json,
    raw_server,
    read_request,
    redirect,
    reset,
    reset_at_once,
    short_body,
    task,
)
from servers.many_watch import POLLS_LINE, P, few_and_many, retries

#: the polls go on the poll pool (transports/poll_pool.py)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def create_tasks(url: str, n: int) -> tuple[str, list[str]]:
    """One session, `n` build-report tasks (raw JSON-RPC): the session id and the task ids."""
    head = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    with httpx.Client(timeout=10) as c:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
        r = c.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        sid = r.headers["mcp-session-id"]
        head["Mcp-Session-Id"] = sid
        c.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=head)
        ids = []
        for i in range(n):
            params = {"name": "build-report", "arguments": {"topic": f"t{i}"}, "task": {}}
            call = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": params}
            ids.append(c.post(url, json=call, headers=head).json()["result"]["task"]["taskId"])
    return sid, ids


def test_a_watch_of_many_tasks_uses_the_poll_pool_and_ends_every_task(run_cli: RunCli) -> None:
    with DemoServer(task_seconds=1.5) as server:
        sid, ids = create_tasks(server.url, 60)
        r = run_cli(
            "watch", *ids, "--url", server.url, "--session", sid, *P, "-o", "ndjson", "--trace"
        )
    assert r.code == 0, r.stderr[-2000:]
    lines = r.lines()
    ends = {line["taskId"]: line for line in lines if line["event"] == "end"}
    assert set(ends) == set(ids)
    assert all(e["outcome"] == "completed" and e["exitCode"] == 0 for e in ends.values())
    assert lines[-1] == {"event": "done", "exitCode": 0, "outcomes": {"completed": 60}}
    assert r.stderr.count(POLLS_LINE) == 1
    assert "Traceback" not in r.stderr and "Unclosed" not in r.stderr


def test_a_small_watch_keeps_the_default_transport(run_cli: RunCli) -> None:
    with DemoServer(task_seconds=0.5) as server:
        sid, ids = create_tasks(server.url, 2)
        r = run_cli("watch", *ids, "--url", server.url, "--session", sid, *P, "--trace")
    assert r.code == 0, r.stderr[-2000:]
    assert POLLS_LINE not in r.stderr


def test_watch_all_switches_once_it_has_listed_many_tasks(run_cli: RunCli) -> None:
    # the tasks run until the watch has listed them and begun polling, however long the
    # process takes to start; then they end
    with DemoServer(task_seconds=600) as server:
        sid, ids = create_tasks(server.url, MANY_TASKS)
        runs: list[CliResult] = []
        watch = threading.Thread(
            target=lambda: runs.append(
                run_cli(
                    "watch",
                    "--all",
                    "--url",
                    server.url,
                    "--session",
                    sid,
                    *P,
                    "-o",
                    "json",
                    "--trace",
                )
            )
        )
        watch.start()
        deadline = time.monotonic() + 60
        while watch.is_alive() and time.monotonic() < deadline:
            if any(q["message"].get("method") == "tasks/get" for q in list(server.requests)):
                break
            time.sleep(0.05)
        server.task_seconds = 0
        watch.join(timeout=90)
    assert runs, "the watch did not end"
    r = runs[0]
    assert r.code == 0, r.stderr[-2000:]
    assert {t["taskId"] for t in r.json()["tasks"]} == set(ids)
    # listed through httpx's client, watched on the poll pool
    listed, _, watched = r.stderr.partition(POLLS_LINE)
    assert '"method":"tasks/list"' in listed.replace(" ", "")
    assert '"method":"tasks/get"' in watched.replace(" ", "")


def test_connection_refused_is_the_same_one_line_error(run_cli: RunCli) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    ids = [f"t{i}" for i in range(MANY_TASKS + 10)]
    few = run_cli("watch", "--url", url, "--", ids[0])
    many = run_cli("watch", *ids, "--url", url)
    for r in (few, many):
        assert r.code == 4, r.stderr
        assert_one_line_error(r)
    assert "connection refused" in many.stderr
    assert many.stderr == few.stderr
    traced = run_cli("watch", *ids, "--url", url, "--trace")
    assert traced.code == 4
    assert POLLS_LINE in traced.stderr  # the detection probe, a safe request, went that way
    assert traced.stderr.splitlines()[-1] == many.stderr.strip()


def closed(h: FaultHandler, msg: Json) -> None:
    """The connection closes before any answer."""
    h.close_connection = True


@pytest.fixture
def fault() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs


def test_a_dropped_connection_is_retried_like_with_the_default_transport(
    fault: FaultServer, run_cli: RunCli
) -> None:
    drops: list[Callable[[], Any]] = [short_body, reset, reset_at_once, lambda: closed]

    def scenario(n: int) -> tuple[str, list[str]]:
        ids = [f"t{i}" for i in range(n)]
        get = {
            tid: [drops[i % len(drops)](), task(taskId=tid, status="completed")]
            for i, tid in enumerate(ids)
        }
        return fault.url("drops", get=get), ids

    (few, _), (many, many_ids) = few_and_many(run_cli, scenario, len(drops), SESSION)
    for r in (few, many):
        assert {e["outcome"] for e in r.lines() if e["event"] == "end"} == {"completed"}
    # the same notes (one per task), word for word; a connection that dies before any answer
    # (reset at once, closed) is sent once more by the transport (tasks/get is safe to repeat)
    # and makes no note
    assert sorted(set(retries(many.stderr))) == sorted(set(retries(few.stderr)))
    noted = [i for i in range(len(many_ids)) if drops[i % len(drops)] in (short_body, reset)]
    assert len(retries(many.stderr)) == len(noted)


def _silent(conn: socket.socket) -> None:
    read_request(conn)
    threading.Event().wait(3)
    conn.close()


def _chunked_cut(conn: socket.socket) -> None:
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    conn.sendall(b'Transfer-Encoding: chunked\r\n\r\n5\r\n{"jso')
    conn.close()


def _bad_status(conn: socket.socket) -> None:
    read_request(conn)
    conn.sendall(b"HTTP/1.1 OK\r\n\r\n")
    conn.close()


@pytest.mark.parametrize(
    "handler", [_silent, _chunked_cut, _bad_status], ids=["timeout", "chunked-cut", "bad-status"]
)
def test_transport_errors_read_the_same(handler: Callable[[socket.socket], None]) -> None:
    url, close = raw_server(handler)

    async def error(many: bool) -> str:
        t = HttpTransport(HttpOptions(url=url, read_timeout=0.5, many=many))
        try:
            async for _ in t.send({"jsonrpc": "2.0", "id": 1, "method": "ping"}):
                pass
        except TransportError as exc:
            return exc.message
        finally:
            await t.aclose()
        raise AssertionError("no error")

    try:
        default, lean = asyncio.run(error(False)), asyncio.run(error(True))
    finally:
        close()
    assert default.split(":")[0] == lean.split(":")[0]
    if handler is not _bad_status:  # the two HTTP parsers word a bad status line differently
        assert lean == default


def test_one_shot_commands_do_not_import_the_poll_pool(run_cli: RunCli) -> None:
    with DemoServer(task_seconds=5) as server:
        sid, ids = create_tasks(server.url, 1)
        got = run_cli(
            "get",
            "--url",
            server.url,
            "--session",
            sid,
            *P,
            "-o",
            "json",
            "--",
            ids[0],
            env={"PYTHONPROFILEIMPORTTIME": "1"},
        )
    assert got.code == 0, got.stderr[-2000:]
    assert "import time:" in got.stderr
    assert "httpx" in got.stderr  # the check does see imports
    assert "poll_pool" not in got.stderr and "httptools" not in got.stderr


# -- the polls of a large watch go straight to the pool (transports/http.py, lean requests) ----


def create_tasks_2026(url: str, n: int) -> list[str]:
    """`n` build-report tasks on a 2026-07-28 demo server (raw JSON-RPC): their ids."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    }
    ids = []
    with httpx.Client(timeout=10) as c:
        for i in range(n):
            head = {
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "build-report",
            }
            params = {"name": "build-report", "arguments": {"topic": f"t{i}"}, "_meta": meta}
            call = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": params}
            ids.append(c.post(url, json=call, headers=head).json()["result"]["taskId"])
    return ids


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_the_polls_of_a_large_watch_carry_every_header(run_cli: RunCli, version: str) -> None:
    """Polls sent the lean way (URL and headers made once) carry what any request carries:
    the token, `-H` headers, the session or the per-request 2026 headers (`Mcp-Name` is each
    poll's own task)."""
    with DemoServer(task_seconds=1.5, protocol=version) as server:
        if version == "2025-11-25":
            sid, ids = create_tasks(server.url, MANY_TASKS)
            target = ["--session", sid, *P]
        else:
            ids, target = create_tasks_2026(server.url, MANY_TASKS), ["-p", "mcp-2026-07-28"]
        first = len(server.requests)
        r = run_cli(
            "watch",
            *ids,
            "--url",
            server.url,
            *target,
            "-H",
            "X-Team: kelp",
            "-o",
            "json",
            "--trace",
            env={"MCPTASK_TOKEN": "tok-123"},
        )
        polls = [q for q in server.requests[first:] if q["message"].get("method") == "tasks/get"]
    assert r.code == 0, r.stderr[-2000:]
    assert POLLS_LINE in r.stderr
    assert {t["outcome"] for t in r.json()["tasks"]} == {"completed"}
    assert {q["message"]["params"]["taskId"] for q in polls} == set(ids)
    for q in polls:
        h = q["headers"]
        assert h["authorization"] == "Bearer tok-123" and h["x-team"] == "kelp", h
        assert h["content-type"] == "application/json" and h["user-agent"] == "mcptask", h
        assert h["mcp-protocol-version"] == version, h
        if version == "2025-11-25":
            assert h["mcp-session-id"] == sid, h
        else:
            assert h["mcp-method"] == "tasks/get", h
            assert h["mcp-name"] == q["message"]["params"]["taskId"], h
    assert "tok-123" not in r.stderr  # the trace shows the lean requests redacted too


def test_a_lean_poll_that_is_redirected_is_followed_by_the_client(fault: FaultServer) -> None:
    """A poll answered with a redirect goes again through httpx's client, which follows it
    (and strips the credentials for another origin); the endpoint's later requests all go
    that way."""
    from mcptask.transports.rpc import RpcClient

    with FaultServer() as other:
        elsewhere = other.url(get=[task(statusMessage="elsewhere")])
        url = fault.url(get=[task(statusMessage="here"), redirect(elsewhere)])

        async def go() -> tuple[Any, Any, HttpTransport]:
            transport = HttpTransport(HttpOptions(url=url, token="tok-1", many=True))
            rpc = RpcClient(transport, headers={"Mcp-Session-Id": SESSION})
            try:
                first = await rpc.request("tasks/get", {"taskId": "t-1"})
                assert transport._lean is not None  # the lean way
                second = await rpc.request("tasks/get", {"taskId": "t-1"})
                return first, second, transport
            finally:
                await rpc.aclose()

        first, second, transport = asyncio.run(go())
        assert first["statusMessage"] == "here" and second["statusMessage"] == "elsewhere"
        assert transport._lean_off
        (there,) = other.seen(elsewhere)
        assert "authorization" not in there.headers and "mcp-session-id" not in there.headers
