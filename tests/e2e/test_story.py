"""Issue 34: the true story. Against the real servers: a task first seen after it ended has its
creation and its end at the server's times (fastmcp 3); an answered task's log has one answer
event naming the fields (fastmcp 4); `why` answers from the task book with the server stopped
(the embedded demo); `list --local` keeps the server's data; a stdio task whose server exited
is `unknown`, not `working` (server-everything over stdio); an A2A agent's messages between two
looks are filled from the task's own history (a2a-sdk)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from mcptask.demo.server import DemoServer
from mcptask.model.times import epoch

from conftest import RunCli, assert_one_line_error, ok
from servers.a2a_plugin import A2AServerProcess
from servers.common import ServerProcess

pytestmark = pytest.mark.timeout(180)


def log_of(run_cli: RunCli, task_id: str, *args: str, **kw: Any) -> list[dict[str, Any]]:
    return ok(run_cli("log", *args, "--", task_id, **kw)).lines()


def at(stamp: str) -> float:
    value = epoch(stamp)
    assert value is not None, stamp
    return value


def test_a_task_first_seen_after_it_ended_is_told_in_the_server_s_time(
    run_cli: RunCli, fastmcp3_server: ServerProcess, tmp_path: Path
) -> None:
    url = fastmcp3_server.url
    made = ok(run_cli("call", "slow_echo", "text=late", "seconds=1", "--url", url, "-o", "json"))
    tid = made.json()["taskId"]
    ok(run_cli("watch", "--url", url, "--", tid))  # it ends, seen by another book
    # a machine that never saw it looks once, long after it ended
    elsewhere = {"MCPTASK_STATE_DIR": str(tmp_path / "elsewhere")}
    task = ok(run_cli("get", "--url", url, "-o", "json", "--", tid, env=elsewhere)).json()
    assert task["status"] == "completed" and task["createdAt"] and task["lastUpdatedAt"]
    log = log_of(run_cli, tid, "--url", url, env=elsewhere)
    created, done = log[0], [x for x in log if x["kind"] == "status"][-1]
    assert created["kind"] == "created" and created["clock"] == "server"
    assert at(created["at"]) == pytest.approx(at(task["createdAt"]), abs=0.001)
    assert created["data"]["firstSeen"] is True
    assert done["status"] == "completed" and done["clock"] == "server"
    assert at(done["at"]) == pytest.approx(at(task["lastUpdatedAt"]), abs=0.001)
    # the server's duration, not the moment of the look
    took = at(task["lastUpdatedAt"]) - at(task["createdAt"])
    assert done["sinceCreated"] == pytest.approx(took, abs=0.002)
    assert done["late"] >= 0 and at(done["seenAt"]) >= at(done["at"])
    pretty = ok(run_cli("log", "--url", url, "-o", "pretty", "--", tid, env=elsewhere)).stdout
    assert "created on the server (first seen later)" in pretty and "later)" in pretty


def test_an_answered_task_s_log_has_one_answer_naming_the_fields(
    run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    url = ("--url", fastmcp4_server.url)
    tid = ok(run_cli("call", "ask_name", *url, "-o", "json")).json()["taskId"]
    ok(run_cli("watch", *url, "--until", "input_required", "-o", "ndjson", "--", tid))
    ok(run_cli("answer", *url, "--json", '{"name": "Ann"}', "--", tid))
    log = log_of(run_cli, tid, *url)
    answers = [x for x in log if x["kind"] == "answer"]
    assert len(answers) == 1, answers
    data = answers[0]["data"]
    assert data["keys"] == ["name"] and data["action"] == "accept" and data["confirmed"] is True
    assert answers[0]["command"] == "answer"
    # the question came before the answer, the task moved on after it
    kinds = [x["kind"] for x in log]
    assert kinds.index("question") < kinds.index("answer")
    pretty = ok(run_cli("log", *url, "-o", "pretty", "--", tid)).stdout
    assert "answered (name); taken · by answer" in pretty


def test_why_answers_from_the_book_when_the_server_is_down(run_cli: RunCli) -> None:
    with DemoServer(task_seconds=60) as server:
        made = ok(run_cli("call", "build-report", "topic=down", "--url", server.url))
        tid = made.json()["taskId"]
        seen = ok(run_cli("get", "-o", "json", "--", tid)).json()
        up = ok(run_cli("why", "-o", "json", "--", tid)).json()
        assert up["source"] == "server" and up["history"]["reasons"]
    # the server is gone: `why` tells what the book last saw, the error first; exit 4
    down = run_cli("why", "-o", "json", "--", tid)
    assert down.code == 4, down
    shown = down.json()
    assert shown["source"] == "book" and shown["statusMessage"] == seen["statusMessage"]
    assert shown["ttl"] == seen["ttl"] and shown["pollInterval"] == seen["pollInterval"]
    assert shown["history"]["reasons"][0].startswith("the server cannot be reached")
    assert shown["lastSeenAt"]
    assert_one_line_error(down)
    pretty = run_cli("why", "-o", "pretty", "--", tid)
    assert pretty.code == 4 and seen["statusMessage"] in pretty.stdout
    assert "the server cannot be reached" in pretty.stdout
    # `get` says where to look
    failed = run_cli("get", "--", tid)
    assert failed.code == 4 and f"mcptask why {tid}" in failed.stderr
    # the book's task rows are the server's data, last seen
    (local,) = [t for t in ok(run_cli("list", "--local", "-o", "json")).json()["tasks"]]
    assert local["statusMessage"] == seen["statusMessage"]
    assert (local["ttl"], local["pollInterval"]) == (seen["ttl"], seen["pollInterval"])
    assert (local["createdAt"], local["lastUpdatedAt"]) == (
        seen["createdAt"],
        seen["lastUpdatedAt"],
    )
    assert local["lastSeenAt"] and local["status"] == "working"
    book = ok(run_cli("book", "-o", "json")).json()["endpoints"]
    assert [e["lastFailure"] is not None for e in book] == [True]


def test_a_stdio_task_whose_server_exited_is_unknown(
    run_cli: RunCli, everything_stdio_cmd: list[str]
) -> None:
    cmd = shlex.join(everything_stdio_cmd)
    r = run_cli("call", "simulate-research-query", "topic=cut", "--timeout", "1", "--stdio", cmd)
    assert r.code == 7, r
    tid = r.json()["tasks"][0]["taskId"]
    (task,) = [t for t in ok(run_cli("list", "--local", "-o", "json")).json()["tasks"]]
    assert task["taskId"] == tid and task["status"] == "unknown"
    assert "stdio server has exited" in task["bookNote"]
    assert task["raw"]["status"] == "working"  # its last status, kept
    assert [x["kind"] for x in log_of(run_cli, tid[:8])][-2:] == ["lost", "end"]


def test_an_agent_s_messages_between_two_looks_are_filled_from_its_history(
    run_cli: RunCli, a2a_server: A2AServerProcess
) -> None:
    url = ("--url", a2a_server.url)
    tid = ok(run_cli("send", "between", *url, "-o", "json")).json()["taskId"]
    # polls far apart, no push: steps happen between two looks
    ok(run_cli("watch", *url, "--no-push", "--interval", "8", "-o", "ndjson", "--", tid))
    log = log_of(run_cli, tid, *url)
    said = [x["message"] for x in log if x["kind"] in ("message", "status", "history")]
    steps = [s for s in said if s and s.startswith("step")]
    # each step once, whether a look saw it as the status or the history filled it in (a
    # turn is timed at the look before it: the earliest it can be, not when it happened)
    assert sorted(steps) == ["step 1/3", "step 2/3", "step 3/3"], said
    assert any(x["kind"] == "history" and x["data"]["role"] == "agent" for x in log)
