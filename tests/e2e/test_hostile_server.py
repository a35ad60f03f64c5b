"""Hostile servers (tests/servers/fault_server.py): never a traceback, never a lost result.

One-shot commands report a fault in one line and exit 4; `watch` retries transient faults with
backoff and gives up (outcome `error`, exit 4) after five in a row. Most runs use the real CLI
entry point in this process (fast); a few run it as a subprocess to prove the process as a whole
stays quiet.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mcptask.pacing import MAX_POLL_INTERVAL as MAX_INTERVAL
from mcptask.pacing import MIN_POLL_INTERVAL as MIN_INTERVAL
from mcptask.transports.http import DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT

from conftest import RunCli, assert_one_line_error
from servers.fault_server import (
    MIB,
    TASK_ID,
    FaultServer,
    Run,
    hang,
    html,
    listen_backlog_full,
    ok,
    redirect,
    reset,
    rpc_error,
    run_inprocess,
    short_body,
    sse_result,
    task,
    too_many,
    tool_result,
    truncated_json,
)

pytestmark = pytest.mark.timeout(60)
P = ("-p", "mcp-2025-11-25")
WORKING = task(status="working")
DONE = task(status="completed", statusMessage="done")
Cli = Callable[..., Run]
#: short enough for hung servers, long enough for a busy machine (tests run in parallel)
FAST = {"MCPTASK_READ_TIMEOUT": "1"}
CALM = {"MCPTASK_READ_TIMEOUT": "10"}


@pytest.fixture(scope="module")
def fault() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    """`cli(*args, env=...)`: the CLI in this process with a private state directory."""

    def run(*args: str, env: dict[str, str] | None = None) -> Run:
        return run_inprocess(*args, state_dir=tmp_path / "state", env={**CALM, **(env or {})})

    yield run


def one_line_error(r: Run, code: int = 4) -> str:
    assert r.code == code, (r.code, r.stdout[-500:], r.stderr)
    assert_one_line_error(r)
    assert "internal error" not in r.stderr, r.stderr
    return r.stderr


# -- one-shot commands: each fault is one line, exit 4 -----------------------------------------

#: preset scenario -> words its error must contain (whatever the command)
FAULTS = {
    "html-200": "text/html",
    "html-502": "HTTP 502",
    "truncated-json": "not JSON-RPC",
    "short-body": "complete message body",
    "truncated-sse": "without answering",
    "reset": "connection was reset",
    "reset-at-once": "connection was reset",
    "hang": "timed out waiting",
    "hang-after-headers": "timed out waiting",
    "wrong-id": "answered request id",
    "batch-empty": "without answering",
    "batch-junk": "not a JSON-RPC message",
    "huge": "100 MiB, over the 32 MiB limit (MCPTASK_MAX_BODY)",
    "huge-chunked": "over the 32 MiB limit (MCPTASK_MAX_BODY)",
    "huge-sse-line": "passed the 32 MiB limit (MCPTASK_MAX_BODY)",
    "huge-sse-events": "passed the 32 MiB limit (MCPTASK_MAX_BODY)",
    "429": "HTTP 429",
    "429-retry-after": "HTTP 429",
    "-32429": "-32429",
    "deep-json": "nested more than 256 levels deep",
    "null-result": "",
}
ONE_SHOT = {
    "get": ("get", TASK_ID),
    "result": ("result", TASK_ID, "--no-wait"),
    "cancel": ("cancel", TASK_ID),
    "list": ("list",),
}


@pytest.mark.parametrize("scenario", list(FAULTS))
def test_one_shot_commands_report_each_fault_in_one_line(
    fault: FaultServer, tmp_path: Path, scenario: str
) -> None:
    for i, (name, args) in enumerate(ONE_SHOT.items()):
        if "hang" in scenario and name in ("result", "list"):
            continue  # the same transport path as get and cancel: save the waiting
        url = fault.preset(scenario)
        env = FAST if "hang" in scenario else CALM
        r = run_inprocess(*args, "--url", url, *P, state_dir=tmp_path / str(i), env=env)
        err = one_line_error(r)
        assert FAULTS[scenario] in err, (name, err)
        assert r.stdout == "", (name, r.stdout[:300])
        assert len(fault.seen(url)) >= 2, name  # initialize + the faulty call: no retries
        # ... but a read whose connection dies before any answer is sent once more
        again = 1 if scenario == "reset-at-once" and name != "cancel" else 0
        assert len(fault.seen(url)) <= 3 + again, (name, [q.method for q in fault.seen(url)])


@pytest.mark.parametrize("scenario", ["html-502", "reset", "deep-json", "huge-sse-line", "hang"])
def test_the_process_stays_quiet(fault: FaultServer, run_cli: RunCli, scenario: str) -> None:
    started = time.monotonic()
    r = run_cli(
        "get",
        TASK_ID,
        "--url",
        fault.preset(scenario),
        *P,
        env=FAST if scenario == "hang" else CALM,
    )
    assert r.code == 4, r.stderr
    assert_one_line_error(r)
    assert "Exception ignored" not in r.stderr
    # bounded, not the default minute (slack for a loaded machine's process start-ups)
    assert time.monotonic() - started < 40


def test_a_batch_holding_the_answer_is_accepted(cli: Cli, fault: FaultServer) -> None:
    r = cli("get", TASK_ID, "--url", fault.preset("batch"), *P)
    assert r.code == 0, r.stderr
    assert r.json()["status"] == "working"


def test_a_huge_body_is_refused_early_not_read_to_the_end(
    fault: FaultServer, tmp_path: Path
) -> None:
    for scenario in ("huge-chunked", "huge-sse-line", "huge-sse-events"):
        url = fault.preset(scenario)
        r = run_inprocess("get", TASK_ID, "--url", url, *P, state_dir=tmp_path, env=CALM)
        one_line_error(r)
        # the client hung up soon after the limit (socket buffers hold a few MiB more)
        deadline = time.monotonic() + 10
        while FaultServer.sid(url) not in fault.sent and time.monotonic() < deadline:
            time.sleep(0.02)  # the server thread notices the hang-up on its next write
        assert fault.sent[FaultServer.sid(url)] < 48 * MIB, scenario


def test_the_body_limit_can_be_changed(cli: Cli, fault: FaultServer) -> None:
    padded = task(statusMessage="x" * 5000)
    env = {"MCPTASK_MAX_BODY": "4096"}
    for answer in (padded, sse_result(padded)):
        r = cli("get", TASK_ID, "--url", fault.url(get=[answer]), *P, env=env)
        assert "the 4096 byte limit (MCPTASK_MAX_BODY)" in one_line_error(r)
    r = cli("get", TASK_ID, "--url", fault.url(get=[padded]), *P, env={"MCPTASK_MAX_BODY": "9000"})
    assert r.code == 0, r.stderr


# -- timeouts --------------------------------------------------------------------------------


def test_default_timeouts_are_bounded() -> None:
    assert 0 < DEFAULT_CONNECT_TIMEOUT <= 30
    assert 0 < DEFAULT_READ_TIMEOUT <= 120


def test_a_hung_server_cannot_hold_a_watch_past_its_timeout(cli: Cli, fault: FaultServer) -> None:
    # (one-shot commands: the matrix above; each ends after MCPTASK_READ_TIMEOUT)
    url = fault.url(get=[WORKING, hang()])
    slow = {"MCPTASK_READ_TIMEOUT": "30"}
    r = cli("watch", TASK_ID, "--url", url, *P, "--timeout", "1", env=slow)
    assert r.code == 7, r.stderr
    assert r.lines()[-1]["outcome"] == "timeout"
    assert r.seconds < 3


def test_connect_timeout(cli: Cli) -> None:
    # in this process (no start-up to wait for on a busy machine): the 0.5 s given, not the
    # default
    with listen_backlog_full() as url:
        r = cli("get", TASK_ID, "--url", url, *P, env={"MCPTASK_CONNECT_TIMEOUT": "0.5"})
        assert r.code == 4, r.stderr
        assert_one_line_error(r)
        assert "timed out connecting to" in r.stderr
        assert r.seconds < DEFAULT_CONNECT_TIMEOUT


@pytest.mark.parametrize("value", ["abc", "0", "-1"])
def test_bad_timeout_settings_are_usage_errors(cli: Cli, fault: FaultServer, value: str) -> None:
    for name in ("MCPTASK_CONNECT_TIMEOUT", "MCPTASK_READ_TIMEOUT", "MCPTASK_MAX_BODY"):
        r = cli("get", TASK_ID, "--url", fault.url(), *P, env={name: value})
        assert name in one_line_error(r, 2)


# -- tasks that are not quite tasks ----------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (task(status=7), "status"),
        (task(status=None), "status"),
        (task(status=True), "status"),
        (task(status=["working"]), "status"),
        (task(taskId=None), "taskId"),
        (task(taskId=5), "taskId"),
        (task(taskId="t-2"), "answered task t-2"),
        (ok([task()]), "not an object"),
        (ok("working"), "not an object"),
        (ok(None), "not an object"),
    ],
)
def test_a_task_with_wrong_types_is_not_the_protocol(
    cli: Cli, fault: FaultServer, answer: object, words: str
) -> None:
    r = cli("get", TASK_ID, "--url", fault.url(get=[answer]), *P)
    assert words in one_line_error(r)


def test_optional_fields_of_the_wrong_type_are_dropped_and_kept_in_raw(
    cli: Cli, fault: FaultServer
) -> None:
    odd = task(
        statusMessage={"text": "hi"},
        createdAt=12,
        lastUpdatedAt=None,
        ttl="forever",
        pollInterval=[1],
        extra={"nested": [1, 2, 3]},
    )
    r = cli("get", TASK_ID, "--url", fault.url(get=[odd]), *P)
    assert r.code == 0, r.stderr
    out = r.json()
    assert out["statusMessage"] is None and out["ttl"] is None and out["pollInterval"] is None
    assert out["createdAt"] == "12"
    assert out["raw"] == odd


def test_unknown_statuses_count_as_working_and_keep_the_word(cli: Cli, fault: FaultServer) -> None:
    url = fault.url(get=[task(status="paused"), task(status="Frobnicating"), DONE])
    r = cli("get", TASK_ID, "--url", url, *P)
    assert r.code == 0
    assert r.json()["status"] == "working"
    assert r.json()["raw"]["status"] == "paused"
    r = cli("watch", TASK_ID, "--url", url, *P, "-o", "ndjson")
    assert r.code == 0, r.stderr
    lines = r.lines()
    assert [ln.get("status") for ln in lines[:-1]] == ["working", "completed"]
    assert lines[0]["raw"]["status"] == "Frobnicating"
    assert lines[-1] == {"event": "end", "taskId": TASK_ID, "outcome": "completed", "exitCode": 0}


def gaps(fault: FaultServer, url: str, task_id: str | None = None) -> list[float]:
    at = [q.at for q in fault.seen(url, "tasks/get", task_id)]
    return [b - a for a, b in itertools.pairwise(at)]


def tasks(**answers: list[object]) -> dict[str, list[object]]:
    """Per-task answers for a `watch` of several tasks; dict answers get the task's id."""
    return {
        tid: [{**a, "taskId": tid} if isinstance(a, dict) else a for a in seq]
        for tid, seq in answers.items()
    }


# -- pollInterval ------------------------------------------------------------------------------

HINTS: dict[str, object] = {
    "zero": 0,
    "negative": -5,
    "very-negative": -(10**30),
    "big": 10**12,
    "huge": 10**400,
    "huge-float": 1.5e300,
    "text": "soon",
}


def test_poll_interval_hints_are_clamped(cli: Cli, fault: FaultServer) -> None:
    url = fault.url(get=tasks(**{k: [task(pollInterval=h, ttl=h)] for k, h in HINTS.items()}))
    # long enough for two polls 1 s apart even when the first answer comes late (busy machine)
    r = cli("watch", *HINTS, "--url", url, *P, "--timeout", "3", "-o", "json")
    assert r.code == 7, r.stderr
    assert {ln["taskId"]: ln["outcome"] for ln in r.json()["tasks"]} == dict.fromkeys(
        HINTS, "timeout"
    )
    for tid in ("zero", "negative", "very-negative"):
        between = gaps(fault, url, tid)
        assert 2 <= len(between) <= 3 / MIN_INTERVAL, (tid, between)
        assert min(between) >= MIN_INTERVAL - 0.02, (tid, between)
    for tid in ("big", "huge"):  # the next poll is MAX_INTERVAL away
        assert len(fault.seen(url, "tasks/get", tid)) == 1, tid
    for tid in ("huge-float", "text"):  # not an integer: the default, 1 s
        between = gaps(fault, url, tid)
        assert between and min(between) >= 1 - 0.02, (tid, between)
    assert MAX_INTERVAL <= 300
    # a huge ttl / pollInterval can be shown
    for tid in HINTS:
        r = cli("get", "--url", url, *P, "-o", "pretty", "--", tid)
        assert r.code == 0, r.stderr


def test_a_changing_poll_interval_is_followed(cli: Cli, fault: FaultServer) -> None:
    hints = [600, 0, -1, 300]
    url = fault.url(get=[task(pollInterval=h, statusMessage=str(h)) for h in hints] + [DONE])
    r = cli("watch", TASK_ID, "--url", url, *P)
    assert r.code == 0, r.stderr
    for hint, gap in zip(hints, gaps(fault, url), strict=True):
        assert gap >= max(hint / 1000, MIN_INTERVAL) - 0.02, (hint, gap)


# -- watch retries transient faults ------------------------------------------------------------

TRANSIENT = {
    "html-502": html(502),
    "html-200": html(200),
    "reset": reset(),
    "truncated-json": truncated_json(),
    "short-body": short_body(),
    "truncated-sse": sse_result(task(), truncate=True),
    "hang": hang(),
    "not-a-task": ok("nope"),
}


def test_watch_retries_transient_faults_then_carries_on(cli: Cli, fault: FaultServer) -> None:
    url = fault.url(get=tasks(**{k: [WORKING, fault_, DONE] for k, fault_ in TRANSIENT.items()}))
    # the hang needs a timeout, and the seven others their answers within it even on a busy
    # machine (one second was not always enough: a late answer is one more retry)
    r = cli(
        "watch", *TRANSIENT, "--url", url, *P, "-o", "ndjson", env={"MCPTASK_READ_TIMEOUT": "4"}
    )
    assert r.code == 0, r.stderr
    lines = r.lines()
    assert lines[-1] == {
        "event": "done",
        "exitCode": 0,
        "outcomes": {"completed": len(TRANSIENT)},
    }
    notes = r.stderr.splitlines()
    assert len(notes) == len(TRANSIENT), notes
    assert all("retrying in" in n for n in notes), notes
    for tid in TRANSIENT:
        assert len(fault.seen(url, "tasks/get", tid)) == 3, tid


def test_watch_gives_up_after_five_faults_in_a_row(cli: Cli, fault: FaultServer) -> None:
    # a status that is not a string is not the protocol: it counts as a fault like a 502
    bad = [html(502), task(status=None), html(502), task(status=7), html(502)]
    url = fault.url(get=[WORKING, *bad])
    r = cli("watch", TASK_ID, "--url", url, *P, "-o", "ndjson")
    assert r.code == 4, r.stderr
    end = r.lines()[-1]
    assert end["outcome"] == "error" and end["exitCode"] == 4
    assert "HTTP 502" in end["error"]
    assert len(fault.seen(url, "tasks/get")) == 6  # one good answer, five faults
    between = gaps(fault, url)
    assert between[3] > between[1] and between[4] > 3 * between[1]  # backing off
    # the same with a status that is never a string: exit 4, whatever the command
    url = fault.url(get=[task(status=["completed"])])
    r = cli("watch", TASK_ID, "--url", url, *P, "-o", "json", "--timeout", "0.5")
    assert r.code in (4, 7), r.stderr
    assert "status" in one_line_error(cli("get", TASK_ID, "--url", url, *P))


def test_429_and_32429_wait_then_resume(cli: Cli, fault: FaultServer) -> None:
    url = fault.url(
        get=tasks(
            **{
                "retry-after": [WORKING, too_many("1"), DONE],
                "429": [WORKING, too_many(), DONE],
                "rpc-32429": [WORKING, rpc_error(-32429, "slow down"), DONE],
            }
        )
    )
    r = cli("watch", "retry-after", "429", "rpc-32429", "--url", url, *P, "-o", "json")
    assert r.code == 0, r.stderr
    assert {t["outcome"] for t in r.json()["tasks"]} == {"completed"}
    assert gaps(fault, url, "retry-after")[1] >= 0.95  # Retry-After: 1 was honoured
    # HTTP 429 holds the whole origin: once it has arrived (allow for requests already in
    # flight), no task sends anything until Retry-After has passed
    limited = fault.seen(url, "tasks/get", "retry-after")[1].at
    others = [q.at - limited for q in fault.seen(url, "tasks/get")]
    assert not [t for t in others if 0.3 < t < 0.95], others


# -- never a lost result ---------------------------------------------------------------------


def test_a_task_that_expires_right_after_completing_keeps_its_result(
    cli: Cli, fault: FaultServer
) -> None:
    gone = rpc_error(-32602, "Task not found")
    url = fault.url(
        get=[WORKING, task(status="completed", ttl=0), gone],
        result=[tool_result("the answer is 42"), gone],
    )
    r = cli("watch", TASK_ID, "--url", url, *P, "--result", "-o", "ndjson")
    assert r.code == 0, r.stderr
    end = r.lines()[-1]
    assert end["outcome"] == "completed"
    assert end["result"]["content"][0]["text"] == "the answer is 42"
    # the server has forgotten it; the task book has not
    r = cli("result", TASK_ID, "--url", url, *P)
    assert r.code == 0, r.stderr
    assert r.json()["content"][0]["text"] == "the answer is 42"
    assert "gone from the server" in r.stderr
    r = cli("get", TASK_ID, "--url", url, *P)
    assert "expired (last seen completed)" in one_line_error(r, 9)


def test_a_result_that_vanished_before_it_was_fetched_is_reported(
    cli: Cli, fault: FaultServer
) -> None:
    gone = rpc_error(-32602, "Task not found")
    url = fault.url(get=[task(status="completed")], result=[gone])
    r = cli("result", TASK_ID, "--url", url, *P)
    assert "not found" in one_line_error(r, 9).lower()
    url = fault.url(get=[task(status="completed")], result=[gone])
    r = cli("watch", TASK_ID, "--url", url, *P, "--result", "-o", "ndjson")
    end = r.lines()[-1]
    assert end["outcome"] == "completed" and "resultError" in end


# -- redirects -------------------------------------------------------------------------------


def test_credentials_never_follow_a_redirect_to_another_origin(
    cli: Cli, fault: FaultServer
) -> None:
    secrets = {"MCPTASK_TOKEN": "tok-SECRET-0001"}
    header = ("-H", "X-Api-Key: hdr-SECRET-0002")
    with FaultServer() as other:
        elsewhere = other.url(get=[task(statusMessage="elsewhere")])
        # the session is made on the first origin, then tasks/get is sent elsewhere
        url = fault.url(get=[redirect(elsewhere)])
        r = cli("get", TASK_ID, "--url", url, *P, *header, env=secrets)
        assert r.code == 0, r.stderr
        assert r.json()["statusMessage"] == "elsewhere"
        (there,) = other.seen(elsewhere)
        assert "authorization" not in there.headers
        assert "x-api-key" not in there.headers
        assert "mcp-session-id" not in there.headers
    # a redirect within the origin keeps them
    same = fault.url(get=[task(statusMessage="same origin")])
    url = fault.url(get=[redirect(same)])
    r = cli("get", TASK_ID, "--url", url, *P, *header, env=secrets)
    assert r.code == 0, r.stderr
    (here,) = fault.seen(same)
    assert here.headers["authorization"] == "Bearer tok-SECRET-0001"
    assert here.headers["x-api-key"] == "hdr-SECRET-0002"
