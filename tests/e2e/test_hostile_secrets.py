"""Secrets and the task book: tokens never leave mcptask (traces, errors, the state file);
the book survives parallel writers and damage."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcptask.state.taskbook import TaskBook

from conftest import rest_of
from servers.fault_server import (
    FaultServer,
    html,
    raw,
    rpc_error,
    run_inprocess,
    task,
    tool_result,
)

pytestmark = pytest.mark.timeout(60)
P = ("-p", "mcp-2025-11-25")
TOKEN = "tok-SECRET-a1b2c3"
HEADER = "hdr-SECRET-d4e5f6"
PASSWORD = "pw-SECRET-g7h8"
QUERY = "qs-SECRET-i9j0"
SECRETS = (TOKEN, HEADER, PASSWORD, QUERY)


@pytest.fixture(scope="module")
def fault() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs


def with_secrets(url: str) -> tuple[str, ...]:
    """The command-line arguments for `url` with a password, a secret query value and a
    secret header (the token comes from MCPTASK_TOKEN)."""
    url = url.replace("http://", f"http://alice:{PASSWORD}@") + f"?api_key={QUERY}&v=1"
    return ("--url", url, *P, "-H", f"X-Api-Key: {HEADER}")


ENV = {"MCPTASK_TOKEN": TOKEN}


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, (secret, text[:3000])


def test_traces_and_errors_never_show_a_secret(fault: FaultServer, tmp_path: Path) -> None:
    # the server echoes every secret back, once plainly and once split by escape sequences
    echo = " ".join(SECRETS) + " " + " ".join(s[:5] + "\x1b[0m" + s[5:] for s in SECRETS)
    cases = [
        [rpc_error(-32000, f"denied: {echo}")],
        [html(502)],
        [raw(200, f"<html>{echo}</html>".encode(), "text/html")],
        [task(statusMessage="fine")],
    ]
    for i, answers in enumerate(cases):
        init = {"init": [rpc_error(-32000, echo)]} if i == 1 else {}
        url = fault.url(get=answers, **init)
        args = with_secrets(url)
        r = run_inprocess("get", "t-1", "--trace", *args, state_dir=tmp_path, env=ENV)
        assert_no_secret(r.stderr)
        assert f"alice:[redacted]@127.0.0.1:{fault.port}" in r.stderr
        assert "?api_key=[redacted]&v=1" in r.stderr
        if r.code != 0:
            assert r.stderr.splitlines()[-1].startswith("mcptask: error: ")
    # without --trace, the one error line
    url = fault.url(get=[rpc_error(-32000, f"denied: {echo}")])
    r = run_inprocess("get", "t-1", *with_secrets(url), state_dir=tmp_path, env=ENV)
    assert r.code == 4
    assert r.stderr.count("[redacted]") == 2 * len(SECRETS), r.stderr
    assert_no_secret(r.stderr + r.stdout)
    # and where the connection fails
    url = "http://127.0.0.1:9/mcp"
    r = run_inprocess("get", "t-1", *with_secrets(url), state_dir=tmp_path, env=ENV)
    assert r.code == 4
    assert_no_secret(r.stderr)


def test_the_state_file_never_holds_a_secret(fault: FaultServer, tmp_path: Path) -> None:
    done = task(status="completed")
    url = fault.url(get=[task(), done], result=[tool_result("ok")])
    args = with_secrets(url)
    state = tmp_path / "state"
    for command in (["get", "t-1"], ["watch", "t-1", "--result"], ["list"], ["cancel", "t-1"]):
        r = run_inprocess(*command, *args, state_dir=state, env=ENV)
        assert r.code in (0, 11), (command, r.stderr)
    book = TaskBook(state / "tasks.db").all_endpoints()
    (endpoint,) = book
    assert endpoint.endswith("?api_key=[redacted]&v=1")
    assert "t-1" in book[endpoint]["tasks"]
    assert TaskBook(state / "tasks.db").events(endpoint, "t-1")  # the history too
    for f in state.iterdir():
        assert_no_secret(f.read_bytes().decode("utf-8", "replace"))
    for name in ("tasks.db", "tasks.db-wal", "tasks.db-shm"):
        assert stat.S_IMODE((state / name).stat().st_mode) == 0o600, name


def test_the_book_is_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        book = TaskBook(tmp_path / "new" / "tasks.db")
        book.record("http://x/mcp", "t-1", status="working")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700
    for name in ("tasks.db", "tasks.db-wal", "tasks.db-shm"):
        assert stat.S_IMODE((tmp_path / "new" / name).stat().st_mode) == 0o600, name


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from mcptask.state.taskbook import TaskBook

    path, who, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    book = TaskBook(path, warn=lambda m: print(m, file=sys.stderr))
    for i in range(count):
        url = f"http://host-{i % 3}/mcp"
        book.record(url, f"{who}-{i}", status="working", session=f"s-{who}")
        book.record(url, f"{who}-{i}", status="completed", result={"n": i, "who": who})
        if book.write_error is None:
            print(i, flush=True)  # acknowledged: in the book from now on
    """
)
READER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from mcptask.state.taskbook import TaskBook

    path, reads, deadline = Path(sys.argv[1]), 0, time.monotonic() + 60
    book = TaskBook(path, warn=lambda m: print(m, file=sys.stderr))
    while not Path(sys.argv[2]).exists() and time.monotonic() < deadline:
        book.find("w0-1")
        book.complete("w", limit=5)
        reads += 1
    print(reads)
    """
)


def test_ten_writers_and_sigkills_never_corrupt_the_book_nor_lose_a_record(
    tmp_path: Path,
) -> None:
    """The book's promise under load: 10 processes write at once (a reader reads all the
    while), 3 more are killed with SIGKILL mid-write; every record a writer acknowledged is
    there, no warning was ever printed, nothing was set aside."""
    import signal

    path = tmp_path / "state" / "tasks.db"
    stop = tmp_path / "stop"
    writers, count, killed = 10, 30, 3
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(path), str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def writer(name: str, n: int) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), name, str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    procs = [writer(f"w{n}", count) for n in range(writers)]
    victims = [writer(f"k{n}", 10_000) for n in range(killed)]
    acknowledged: dict[str, int] = {}
    for n, victim in enumerate(victims):
        assert victim.stdout is not None
        for _ in range(3 + 2 * n):  # let it get going, then kill it wherever it is
            line = victim.stdout.readline()
            assert line, victim.stderr.read() if victim.stderr else ""
        os.kill(victim.pid, signal.SIGKILL)
        out, err = rest_of(victim, 30)
        assert err == "", err
        done = [int(x) for x in (line + out).split()]
        acknowledged[f"k{n}"] = max(done)
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert err == "", err  # no warnings: nothing was ever found damaged or locked out
    stop.touch()
    out, err = reader.communicate(timeout=30)
    assert reader.returncode == 0 and err == "", err
    assert int(out) > 0
    book = TaskBook(path)
    seen = {tid: rec for ep in book.all_endpoints().values() for tid, rec in ep["tasks"].items()}
    for n in range(writers):
        for i in range(count):
            rec = seen[f"w{n}-{i}"]
            assert rec["status"] == "completed"
            assert rec["result"] == {"n": i, "who": f"w{n}"}
            assert rec["session"] == f"s-w{n}"
            events = book.events(f"http://host-{i % 3}/mcp", f"w{n}-{i}")
            assert [e["kind"] for e in events] == ["created", "status"]
    for name, last in acknowledged.items():
        for i in range(last + 1):
            assert seen[f"{name}-{i}"]["result"] == {"n": i, "who": name}
    assert not [p.name for p in path.parent.iterdir() if "corrupt" in p.name]


DAMAGED = {
    "not-json": b"{not json",
    "binary": b"\xff\xfe\x00\x01garbage\x9b",
    "empty": b"",
    "a-list": b"[]",
    "no-endpoints": b'{"version": 1}',
    "record-not-an-object": b'{"endpoints": {"http://x/mcp": {"tasks": {"t-1": 5}}}}',
    "status-not-text": b'{"endpoints": {"http://x/mcp": {"tasks": {"t-1": {"status": 7}}}}}',
    "deep": b"[" * 100_000,
    "truncated": b'{"version": 1, "endpoints": {"http://x/mcp": {"tas',
}


@pytest.mark.parametrize("content", list(DAMAGED))
def test_a_damaged_book_is_set_aside_with_a_warning(
    fault: FaultServer, tmp_path: Path, content: str
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "tasks.json").write_bytes(DAMAGED[content])  # an older mcptask's book
    url = fault.url()
    r = run_inprocess("list", "--local", "--url", url, *P, state_dir=state)
    assert r.code == 0, r.stderr
    (warning,) = r.stderr.splitlines()
    assert warning.startswith("mcptask: the task book ") and "was corrupt; set aside as" in warning
    r = run_inprocess("get", "t-1", "--url", url, *P, state_dir=state)
    assert r.code == 0, r.stderr
    assert r.stderr == ""  # a fresh book: nothing more to say
    book = TaskBook(state / "tasks.db").all_endpoints()
    assert "t-1" in next(iter(book.values()))["tasks"]
    aside = [p for p in state.iterdir() if ".corrupt-" in p.name]
    assert len(aside) == 1 and aside[0].read_bytes() == DAMAGED[content]


def test_a_damaged_database_is_set_aside_with_a_warning(fault: FaultServer, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    damaged = b"SQLite format 3\x00" + bytes(range(256)) * 40
    (state / "tasks.db").write_bytes(damaged)
    url = fault.url()
    r = run_inprocess("get", "t-1", "--url", url, *P, state_dir=state)
    assert r.code == 0, r.stderr
    (warning,) = r.stderr.splitlines()
    assert warning.startswith("mcptask: the task book ") and "was corrupt" in warning
    (aside,) = [p for p in state.iterdir() if p.name.startswith("tasks.db.corrupt-")]
    assert aside.read_bytes() == damaged  # never silently emptied
    assert "t-1" in next(iter(TaskBook(state / "tasks.db").all_endpoints().values()))["tasks"]


def test_an_unreadable_book_is_a_warning_not_a_crash(fault: FaultServer, tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "tasks.json").mkdir(parents=True)  # a directory where the file should be
    r = run_inprocess("get", "t-1", "--url", fault.url(), *P, state_dir=state)
    assert r.code == 0, r.stderr
    assert "cannot" in r.stderr and "task book" in r.stderr
    assert "Traceback" not in r.stderr
