"""MCP 2026-07-28 push in `watch`: `subscriptions/listen` with `notifications.taskIds`
(SEP-2575, SEP-2663), against the demo server's 2026-07-28 mode (which pushes task events) and
fastmcp 4.1.4 + fastmcp-tasks (which serves listen without task events: mcptask falls back to
polling cleanly)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcptask.demo.server import DemoServer

from conftest import RunCli
from servers.common import ServerProcess

pytestmark = pytest.mark.timeout(90)
V2026 = "2026-07-28"


def _call(run_cli: RunCli, url: str, *args: str) -> str:
    r = run_cli("call", *args, "-u", url, "-o", "json")
    assert r.code == 0, r.stderr
    task_id: str = r.json()["taskId"]
    return task_id


def _methods(server: DemoServer) -> list[Any]:
    return [r["message"].get("method") for r in server.requests]


def test_watch_follows_2026_tasks_by_push(run_cli: RunCli) -> None:
    with DemoServer(task_seconds=2.0, poll_interval_ms=1000, protocol=V2026) as server:
        # one process calls and watches: a second one could start after the task's 2 s on a
        # busy machine (seen in a loaded suite), with nothing left to push
        r = run_cli(
            "call", "build-report", "topic=tides",
            "-u", server.url, "--watch", "-o", "ndjson", "--result",
        )  # fmt: skip
        assert r.code == 0, r.stderr
        assert r.stderr == ""
        lines = r.lines()
        tid = lines[0]["taskId"]
        pushed = [ln for ln in lines if ln.get("event") == "status" and ln["via"] == "push"]
        assert pushed and pushed[-1]["status"] == "completed"
        assert lines[-1]["event"] == "end" and lines[-1]["outcome"] == "completed"
        assert "12 documents read" in json.dumps(lines[-1]["result"])
        assert server.listens == [[tid]]
        # push first, polling as the safety net: the first look and the confirming poll
        assert _methods(server).count("tasks/get") <= 3


def test_ids_the_server_did_not_accept_are_polled(run_cli: RunCli) -> None:
    with DemoServer(task_seconds=1.5, poll_interval_ms=500, protocol=V2026) as server:
        tid = _call(run_cli, server.url, "build-report")
        r = run_cli("watch", "-u", server.url, "-o", "ndjson", "--", tid, "nope")
        assert r.code == 9, r.stderr  # the unknown id: the highest exit code
        ends = {ln["taskId"]: ln for ln in r.lines() if ln.get("event") == "end"}
        assert ends[tid]["outcome"] == "completed" and ends["nope"]["outcome"] == "unknown"
        assert sorted(server.listens[0]) == sorted([tid, "nope"])


def test_a_dropped_listen_stream_is_listened_to_again(run_cli: RunCli) -> None:
    with DemoServer(
        task_seconds=2.0, poll_interval_ms=1000, protocol=V2026, push_drop_after=1
    ) as server:
        # one process calls and watches: a second one could start after the task's 2 s on a
        # busy machine, with nothing left to listen to
        r = run_cli("call", "build-report", "-u", server.url, "--watch", "-o", "ndjson")
        assert r.code == 0, r.stderr
        assert len(server.listens) >= 2  # no replay: listened to again (and fetched again)
        assert r.lines()[-1]["outcome"] == "completed"


def test_no_push_turns_listening_off(run_cli: RunCli) -> None:
    with DemoServer(task_seconds=1.0, poll_interval_ms=300, protocol=V2026) as server:
        tid = _call(run_cli, server.url, "build-report")
        r = run_cli("watch", "-u", server.url, "-o", "ndjson", "--no-push", "--", tid)
        assert r.code == 0, r.stderr
        assert server.listens == []


def test_fastmcp4_serves_listen_without_task_events_and_watch_polls(
    run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    url = fastmcp4_server.url
    tid = _call(run_cli, url, "slow_echo", "text=hi", "seconds=1.5")
    r = run_cli("watch", "-u", url, "-o", "ndjson", "--result", "--trace", "--", tid)
    assert r.code == 0, r.stderr
    assert '"method": "subscriptions/listen"' in r.stderr  # asked
    lines = [json.loads(ln) for ln in r.stdout.splitlines() if ln.strip()]
    assert lines[-1]["outcome"] == "completed"
    assert all(ln["via"] == "poll" for ln in lines if ln.get("event") == "status")
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("mcptask:")]
    assert errors == []  # a clean fall-back: no retries, no warnings
