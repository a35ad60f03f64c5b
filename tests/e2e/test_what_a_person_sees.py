"""What a person sees, round three (issue 38): one shape per command, exit codes and advice that
fit, checked against real servers (the real CLI in a subprocess)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mcptask import schemas

from conftest import CliResult, RunCli, assert_one_line_error
from servers.odd_server import OddServer
from servers.plugin import ServerProcess

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def odd() -> Iterator[OddServer]:
    with OddServer() as server:
        yield server


def ok(r: CliResult, code: int = 0) -> CliResult:
    assert r.code == code, f"exit {r.code}\nstdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr, r.stderr
    return r


def valid(data: Any, name: str) -> Any:
    validator = Draft202012Validator(schemas.bundle(name))
    errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(data)]
    assert not errors, errors
    return data


# -- shapes ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_send_watch_ndjson_with_a_message_reply_prints_a_watch_event(
    run_cli: RunCli, odd: OddServer, version: str
) -> None:
    """An agent that answers with a Message and no task: `send --watch -o ndjson` still
    prints ndjson watch events (its one `end` line, with the reply as the result)."""
    url = odd.agent(version, message_reply=True)
    r = ok(run_cli("send", "hi there", "-u", url, "--watch", "-o", "ndjson"))
    lines = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert len(lines) == 1, r.stdout
    end = valid(lines[0], "watch-event")
    assert end["event"] == "end" and end["outcome"] == "completed" and end["exitCode"] == 0
    assert "hello back: hi there" in json.dumps(end["result"])


def test_call_watch_says_how_to_have_the_result(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    """`call --watch` shows how the task ended; without --result it names the command that
    prints what it made (as `demo` prints it)."""
    r = ok(
        run_cli(
            "call",
            "simulate-research-query",
            "topic=tides",
            "--watch",
            "-o",
            "pretty",
            "--url",
            everything_server.url,
        )
    )
    created = next(ln for ln in r.stderr.splitlines() if ln.startswith("mcptask: task "))
    task_id = created.split()[2]
    assert f"its result: `mcptask result {task_id}`" in r.stderr, r.stderr
    shown = ok(run_cli("result", "-o", "json", "--", task_id))
    assert shown.stdout.strip()
    # with --result the result is printed, and no hint
    r = ok(
        run_cli(
            "call",
            "simulate-research-query",
            "topic=tides",
            "--watch",
            "--result",
            "-o",
            "pretty",
            "--url",
            everything_server.url,
        )
    )
    assert "its result:" not in r.stderr
    assert "tides" in r.stdout


# -- exit codes and advice -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("forget", "no-such-task"), "the task book has no task no-such-task"),
        (("log", "no-such-task"), "the task book has no history of task no-such-task"),
        (("log", "4b"), "a prefix of a task id needs at least 4 characters"),
    ],
)
def test_what_only_the_book_knows_is_not_found_there(
    run_cli: RunCli, args: tuple[str, ...], words: str
) -> None:
    """`forget` and `log` read only the task book: a target cannot help, exit 9 (README)."""
    r = run_cli(*args)
    assert r.code == 9, r.stderr
    assert_one_line_error(r)
    assert words in r.stderr and "give a target" not in r.stderr


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (("watch", "--untill", "completed", "t1"), "did you mean --until?"),
        (("wacth", "t1"), "did you mean 'watch'?"),
        (("get", "--ur", "x", "t1"), "did you mean --url?"),
        (("push", "lisen"), "did you mean 'listen'?"),
    ],
)
def test_did_you_mean_names_the_closest(
    run_cli: RunCli, args: tuple[str, ...], suggestion: str
) -> None:
    r = run_cli(*args)
    assert r.code == 2
    assert_one_line_error(r)
    assert suggestion in r.stderr and "auth" not in r.stderr and "--notify" not in r.stderr


def test_list_without_a_target_points_at_the_book(run_cli: RunCli) -> None:
    r = run_cli("list")
    assert r.code == 2
    assert_one_line_error(r)
    assert "`mcptask list --local`" in r.stderr
    assert ok(run_cli("list", "--local", "-o", "json")).json() is not None


def test_prune_wants_a_unit(run_cli: RunCli) -> None:
    r = run_cli("prune", "--older-than", "7")
    assert r.code == 2
    assert_one_line_error(r)
    assert "7d (days)" in r.stderr
    assert ok(run_cli("prune", "--older-than", "7d", "-o", "json")).json()["olderThan"] == 604800


# -- check: FAIL only for what the spec forbids ----------------------------------------------------


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_check_an_agent_that_answers_with_a_message(
    run_cli: RunCli, odd: OddServer, version: str
) -> None:
    """A2A allows a Message as the answer to SendMessage: not FAIL; no task support (exit 4)."""
    url = odd.agent(version, message_only=True)
    # the scripted agent breaks a wire rule of its own (the version header): the creation,
    # status and cancel checks only
    cats = ["--category", "creation", "--category", "status", "--category", "cancel"]
    r = run_cli("check", "-u", url, "-p", f"a2a-{version}", *cats, "-o", "json")
    assert r.code == 4, r.stdout[-3000:] + r.stderr
    report = valid(r.json(), "check")
    assert report["outcome"] == "no task support" and report["taskSupport"] is False
    by_id = {c["id"]: c for c in report["checks"]}
    send = by_id["a2a.creation.send"]
    assert send["verdict"] == "INFO" and "answered with a Message" in send["observed"]
    assert report["summary"]["FAIL"] == 0
    assert all(
        c["verdict"] != "SKIP" or c["skipReason"] == "not-applicable" for c in report["checks"]
    )
    pretty = run_cli("check", "-u", url, "-p", f"a2a-{version}", *cats, "-o", "pretty")
    assert pretty.code == 4 and "no task support (exit 4)" in pretty.stdout


def test_check_a_server_without_tasks(run_cli: RunCli, mcpsdk0618_server: ServerProcess) -> None:
    """A server that declares no tasks capability: INFO and `no task support` (exit 4), as
    `list` says, not FAIL and exit 5."""
    url = mcpsdk0618_server.url
    r = run_cli("check", "-u", url, "-p", "mcp-2025-11-25", "-o", "json")
    assert r.code == 4, r.stdout[-3000:] + r.stderr
    report = valid(r.json(), "check")
    assert report["outcome"] == "no task support", report
    by_id = {c["id"]: c for c in report["checks"]}
    assert by_id["mcp2025.capability.tasks"]["verdict"] == "INFO"
    assert report["summary"]["FAIL"] == 0
