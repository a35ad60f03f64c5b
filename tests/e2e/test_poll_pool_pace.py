"""The pace of a large watch against servers that answer slowly: an answer whose body comes in a
later packet than its headers (Python's `http.server` habit) is read whole in the poll pool,
not handed to httpx; and a watch whose server answers HTTP 429 with `Retry-After` backs off."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from mcptask.errors import McptaskError
from mcptask.transports import poll_pool
from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.rpc import RpcClient

from servers.fault_server import (
    SESSION,
    TASK_ID,
    FaultHandler,
    FaultServer,
    Json,
    raw,
    task,
    too_many,
)
from servers.many_watch import P, norm


@pytest.fixture(scope="module")
def fault() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs


def split(status: str = "working") -> Any:
    """A JSON answer kept alive, its headers sent and flushed before its body, which follows a
    moment later (in a packet of its own, whatever the kernel does with the first)."""

    def answer(h: FaultHandler, msg: Json) -> None:
        body = json.dumps(
            {"jsonrpc": "2.0", "id": msg.get("id"), "result": task(status=status)}
        ).encode()
        h.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Mcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n" % (SESSION.encode(), len(body))
        )
        h.wfile.flush()
        if not h.fault_server.stopping.wait(0.05):
            h.write(body)
        h.close_connection = False

    return answer


def test_an_answer_whose_body_comes_later_is_read_in_the_pool(
    fault: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    handed: list[int] = []
    general = poll_pool.as_response

    def as_response(ex: Any, *args: Any) -> Any:
        handed.append(ex.status)
        return general(ex, *args)

    monkeypatch.setattr(poll_pool, "as_response", as_response)

    async def go(many: bool) -> tuple[list[Any], int]:
        t = HttpTransport(HttpOptions(url=fault.url(get=[split()]), many=many))
        rpc = RpcClient(t, headers={"Mcp-Session-Id": SESSION})
        try:
            got = [await rpc.request("tasks/get", {"taskId": TASK_ID}) for _ in range(3)]
            conns = len(t._polls.conns) if t._polls is not None else 0
        finally:
            await rpc.aclose()
        return got, conns

    polled, conns = asyncio.run(go(True))
    assert handed == []  # never handed to httpx's reader
    assert conns == 1  # and the connection kept for the next poll
    general_way, _ = asyncio.run(go(False))
    assert polled == general_way


def test_a_body_that_never_comes_times_out_in_the_pool_as_the_general_way(
    fault: FaultServer,
) -> None:
    def headers_only(h: FaultHandler, msg: Json) -> None:
        h.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Mcp-Session-Id: %s\r\nContent-Length: 50\r\n\r\n" % SESSION.encode()
        )
        h.wfile.flush()
        fault.stopping.wait(5)
        h.close_connection = True

    async def go(many: bool) -> str:
        t = HttpTransport(HttpOptions(url=fault.url(get=[headers_only]), many=many))
        rpc = RpcClient(t, headers={"Mcp-Session-Id": SESSION})
        try:
            await rpc.request("tasks/get", {"taskId": TASK_ID}, timeout=0.5)
            return "ok"
        except McptaskError as exc:
            return f"{type(exc).__name__}: {norm(exc.message)}"
        finally:
            await rpc.aclose()

    polled, general = asyncio.run(go(True)), asyncio.run(go(False))
    assert polled == general
    assert "timed out waiting for" in polled


def test_a_large_watch_backs_off_a_server_that_answers_429(
    fault: FaultServer, run_cli: Any
) -> None:
    """Every task's first poll is refused with 429 and `Retry-After: 1`: no poll of any task
    goes out again before that second is over, and every task then ends."""
    ids = [f"t{k}" for k in range(60)]
    url = fault.url(get={tid: [too_many("1"), task(taskId=tid, status="completed")] for tid in ids})
    r = run_cli("watch", *ids, "--url", url, "--session", SESSION, *P, "-o", "ndjson")
    assert r.code == 0, r.stderr[-2000:]
    ends = [line for line in r.lines() if line["event"] == "end"]
    assert sorted(e["taskId"] for e in ends) == sorted(ids)
    gets = fault.seen(url, "tasks/get")
    first_refusal = min(q.at for q in gets)
    polls: dict[str, list[float]] = {}
    for q in gets:
        polls.setdefault(q.message["params"]["taskId"], []).append(q.at)
    assert sorted(polls) == sorted(ids)
    for times in polls.values():
        assert len(times) == 2
        assert times[1] - first_refusal >= 1.0  # never before the server's wait was over


def test_a_watch_follows_its_tasks_through_more_429s_than_failures_it_allows(
    fault: FaultServer, run_cli: Any
) -> None:
    """Issue 41: seven 429s in a row for every task (five failures in a row end a task):
    "too many requests" is a pace, not a failure, and every task is followed to its end
    (a watch against a rate-limited server ended 304 of 1,000 tasks in `error`)."""
    ids = [f"r{k}" for k in range(8)]
    refusals = [too_many("1")] * 7
    url = fault.url(get={tid: [*refusals, task(taskId=tid, status="completed")] for tid in ids})
    r = run_cli("watch", *ids, "--url", url, "--session", SESSION, *P, "-o", "ndjson")
    assert r.code == 0, r.stderr[-2000:]
    ends = {line["taskId"]: line["outcome"] for line in r.lines() if line["event"] == "end"}
    assert ends == dict.fromkeys(ids, "completed")
    polls: dict[str, int] = {}
    for q in fault.seen(url, "tasks/get"):
        tid = q.message["params"]["taskId"]
        polls[tid] = polls.get(tid, 0) + 1
    assert polls == dict.fromkeys(ids, 8)


def test_the_book_says_which_retries_were_refusals_for_pace(
    fault: FaultServer, run_cli: Any
) -> None:
    """A retry is `rateLimited` in the task's story when the watch counted it a refusal for
    pace (HTTP 429, -32429), whatever the words: an error that speaks of a rate is not."""
    tid = "mixed-refusals"
    answers = [raw(503, b"rate of work too high", "text/plain"), too_many("1"), task(taskId=tid)]
    answers.append(task(taskId=tid, status="completed"))
    url = fault.url(get={tid: answers})
    r = run_cli("watch", "--url", url, "--session", SESSION, *P, "-o", "ndjson", "--", tid)
    assert r.code == 0, r.stderr[-2000:]
    story = run_cli("log", "--url", url, "-o", "ndjson", "--", tid)
    assert story.code == 0, story.stderr
    retries = [e["data"] for e in story.lines() if e["kind"] == "retry"]
    assert [d.get("rateLimited") for d in retries] == [None, True], retries
