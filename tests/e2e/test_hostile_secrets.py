"""Secrets and the task book: tokens never leave mcptask (traces, errors, the state file);
the book survives parallel writers and damage."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcptask.state.taskbook import TaskBook

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
    book = json.loads((state / "tasks.json").read_text())
    (endpoint,) = book["endpoints"]
    assert endpoint.endswith("?api_key=[redacted]&v=1")
    assert "t-1" in book["endpoints"][endpoint]["tasks"]
    for f in state.iterdir():
        assert_no_secret(f.read_bytes().decode("utf-8", "replace"))
    assert stat.S_IMODE((state / "tasks.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((state / "tasks.json.lock").stat().st_mode) == 0o600


def test_the_book_is_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        book = TaskBook(tmp_path / "new" / "tasks.json")
        book.record("http://x/mcp", "t-1", status="working")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new" / "tasks.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "new" / "tasks.json.lock").stat().st_mode) == 0o600


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
    """
)
READER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path

    path, reads, deadline = Path(sys.argv[1]), 0, time.monotonic() + 20
    while not Path(sys.argv[2]).exists() and time.monotonic() < deadline:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        json.loads(data)  # never a half-written file
        reads += 1
    print(reads)
    """
)


def test_parallel_writers_never_corrupt_the_book_nor_lose_a_record(tmp_path: Path) -> None:
    path = tmp_path / "state" / "tasks.json"
    stop = tmp_path / "stop"
    writers, count = 4, 60
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(path), str(stop)], stdout=subprocess.PIPE, text=True
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"w{n}", str(count)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(writers)
    ]
    for p in procs:
        _, err = p.communicate(timeout=50)
        assert p.returncode == 0, err
        assert err == "", err  # no warnings: nothing was ever found corrupt
    stop.touch()
    out, _ = reader.communicate(timeout=20)
    assert reader.returncode == 0
    assert int(out) > 0
    book = TaskBook(path)
    seen = {tid: rec for ep in book.all_endpoints().values() for tid, rec in ep["tasks"].items()}
    assert len(seen) == writers * count
    for tid, rec in seen.items():
        who, i = tid.split("-")
        assert rec["status"] == "completed"
        assert rec["result"] == {"n": int(i), "who": who}
        assert rec["session"] == f"s-{who}"
    assert sorted(p.name for p in path.parent.iterdir()) == ["tasks.json", "tasks.json.lock"]


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
    (state / "tasks.json").write_bytes(DAMAGED[content])
    url = fault.url()
    r = run_inprocess("list", "--local", "--url", url, *P, state_dir=state)
    assert r.code == 0, r.stderr
    (warning,) = r.stderr.splitlines()
    assert warning.startswith("mcptask: the task book ") and "was corrupt; set aside as" in warning
    r = run_inprocess("get", "t-1", "--url", url, *P, state_dir=state)
    assert r.code == 0, r.stderr
    assert r.stderr == ""  # a fresh book: nothing more to say
    book = json.loads((state / "tasks.json").read_text())
    assert "t-1" in next(iter(book["endpoints"].values()))["tasks"]
    aside = [p for p in state.iterdir() if ".corrupt-" in p.name]
    assert len(aside) == 1 and aside[0].read_bytes() == DAMAGED[content]


def test_an_unreadable_book_is_a_warning_not_a_crash(fault: FaultServer, tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "tasks.json").mkdir(parents=True)  # a directory where the file should be
    r = run_inprocess("get", "t-1", "--url", fault.url(), *P, state_dir=state)
    assert r.code == 0, r.stderr
    assert "cannot" in r.stderr and "task book" in r.stderr
    assert "Traceback" not in r.stderr
