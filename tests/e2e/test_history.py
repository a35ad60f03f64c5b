"""Issue 24: the task book remembers everything it saw, and `mcptask log ID` tells a task's story.
Against the real servers: the embedded demo (it pushes), server-everything (MCP 2025-11-25, over
HTTP and stdio), fastmcp 4 + fastmcp-tasks (MCP 2026-07-28) and a2a-sdk (A2A): every status and
message in order with push/poll marked, `log --follow` beside a `watch`, why a task in
`input_required` looks stuck, stdio results after the server is gone, forget and prune, and an
A2A agent's tasks watched once after a mistaken `tools` at its origin."""

from __future__ import annotations

import itertools
import json
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcptask.demo.server import DemoServer

from conftest import RunCli, assert_one_line_error, clean_env, ok, rest_of
from servers.a2a_plugin import A2AServerProcess
from servers.common import ServerProcess

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def demo() -> Iterator[str]:
    with DemoServer(task_seconds=5) as server:
        yield server.url


@pytest.fixture(scope="module")
def pushing_demo() -> Iterator[str]:
    """The demo with a pace of 20 s: after the watch's first look every change comes by push
    (with a 1 s pace a loaded machine's polls can see each change before its push does)."""
    with DemoServer(task_seconds=5, poll_interval_ms=20_000) as server:
        yield server.url


def changes(lines: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """(status, message) in order, each once (what a change of state is)."""
    out: list[tuple[str, str | None]] = []
    for status, message in ((x["status"], x.get("statusMessage", x.get("message"))) for x in lines):
        if not out or out[-1] != (status, message):
            out.append((status, message))
    return out


def story(run_cli: RunCli, task_id: str, *target: str) -> list[dict[str, Any]]:
    lines = ok(run_cli("log", *target, "-o", "ndjson", "--", task_id)).lines()
    # in the order things happened (a creation timed only by its answer comes first)
    since = [line["sinceCreated"] for line in lines]
    assert since == sorted(since) and lines[0]["kind"] == "created"
    assert all(line["taskId"].startswith(task_id) for line in lines)
    return lines


def check_story(
    created: dict[str, Any], watched: list[dict[str, Any]], log: list[dict[str, Any]]
) -> None:
    """The log holds every status and message the creation and the watch saw, in order, each
    with how it came (push or poll) as the watch printed it."""
    states = [x for x in log if x["kind"] in ("created", "status", "message")]
    seen = [created, *[x for x in watched if x["event"] == "status"]]
    assert changes([{"status": x["status"], "message": x["message"]} for x in states]) == changes(
        seen
    )
    assert states[0]["kind"] == "created" and states[0]["command"] in ("call", "send")
    via = {
        (x["status"], x.get("statusMessage")): x["via"] for x in watched if x["event"] == "status"
    }
    for x in states[1:]:
        assert x["via"] == via[(x["status"], x["message"])], x
    # times relative to the first sighting, gaps between events
    assert log[0]["sinceCreated"] == 0 and log[0]["gap"] == 0
    assert all(b["sinceCreated"] >= a["sinceCreated"] for a, b in itertools.pairwise(log))
    ends = [x for x in log if x["kind"] == "end"]
    assert ends and ends[-1]["data"]["outcome"] == watched[-1]["outcome"]


def test_a_demo_task_s_log_has_every_status_and_message_with_push_and_poll(
    run_cli: RunCli, pushing_demo: str
) -> None:
    demo = pushing_demo
    created = ok(run_cli("call", "build-report", "topic=log", "--url", demo, "-o", "json")).json()
    tid = created["taskId"]
    watched = ok(run_cli("watch", "-o", "ndjson", "--", tid)).lines()
    log = story(run_cli, tid)
    check_story(created, watched, log)
    vias = {x["via"] for x in log if x["kind"] in ("status", "message")}
    assert "push" in vias  # the demo pushes its changes
    kinds = [x["kind"] for x in log]
    assert "push-open" in kinds and "progress" in kinds and "result" in kinds
    assert log[-1]["kind"] == "end"
    # the pretty timeline and the one JSON document
    pretty = ok(run_cli("log", "-o", "pretty", "--", tid)).stdout
    assert "created" in pretty and "Report ready" in pretty and "push" in pretty
    doc = ok(run_cli("log", "-o", "json", "--", tid[:8])).json()
    assert doc["taskId"] == tid and [e["n"] for e in doc["events"]] == [e["n"] for e in log]


@pytest.mark.parametrize("server", ["everything", "fastmcp4", "a2a"])
def test_a_task_s_log_on_each_protocol(
    run_cli: RunCli, request: pytest.FixtureRequest, server: str
) -> None:
    if server == "everything":
        url = request.getfixturevalue("everything_server").url
        args = ["call", "simulate-research-query", "topic=logs"]
    elif server == "fastmcp4":
        url = request.getfixturevalue("fastmcp4_server").url
        args = ["call", "slow_echo", "text=logs", "seconds=2"]
    else:
        url = request.getfixturevalue("a2a_server").url
        args = ["send", "hello log"]
    created = ok(run_cli(*args, "--url", url, "-o", "json")).json()
    tid = created["taskId"]
    watched = ok(run_cli("watch", "--url", url, "--result", "-o", "ndjson", "--", tid)).lines()
    log = story(run_cli, tid, "--url", url)
    check_story(created, watched, log)
    results = [x for x in log if x["kind"] == "result"]
    assert results and results[-1]["data"]["bytes"] > 0


def test_log_follow_in_another_process_tracks_a_watch(
    run_cli: RunCli, state_dir: Path, demo: str
) -> None:
    created = ok(run_cli("call", "build-report", "topic=follow", "--url", demo, "-o", "json"))
    tid = created.json()["taskId"]
    env = clean_env(state_dir)
    mcptask = [sys.executable, "-m", "mcptask"]
    watcher = subprocess.Popen(
        [*mcptask, "watch", "-o", "ndjson", "--", tid],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert watcher.stdout is not None
    # the watch has recorded its first look before the follower starts: a watch follows it
    json.loads(watcher.stdout.readline())
    while not any(x["command"] == "watch" for x in story(run_cli, tid)):
        assert watcher.poll() is None, watcher.stderr.read() if watcher.stderr else ""
    follower = subprocess.run(
        [*mcptask, "log", "--follow", "-o", "ndjson", "--", tid],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert follower.returncode == 0, follower.stderr
    rest, err = rest_of(watcher, 60)
    assert watcher.returncode == 0, err
    followed = [json.loads(x) for x in follower.stdout.splitlines()]
    # everything the watch recorded reached the follower, which ended with the task
    assert {x["n"] for x in followed} == {x["n"] for x in story(run_cli, tid)}
    states = [x for x in followed if x["kind"] in ("status", "message")]
    assert changes([{"status": x["status"], "message": x["message"]} for x in states])[-1] == (
        "completed",
        "Report ready",
    )
    # a follower that finds no fresh record of the watch polls too (a loaded machine delays
    # the watch's writes): either way it saw every change, whoever recorded it first
    assert {x["command"] for x in states} <= {"watch", "log"}
    assert json.loads(rest.splitlines()[-1])["outcome"] == "completed"


def test_log_follow_alone_follows_the_task_itself(run_cli: RunCli, state_dir: Path) -> None:
    """Nothing else watches: `log --follow` follows the task at the server's pace (push where
    offered) and sees every status message of the demo task, then ends with it. The demo's
    clock is the test's: each stage comes only once the follower printed the one before."""
    # the demo's clock a minute behind (it steps by hand): its times are never ahead of when
    # mcptask sees them, as a server's are not
    start = time.time() - 60
    now = [start]
    stages = ["Collecting sources", "Reading 12 documents", "Drafting report"]
    stages += ["Checking citations", "Finalizing", "Report ready"]
    # six stages of one second on the test's clock, each half way through when shown
    with DemoServer(task_seconds=6.0, clock=lambda: now[0]) as server:
        created = ok(run_cli("call", "build-report", "topic=alone", "--url", server.url))
        tid = created.json()["taskId"]
        follower = subprocess.Popen(
            [sys.executable, "-m", "mcptask", "log", "--follow", "--timeout", "120", "--", tid],
            env=clean_env(state_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert follower.stdout is not None
        followed = []

        def until(said: str) -> None:
            while True:
                line = follower.stdout.readline()  # type: ignore[union-attr]
                assert line, (followed, follower.stderr.read() if follower.stderr else "")
                followed.append(json.loads(line))
                if followed[-1].get("message") == said:
                    return

        until("Queued")
        for n, stage in enumerate(stages, 1):
            now[0] = start + n + 0.5
            until(stage)
        rest, err = rest_of(follower, 60)
        assert follower.returncode == 0, err
        followed += [json.loads(x) for x in rest.splitlines()]
    said = [x["message"] for x in followed if x["kind"] in ("created", "status", "message")]
    assert said == [
        "Queued",
        "Collecting sources",
        "Reading 12 documents",
        "Drafting report",
        "Checking citations",
        "Finalizing",
        "Report ready",
    ]
    # (what a failure shows: the follower's lines, what it said on stderr, the book's story)
    assert followed[-1]["kind"] == "end" and followed[-1]["data"]["outcome"] == "completed", (
        [(x["n"], x["kind"], x["status"]) for x in followed],
        err,
        [(x["n"], x["kind"], x["command"]) for x in story(run_cli, tid)],
    )
    assert {x["command"] for x in followed[1:]} == {"log"}
    # each change at the server's time, with when mcptask saw it beside it
    changed = [x for x in followed if x["kind"] in ("status", "message")]
    assert all(x["clock"] == "server" and x["late"] >= 0 for x in changed)


def test_log_follow_polls_at_the_server_s_pace(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    url = everything_server.url
    tid = ok(run_cli("call", "simulate-research-query", "topic=alone", "--url", url, "-o", "json"))
    task_id = tid.json()["taskId"]
    followed = ok(
        run_cli("log", "--follow", "-o", "ndjson", "--timeout", "90", "--", task_id)
    ).lines()
    assert [x["status"] for x in followed if x["kind"] == "status"][-1] == "completed"
    assert {x["command"] for x in followed[1:]} == {"log"}
    # a piped log prints one JSON object per event, so --jq applies to each
    retries = ok(run_cli("log", "--jq", 'select(.kind == "status") | .status', "--", task_id))
    assert retries.stdout.split() == [x["status"] for x in followed if x["kind"] == "status"]
    # an ended task: `log --follow` ends at once, whatever --timeout
    again = ok(run_cli("log", "--follow", "--timeout", "3", "--", task_id)).lines()
    assert sorted(x["n"] for x in again) == sorted(x["n"] for x in followed)


def test_get_shows_why_a_task_waiting_for_input_looks_stuck(
    run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    url = fastmcp4_server.url
    tid = ok(run_cli("call", "ask_name", "--url", url, "-o", "json")).json()["taskId"]
    ok(run_cli("watch", "--url", url, "--until", "input_required", "-o", "ndjson", "--", tid))
    pretty = ok(run_cli("get", "--url", url, "-o", "pretty", "--", tid)).stdout
    for words in ("unchanged for", "waiting on", "name", "mcptask answer", "watch", "purged at"):
        assert words in pretty, (words, pretty)
    task = ok(run_cli("get", "--url", url, "-o", "json", "--", tid)).json()
    history = task["history"]
    assert history["pendingQuestion"]["status"] == "input_required"
    assert history["pendingQuestion"]["keys"] == sorted(task["inputRequests"])
    assert history["sinceChange"] >= 0 and history["watchedElsewhere"] is False
    assert history["ttl"] == task["ttl"] and history["retries"] == 0
    kinds = [x["kind"] for x in story(run_cli, tid, "--url", url)]
    assert "question" in kinds
    ok(run_cli("answer", "--url", url, "--text", "Ann", "--", tid))
    answered = [x for x in story(run_cli, tid, "--url", url) if x["kind"] == "answer"]
    assert answered and answered[-1]["data"]["confirmed"] is True


def test_stdio_results_outlive_the_server(run_cli: RunCli, everything_stdio_cmd: list[str]) -> None:
    cmd = shlex.join(everything_stdio_cmd)
    r = ok(run_cli("call", "simulate-research-query", "topic=pipes", "-o", "json", "--stdio", cmd))
    tid = r.json()["tasks"][0]["taskId"]
    # the server is gone: the book kept the result, found by a prefix without a target
    got = ok(run_cli("result", "-o", "json", "--", tid[:8]))
    assert "pipes" in json.dumps(got.json())
    assert "gone from its server" in got.stderr
    local = ok(run_cli("list", "--local", "-o", "json")).json()["tasks"]
    assert [t["server"] for t in local if t["taskId"] == tid] == ["stdio:" + cmd]
    assert ok(run_cli("list", "--local", "--stdio", cmd, "-o", "json")).json()["tasks"]
    assert story(run_cli, tid[:8])[-1]["kind"] == "end"
    # a status needs the server, which is gone: a usage error that says why
    status = run_cli("get", "--", tid)
    assert status.code == 2 and "stdio" in status.stderr
    assert_one_line_error(status)
    endpoints = ok(run_cli("book", "-o", "json")).json()["endpoints"]
    assert [e["kind"] for e in endpoints if e["endpoint"] == "stdio:" + cmd] == ["stdio"]
    # its protocol, as its tasks were seen speaking it (not `?`: issue 38)
    assert [e["protocol"] for e in endpoints if e["endpoint"] == "stdio:" + cmd] == [
        "mcp-2025-11-25"
    ]
    pretty = ok(run_cli("book", "-o", "pretty", env={"COLUMNS": "200"})).stdout
    row = next(ln for ln in pretty.splitlines() if "stdio:" in ln)
    assert "mcp-2025-11-25" in row and " ? " not in row


def test_book_forget_and_prune(run_cli: RunCli, everything_server: ServerProcess) -> None:
    url = everything_server.url
    make: Callable[[], str] = lambda: ok(  # noqa: E731
        run_cli("call", "simulate-research-query", "topic=tend", "--url", url, "-o", "json")
    ).json()["taskId"]
    a, b = make(), make()
    book = ok(run_cli("book", "-o", "json")).json()
    (entry,) = [e for e in book["endpoints"] if e["endpoint"] == url]
    assert entry["tasks"] >= 2 and entry["unfinished"] >= 2 and entry["lastContact"]
    assert entry["protocol"] == "mcp-2025-11-25"
    assert url in ok(run_cli("book", "-o", "pretty")).stdout

    forgot = ok(run_cli("forget", "-o", "json", "--", a)).json()
    assert forgot == {"forgotten": [{"taskId": a, "server": url}]}
    gone = run_cli("get", "--", a)
    assert gone.code == 2 and "not in the task book" in gone.stderr
    assert ok(run_cli("get", "-o", "json", "--", b)).json()["taskId"] == b
    again = run_cli("forget", "--", a)
    assert again.code == 9  # not in the book: not found (issue 38), not a missing target
    assert_one_line_error(again)

    kept = ok(run_cli("prune", "--older-than", "7d", "-o", "json")).json()
    assert kept["tasks"] == 0
    assert (
        ok(run_cli("prune", "--older-than", "0s", "--unfinished", "-o", "json")).json()["tasks"]
        >= 1
    )
    assert run_cli("get", "--", b).code == 2
    bad = run_cli("prune", "--older-than", "soon")
    assert bad.code == 2
    assert_one_line_error(bad)

    make()
    dropped = ok(run_cli("forget", "--endpoint", url + "/", "-o", "json")).json()
    assert dropped["endpoint"] == url + "/" and dropped["tasks"] == 1
    assert url not in [e["endpoint"] for e in ok(run_cli("book", "-o", "json")).json()["endpoints"]]
    unknown = run_cli("forget", "--endpoint", url)
    assert unknown.code == 9
    assert_one_line_error(unknown)
    both = run_cli("forget", "--endpoint", url, "--", b)
    assert both.code == 2
    assert_one_line_error(both)


def test_watch_all_shows_an_agent_s_tasks_once_after_a_mistaken_tools(
    run_cli: RunCli, a2a_server: A2AServerProcess
) -> None:
    origin_mcp = a2a_server.base_url.rstrip("/") + "/mcp"
    mistaken = run_cli("tools", "--url", origin_mcp)
    assert mistaken.code != 0 and "Traceback" not in mistaken.stderr
    # a command that failed to speak to a URL adds nothing to the book
    listed = ok(run_cli("book", "-o", "json")).json()["endpoints"]
    assert origin_mcp not in [e["endpoint"] for e in listed]
    tid = ok(run_cli("send", "slow watch me once", "--url", a2a_server.url, "-o", "json"))
    task_id = tid.json()["taskId"]
    # the same mistake once the agent's tasks are in the book: one endpoint all the same
    assert run_cli("list", "--url", origin_mcp, "-o", "json").code == 0
    r = ok(run_cli("watch", "--all", "--timeout", "2", "-o", "json"), 7)
    ids = [t["taskId"] for t in r.json()["tasks"]]
    assert task_id in ids
    assert len(ids) == len(set(ids)), ids  # each task once
    ok(run_cli("cancel", "--", task_id), 0, 11)


def test_watch_all_skips_an_endpoint_silent_for_a_day(
    run_cli: RunCli, state_dir: Path, everything_server: ServerProcess
) -> None:
    import sqlite3

    from mcptask.state.taskbook import TaskBook

    gone = "http://127.0.0.1:9/mcp"  # nothing listens there
    book = TaskBook(state_dir / "tasks.db")
    book.set_endpoint(gone, protocol="mcp-2025-11-25")
    book.record(gone, "lost-task", status="working", protocol="mcp-2025-11-25")
    book.close()
    alive = ok(
        run_cli("call", "simulate-research-query", "topic=alive", "--url", everything_server.url)
    )
    alive_id = alive.json()["taskId"]
    # an endpoint that cannot be reached: its tasks were not watched, exit 4 (issue 38)
    first = ok(run_cli("watch", "--all", "-o", "json"), 4)
    assert f"skipping {gone}" in first.stderr
    assert f"{gone} could not be reached: its tasks were not watched (exit 4)" in first.stderr
    assert [t["taskId"] for t in first.json()["tasks"]] == [alive_id]
    assert first.json()["exitCode"] == 4
    (entry,) = [
        e for e in ok(run_cli("book", "-o", "json")).json()["endpoints"] if e["endpoint"] == gone
    ]
    assert entry["lastFailure"] is not None
    with sqlite3.connect(state_dir / "tasks.db") as conn:  # a day and more goes by
        conn.execute("UPDATE endpoints SET created = created - 2 * 86400, last_ok = NULL")
    second = ok(run_cli("watch", "--all", "-o", "json"))  # skipped on purpose, not tried: 0
    assert f"skipping {gone}: it has not answered for" in second.stderr
    assert "mcptask forget --endpoint" in second.stderr
    # asked for by name, it is tried
    tried = run_cli("watch", "--all", "--url", gone, "-o", "json")
    assert tried.code == 4


def test_watch_all_with_only_an_unreachable_endpoint_exits_4(
    run_cli: RunCli, state_dir: Path
) -> None:
    """Nothing could be watched because the one endpoint with unfinished tasks is down: not
    `no unfinished tasks` and exit 0 (a script would think all is done)."""
    from mcptask.state.taskbook import TaskBook

    gone = "http://127.0.0.1:9/mcp"
    book = TaskBook(state_dir / "tasks.db")
    book.set_endpoint(gone, protocol="mcp-2025-11-25")
    book.record(gone, "lost-task", status="working", protocol="mcp-2025-11-25")
    book.close()
    r = run_cli("watch", "--all", "-o", "ndjson")
    assert r.code == 4, r.stderr
    assert f"skipping {gone}" in r.stderr
    assert f"{gone} could not be reached" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout.strip() and json.loads(r.stdout.splitlines()[-1])["exitCode"] == 4
