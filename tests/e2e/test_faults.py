"""Issue 20: faults, signals and bad input. Each test injects its fault (the scripted fault
server, a fake stdio server, a damaged file, a signal) and proves the behaviour: no result lost,
no secret leaked, no unbounded wait, no internal error.

Every command run goes through `case()`, which counts it and checks the invariants the issue
tallies (no traceback, no internal error, no hang); with MCPTASK_FAULT_TALLY=PATH the counts are
written there as JSON when the module ends.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_stdio_config_auth import assert_no_child, fake_cmd, new_marker, procs_with, wait_for

from mcptask.model.refs import TaskRef
from mcptask.model.results import TaskResult
from mcptask.model.task import Task
from mcptask.protocols.base import Deliver, Health, PushFeed
from mcptask.scheduler.watcher import WatchConfig, Watcher
from mcptask.text import redact
from mcptask.text import sanitize as textsafe

from conftest import rest_of, watch_in_virtual_time
from servers.fault_server import (
    FaultServer,
    Run,
    base_env,
    echo_headers,
    keepalive_sse,
    reset,
    rpc_error,
    run_inprocess,
    task,
    tool_result,
    trickle,
)

pytestmark = pytest.mark.timeout(90)
P = ("-p", "mcp-2025-11-25")
TOOLS = {
    "tools": [
        {
            "name": "slow",
            "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "optional"},
        }
    ]
}
TALLY: dict[str, int] = {
    "cases": 0,
    "tracebacks": 0,
    "internal_errors": 0,
    "hangs": 0,
    "data_lost": 0,
    "secrets_leaked": 0,
}


@pytest.fixture(scope="module")
def fault() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs
    path = os.environ.get("MCPTASK_FAULT_TALLY")
    if path:
        Path(path).write_text(json.dumps(TALLY))


def case(run: Run, *, secrets: tuple[str, ...] = ()) -> Run:
    """Count one fault case and check what every case must hold."""
    TALLY["cases"] += 1
    text = run.stdout + run.stderr
    if "Traceback" in text:
        TALLY["tracebacks"] += 1
    if run.code == 1 or "internal error" in run.stderr:
        TALLY["internal_errors"] += 1
    leaked = [s for s in secrets if s in text]
    TALLY["secrets_leaked"] += bool(leaked)
    assert "Traceback" not in text, text
    assert run.code != 1 and "internal error" not in run.stderr, run.stderr
    assert not leaked, (leaked, text[:2000])
    return run


def lost(condition: bool) -> None:
    """A result (or record) that should have been kept was not."""
    TALLY["data_lost"] += not condition
    assert condition


def cli(*args: str, state: Path, env: dict[str, str] | None = None, timeout: float = 60) -> Run:
    """The CLI in a subprocess: a run that does not end in `timeout` is a hang."""
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "mcptask", *args],
            env=base_env(state, env),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        TALLY["cases"] += 1
        TALLY["hangs"] += 1
        raise
    return Run(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def one_line(run: Run, code: int) -> str:
    assert run.code == code, (run.code, run.stderr)
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("mcptask: error: "), run.stderr
    return lines[0]


def book(state: Path) -> dict[str, Any]:
    from mcptask.state.taskbook import TaskBook

    return {"endpoints": TaskBook(state / "tasks.db").all_endpoints()}


def book_task(state: Path, task_id: str = "t-1") -> dict[str, Any]:
    (endpoint,) = book(state)["endpoints"].values()
    rec: dict[str, Any] = endpoint["tasks"][task_id]
    return rec


# -- 5, 6: secrets --------------------------------------------------------------------------------


@pytest.mark.parametrize("password", ["hunter@2", "abc", "ab", "x", "pässwörd-long"])
def test_url_user_info_is_redacted_in_every_form_and_length(
    fault: FaultServer, tmp_path: Path, password: str
) -> None:
    from urllib.parse import quote

    quoted = quote(password, safe="")
    basic = base64.b64encode(f"alice:{password}".encode()).decode()
    url = fault.url(get=[echo_headers()]).replace("http://", f"http://alice:{quoted}@")
    secrets = (basic, f"alice:{password}", f"alice:{quoted}")
    r = case(run_inprocess("get", "t-1", "--url", url, *P, state_dir=tmp_path), secrets=secrets)
    line = one_line(r, 4)
    assert "Basic [redacted]" in line  # the server echoed the header: it shows redacted
    traced = case(
        run_inprocess("get", "t-1", "--url", url, *P, "--trace", state_dir=tmp_path),
        secrets=secrets,
    )
    assert "alice:[redacted]@" in traced.stderr


def test_a_secret_the_server_echoes_into_a_result_is_neither_stored_nor_printed(
    fault: FaultServer, tmp_path: Path
) -> None:
    token = "tok-ECHOED-9f8e7d"
    header = "hdr-ECHOED-6c5b4a"
    done = task(status="completed", statusMessage=f"finished for Bearer {token}")
    url = fault.url(get=[done], result=[echo_headers(as_error=False)])
    args = ("--url", url, *P, "-H", f"X-Api-Key: {header}")
    env = {"MCPTASK_TOKEN": token}
    secrets = (token, header)
    state = tmp_path / "state"
    for output in ("json", "pretty"):
        r = case(
            run_inprocess("result", "t-1", *args, "-o", output, state_dir=state, env=env),
            secrets=secrets,
        )
        assert r.code == 0, r.stderr
        assert "[redacted]" in r.stdout
    commands = (
        ["get", "t-1"],
        ["get", "t-1", "-o", "pretty"],
        ["list", "-o", "pretty"],
        ["watch", "t-1", "--result", "-o", "ndjson"],
        ["watch", "t-1", "--result", "-o", "pretty"],
    )
    for command in commands:
        case(run_inprocess(*command, *args, state_dir=state, env=env), secrets=secrets)
    kept = book_task(state)
    lost("result" in kept)
    stored = b"".join(p.read_bytes() for p in state.iterdir() if p.is_file())
    assert token.encode() not in stored and header.encode() not in stored
    assert "[redacted]" in json.dumps(kept["result"])


def test_redaction_units() -> None:
    assert redact.text("user alice:ab@host and ab and abc", ["ab"]) == (
        "user alice:[redacted]@host and [redacted] and abc"
    )
    assert redact.text("http://bob:zz@h/ x", []) == "http://bob:[redacted]@h/ x"
    secrets = redact.url_secrets("http://alice:hunter%402@h/?api_key=k%2Fv&x=1")
    assert "hunter@2" in secrets and "hunter%402" in secrets and "k/v" in secrets
    assert base64.b64encode(b"alice:hunter@2").decode() in secrets
    redact.hold(["held-secret-1"])
    try:
        assert redact.scrub({"held-secret-1": ["a held-secret-1 b", 3]}) == {
            "[redacted]": ["a [redacted] b", 3]
        }
    finally:
        redact.release_all()
    assert redact.scrub({"k": "held-secret-1"}) == {"k": "held-secret-1"}


# -- 7: every wait is bounded ---------------------------------------------------------------------

SHORT_READ = {"MCPTASK_READ_TIMEOUT": "1.5"}


@pytest.mark.parametrize("fault_kind", ["trickle", "keepalive"])
@pytest.mark.parametrize("command", ["get", "cancel", "result --no-wait"])
def test_a_trickling_or_endless_answer_is_bounded(
    fault: FaultServer, tmp_path: Path, fault_kind: str, command: str
) -> None:
    answer = trickle(every=0.3) if fault_kind == "trickle" else keepalive_sse(every=0.2)
    url = fault.url(get=[answer], cancel=[answer])
    r = case(cli(*command.split(), "t-1", "--url", url, *P, state=tmp_path, env=SHORT_READ))
    assert "timed out" in one_line(r, 4)


def test_in_watch_a_trickling_answer_is_a_failure_retried(
    fault: FaultServer, tmp_path: Path
) -> None:
    url = fault.url(get=[trickle(every=0.3), keepalive_sse(every=0.2), task(status="completed")])
    r = case(cli("watch", "t-1", "--url", url, *P, "-o", "ndjson", state=tmp_path, env=SHORT_READ))
    assert r.code == 0, r.stderr
    assert r.stderr.count("retrying in") == 2, r.stderr
    assert r.lines()[-1]["outcome"] == "completed"


@pytest.mark.parametrize("resumed", ["keepalive", "hang"])
def test_a_resumed_stream_that_never_answers_is_bounded(
    fault: FaultServer, tmp_path: Path, resumed: str
) -> None:
    from servers.fault_server import hang, sse

    # the answer's stream gives an event id, then closes: mcptask resumes it with GET and
    # Last-Event-ID; the resumed stream sends keep-alives for ever, or nothing at all
    again = keepalive_sse(every=0.2) if resumed == "keepalive" else hang(after_headers=False)
    url = fault.url(get=[sse()], stream=[again])
    args = ("result", "t-1", "--no-wait", "--url", url, *P)
    r = case(cli(*args, state=tmp_path, env=SHORT_READ, timeout=40))
    one_line(r, 4)
    assert fault.seen(url, "GET"), "the stream was not resumed"


def test_a_stdio_server_that_trickles_its_answer_is_bounded(tmp_path: Path) -> None:
    marker = new_marker()
    cmd = fake_cmd("--trickle", marker=marker)
    r = case(cli("list", "--stdio", cmd, state=tmp_path, env=SHORT_READ))
    assert "timed out" in one_line(r, 4)
    wait_for(lambda: not procs_with(marker), timeout=5)


# -- 9, 12 (config): config files that never end or nest without end ------------------------------


def test_config_files_that_are_not_config_files(fault: FaultServer, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * (2 * 1024 * 1024))
    deep_toml = tmp_path / "deep.toml"
    deep_toml.write_text("a = " + "[" * 5000 + "]" * 5000)
    deep_json = tmp_path / "deep.json"
    deep_json.write_text('{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}")
    expected = {
        "/dev/zero": "not a regular file",
        str(fifo): "not a regular file",
        str(big): "over the 1 MiB limit",
        str(deep_toml): "nested too deeply",
        str(deep_json): "nested too deeply",
    }
    for path, words in expected.items():
        r = case(cli("servers", "--config", path, state=tmp_path, timeout=30))
        assert words in one_line(r, 2), r.stderr
        r = case(cli("servers", state=tmp_path, env={"MCPTASK_CONFIG": path}, timeout=30))
        assert words in one_line(r, 2), r.stderr
    ok = case(cli("servers", "--config", "/dev/null", "-o", "json", state=tmp_path))
    assert ok.code == 0 and json.loads(ok.stdout)["servers"] == []


# -- 11: what the server sends is validated -------------------------------------------------------


@pytest.mark.parametrize("session", [b"caf\xe9", b"a b", b"\x01x"])
def test_a_session_id_that_is_not_visible_ascii_is_not_the_protocol(
    fault: FaultServer, tmp_path: Path, session: bytes
) -> None:
    url = fault.url(session=session)
    r = case(run_inprocess("get", "t-1", "--url", url, *P, state_dir=tmp_path))
    assert "Mcp-Session-Id" in one_line(r, 4)
    # nothing bad was kept: the next command works
    good = fault.url()
    again = case(run_inprocess("get", "t-1", "--url", good, *P, state_dir=tmp_path))
    assert again.code == 0, again.stderr


def test_a_hand_edited_session_in_the_book_is_one_line(fault: FaultServer, tmp_path: Path) -> None:
    url = fault.url()
    state = tmp_path / "state"
    case(run_inprocess("get", "t-1", "--url", url, *P, state_dir=state))
    from mcptask.state.taskbook import TaskBook

    (endpoint,) = book(state)["endpoints"]
    TaskBook(state / "tasks.db").record(endpoint, "t-1", session="caf\u00e9\u2028")
    r = case(run_inprocess("get", "t-1", "--url", url, *P, state_dir=state))
    assert "Mcp-Session-Id" in one_line(r, 4)


# -- 2, 3, 4: results are never lost --------------------------------------------------------------


def test_one_reset_of_the_result_request_is_retried(fault: FaultServer, tmp_path: Path) -> None:
    done = task(status="completed")
    for output in ("json", "ndjson", "pretty"):
        url = fault.url(get=[done], result=[reset(), tool_result("kept")])
        r = case(
            run_inprocess(
                "watch", "t-1", "--url", url, *P, "--result", "-o", output, state_dir=tmp_path
            )
        )
        assert r.code == 0, r.stderr
        lost("kept" in r.stdout)
        assert len(fault.seen(url, "tasks/result")) == 2
    # as the issue saw it: `call ... --watch --result -o json`
    url = fault.url(tools=[TOOLS], get=[done], result=[reset(), tool_result("kept")])
    args = ("call", "slow", "--url", url, *P, "--watch", "--result", "-o", "json")
    r = case(run_inprocess(*args, state_dir=tmp_path))
    assert r.code == 0, r.stderr
    lost(r.json()["tasks"][0]["result"]["content"][0]["text"] == "kept")


def test_a_result_that_cannot_be_had_is_said_in_every_mode(
    fault: FaultServer, tmp_path: Path
) -> None:
    done = task(status="completed")
    for output in ("json", "ndjson", "pretty"):
        url = fault.url(get=[done], result=[reset()])
        r = case(
            run_inprocess(
                "watch", "t-1", "--url", url, *P, "--result", "-o", output, state_dir=tmp_path
            )
        )
        assert r.code == 4, (output, r.stderr)
        if output == "json":
            (rec,) = r.json()["tasks"]
            assert rec["outcome"] == "completed" and rec["exitCode"] == 4
            assert "reset" in rec["resultError"]
        elif output == "ndjson":
            end = r.lines()[-1]
            assert end["exitCode"] == 4 and "reset" in end["resultError"]
        else:
            assert "could not fetch the result" in r.stderr


def test_a_result_error_for_a_completed_task_is_exit_4(fault: FaultServer, tmp_path: Path) -> None:
    done = task(status="completed")
    url = fault.url(get=[done], result=[rpc_error(-32603, "result store lost it")])
    r = case(
        run_inprocess(
            "watch", "t-1", "--url", url, *P, "--result", "-o", "ndjson", state_dir=tmp_path
        )
    )
    assert r.code == 4
    assert "result store lost it" in r.lines()[-1]["resultError"]


def test_a_server_error_on_the_result_is_retried_not_shown_as_the_result(
    fault: FaultServer, tmp_path: Path
) -> None:
    done = task(status="completed")
    url = fault.url(get=[done], result=[rpc_error(-32603, "busy", status=503), tool_result("ok")])
    r = case(
        run_inprocess(
            "watch", "t-1", "--url", url, *P, "--result", "-o", "json", state_dir=tmp_path
        )
    )
    assert r.code == 0, r.stderr
    lost(r.json()["tasks"][0]["result"]["content"][0]["text"] == "ok")


# -- 15: any end of a push feed restores polling --------------------------------------------------


def _task(status: str = "working", message: str | None = None) -> Task:
    return Task(
        taskId="a",
        status=status,  # type: ignore[arg-type]
        statusMessage=message,
        pollInterval=1000,
        protocol="t",
        server="t",
        raw={},
    )


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        """Fake time passes in steps of 0.1 s, so other coroutines act (and wake the
        sleeper, which cancels the sleep) in between."""
        end = self.now + seconds
        while self.now < end:
            await asyncio.sleep(0)
            self.now = min(end, self.now + 0.1)


class _EndingFeed(PushFeed):
    """Live at once; after `after` fake seconds it ends: returns, or fails delivering."""

    def __init__(self, clock: _Clock, how: str, after: float = 0.5) -> None:
        super().__init__({"a"})
        self.clock = clock
        self.how = how
        self.after = after

    async def run(self, deliver: Deliver, health: Health) -> None:
        health(True)
        while self.clock.now < self.after:
            await asyncio.sleep(0)
        if self.how == "deliver-fails":
            await deliver(_task(message="pushed"))  # the events sink raises (a closed pipe)
        # "returns": ends without ever saying the feed is down


@pytest.mark.parametrize("how", ["returns", "deliver-fails"])
def test_any_end_of_a_push_feed_returns_polling_to_its_pace(how: str) -> None:
    clock = _Clock()
    polls: list[float] = []
    answers = [_task()] * 3 + [_task("completed")]

    async def fetch(ref: TaskRef) -> Task:
        polls.append(clock.now)
        return answers.pop(0) if len(answers) > 1 else answers[0]

    async def fetch_result(ref: TaskRef, t: Task) -> TaskResult:
        return TaskResult(task=t, payload={})

    class Events:
        def update(self, w: Any, via: str) -> None:
            if via == "push":
                raise BrokenPipeError

        def retry(self, w: Any, error: str, delay: float) -> None:
            pass

        def end(self, w: Any) -> None:
            pass

    feed = _EndingFeed(clock, how)
    watcher = Watcher(
        fetch=fetch,
        fetch_result=fetch_result,
        config=WatchConfig(timeout=120),
        events=Events(),
        clock=clock,
        sleep=clock.sleep,
        rng=random.Random(0),
        feeds=[feed],
    )
    watcher.add(TaskRef("a"))
    TALLY["cases"] += 1
    if how == "deliver-fails":
        # the error is not swallowed (the CLI ends quietly on a closed pipe)
        with pytest.raises(BrokenPipeError):
            asyncio.run(watcher.run())
        return
    assert asyncio.run(watcher.run()) == 0
    # relaxed while live (10 s), back to the 1 s pollInterval once the feed ended at 0.5 s
    assert polls[1] <= 1.5, polls
    assert all(b - a <= 1.5 for a, b in itertools.pairwise(polls)), polls


# -- 16: messages ---------------------------------------------------------------------------------


def _live_frame(watched: list[Any]) -> str:
    import io

    from rich.console import Console

    from mcptask.output.console import Output
    from mcptask.output.live import LiveEvents

    out = Output(mode="pretty", stdout=io.StringIO())
    out._console = Console(file=io.StringIO(), width=160, force_terminal=False)
    events = LiveEvents(out, with_result=False, clock=lambda: 0.0)
    events.track(watched)
    console = Console(file=io.StringIO(), width=160)
    console.print(events.render())
    text: str = console.file.getvalue()  # type: ignore[attr-defined]
    return text


def test_the_live_views_last_frame_says_why_and_never_says_submitted() -> None:
    from mcptask.scheduler.watcher import Watched

    unseen = Watched(ref=TaskRef("never-seen"))
    failed = Watched(ref=TaskRef("err-task"), outcome="error", exit_code=4)
    failed.last_error = "cannot connect to http://127.0.0.1:9: connection refused"
    frame = _live_frame([unseen, failed])
    assert "submitted" not in frame
    assert "checking" in frame
    assert "connection refused" in frame


# -- 17: invisible characters ---------------------------------------------------------------------


def test_zero_width_and_format_characters_never_reach_a_terminal(
    fault: FaultServer, tmp_path: Path
) -> None:
    import unicodedata

    invisible = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"]
    assert all(textsafe.clean(f"a{c}b") == "ab" for c in invisible)
    assert textsafe.one_line("pay\u200bpal\u2060 \ufeffnow") == "paypal now"
    msg = "ad\u200bmin\u200d ok\u2064\U000e0041"
    url = fault.url(get=[task(statusMessage=msg)])
    r = case(run_inprocess("get", "t-1", "--url", url, *P, "-o", "pretty", state_dir=tmp_path))
    assert "admin ok" in r.stdout
    assert not any(c in r.stdout for c in invisible)
    raw = case(run_inprocess("get", "t-1", "--url", url, *P, "-o", "json", state_dir=tmp_path))
    assert raw.json()["statusMessage"] == msg  # JSON keeps the exact data


# -- 18: the poll pool's connect errors in httpx's words -----------------------------------------


@pytest.mark.parametrize("code", [104, 113, 101])
def test_poll_pool_connect_errors_are_worded_as_httpx_words_them(
    code: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """asyncio words a failed connect "Connect call failed ('127.0.0.1', 9)" (no reason): the
    poll pool says the OS's reason, as httpx's own transport does."""
    import asyncio

    import httpx

    from mcptask.transports.http import HttpOptions, HttpTransport
    from mcptask.transports.poll_pool import PollPool

    async def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError(code, "Connect call failed ('127.0.0.1', 9)")

    async def connect() -> httpx.HTTPError:
        monkeypatch.setattr(asyncio.get_running_loop(), "create_connection", refuse)
        pool = PollPool("http://127.0.0.1:9/mcp", connect_timeout=5)
        try:
            await pool.send(b"POST /mcp HTTP/1.1\r\n", pool.head({}), b"", b"{}", 5)
        except httpx.HTTPError as exc:
            return exc
        raise AssertionError("no error")

    mapped = asyncio.run(connect())
    assert isinstance(mapped, httpx.ConnectError)
    transport = HttpTransport(HttpOptions(url="http://127.0.0.1:9/mcp"))
    message = transport._connect_error(mapped, "http://127.0.0.1:9/mcp").message
    native = transport._connect_error(
        httpx.ConnectError(str(OSError(code, os.strerror(code)))), "http://127.0.0.1:9/mcp"
    ).message
    assert message == native
    assert "Connect call failed" not in message and os.strerror(code) in message
    TALLY["cases"] += 1


def test_a_watch_of_many_tasks_on_a_refused_port_says_connection_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [f"t-{i}" for i in range(50)]
    # in this process, on a virtual clock: the backoff before it gives up takes no real time
    url = "http://127.0.0.1:9/mcp"
    code, summary, _ = watch_in_virtual_time(ids, url, P[1], tmp_path, monkeypatch)
    TALLY["cases"] += 1
    assert code == 4
    errors = {t["error"] for t in summary["tasks"]}
    assert errors == {"cannot connect to http://127.0.0.1:9: connection refused"}, errors


# -- 1: signals stop a stdio server's whole process group -----------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM])
def test_a_fatal_signal_stops_the_stdio_server_and_its_children(
    tmp_path: Path, sig: signal.Signals
) -> None:
    marker = new_marker()
    hung = tmp_path / "hung"
    cmd = fake_cmd(
        "--hang", "--hung", str(hung), "--ignore-eof", "--ignore-term", "--child", marker=marker
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcptask", "list", "-o", "json", "--stdio", cmd],
        env=base_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(lambda: len(procs_with(marker)) >= 2)  # the server and its child
    wait_for(hung.exists)  # the server has tasks/list
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=30)
    TALLY["cases"] += 1
    assert "Traceback" not in err
    assert proc.returncode in (-sig, 128 + sig), (proc.returncode, err)
    wait_for(lambda: not procs_with(marker), timeout=5)
    assert_no_child(marker)


def test_a_finished_stdio_run_leaves_no_child_that_ignores_sigterm(tmp_path: Path) -> None:
    marker = new_marker()
    cmd = fake_cmd("--child", marker=marker)
    r = case(cli("list", "-o", "json", "--stdio", cmd, state=tmp_path))
    assert r.code == 0, r.stderr
    wait_for(lambda: not procs_with(marker), timeout=5)


# -- 10: check on a server that is down --------------------------------------------------------


@pytest.mark.parametrize("protocol", ["mcp-2025-11-25", "mcp-2026-07-28", "a2a-1.0"])
def test_check_on_a_server_that_is_down_is_unreachable_never_a_spec_failure(
    tmp_path: Path, protocol: str
) -> None:
    from mcptask.state.taskbook import TaskBook

    url = "http://127.0.0.1:9/mcp"
    state = tmp_path / "state"
    TaskBook(state / "tasks.json").set_endpoint(url, protocol=protocol)  # remembered
    r = case(cli("check", "--url", url, "-o", "json", state=state))
    assert "connection refused" in one_line(r, 4)
    forced = case(cli("check", "--url", url, "-p", protocol, state=state))
    assert "FAIL" not in forced.stdout
    one_line(forced, 4)


@pytest.mark.parametrize("answer", ["html-502", "503", "reset-at-once"])
def test_check_behind_a_proxy_whose_server_is_down(
    fault: FaultServer, tmp_path: Path, answer: str
) -> None:
    from servers.fault_server import html, raw, reset_at_once

    faults = {"html-502": html(502), "503": raw(503, b"down"), "reset-at-once": reset_at_once()}
    url = fault.url(init=[faults[answer]])
    r = case(cli("check", "--url", url, *P, "-o", "json", state=tmp_path))
    assert "FAIL" not in r.stdout
    one_line(r, 4)


# -- phase 2: the command line -------------------------------------------------------------------


def spawn(state: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "mcptask", *args],
        env=base_env(state),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGHUP, 129), (signal.SIGQUIT, 131)])
def test_sighup_and_sigquit_end_a_watch_with_its_end_line(
    fault: FaultServer, tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    url = fault.url(get=[task(pollInterval=5000)])
    p = spawn(tmp_path, "watch", "t-1", "--url", url, *P, "-o", "ndjson")
    assert p.stdout is not None
    # at once: the handlers are in place before the first line (issue 23, defect 2)
    assert json.loads(p.stdout.readline())["event"] == "status"
    p.send_signal(sig)
    out, err = rest_of(p, 20)
    TALLY["cases"] += 1
    assert "Traceback" not in err
    assert p.returncode == code, err
    last = json.loads(out.splitlines()[-1])
    assert last == {"event": "end", "taskId": "t-1", "outcome": "interrupted", "exitCode": code}


def test_sighup_during_a_stdio_watch_ends_it_and_stops_the_server(
    tmp_path: Path, everything_stdio_cmd: list[str]
) -> None:
    from test_stdio_config_auth import everything

    marker = new_marker()
    cmd = everything(everything_stdio_cmd, marker)
    p = spawn(
        tmp_path, "call", "simulate-research-query", "topic=x", "-o", "ndjson", "--stdio", cmd
    )
    assert p.stdout is not None
    first = p.stdout.readline()
    assert json.loads(first)["event"] == "status", first
    p.send_signal(signal.SIGHUP)  # at once: the handlers are in place before the first line
    rest, err = rest_of(p, 30)
    TALLY["cases"] += 1
    assert "Traceback" not in err
    assert p.returncode == 129, err
    last = json.loads(rest.splitlines()[-1])
    assert last["outcome"] == "interrupted" and last["exitCode"] == 129
    assert_no_child(marker)


def test_sighup_while_listing_over_stdio_stops_the_server_and_its_children(
    tmp_path: Path,
) -> None:
    marker = new_marker()
    # `watch --all` over stdio lists the server's tasks: this one never answers, so the watch
    # (and the server, and its child) run until the signal
    hung = tmp_path / "hung"
    cmd = fake_cmd(
        "--hang", "--hung", str(hung), "--ignore-eof", "--ignore-term", "--child", marker=marker
    )
    p = spawn(tmp_path, "watch", "--all", "--stdio", cmd, "-o", "ndjson")
    wait_for(lambda: len(procs_with(marker)) >= 2)
    wait_for(hung.exists)  # the server has tasks/list
    p.send_signal(signal.SIGHUP)
    _out, err = p.communicate(timeout=30)
    TALLY["cases"] += 1
    assert "Traceback" not in err
    assert p.returncode in (129, -signal.SIGHUP), err
    wait_for(lambda: not procs_with(marker), timeout=5)


def test_sigquit_in_the_live_view_shows_the_cursor_again(
    fault: FaultServer, tmp_path: Path
) -> None:
    import fcntl
    import pty
    import select
    import struct
    import termios

    url = fault.url(get=[task(pollInterval=5000)])
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = base_env(tmp_path, {"TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"})
    p = subprocess.Popen(
        [sys.executable, "-m", "mcptask", "watch", "t-1", "--url", url, *P],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 30
    signalled = False
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    break
                if not data:
                    break
                seen += data
            if not signalled and b"\x1b[?25l" in seen and b"working" in seen:
                p.send_signal(signal.SIGQUIT)
                signalled = True
            if p.poll() is not None and not ready:
                break
        code = p.wait(timeout=10)
    finally:
        os.close(master)
    TALLY["cases"] += 1
    assert signalled
    assert code == 131, seen[-500:]
    assert seen.rindex(b"\x1b[?25h") > seen.rindex(b"\x1b[?25l"), seen[-300:]


def test_a_plain_watch_keeps_the_result_for_later(fault: FaultServer, tmp_path: Path) -> None:
    done = task(status="completed")
    gone = rpc_error(-32602, "Task not found")
    url = fault.url(get=[done, gone], result=[tool_result("kept for later")])
    state = tmp_path / "state"
    w = case(run_inprocess("watch", "t-1", "--url", url, *P, "-o", "ndjson", state_dir=state))
    assert w.code == 0 and "kept for later" not in w.stdout  # printed only with --result
    lost("result" in book_task(state))
    r = case(run_inprocess("result", "t-1", "--url", url, *P, "-o", "json", state_dir=state))
    assert r.code == 0, r.stderr
    lost(r.json()["content"][0]["text"] == "kept for later")


def test_result_of_a_completed_task_whose_result_is_an_error_is_exit_4(
    fault: FaultServer, tmp_path: Path
) -> None:
    done = task(status="completed")
    url = fault.url(get=[done], result=[rpc_error(-32603, "store lost it")])
    for output in ("json", "pretty"):
        r = case(run_inprocess("result", "t-1", "--url", url, *P, "-o", output, state_dir=tmp_path))
        assert r.code == 4, r.stderr
        assert "store lost it" in r.stdout + r.stderr


@pytest.mark.parametrize("where", ["init", "get", "result", "watch"])
def test_result_timeout_bounds_every_phase(fault: FaultServer, tmp_path: Path, where: str) -> None:
    from servers.fault_server import hang

    done = task(status="completed")
    answers: dict[str, Any] = {
        "init": {"init": [hang()]},
        "get": {"get": [hang()]},
        "result": {"get": [done], "result": [hang()]},
        "watch": {"get": [task(), hang()]},
    }[where]
    url = fault.url(**answers)
    r = case(cli("result", "t-1", "--url", url, *P, "--timeout", "2", state=tmp_path, timeout=30))
    assert "--timeout" in one_line(r, 7), r.stderr


def test_a_damaged_kept_result_is_one_line(fault: FaultServer, tmp_path: Path) -> None:
    from mcptask.state.taskbook import TaskBook

    url = fault.url(get=[rpc_error(-32602, "Task not found")])
    state = tmp_path / "state"
    TaskBook(state / "tasks.json").record(
        url,
        "t-1",
        status="completed",
        protocol="mcp-2025-11-25",
        # mcptask's own record of an error (`resultKind`), hand-damaged: not an object; without
        # `resultKind`, `{"error": "boom"}` is the server's data (issue 27 item 11)
        result={"error": "boom"},
        resultKind="error",
    )
    for output in ("pretty", "json"):
        r = case(run_inprocess("result", "t-1", "--url", url, *P, "-o", output, state_dir=state))
        assert "damaged" in one_line(r, 4)


def test_an_expired_task_whose_result_was_too_big_says_so(
    fault: FaultServer, tmp_path: Path
) -> None:
    from mcptask.state.taskbook import TaskBook

    url = fault.url(get=[rpc_error(-32602, "Task not found")])
    state = tmp_path / "state"
    TaskBook(state / "tasks.json").record(
        url, "t-1", status="completed", protocol="mcp-2025-11-25", result={"x": "y" * 1_100_000}
    )
    for command in ("result", "get"):
        r = case(run_inprocess(command, "t-1", "--url", url, *P, state_dir=state))
        line = one_line(r, 9)
        assert "not kept" in line and "over the 1 MiB limit" in line, line


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:99999/mcp",
        "http://[::1/mcp",
        "http://127.0.0.1:80\udcff/mcp",
        "http://exa mple.com/mcp",
        "http://:8080/mcp",
    ],
)
def test_bad_urls_are_usage_errors(tmp_path: Path, url: str) -> None:
    r = case(run_inprocess("get", "t-1", "--url", url, state_dir=tmp_path))
    one_line(r, 2)
    r = case(run_inprocess("get", "t-1", state_dir=tmp_path, env={"MCPTASK_URL": url}))
    one_line(r, 2)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MCPTASK_READ_TIMEOUT", "nan"),
        ("MCPTASK_READ_TIMEOUT", "inf"),
        ("MCPTASK_CONNECT_TIMEOUT", "-inf"),
        ("MCPTASK_MAX_BODY", "1e400"),
        ("MCPTASK_MAX_BODY", "0.5"),
        ("MCPTASK_MAX_BODY", "nan"),
    ],
)
def test_bad_numbers_in_the_environment_are_usage_errors(
    fault: FaultServer, tmp_path: Path, name: str, value: str
) -> None:
    r = case(
        run_inprocess("get", "t-1", "--url", fault.url(), *P, state_dir=tmp_path, env={name: value})
    )
    assert name in one_line(r, 2)


@pytest.mark.parametrize("session", ["a\nb", "caf\u00e9", "a b", ""])
def test_a_bad_session_flag_is_a_usage_error(
    fault: FaultServer, tmp_path: Path, session: str
) -> None:
    r = case(
        run_inprocess(
            "get", "t-1", "--url", fault.url(), *P, "--session", session, state_dir=tmp_path
        )
    )
    assert "--session" in one_line(r, 2)


@pytest.mark.parametrize("output", ["json", "pretty"])
def test_output_to_a_full_disk_is_one_line(fault: FaultServer, tmp_path: Path, output: str) -> None:
    url = fault.url()
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "mcptask", "get", "t-1", "--url", url, *P, "-o", output],
            env=base_env(tmp_path),
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    r = case(Run(proc.returncode, "", proc.stderr))
    assert "No space left on device" in one_line(r, 2)


def buffered_env(tmp_path: Path) -> dict[str, str]:
    """`base_env` with stdout buffered, as for a user (no PYTHONUNBUFFERED)."""
    env = base_env(tmp_path)
    env.pop("PYTHONUNBUFFERED", None)
    return env


def closed(tmp_path: Path, closing: str, *args: str) -> Run:
    """mcptask run with its standard streams as a shell leaves them (`>&-`, `2>&-`,
    `1</dev/null`, `>/dev/full`), stdout buffered (`buffered_env`)."""
    proc = subprocess.run(
        ["sh", "-c", f'exec "$@" {closing}', "sh", sys.executable, "-m", "mcptask", *args],
        env=buffered_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


#: a stdout that cannot be written, and what mcptask says of it
UNWRITABLE = {
    "closed": (">&-", "standard output is closed"),
    "read-only": ("1</dev/null", "Bad file descriptor"),
    "full": (">/dev/full", "No space left on device"),
}


@pytest.mark.parametrize("how", list(UNWRITABLE))
@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["--help"],
        ["list", "--local"],
        ["list", "--local", "--jq", ".tasks"],
        ["get"],
        ["get", "-o", "pretty"],
        ["watch", "--jq", ".event"],
    ],
    ids=["version", "help", "list-local", "jq", "get", "get-pretty", "watch-jq"],
)
def test_output_that_cannot_be_written_is_one_line(
    fault: FaultServer, tmp_path: Path, args: list[str], how: str
) -> None:
    """Before a command runs, in it, in `--jq`'s worker (with and without an event loop), and
    at the interpreter's exit (what was buffered): one line, exit 2, never exit 120."""
    if args[0] in ("get", "watch"):  # a real answer, then nowhere to print it
        url = fault.url(get=[task(status="completed")])
        args = [args[0], "t-1", "--url", url, *P, *args[1:]]
    redirect, said = UNWRITABLE[how]
    r = case(closed(tmp_path, redirect, *args))
    assert f"cannot write the output: {said}" in one_line(r, 2)


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["list", "--local"]])
def test_a_reader_gone_before_anything_is_written_is_exit_0(
    tmp_path: Path, args: list[str]
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcptask", *args],
        env=buffered_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the interpreter is even up: every write meets EPIPE
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0, err
    assert err == ""


def test_closed_stderr_and_stdin_keep_the_exit_status(fault: FaultServer, tmp_path: Path) -> None:
    """Nothing can be said, but the status is what it would have been; with every stream
    closed, the task book (opened where descriptors 1 and 2 were free) is left whole."""
    bad = case(closed(tmp_path, "2>&-", "get", "t-1", "-o", "bogus"))
    assert (bad.code, bad.stdout) == (2, "")
    url = fault.url()
    got = case(closed(tmp_path, "2>&- <&-", "get", "t-1", "--url", url, *P, "-o", "json"))
    assert got.code == 0 and json.loads(got.stdout)["taskId"] == "t-1"
    gone = case(closed(tmp_path, "<&- >&- 2>&-", "get", "t-1", "--url", url, *P))
    assert (gone.code, gone.stdout, gone.stderr) == (2, "", "")
    listed = case(closed(tmp_path, "", "list", "--local", "-o", "json"))
    assert listed.code == 0, listed.stderr
    assert [t["taskId"] for t in json.loads(listed.stdout)["tasks"]] == ["t-1"]


def test_a_task_the_book_cannot_record_says_how_to_reach_it(
    fault: FaultServer, tmp_path: Path
) -> None:
    url = fault.url(tools=[TOOLS])
    state = tmp_path / "a-file"
    state.write_text("not a directory")
    r = case(run_inprocess("call", "slow", "--url", url, *P, "-o", "json", state_dir=state))
    assert r.code == 0, r.stderr
    assert "is a file, not a directory" in r.stderr
    assert "--session fault-session-1" in r.stderr
    assert f"mcptask get t-1 --url {url}" in r.stderr


def test_a_lost_tools_call_answer_keeps_the_session_for_list(
    fault: FaultServer, tmp_path: Path
) -> None:
    url = fault.url(tools=[TOOLS], call=[reset()])
    state = tmp_path / "state"
    r = case(run_inprocess("call", "slow", "--url", url, *P, state_dir=state))
    line = one_line(r, 4)
    assert "a task may exist" in line and "mcptask list" in line, line
    (endpoint,) = book(state)["endpoints"].values()
    lost(endpoint["sessions"] == ["fault-session-1"])
    inits = len(fault.seen(url, "initialize"))
    listed = case(run_inprocess("list", "--url", url, *P, "-o", "json", state_dir=state))
    assert listed.code == 0, listed.stderr
    (seen,) = fault.seen(url, "tasks/list")
    assert seen.headers.get("mcp-session-id") == "fault-session-1"
    assert len(fault.seen(url, "initialize")) == inits  # the kept session, not a new one
    lost([t["taskId"] for t in listed.json()["tasks"]] == ["t-1"])
