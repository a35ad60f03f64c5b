"""Issue 37: faults, round three. Server text that is JSON but not Unicode, bytes that are not
UTF-8 from the user, the book edited by hand, its size under a hostile stream, `forget` and the
WAL, a busy book, numbers and units.

Every run is the real CLI in a subprocess (`cli`), its output kept as bytes: stdout must be
UTF-8 (and JSON where JSON was asked for), and no run may end in a traceback or an internal
error (`case`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import rest_of
from servers.fault_server import FaultHandler, FaultServer, base_env, task, tool_result

pytestmark = pytest.mark.timeout(120)
P = ("-p", "mcp-2025-11-25")


@pytest.fixture(scope="module")
def fault() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs


@dataclass
class Out:
    code: int
    stdout: bytes
    stderr: str

    def text(self) -> str:
        """stdout, which must be UTF-8 text."""
        return self.stdout.decode("utf-8")  # strict: raises on a byte that is not UTF-8

    def json(self) -> Any:
        return json.loads(self.text())

    def ndjson(self) -> list[Any]:
        return [json.loads(line) for line in self.text().splitlines() if line.strip()]


def cli(
    *args: str | bytes,
    state: Path,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    raw_env: dict[bytes, bytes] | None = None,
) -> Out:
    """The CLI in a subprocess; `args` may be bytes (given to the program as they are)."""
    full = base_env(state, env)
    proc_env: Any = full
    if raw_env:
        proc_env = {k.encode(): v.encode() for k, v in full.items()}
        proc_env.update(raw_env)
    proc = subprocess.run(
        [
            sys.executable.encode(),
            b"-m",
            b"mcptask",
            *(a if isinstance(a, bytes) else a.encode() for a in args),
        ],
        env=proc_env,
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return case(Out(proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace")))


def case(out: Out) -> Out:
    text = out.stdout.decode("utf-8", "replace") + out.stderr
    assert "Traceback" not in text, text
    assert out.code != 1 and "internal error" not in out.stderr, out.stderr
    out.stdout.decode("utf-8")  # never bytes that are not UTF-8 on stdout
    return out


def one_line(out: Out, code: int) -> str:
    assert out.code == code, (out.code, out.stdout[-2000:], out.stderr[-2000:])
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("mcptask: error: "), out.stderr
    return lines[0]


# -- (a) server text that is JSON but not Unicode -------------------------------------------------


def escaped(result: Any) -> Any:
    """A JSON-RPC answer as Python's json writes it by default: every lone surrogate escaped
    (`"\\ud800"`), valid JSON."""

    def answer(h: FaultHandler, msg: dict[str, Any]) -> None:
        h.send_raw(
            200, json.dumps({"jsonrpc": "2.0", "id": msg.get("id"), "result": result}).encode()
        )

    return answer


LONE = ["\ud800", "\udfff", "a\udc80b", "\udcff\ud800"]


@pytest.mark.parametrize("bad", LONE, ids=["high", "low", "inner", "two"])
@pytest.mark.parametrize("output", ["json", "ndjson", "pretty"])
def test_a_lone_surrogate_in_a_status_message_is_replaced_everywhere(
    fault: FaultServer, tmp_path: Path, bad: str, output: str
) -> None:
    """json.dumps escapes the lone surrogate as `\\udXXX`: valid JSON, not text."""
    done = task(status="completed", statusMessage=f"done {bad}")
    url = fault.url(
        get=[escaped(task(statusMessage=f"msg {bad}")), escaped(done)],
        list=[escaped({"tasks": [task(taskId=f"t-{bad}", statusMessage=bad, name=bad)]})],
        result=[escaped(tool_result(f"res {bad}"))],
    )
    for args in (
        ("get", "t-1"),
        ("list",),
        ("watch", "t-1"),
        ("result", "t-1"),
        ("get", "t-1"),  # the book holds it now
        ("list", "--local"),
        ("log", "t-1"),
    ):
        target = () if args[-1] == "--local" or args[0] == "log" else ("--url", url, *P)
        r = cli(*args, *target, "-o", output, state=tmp_path)
        assert r.code in (0, 11), (args, r.stderr)  # 11: list --local of a non-list
        if output == "json" and r.stdout.strip():
            r.json()
        elif output == "ndjson":
            r.ndjson()
        assert "\ufffd" in r.text() or not r.stdout.strip() or args[0] == "log", (args, r.text())


def raw_bytes(result: bytes) -> Any:
    """A JSON-RPC answer whose result is `result`, bytes as they are."""

    def answer(h: FaultHandler, msg: dict[str, Any]) -> None:
        head = b'{"jsonrpc": "2.0", "id": ' + json.dumps(msg.get("id")).encode()
        h.send_raw(200, head + b', "result": ' + result + b"}")

    return answer


@pytest.mark.parametrize(
    "body",
    [
        # a surrogate encoded as UTF-8 anyway (CESU-8): bytes a strict UTF-8 decoder refuses
        b'{"taskId": "t-1", "status": "working", "statusMessage": "x\xed\xb3\xbfy"}',
        b'{"taskId": "t-1", "status": "working", "statusMessage": "x\\uDC80y"}',
    ],
    ids=["cesu-bytes", "escaped-low"],
)
def test_surrogates_in_raw_bytes_never_reach_stdout(
    fault: FaultServer, tmp_path: Path, body: bytes
) -> None:
    url = fault.url(get=[raw_bytes(body)])
    for output in ("json", "ndjson", "pretty"):
        r = cli("get", "t-1", "--url", url, *P, "-o", output, state=tmp_path)
        assert r.code in (0, 4), r.stderr
        if r.code == 0 and output == "json":
            assert r.json()["statusMessage"].startswith("x")


def test_jsonsafe_replaces_lone_surrogates_in_keys_and_values() -> None:
    from mcptask.text import jsonsafe

    assert jsonsafe.loads('{"a\\ud800": ["\\udfff", "\\ud83d\\ude00"]}') == {
        "a\ufffd": ["\ufffd", "\U0001f600"]
    }
    assert jsonsafe.loads(b'"\xed\xa0\x80"') == "\ufffd"
    assert jsonsafe.text_safe("ok") == "ok"
    assert jsonsafe.unicode_safe({"\udc80": ("\ud800",)}) == {"\ufffd": ["\ufffd"]}
    # clean data is handed back as it is (one pass of the C encoder finds nothing)
    clean = {"a": [1, 2.5, None, True, {"b": "\U0001f600"}], 3: "x"}
    assert jsonsafe.unicode_safe(clean) is clean
    # deep, in a key, in a tuple, beside a key the encoder does not take: found and fixed
    assert jsonsafe.unicode_safe([{"k": [{"\ud801": 1}]}]) == [{"k": [{"\ufffd": 1}]}]
    assert jsonsafe.unicode_safe({(1, 2): "\udfff"}) == {(1, 2): "\ufffd"}
    assert jsonsafe.unicode_safe({"n": float("nan"), "m": "\ud800"})["m"] == "\ufffd"


def test_the_book_stores_text_with_lone_surrogates_as_replacement(tmp_path: Path) -> None:
    from mcptask.state.taskbook import TaskBook

    book = TaskBook(tmp_path / "tasks.db")
    book.record("http://h/mcp", "t\ud800", status="working", statusMessage="m\udfff")
    book.add_events("http://h/mcp", [{"task": "t\ud800", "kind": "error", "message": "\udc80"}])
    assert book.write_error is None
    rec = book.lookup("http://h/mcp", "t\ufffd")
    assert rec is not None and rec["statusMessage"] == "m\ufffd"
    assert [e.get("message") for e in book.events("http://h/mcp", "t\ufffd")][-1] == "\ufffd"


# -- (b) bytes that are not UTF-8 from the user ---------------------------------------------------


@pytest.mark.parametrize("command", ["get", "watch", "result", "cancel", "forget", "log", "answer"])
def test_a_task_id_that_is_not_utf8_is_a_usage_error(tmp_path: Path, command: str) -> None:
    # a book present: the look-up path runs too
    from mcptask.state.taskbook import TaskBook

    TaskBook(tmp_path / "tasks.db").record("http://127.0.0.1:9/mcp", "id", status="working")
    r = cli(command, b"id\xff\xfe", state=tmp_path)
    line = one_line(r, 2)
    assert "not UTF-8" in line and "\\xff\\xfe" in line


@pytest.mark.parametrize("name", ["MCPTASK_STATE_DIR", "MCPTASK_CONFIG"])
def test_an_environment_path_that_is_not_utf8_is_a_usage_error(tmp_path: Path, name: str) -> None:
    r = cli("list", "--local", state=tmp_path, raw_env={name.encode(): bytes(tmp_path) + b"/x\xff"})
    line = one_line(r, 2)
    assert name in line and "not UTF-8" in line


# -- (c) the book edited by hand ------------------------------------------------------------------

HAND_EDITS = {
    "time-not-a-number": ["UPDATE events SET at = 'yesterday' WHERE task = 'bad'"],
    "blobs-where-text-belongs": [
        "UPDATE tasks SET status = X'ff00', message = X'01', first_seen = X'02',"
        " fields = X'7b7d', result = X'00' WHERE id = 'bad'",
        "UPDATE events SET status = X'ff00', message = X'ff', kind = X'01', via = 3,"
        " data = X'00' WHERE task = 'bad'",
    ],
    "id-not-text": [
        "UPDATE tasks SET id = X'0102' WHERE id = 'bad'",
        "UPDATE events SET task = X'0102' WHERE task = 'bad'",
    ],
    "text-not-utf8": [
        "UPDATE tasks SET message = CAST(X'ff41' AS TEXT), status = CAST(X'c3' AS TEXT)"
        " WHERE id = 'bad'",
        "UPDATE events SET message = CAST(X'ff41' AS TEXT) WHERE task = 'bad'",
    ],
    "numbers-where-text-belongs": [
        "UPDATE tasks SET status = 5, message = 2.5, seen = 'x', fields = '[1]' WHERE id = 'bad'",
        "UPDATE endpoints SET created = 'x', last_ok = X'00', last_fail = 'y'",
    ],
    "an-endpoint-key-not-text": [
        "INSERT INTO endpoints (key, place, fields, created) VALUES (X'00', X'00', X'00', 'x')",
        "INSERT INTO tasks (endpoint, id, seen, fields) VALUES"
        " ((SELECT MAX(id) FROM endpoints), 'bad', 'x', 'x')",
    ],
}


def _hand_book(state: Path, url: str, edits: list[str]) -> None:
    from mcptask.state.taskbook import TaskBook

    book = TaskBook(state / "tasks.db")
    for tid in ("good", "bad"):
        book.record(url, tid, status="working", statusMessage="hi", protocol="mcp-2025-11-25")
        book.record(url, tid, status="completed", statusMessage="done", result={"ok": tid})
    book.close()
    conn = sqlite3.connect(state / "tasks.db")
    for sql in edits:
        conn.execute(sql)
    conn.commit()
    conn.close()


@pytest.mark.parametrize("edit", list(HAND_EDITS))
def test_a_book_edited_by_hand_skips_the_bad_rows(
    fault: FaultServer, tmp_path: Path, edit: str
) -> None:
    url = fault.url(
        get={t: [task(taskId=t, status="completed")] for t in ("good", "bad")},
        result=[tool_result()],
    )
    _hand_book(tmp_path, url, HAND_EDITS[edit])
    for args, output in (
        (("get", "good"), "json"),
        (("get", "bad"), "pretty"),
        (("log", "bad"), "json"),
        (("log", "bad"), "pretty"),
        (("result", "good"), "json"),
        (("list", "--local"), "pretty"),
        (("book",), "pretty"),
        (("watch", "good", "--url", url, *P), "ndjson"),
    ):
        r = cli(*args, "-o", output, state=tmp_path)
        # 2 and 9: a task whose row was skipped is not in the book
        assert r.code in (0, 2, 9) if "bad" in args else r.code == 0, (args, r.code, r.stderr)
        assert "corrupt" not in r.stderr
    r = cli("log", "good", "-o", "json", state=tmp_path)
    assert r.code == 0 and r.json()["events"], r.stderr  # the good rows are all there
    r = cli("list", "--local", "-o", "json", state=tmp_path)
    assert "good" in {t["taskId"] for t in r.json()["tasks"]}
    assert not list(tmp_path.glob("tasks.db.corrupt-*"))


def test_a_constraint_added_by_hand_fails_the_write_not_the_book(
    fault: FaultServer, tmp_path: Path
) -> None:
    url = fault.url(
        get=[task(taskId="good", status="working"), task(taskId="good", status="completed")]
    )
    _hand_book(tmp_path, url, [])
    conn = sqlite3.connect(tmp_path / "tasks.db")
    conn.execute(
        "CREATE TRIGGER no_events BEFORE INSERT ON events BEGIN"
        " SELECT RAISE(ABORT, 'a rule of my own'); END"
    )
    conn.commit()
    conn.close()
    r = cli("watch", "good", "--url", url, *P, "-o", "ndjson", state=tmp_path)
    assert r.code == 0, r.stderr
    assert not list(tmp_path.glob("tasks.db.corrupt-*")), r.stderr
    assert "could not be written to the task book" in r.stderr and "a rule of my own" in r.stderr
    r = cli("log", "good", "-o", "json", state=tmp_path)
    assert r.code == 0 and r.json()["events"], r.stderr  # the book is still there


# -- (d) the book's size under a hostile message stream -------------------------------------------

MB = 1024 * 1024


def _book_bytes(state: Path) -> int:
    return sum(p.stat().st_size for p in state.glob("tasks.db*"))


def test_a_server_changing_a_huge_message_every_poll_cannot_fill_the_disk(
    fault: FaultServer, tmp_path: Path
) -> None:
    polls = 12
    huge = [
        escaped(task(statusMessage=f"{n} " + "x" * MB, lastUpdatedAt=f"{n}" + "y" * MB))
        for n in range(polls)
    ]
    url = fault.url(get=[*huge, task(status="completed", statusMessage="z" * MB)])
    r = cli("watch", "t-1", "--url", url, *P, "-o", "ndjson", state=tmp_path, timeout=90)
    assert r.code == 0, r.stderr
    assert len(fault.seen(url, "tasks/get")) >= polls
    # 13 events of ~2,000 characters, and the task's row with the server's last fields (one
    # ~1 MB `lastUpdatedAt`, rewritten in place), where the server sent ~25 MB
    assert _book_bytes(tmp_path) < 4 * MB, sorted(
        (p.name, p.stat().st_size) for p in tmp_path.glob("tasks.db*")
    )
    events = cli("log", "t-1", "-o", "json", state=tmp_path).json()["events"]
    assert len(events) >= polls
    assert all(len(e.get("message") or "") <= 2000 for e in events)
    assert all(len(json.dumps(e.get("data") or {})) <= 8300 for e in events)


def test_prune_gives_the_space_back_and_converts_an_older_book(tmp_path: Path) -> None:
    from mcptask.state.taskbook import TaskBook

    book = TaskBook(tmp_path / "tasks.db")
    for n in range(40):
        book.record("http://h/mcp", f"t{n}", status="completed", result={"r": "x" * 100_000})
    book.close()
    conn = sqlite3.connect(tmp_path / "tasks.db")
    conn.execute("PRAGMA auto_vacuum = NONE")
    conn.execute("VACUUM")  # as an mcptask before this one made it
    conn.execute("UPDATE tasks SET seen = seen - 86400")
    conn.commit()
    conn.close()
    before = _book_bytes(tmp_path)
    assert before > 3 * MB
    r = cli("prune", "--older-than", "1h", "-o", "json", state=tmp_path)
    assert r.code == 0 and r.json()["tasks"] == 40, r.stderr
    assert _book_bytes(tmp_path) < 200_000, _book_bytes(tmp_path)
    conn = sqlite3.connect(tmp_path / "tasks.db")
    assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental from now on
    conn.close()


# -- (e) forget leaves no copy ---------------------------------------------------------------------


def _holder(db: Path) -> subprocess.Popen[str]:
    """Another process with the book open (it read it once, as an idle watch has)."""
    code = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
        " c.execute('SELECT COUNT(*) FROM tasks').fetchall(); print('open', flush=True);"
        " sys.stdin.read()"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "open"
    return proc


@pytest.mark.parametrize("how", ["forget", "forget-endpoint", "prune"])
def test_forget_leaves_no_copy_in_any_state_file_while_the_book_is_open(
    fault: FaultServer, tmp_path: Path, how: str
) -> None:
    secret = "FORGET-ME-7c1f9a"
    keep = "KEEP-ME-44e0"
    url = fault.url(
        get={
            "t-1": [task(status="completed", statusMessage=secret)],
            "t-2": [task(taskId="t-2", status="completed", statusMessage=keep)],
        },
        result=[tool_result(secret * 50)],
    )
    assert cli("result", "t-1", "--url", url, *P, "-o", "json", state=tmp_path).code == 0
    if how != "forget-endpoint":
        assert cli("get", "t-2", "--url", url, *P, "-o", "json", state=tmp_path).code == 0
    holder = _holder(tmp_path / "tasks.db")
    try:
        files = {p.name: p.read_bytes() for p in tmp_path.glob("tasks.db*")}
        assert any(secret.encode() in data for data in files.values())  # there, before
        if how == "forget":
            r = cli("forget", "t-1", "-o", "json", state=tmp_path)
        elif how == "forget-endpoint":
            r = cli("forget", "--endpoint", url, "-o", "json", state=tmp_path)
        else:
            conn = sqlite3.connect(tmp_path / "tasks.db")
            conn.execute("UPDATE tasks SET seen = seen - 86400 WHERE id = 't-1'")
            conn.commit()
            conn.close()
            r = cli("prune", "--older-than", "1h", "-o", "json", state=tmp_path)
        assert r.code == 0, r.stderr
        assert r.stderr == ""
        left = {p.name: p.read_bytes() for p in tmp_path.glob("tasks.db*")}
        assert not [name for name, data in left.items() if secret.encode() in data]
        if how != "forget-endpoint":
            assert any(keep.encode() in data for data in left.values())
    finally:
        holder.communicate("")


# -- (h) numbers and units ------------------------------------------------------------------------


@pytest.mark.parametrize("age", ["0", "7", "1.5", " 0 "])
def test_prune_needs_a_unit(tmp_path: Path, age: str) -> None:
    from mcptask.state.taskbook import TaskBook

    TaskBook(tmp_path / "tasks.db").record("http://h/mcp", "t", status="working")
    line = one_line(cli("prune", "--older-than", age, state=tmp_path), 2)
    assert "needs a unit" in line
    assert cli("list", "--local", "-o", "json", state=tmp_path).json()["tasks"]


def test_prune_keeps_unfinished_tasks_unless_asked(tmp_path: Path) -> None:
    from mcptask.state.taskbook import TaskBook

    book = TaskBook(tmp_path / "tasks.db")
    book.record("http://h/mcp", "running", status="working")
    book.record("http://h/mcp", "done", status="completed")
    book.close()
    r = cli("prune", "--older-than", "0s", "-o", "json", state=tmp_path)
    assert r.code == 0 and r.json()["tasks"] == 1, r.stderr
    left = {
        t["taskId"] for t in cli("list", "--local", "-o", "json", state=tmp_path).json()["tasks"]
    }
    assert left == {"running"}
    r = cli("prune", "--older-than", "0s", "--unfinished", "-o", "json", state=tmp_path)
    assert r.code == 0 and r.json()["tasks"] == 1, r.stderr


# -- (f) a busy book ------------------------------------------------------------------------------


class Locker:
    """Another process that holds the book's write lock (`BEGIN IMMEDIATE`) until released."""

    CODE = (
        "import sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('BEGIN IMMEDIATE')\n"
        "print('locked', flush=True)\n"
        "sys.stdin.readline()\n"
        "c.execute('COMMIT')\n"
        "print('released', flush=True)\n"
        "sys.stdin.read()\n"
    )

    def __init__(self, db: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", self.CODE, str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "locked"

    def release(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "released"

    def close(self) -> None:
        rest_of(self.proc, 30, "")


def test_a_watch_keeps_polling_on_time_while_the_book_is_locked(
    fault: FaultServer, tmp_path: Path
) -> None:
    steps = 24
    answers = [task(statusMessage=f"step {n}") for n in range(steps)]
    url = fault.url(get=[*answers, task(status="completed", statusMessage="done")])
    # the book exists, with this endpoint in it (another mcptask wrote it)
    assert cli("get", "t-1", "--url", url, *P, "-o", "json", state=tmp_path).code == 0
    locker = Locker(tmp_path / "tasks.db")
    watch = subprocess.Popen(
        [sys.executable, "-m", "mcptask", "watch", "t-1", "--url", url, *P, "-o", "ndjson"],
        env=base_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        # while the lock is held: the polls go on (each write would wait 5-15 s on the loop)
        fault.wait_seen(url, "tasks/get", 14)
        assert watch.poll() is None
        polls = [r.at for r in fault.seen(url, "tasks/get")][1:]  # after `get`'s own
        assert len(polls) >= 12
        gaps = [b - a for a, b in itertools.pairwise(polls)]
        assert max(gaps) < 4, gaps  # polled on time (0.25 s apart, slack for a loaded machine)
        locker.release()
        out, err = watch.communicate(timeout=60)
    finally:
        if watch.poll() is None:
            watch.kill()
        locker.close()
    r = case(Out(watch.returncode, out, err.decode()))
    assert r.code == 0, r.stderr
    assert "could not be written" not in r.stderr and "cannot write" not in r.stderr
    events = cli("log", "t-1", "-o", "json", state=tmp_path).json()["events"]
    messages = {e.get("message") for e in events}
    assert {f"step {n}" for n in range(1, steps)} <= messages, messages  # nothing lost
    assert "done" in messages


def test_a_watch_says_once_what_a_book_locked_to_the_end_kept_it_from_writing(
    fault: FaultServer, tmp_path: Path
) -> None:
    answers = [task(statusMessage=f"step {n}") for n in range(6)]
    url = fault.url(get=[*answers, task(status="completed", statusMessage="done")])
    assert cli("get", "t-1", "--url", url, *P, "-o", "json", state=tmp_path).code == 0
    locker = Locker(tmp_path / "tasks.db")
    try:
        started = time.monotonic()
        r = cli("watch", "t-1", "--url", url, *P, "-o", "ndjson", state=tmp_path)
        took = time.monotonic() - started
    finally:
        locker.close()
    assert r.code == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "task book" in ln]
    assert len(lines) == 1 and "could not be written" in lines[0], r.stderr
    assert took < 40, took  # the end waits 10 s for the lock, not a busy timeout per write
    assert r.ndjson()[-1]["event"] == "end"  # the watch ran to its end


def test_a_get_on_a_locked_book_waits_once(fault: FaultServer, tmp_path: Path) -> None:
    url = fault.url(get=[task(status="completed")], result=[tool_result()])
    assert cli("get", "t-1", "--url", url, *P, "-o", "json", state=tmp_path).code == 0
    locker = Locker(tmp_path / "tasks.db")
    try:
        started = time.monotonic()
        r = cli("result", "t-1", "--url", url, *P, "-o", "json", state=tmp_path)
        took = time.monotonic() - started
    finally:
        locker.close()
    assert r.code == 0, r.stderr
    assert r.json() == tool_result()
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "cannot write the task book" in lines[0], r.stderr
    assert took < 40, took  # one wait of 15 s, not one per write


# -- (g) signals: no descendant of a stdio server outlives a SIGKILLed mcptask --------------------


@pytest.mark.parametrize(
    "flags",
    ["--hang", "--hang --child", "--hang --daemon", "--hang --ignore-term --ignore-eof --child"],
    ids=["server", "child", "daemon", "ignores-term"],
)
def test_no_descendant_of_a_stdio_server_outlives_a_sigkilled_mcptask(
    tmp_path: Path, flags: str
) -> None:
    import signal

    from test_stdio_config_auth import fake_cmd, new_marker, procs_with, wait_for

    marker = new_marker()
    hung = tmp_path / "hung"
    cmd = fake_cmd(*flags.split(), "--hung", str(hung), marker=marker)
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcptask", "list", "--stdio", cmd],
        env=base_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(hung.exists, timeout=60)  # the server is up and holding tasks/list
        expected = 1 + ("--child" in flags) + ("--daemon" in flags)
        wait_for(lambda: len(procs_with(marker)) >= expected, timeout=30)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        try:
            wait_for(lambda: not procs_with(marker), timeout=15)
        except AssertionError:
            raise AssertionError(f"outlived mcptask: {procs_with(marker)}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in procs_with(marker):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 512 KiB file system of its own (tmpfs: needs root and mount rights, else skipped)."""
    where = tmp_path / "disk"
    where.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs", str(where)],
        capture_output=True,
    )
    if made.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _fill(disk: Path) -> None:
    with contextlib.suppress(OSError), open(disk / "filler", "wb") as f:
        while True:
            f.write(b"\0" * 4096)
            f.flush()


@pytest.mark.parametrize("command", ["watch", "get"])
def test_a_full_disk_is_said_once(fault: FaultServer, small_disk: Path, command: str) -> None:
    answers = [task(statusMessage=f"step {n} " + "x" * 1500) for n in range(12)]
    url = fault.url(get=[*answers, task(status="completed", statusMessage="done")])
    assert cli("get", "t-1", "--url", url, *P, "-o", "json", state=small_disk).code == 0
    _fill(small_disk)
    if command == "watch":
        r = cli("watch", "t-1", "--url", url, *P, "-o", "ndjson", state=small_disk)
    else:
        r = cli("get", "t-1", "--url", url, *P, "-o", "json", state=small_disk)
    assert r.code == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "task book" in ln]
    assert len(lines) == 1, r.stderr
    assert "full" in lines[0], lines


def _without_root_powers() -> list[str]:
    """A command prefix under which this process's own permissions apply (root drops its
    power to ignore them), or [] when they already do."""
    if os.geteuid() != 0:
        return []
    import shutil

    if shutil.which("setpriv") is None:
        pytest.skip("root without setpriv: a read-only directory cannot be tried")
    drop = "-dac_override,-dac_read_search"
    return ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}"]


def test_a_read_only_state_directory_still_reads_the_book(
    fault: FaultServer, tmp_path: Path
) -> None:
    from servers.fault_server import rpc_error

    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    gone = rpc_error(-32602, "Task not found")
    url = fault.url(get=[task(status="completed"), gone], result=[tool_result("kept")])
    assert cli("result", "t-1", "--url", url, *P, "-o", "json", state=state).code == 0
    state.chmod(0o500)
    try:
        prefix = _without_root_powers()

        def run(*args: str) -> Out:
            proc = subprocess.run(
                [*prefix, sys.executable, "-m", "mcptask", *args],
                env=base_env(state),
                capture_output=True,
                stdin=subprocess.DEVNULL,
                timeout=60,
            )
            return case(Out(proc.returncode, proc.stdout, proc.stderr.decode()))

        log = run("log", "t-1", "-o", "json")
        assert log.code == 0 and log.json()["events"], log.stderr
        listed = run("list", "--local", "-o", "json")
        assert listed.code == 0 and [t["taskId"] for t in listed.json()["tasks"]] == ["t-1"]
        result = run("result", "t-1", "-o", "json")
        assert result.code == 0, result.stderr
        assert result.json() == tool_result("kept")
        assert "cannot read" not in log.stderr + listed.stderr + result.stderr
    finally:
        state.chmod(0o700)
