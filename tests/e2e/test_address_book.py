"""Issue 15: with no target anywhere, the task book is the address book. Two real
server-everything processes (two ports) at once; ids, prefixes, one watch over both, the
loopback spellings of one endpoint, ambiguity errors, a reader that goes away, and the hints."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcptask.demo.server import DemoServer
from mcptask.state.endpoints import endpoint_key, same_place
from mcptask.state.taskbook import TaskBook

from conftest import CliResult, RunCli, assert_one_line_error, clean_env, rest_of
from servers.common import ServerProcess
from servers.mcp_envs import start_everything

TOOL = "simulate-research-query"


@pytest.fixture(scope="module")
def second_server() -> Iterator[ServerProcess]:
    """Another server-everything on its own port: a second endpoint."""
    server = start_everything()
    try:
        yield server
    finally:
        server.stop()


def create(run_cli: RunCli, url: str, topic: str) -> str:
    r = run_cli("call", TOOL, f"topic={topic}", "--url", url, "-o", "json")
    assert r.code == 0, r.stderr
    task_id: str = r.json()["taskId"]
    return task_id


def no_target(r: CliResult) -> None:
    assert "no target" not in r.stderr, r.stderr


def test_ids_and_prefixes_find_their_endpoint(
    run_cli: RunCli, everything_server: ServerProcess, second_server: ServerProcess
) -> None:
    a = create(run_cli, everything_server.url, "tides")
    b = create(run_cli, second_server.url, "reefs")

    r = run_cli("get", "-o", "json", "--", a)
    assert r.code == 0, r.stderr
    assert r.json()["taskId"] == a and r.json()["server"] == everything_server.url

    r = run_cli("get", "-o", "json", "--", b[:8])  # a prefix, as the live view shows ids
    assert r.code == 0, r.stderr
    assert r.json()["taskId"] == b and r.json()["server"] == second_server.url

    r = run_cli("watch", "-o", "ndjson", "--", a, b)
    assert r.code == 0, r.stderr
    lines = r.lines()
    ends = [line for line in lines if line["event"] == "end"]
    assert {e["taskId"] for e in ends} == {a, b}
    assert all(e["outcome"] == "completed" for e in ends)
    assert lines[-1] == {"event": "done", "exitCode": 0, "outcomes": {"completed": 2}}
    servers = {line["server"] for line in lines if line["event"] == "status"}
    assert servers == {everything_server.url, second_server.url}

    r = run_cli("result", "-o", "json", "--", a)
    assert r.code == 0, r.stderr
    assert "tides" in json.dumps(r.json())


def test_watch_all_covers_every_endpoint(
    run_cli: RunCli, everything_server: ServerProcess, second_server: ServerProcess
) -> None:
    a = create(run_cli, everything_server.url, "one")
    b = create(run_cli, second_server.url, "two")
    r = run_cli("watch", "--all", "-o", "json")
    assert r.code == 0, r.stderr
    tasks = {t["taskId"]: t for t in r.json()["tasks"]}
    assert {a, b} <= set(tasks)
    assert tasks[a]["server"] == everything_server.url
    assert tasks[b]["server"] == second_server.url

    r = run_cli("list", "--local", "-o", "json")
    assert r.code == 0, r.stderr
    listed = {t["taskId"]: t["server"] for t in r.json()["tasks"]}
    assert listed[a] == everything_server.url and listed[b] == second_server.url


def test_localhost_and_127_0_0_1_are_one_endpoint(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    assert "127.0.0.1" in everything_server.url
    a = create(run_cli, everything_server.url, "loopback")
    via_localhost = everything_server.url.replace("127.0.0.1", "localhost") + "/"
    r = run_cli("get", "--url", via_localhost, "-o", "json", "--", a)
    assert r.code == 0, r.stderr  # the session the book kept for 127.0.0.1 is found
    assert r.json()["status"] in ("working", "completed")


def test_unknown_id_without_a_target_is_a_usage_error(run_cli: RunCli) -> None:
    r = run_cli("get", "never-seen-id")
    assert r.code == 2
    assert_one_line_error(r)
    assert "not in the task book" in r.stderr and "--url" in r.stderr


def fake_book(state_dir: Path, endpoints: dict[str, list[str]]) -> None:
    book = TaskBook(state_dir / "tasks.json")
    for url, ids in endpoints.items():
        book.record_many(url, {tid: {"status": "working", "protocol": "x"} for tid in ids})


def test_an_id_on_two_endpoints_is_ambiguous(run_cli: RunCli, state_dir: Path) -> None:
    fake_book(state_dir, {"http://a.test/mcp": ["same-id"], "http://b.test/mcp": ["same-id"]})
    r = run_cli("get", "same-id")
    assert r.code == 2
    assert_one_line_error(r)
    assert "http://a.test/mcp" in r.stderr and "http://b.test/mcp" in r.stderr
    assert "--url" in r.stderr and "-s NAME" in r.stderr


def test_an_ambiguous_prefix_lists_the_candidates(run_cli: RunCli, state_dir: Path) -> None:
    fake_book(state_dir, {"http://a.test/mcp": ["abcd1111"], "http://b.test/mcp": ["abcd2222"]})
    r = run_cli("watch", "abcd")
    assert r.code == 2
    assert_one_line_error(r)
    assert "abcd1111" in r.stderr and "abcd2222" in r.stderr
    r = run_cli("get", "abc")  # shorter than four characters: not a prefix
    assert r.code == 2 and "not in the task book" in r.stderr


def test_one_endpoint_spelled_two_ways_is_not_ambiguous() -> None:
    assert same_place("http://localhost:8000/mcp/") == same_place("http://127.0.0.1:8000/mcp")
    assert same_place("http://[::1]:8000/mcp") == same_place("http://LOCALHOST:8000/mcp")
    assert same_place("http://localhost:8000/mcp") != same_place("http://localhost:8001/mcp")
    assert endpoint_key("HTTPS://Example.COM:443/mcp/") == "https://example.com/mcp"
    assert endpoint_key("http://example.com:80/mcp") == "http://example.com/mcp"


def test_book_merges_the_spellings(tmp_path: Path) -> None:
    book = TaskBook(tmp_path / "tasks.json")
    book.record("http://127.0.0.1:9/mcp", "t1", status="working", session="s1")
    # later writes through another spelling land in the same record
    book.record("http://localhost:9/mcp/", "t1", status="completed")
    assert list(book.all_endpoints()) == ["http://127.0.0.1:9/mcp"]
    rec = book.lookup("http://[::1]:9/mcp", "t1")
    assert rec is not None and rec["session"] == "s1" and rec["status"] == "completed"
    [(endpoint, task_id, _)] = book.find("t1")
    assert (endpoint, task_id) == ("http://127.0.0.1:9/mcp", "t1")


@pytest.fixture
def slow_demo() -> Iterator[str]:
    """The embedded demo server with tasks that take a minute (it pushes status changes)."""
    with DemoServer(task_seconds=60) as server:
        yield server.url


def demo_task(run_cli: RunCli, url: str) -> str:
    r = run_cli("call", "build-report", "topic=pipe", "--url", url, "-o", "json")
    assert r.code == 0, r.stderr
    task_id: str = r.json()["taskId"]
    return task_id


def test_a_reader_that_goes_away_ends_the_watch(
    run_cli: RunCli, state_dir: Path, slow_demo: str
) -> None:
    task_id = demo_task(run_cli, slow_demo)
    mcptask = f"{sys.executable} -m mcptask"
    started = time.monotonic()
    proc = subprocess.run(
        ["sh", "-c", f"{mcptask} watch -o ndjson -- {task_id} | head -1"],
        env=clean_env(state_dir),
        capture_output=True,
        text=True,
        # the task runs a minute and its status changes rarely: only noticing the closed pipe
        # (not a failed write at the next change) ends mcptask this early (slack for a loaded
        # machine, still well before the minute)
        timeout=40,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["taskId"] == task_id
    assert "Traceback" not in proc.stderr
    assert time.monotonic() - started < 40


def test_ctrl_c_says_how_to_resume(run_cli: RunCli, state_dir: Path, slow_demo: str) -> None:
    task_id = demo_task(run_cli, slow_demo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcptask", "watch", "-o", "ndjson", "--", task_id],
        env=clean_env(state_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first: dict[str, Any] = json.loads(proc.stdout.readline())
    assert first["taskId"] == task_id
    os.kill(proc.pid, signal.SIGINT)
    out, err = rest_of(proc, 20)
    assert proc.returncode == 130, err
    end = json.loads(out.splitlines()[-1])
    assert end["event"] == "end" and end["outcome"] == "interrupted"
    assert f"resume with `mcptask watch {task_id}`" in err
    # the hint works when pasted (no target: the task book knows where the task is)
    r = run_cli("get", "-o", "json", "--", task_id)
    assert r.code == 0 and r.json()["status"] == "working", r.stderr


def test_prefixes_with_a_target_are_looked_up_together(run_cli: RunCli, state_dir: Path) -> None:
    """With a target, ids the book does not know whole are prefixes of its ids there (all
    looked up in one read): an ambiguous one is a usage error naming the candidates, before
    anything is sent."""
    fake_book(state_dir, {"http://a.test/mcp": ["abcd1111", "abcd2222", "efgh3333"]})
    r = run_cli("watch", "--url", "http://a.test/mcp", "--", "efgh", "abcd")
    assert r.code == 2
    assert_one_line_error(r)
    assert "'abcd' is the start of 2 task ids" in r.stderr
    assert "abcd1111" in r.stderr and "abcd2222" in r.stderr
