"""The task book on its own: records, look-ups, endpoint keys, file mode, a damaged book set
aside, the import of an older JSON book, the event log, retention and parallel writers
(threads and processes sharing one database)."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcptask.state import files, taskbook
from mcptask.state.endpoints import endpoint_key, same_place
from mcptask.state.taskbook import TaskBook

URL = "http://127.0.0.1:8000/mcp"


@pytest.fixture
def warnings() -> list[str]:
    return []


@pytest.fixture
def book(tmp_path: Path, warnings: list[str]) -> TaskBook:
    return TaskBook(tmp_path / "state" / "tasks.db", warn=warnings.append)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every change stamped one second after the last (the real stamp has one-second steps)."""
    ticks = iter(range(10**6))
    monkeypatch.setattr(taskbook, "now_iso", lambda: f"2026-01-01T00:00:00Z+{next(ticks):06d}")
    yield


def write_legacy(book: TaskBook, content: bytes) -> None:
    """An older mcptask's `tasks.json` beside the database."""
    book.legacy.parent.mkdir(parents=True, exist_ok=True)
    book.legacy.write_bytes(content)


# -- endpoint keys ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp"),
        ("HTTP://Example.COM/mcp", "http://example.com/mcp"),
        ("https://example.com/mcp/", "https://example.com/mcp"),
        ("  https://example.com/mcp  ", "https://example.com/mcp"),
        ("https://example.com/", "https://example.com"),
        ("https://example.com/mcp#part", "https://example.com/mcp"),
        ("https://user:pw@example.com:8443/mcp", "https://example.com:8443/mcp"),
        ("https://user@example.com/mcp", "https://example.com/mcp"),
        ("http://[::1]:8000/mcp", "http://[::1]:8000/mcp"),
        ("http://[FE80::1]/mcp", "http://[fe80::1]/mcp"),
        ("https://example.com/MCP", "https://example.com/MCP"),  # the path keeps its case
        ("https://example.com/mcp?x=1", "https://example.com/mcp?x=1"),
        ("https://example.com/mcp?token=abc&x=1", "https://example.com/mcp?token=[redacted]&x=1"),
        ("https://example.com/mcp?api_key=abc", "https://example.com/mcp?api_key=[redacted]"),
        ("HTTPS://example.com:443/mcp", "https://example.com/mcp"),
        ("http://example.com:80/mcp", "http://example.com/mcp"),
        ("http://example.com:443/mcp", "http://example.com:443/mcp"),  # not http's default
        ("https://example.com:80/mcp", "https://example.com:80/mcp"),
    ],
)
def test_endpoint_key_normalises(url: str, key: str) -> None:
    assert endpoint_key(url) == key


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://H:99999/mcp/", "http://h:99999/mcp"),
        ("http://h:Port/mcp", "http://h:port/mcp"),
        ("http://[::1]:x/", "http://[::1]:x"),
        ("http://[::1/mcp/", "http://[::1/mcp"),
        ("http://u:pw@[::1/mcp?token=x#f", "http://[::1/mcp"),
    ],
)
def test_endpoint_key_of_a_bad_port_is_a_key_not_an_error(url: str, key: str) -> None:
    assert endpoint_key(url) == key


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("http://localhost:8000/mcp", "http://127.0.0.1:8000/mcp/"),
        ("http://[::1]:8000/mcp", "http://LOCALHOST:8000/mcp"),
        ("http://user:pw@127.0.0.1/mcp", "http://[::1]:80/mcp"),
        ("https://example.com/mcp", "https://EXAMPLE.com:443/mcp/"),
    ],
)
def test_same_place_joins_the_spellings_of_one_endpoint(one: str, other: str) -> None:
    assert same_place(one) == same_place(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("http://localhost:8000/mcp", "http://localhost:8001/mcp"),
        ("http://localhost:8000/mcp", "https://localhost:8000/mcp"),
        ("http://localhost:8000/mcp", "http://localhost:8000/a2a"),
        ("http://127.0.0.2:8000/mcp", "http://127.0.0.1:8000/mcp"),
        ("http://example.com/mcp", "http://localhost/mcp"),
    ],
)
def test_same_place_keeps_other_endpoints_apart(one: str, other: str) -> None:
    assert same_place(one) != same_place(other)


def test_same_place_of_a_bad_url_is_a_key_not_an_error() -> None:
    assert same_place("http://localhost:x/mcp") == same_place("http://127.0.0.1:x/mcp")
    assert same_place("http://[::1/mcp") == "http://[::1/mcp"


def test_a_book_never_holds_a_password_or_secret_query_value(book: TaskBook) -> None:
    book.record("https://alice:hunter22@example.com/mcp?token=s3cr3t-value", "t1", status="working")
    text = book.path.read_text(encoding="utf-8")
    assert "hunter22" not in text and "s3cr3t-value" not in text and "alice" not in text


def test_spellings_of_one_endpoint_share_its_tasks(book: TaskBook) -> None:
    book.record("HTTPS://Example.com/mcp/", "t1", status="working")
    assert book.lookup("https://example.com/mcp", "t1") is not None
    assert book.lookup("https://user:pw@EXAMPLE.com/mcp#x", "t1") is not None
    assert list(book.all_endpoints()) == ["https://example.com/mcp"]


# -- records and look-ups -----------------------------------------------------------------------


def test_an_empty_book_has_nothing_and_no_file(book: TaskBook) -> None:
    assert book.lookup(URL, "t1") is None
    assert book.tasks(URL) == {}
    assert book.endpoint(URL) == {}
    assert book.all_endpoints() == {}
    book.record_many(URL, {})
    assert not book.path.exists()


def test_record_then_lookup(book: TaskBook, clock: None) -> None:
    book.record(URL, "t1", status="working", protocol="mcp-2025-11-25", session="s-1")
    rec = book.lookup(URL, "t1")
    assert rec == {
        "firstSeenAt": "2026-01-01T00:00:00Z+000000",
        "lastSeenAt": "2026-01-01T00:00:00Z+000000",
        "status": "working",
        "protocol": "mcp-2025-11-25",
        "session": "s-1",
    }
    assert book.lookup(URL, "t2") is None
    assert book.lookup("http://127.0.0.1:9999/mcp", "t1") is None


def test_a_later_record_updates_fields_and_keeps_the_first_sighting(
    book: TaskBook, clock: None
) -> None:
    book.record(URL, "t1", status="working", session="s-1")
    book.record(URL, "t1", status="completed", session=None, contextId="c-1")
    rec = book.lookup(URL, "t1")
    assert rec is not None
    assert rec["status"] == "completed"
    assert rec["session"] == "s-1"  # None leaves a field as it was
    assert rec["contextId"] == "c-1"
    assert rec["firstSeenAt"] == "2026-01-01T00:00:00Z+000000"
    assert rec["lastSeenAt"] == "2026-01-01T00:00:00Z+000001"


def test_record_many_writes_every_task_at_once(book: TaskBook) -> None:
    book.record_many(URL, {"a": {"status": "working"}, "b": {"status": "completed"}})
    assert {k: v["status"] for k, v in book.tasks(URL).items()} == {
        "a": "working",
        "b": "completed",
    }


def test_all_endpoints_lists_each_endpoint_with_its_tasks(book: TaskBook) -> None:
    book.record(URL, "t1", status="working")
    book.record("https://example.com/a2a", "t2", status="completed")
    endpoints = book.all_endpoints()
    assert set(endpoints) == {URL, "https://example.com/a2a"}
    assert set(endpoints[URL]["tasks"]) == {"t1"}
    assert set(endpoints["https://example.com/a2a"]["tasks"]) == {"t2"}


def test_set_endpoint_keeps_fields_beside_the_tasks(book: TaskBook) -> None:
    book.set_endpoint(URL, protocol="a2a")
    assert book.endpoint(URL) == {"protocol": "a2a"}
    book.record(URL, "t1", status="working")
    book.set_endpoint(URL, protocol="mcp-2026-07-28", session="s-2")
    ep = book.endpoint(URL)
    assert ep == {"protocol": "mcp-2026-07-28", "session": "s-2"}
    assert set(book.tasks(URL)) == {"t1"}


def test_the_loopback_spellings_of_an_endpoint_share_one_record(book: TaskBook) -> None:
    book.record("http://127.0.0.1:9/mcp", "t1", status="working", session="s1")
    book.record("http://localhost:9/mcp", "t2", status="working")
    book.set_endpoint("http://[::1]:9/mcp", protocol="mcp-2025-11-25")
    assert list(book.all_endpoints()) == ["http://127.0.0.1:9/mcp"]
    for spelling in ("http://localhost:9/mcp", "http://127.0.0.1:9/mcp/", "http://[::1]:9/mcp"):
        assert set(book.tasks(spelling)) == {"t1", "t2"}
        assert book.endpoint(spelling)["protocol"] == "mcp-2025-11-25"
    assert book.tasks("http://localhost:10/mcp") == {}


def _two_spellings(book: TaskBook) -> None:
    """A book written before the spellings were joined: one endpoint under two keys."""
    endpoints = {
        "http://localhost:9/mcp": {"tasks": {"t1": {"status": "working"}}, "protocol": "a2a"},
        "http://127.0.0.1:9/mcp": {
            "tasks": {"t1": {"status": "completed"}, "t2": {"status": "working"}},
            "protocol": "mcp-2025-11-25",
        },
    }
    write_legacy(book, json.dumps({"version": 1, "endpoints": endpoints}).encode())


def test_an_endpoint_s_own_spelling_wins(book: TaskBook) -> None:
    _two_spellings(book)
    local = book.tasks("http://localhost:9/mcp")
    assert {k: v["status"] for k, v in local.items()} == {"t1": "working", "t2": "working"}
    numeric = book.tasks("http://127.0.0.1:9/mcp")
    assert {k: v["status"] for k, v in numeric.items()} == {"t1": "completed", "t2": "working"}
    assert book.endpoint("http://localhost:9/mcp")["protocol"] == "a2a"
    assert book.endpoint("http://[::1]:9/mcp")["protocol"] == "mcp-2025-11-25"  # sorted first


def test_find_an_id_on_every_endpoint_that_knows_it(book: TaskBook) -> None:
    book.record("http://127.0.0.1:9/mcp", "task-1234", status="working")
    book.record("https://example.com/mcp", "task-1234", status="completed")
    book.record("https://example.com/mcp", "task-5678", status="working")
    found = sorted((ep, tid, rec["status"]) for ep, tid, rec in book.find("task-1234"))
    assert found == [
        ("http://127.0.0.1:9/mcp", "task-1234", "working"),
        ("https://example.com/mcp", "task-1234", "completed"),
    ]
    assert book.find("nothing-like-it") == []


def test_find_a_prefix_of_at_least_four_characters(book: TaskBook) -> None:
    book.record(URL, "abcd-1", status="working")
    book.record(URL, "abcd-2", status="working")
    book.record(URL, "abce-3", status="working")
    assert sorted(tid for _, tid, _ in book.find("abcd")) == ["abcd-1", "abcd-2"]
    assert [tid for _, tid, _ in book.find("abce")] == ["abce-3"]
    assert book.find("abc") == []  # shorter than MIN_PREFIX
    assert taskbook.MIN_PREFIX == 4


def test_find_prefers_an_exact_id_to_longer_ids_it_begins(book: TaskBook) -> None:
    book.record(URL, "abcd", status="working")
    book.record(URL, "abcd-2", status="working")
    assert [tid for _, tid, _ in book.find("abcd")] == ["abcd"]


def test_find_counts_one_place_once(book: TaskBook) -> None:
    _two_spellings(book)
    assert len(book.find("t1")) == 1


def test_the_default_path_is_in_the_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPTASK_STATE_DIR", str(tmp_path / "elsewhere"))
    assert files.state_dir() == tmp_path / "elsewhere"
    assert TaskBook().path == tmp_path / "elsewhere" / "tasks.db"
    assert TaskBook().legacy == tmp_path / "elsewhere" / "tasks.json"
    assert TaskBook(tmp_path / "tasks.json").path == tmp_path / "tasks.db"  # the old name
    monkeypatch.delenv("MCPTASK_STATE_DIR")
    assert files.state_dir().name == "mcptask"  # the platform's user state directory


# -- the file -----------------------------------------------------------------------------------


def test_the_database_and_its_companions_are_private(book: TaskBook) -> None:
    book.record(URL, "t1", status="working")
    assert book.events(URL, "t1")  # the WAL holds something
    folder = book.path.parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in ("tasks.db", "tasks.db-wal", "tasks.db-shm"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
    with sqlite3.connect(book.path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == taskbook.VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_database_with_a_loose_mode_is_made_private(book: TaskBook) -> None:
    book.record(URL, "t1", status="working")
    book.close()
    book.path.chmod(0o644)
    TaskBook(book.path).record(URL, "t2", status="working")
    assert stat.S_IMODE(book.path.stat().st_mode) == 0o600


def test_a_damaged_database_is_set_aside_never_emptied(book: TaskBook, warnings: list[str]) -> None:
    book.path.parent.mkdir(parents=True)
    book.path.write_bytes(b"SQLite format 3\x00" + b"\xde\xad" * 3000)
    assert book.lookup(URL, "t1") is None
    assert len(warnings) == 1 and "was corrupt" in warnings[0] and "set aside as" in warnings[0]
    (aside,) = book.path.parent.glob("tasks.db.corrupt-*")
    assert aside.read_bytes().startswith(b"SQLite format 3")
    book.record(URL, "t1", status="working")  # a fresh book begins
    assert book.lookup(URL, "t1") is not None
    assert len(warnings) == 1


def test_one_bad_row_never_loses_the_others(book: TaskBook, warnings: list[str]) -> None:
    book.record_many(URL, {"a": {"status": "working"}, "b": {"status": "completed"}})
    book.record(URL, "a", status="completed", result={"ok": 1})
    with sqlite3.connect(book.path) as conn:
        conn.execute("UPDATE tasks SET fields = '{broken', result = '[1,' WHERE id = 'a'")
    rec = book.lookup(URL, "a")
    assert rec is not None and rec["status"] == "completed" and "result" not in rec
    assert set(book.tasks(URL)) == {"a", "b"}
    assert warnings == []


def test_an_older_json_book_is_imported_once_and_kept(book: TaskBook, clock: None) -> None:
    endpoints = {
        URL: {
            "protocol": "mcp-2025-11-25",
            "tasks": {
                "t1": {
                    "status": "completed",
                    "session": "s-1",
                    "result": {"n": 1},
                    "resultKeptAt": "2026-01-01T00:00:00Z",
                    "lastSeenAt": "2026-01-01T00:00:00Z",
                },
                "t2": {"status": "working", "answered": ["k1"]},
            },
        }
    }
    write_legacy(book, json.dumps({"version": 1, "endpoints": endpoints}).encode())
    assert book.endpoint(URL) == {"protocol": "mcp-2025-11-25"}
    rec = book.lookup(URL, "t1")
    assert rec is not None and rec["result"] == {"n": 1} and rec["session"] == "s-1"
    assert rec["resultKeptAt"] == "2026-01-01T00:00:00Z"
    assert book.lookup(URL, "t2") == {"status": "working", "answered": ["k1"]}
    assert not book.legacy.exists()
    backup = book.legacy.with_name("tasks.json.bak")
    assert json.loads(backup.read_text())["endpoints"] == endpoints
    # once: a later book does not import the backup again
    book.forget(URL, "t1")
    assert TaskBook(book.path).lookup(URL, "t1") is None


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe not utf-8",
        b"[]",
        b'{"version": 1}',
        b'{"version": 1, "endpoints": []}',
        b'{"version": 1, "endpoints": {"http://h": "x"}}',
        b'{"version": 1, "endpoints": {"http://h": {"tasks": []}}}',
        b'{"version": 1, "endpoints": {"http://h": {"tasks": {"t": 1}}}}',
        b'{"version": 1, "endpoints": {"http://h": {"tasks": {"t": {"status": 3}}}}}',
        b'{"version": 1, "endpoints": {"http://h": {"tasks": {"t": {"session": {}}}}}}',
        b"[" * 100_000,
    ],
)
def test_a_corrupt_json_book_is_set_aside_with_a_warning(
    book: TaskBook, warnings: list[str], content: bytes
) -> None:
    write_legacy(book, content)
    book.record(URL, "t0", status="working")  # the first write looks for the old book
    assert book.lookup(URL, "t1") is None
    assert len(warnings) == 1
    assert "was corrupt; set aside as tasks.json.corrupt-" in warnings[0]
    (aside,) = book.path.parent.glob("tasks.json.corrupt-*")
    assert aside.read_bytes() == content
    assert not book.legacy.exists()
    # a fresh book begins
    book.record(URL, "t1", status="working")
    assert book.lookup(URL, "t1") is not None
    assert len(warnings) == 1


def test_a_well_formed_book_is_not_set_aside(book: TaskBook, warnings: list[str]) -> None:
    write_legacy(
        book,
        json.dumps(
            {
                "version": 1,
                "endpoints": {URL: {"tasks": {"t1": {"status": "working", "session": None}}}},
            }
        ).encode(),
    )
    assert book.lookup(URL, "t1") == {"status": "working", "session": None}
    assert warnings == []


def test_an_unreadable_book_warns_and_nothing_raises(book: TaskBook, warnings: list[str]) -> None:
    book.path.mkdir(parents=True)  # a directory where the file should be
    assert book.lookup(URL, "t1") is None
    book.record(URL, "t1", status="working")
    assert any(w.startswith("cannot read the task book") for w in warnings)
    # the write fails for the same reason: said once (issue 37), not a line per change
    book.record(URL, "t2", status="working")
    assert len(warnings) == 1, warnings
    assert book.path.is_dir()


def test_a_state_directory_that_cannot_be_made_warns(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("in the way", encoding="utf-8")
    warned: list[str] = []
    book = TaskBook(tmp_path / "file" / "tasks.db", warn=warned.append)
    book.record(URL, "t1", status="working")
    assert book.lookup(URL, "t1") is None
    assert book.all_endpoints() == {}
    assert len(warned) == 1 and warned[0].startswith("cannot write the task book")


def test_without_a_warn_callable_problems_are_quiet(tmp_path: Path) -> None:
    book = TaskBook(tmp_path / "tasks.db")
    book.legacy.write_bytes(b"{broken")
    book.path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    assert book.lookup(URL, "t1") is None


# -- limits -------------------------------------------------------------------------------------


def test_a_result_up_to_one_mib_is_kept(book: TaskBook, clock: None) -> None:
    result = "x" * (taskbook.MAX_RESULT_BYTES - 2)  # with its quotes: exactly 1 MiB of JSON
    book.record(URL, "t1", status="completed", result=result)
    rec = book.lookup(URL, "t1")
    assert rec is not None
    assert rec["result"] == result
    assert rec["resultKeptAt"] == rec["lastSeenAt"]
    assert "resultNotKept" not in rec


def test_a_result_over_one_mib_is_not_kept(book: TaskBook) -> None:
    book.record(URL, "t1", status="completed", result="x" * taskbook.MAX_RESULT_BYTES)
    rec = book.lookup(URL, "t1")
    assert rec is not None
    assert "result" not in rec and "resultKeptAt" not in rec
    assert rec["resultNotKept"] == f"{taskbook.MAX_RESULT_BYTES + 2} bytes, over the 1 MiB limit"
    assert rec["status"] == "completed"


def test_results_past_the_total_limit_drop_the_oldest_first(
    book: TaskBook, clock: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(taskbook, "MAX_RESULTS_BYTES", 25)
    for i in range(4):  # 10 bytes of JSON each ("12345678" with quotes)
        other = URL if i % 2 else "https://example.com/mcp"  # the limit spans endpoints
        book.record(other, f"t{i}", status="completed", result="12345678")
    kept = {
        task_id
        for ep in book.all_endpoints().values()
        for task_id, rec in ep["tasks"].items()
        if "result" in rec
    }
    assert kept == {"t2", "t3"}
    dropped = book.lookup("https://example.com/mcp", "t0")
    assert dropped is not None and "resultKeptAt" not in dropped
    assert dropped["status"] == "completed"  # the task stays; only its result goes


def test_there_is_no_cap_per_endpoint(book: TaskBook) -> None:
    book.record_many(URL, {f"t{i}": {"status": "working"} for i in range(1500)})
    assert len(book.tasks(URL)) == 1500


def test_tasks_not_seen_for_the_kept_days_are_dropped(
    book: TaskBook, monkeypatch: pytest.MonkeyPatch
) -> None:
    book.record(URL, "old", status="completed")
    book.record("https://gone.example/mcp", "older", status="completed")
    with sqlite3.connect(book.path) as conn:
        conn.execute("UPDATE tasks SET seen = seen - 40 * 86400")
        conn.execute(
            "UPDATE endpoints SET created = created - 3456000, last_ok = last_ok - 3456000"
        )
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'pruned'")  # due
    monkeypatch.setenv("MCPTASK_BOOK_DAYS", "30")
    book.record(URL, "new", status="working")  # a write prunes (at most hourly)
    assert set(book.tasks(URL)) == {"new"}
    assert book.events(URL, "old") == []
    assert book.endpoint_keys() == [URL]  # an endpoint left empty and silent goes too


def test_prune_drops_what_was_not_seen_for_so_long(book: TaskBook) -> None:
    book.record(URL, "a", status="completed")
    book.record(URL, "b", status="working")
    with sqlite3.connect(book.path) as conn:
        conn.execute("UPDATE tasks SET seen = seen - 8 * 86400 WHERE id = 'a'")
    assert book.prune(7 * 86400) == (1, 0)
    assert set(book.tasks(URL)) == {"b"}


@pytest.mark.parametrize(
    ("raw", "days"),
    [("", 30.0), ("7", 7.0), ("0.5", 0.5), ("x", 30.0), ("-1", 30.0), ("inf", 30.0)],
)
def test_kept_days_come_from_the_environment(
    raw: str, days: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPTASK_BOOK_DAYS", raw)
    assert taskbook.keep_days() == days


# -- parallel writers ---------------------------------------------------------------------------

WRITERS = 4
EACH = 8


def _write_many(path: str, writer: int) -> None:
    book = TaskBook(Path(path))
    for i in range(EACH):
        book.record(URL, f"w{writer}-{i}", status="working")
        book.set_endpoint(URL, **{f"writer{writer}": i})


def _check_every_write_landed(book: TaskBook, warnings: list[str]) -> None:
    tasks = book.tasks(URL)
    assert set(tasks) == {f"w{w}-{i}" for w in range(WRITERS) for i in range(EACH)}
    ep = book.endpoint(URL)
    assert all(ep[f"writer{w}"] == EACH - 1 for w in range(WRITERS))
    assert warnings == []
    assert list(book.path.parent.glob("*.corrupt-*")) == []


def test_parallel_threads_lose_no_write(book: TaskBook, warnings: list[str]) -> None:
    threads = [
        threading.Thread(target=_write_many, args=(str(book.path), w)) for w in range(WRITERS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _check_every_write_landed(book, warnings)


def test_parallel_processes_lose_no_write(book: TaskBook, warnings: list[str]) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_write_many, args=(str(book.path), w)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * WRITERS
    _check_every_write_landed(book, warnings)


# -- the event log ------------------------------------------------------------------------------


def kinds(book: TaskBook, task_id: str, url: str = URL) -> list[tuple[str, str | None]]:
    return [(e["kind"], e.get("via")) for e in book.events(url, task_id)]


def test_each_change_of_state_is_an_event(book: TaskBook) -> None:
    via = taskbook.VIA
    book.record(URL, "t1", status="working", statusMessage="queued", pollInterval=1000)
    book.record(URL, "t1", status="working", statusMessage="queued", **{via: "poll"})  # no change
    book.record(URL, "t1", status="working", statusMessage="half way", **{via: "push"})
    book.record(URL, "t1", status="working", statusMessage="half way", pollInterval=5000)
    book.record(URL, "t1", status="input_required", inputRequests={"k1": {"message": "name?"}})
    book.record(URL, "t1", status="completed", statusMessage="done", **{via: "poll"})
    assert kinds(book, "t1") == [
        ("created", None),
        ("message", "push"),
        ("pace", None),
        ("status", None),
        ("question", None),
        ("status", "poll"),
    ]
    events = book.events(URL, "t1")
    assert events[0]["status"] == "working" and events[0]["message"] == "queued"
    assert events[0]["data"] == {"pollInterval": 1000}
    assert events[4]["data"] == {"requests": {"k1": {"message": "name?"}}}
    assert [e["n"] for e in events] == sorted(e["n"] for e in events)
    assert book.events(URL, "t1", after=events[3]["n"]) == events[4:]
    rec = book.lookup(URL, "t1")
    assert rec is not None and rec["statusMessage"] == "done"


def test_events_are_added_with_the_command_and_never_a_secret(book: TaskBook) -> None:
    from mcptask.model.events import EventKind, event
    from mcptask.text import redact

    redact.hold(["s3cr3t-token"])
    try:
        book.record_many(
            URL,
            {"t1": {"status": "working", "statusMessage": "echo s3cr3t-token"}},
            events=[event("t1", EventKind.RETRY, message="401 for s3cr3t-token", delay=2.0)],
            command="watch",
        )
    finally:
        redact.release_all()
    events = book.events(URL, "t1")
    assert [e["kind"] for e in events] == ["created", "retry"]
    assert {e["command"] for e in events} == {"watch"}
    assert events[1]["data"] == {"delay": 2.0}
    for f in book.path.parent.iterdir():
        assert b"s3cr3t-token" not in f.read_bytes()


def test_events_per_task_are_capped_keeping_the_creation(
    book: TaskBook, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcptask.model import events as ev

    monkeypatch.setattr(ev, "MAX_EVENTS_PER_TASK", 5)
    for i in range(12):
        book.record(URL, "t1", status="working", statusMessage=f"step {i}")
    events = book.events(URL, "t1")
    assert len(events) == 5
    assert events[0]["kind"] == "created" and events[-1]["message"] == "step 11"


def test_forget_drops_the_history_too(book: TaskBook) -> None:
    book.record(URL, "t1", status="working")
    assert book.forget(URL, "t1") == 1
    assert book.events(URL, "t1") == []
    assert book.forget(URL, "t1") == 0
    book.record(URL, "t2", status="working")
    assert book.forget_endpoint("http://localhost:8000/mcp/") == 1  # another spelling
    assert book.endpoint_keys() == []


def test_completion_is_most_recent_first_and_capped(book: TaskBook) -> None:
    for i in range(60):
        book.record(URL, f"abcd-{i:02d}", status="working")
    book.record("https://other.example/mcp", "abcd-other", status="completed")
    got = book.complete("abcd")
    assert len(got) == taskbook.MAX_COMPLETIONS
    assert got[0][0] == "abcd-other" and got[1][0] == "abcd-59"
    only = book.complete("abcd", URL, exclude=["abcd-59"])
    assert only[0] == ("abcd-58", "working", URL)
    assert book.complete("zz") == []


def test_an_alias_posts_its_tasks_to_the_endpoint_it_names(book: TaskBook) -> None:
    real, alias = "http://127.0.0.1:9/", "http://127.0.0.1:9/mcp"
    book.record(real, "t1", status="working")
    book.set_endpoint(alias, protocol="a2a-1.0", postTo=real)
    book.record(alias, "t2", status="working")  # listed through the alias
    assert set(book.tasks(real)) == {"t1", "t2"}
    assert [(ep, tid) for ep, tid, _ in book.find("t2")] == [("http://127.0.0.1:9", "t2")]
    assert book.endpoint(alias)["postTo"] == real
    book.set_endpoint("http://127.0.0.1:9/x", postTo="https://elsewhere.example/")
    assert book.tasks("http://127.0.0.1:9/x") == {}  # another origin is not an alias


@pytest.mark.parametrize("depth", [950, 990, 3000])
def test_a_deeply_nested_result_is_stored_and_read_back(book: TaskBook, depth: int) -> None:
    from mcptask.text import redact

    result: object = {"leaf": "kept"}
    for _ in range(depth):
        result = [result]
    redact.hold(["never-stored-secret"])  # scrubbing recurses too
    try:
        book.record(URL, "deep", status="completed", result=result)
    finally:
        redact.release_all()
    rec = TaskBook(book.path).lookup(URL, "deep")  # a fresh reader
    assert rec is not None and rec["status"] == "completed"
    kept, levels = rec["result"], 0
    while isinstance(kept, list):  # compared level by level: `==` itself would recurse
        (kept,) = kept
        levels += 1
    assert (levels, kept) == (depth, {"leaf": "kept"})
    assert book.find("deep")


def test_find_many_is_find_for_each_id_in_one_read(book: TaskBook) -> None:
    book.record(URL, "abcd-1", status="working")
    book.record(URL, "abcd-2", status="working")
    book.record("https://example.com/mcp", "wxyz-9", status="working")
    ids = ["abcd-1", "wxyz", "abcd", "abc", "none-such", *[f"x{i}" for i in range(600)]]
    found = book.find_many(ids)
    for task_id in ids:
        assert sorted(h[:2] for h in found[task_id]) == sorted(h[:2] for h in book.find(task_id))
    assert [h[1] for h in found["wxyz"]] == ["wxyz-9"]
    assert TaskBook(book.path.parent / "none.db").find_many(["a"]) == {"a": []}


def test_the_sessions_of_an_endpoint_s_tasks_each_once_in_the_order_first_seen(
    book: TaskBook,
) -> None:
    """Where a session-bound server's tasks are listed (`list` reads nothing else of 100,000
    records): each session once, as the book first saw it; None for tasks recorded without
    one (the protocol's own session lists those); a row whose fields are damaged counts as
    one without; a session that is not text was never one; another endpoint's are not."""
    book.record_many(URL, {"a": {"status": "working", "session": "s2"}})
    book.record_many(URL, {"b": {"status": "working", "session": "s1"}, "c": {"status": "x"}})
    book.record_many(URL, {"d": {"status": "working", "session": "s2"}})
    book.record_many(URL, {"e": {"status": "working", "session": 7}})
    book.record_many(URL, {"g": {"status": "working", "session": {"id": "s4"}}})
    book.record_many("http://127.0.0.1:9000/mcp", {"f": {"status": "working", "session": "s3"}})
    assert book.sessions(URL) == ["s2", "s1", None]
    assert book.count(URL) == 6 and book.count("http://localhost:8000/mcp") == 6
    with sqlite3.connect(book.path) as conn:
        conn.execute("UPDATE tasks SET fields = '{not json' WHERE id = 'b'")
    assert book.sessions(URL) == ["s2", None]
    # the same endpoint spelled another way (a loopback name) is the same place
    assert book.sessions("http://localhost:8000/mcp") == ["s2", None]
    assert TaskBook(book.path.parent / "none.db").sessions(URL) == []


@pytest.mark.parametrize(
    "fields",
    [
        {"status": "working", "statusMessage": "half \udfff done"},
        {"status": "w\ud800rking"},
        {"statusMessage": "\ud83d"},
        {"status": "working", "note": "kept \ud801"},
    ],
)
def test_a_surrogate_in_any_field_of_an_ascii_task_is_written_as_replacement(
    book: TaskBook, fields: dict[str, str]
) -> None:
    """A task whose id is plain ASCII may still hold a lone surrogate in a column (status,
    message) or a kept field: the write makes it U+FFFD, never fails."""
    book.record_many("http://h/mcp", {"plain-id": fields})
    assert book.write_error is None
    rec = book.lookup("http://h/mcp", "plain-id")
    assert rec is not None
    shown = json.dumps(rec, ensure_ascii=False)
    assert "\ufffd" in shown
    shown.encode("utf-8")  # no surrogate left


def test_prefixes_are_found_by_the_set(book: TaskBook) -> None:
    book.record_many("http://h/mcp", {t: {"status": "working"} for t in ("abcd1", "abcd2", "xyz9")})
    book.record_many("http://other/mcp", {"abcd3": {"status": "working"}})
    found = book.find_prefixes("http://h/mcp", ["abcd", "xyz9", "none", "abcd2"])
    assert found == {"abcd": ["abcd1", "abcd2"], "xyz9": ["xyz9"], "none": [], "abcd2": ["abcd2"]}
    assert book.find_prefixes("http://unknown/mcp", ["abcd"]) == {"abcd": []}


def _nested(depth: int, leaf: object) -> object:
    value: object = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("secret", "kept"), [("ascii-tok3n-secret", True), ("sécret-tok3n", False), ('q"tok3n', False)]
)
def test_a_result_too_deep_to_walk_never_keeps_a_held_secret(
    book: TaskBook, secret: str, kept: bool
) -> None:
    """A result nested deeper than scrubbing walks is scrubbed as text: one whose held
    secrets show in JSON text as they are is kept without them; with a secret JSON would
    escape (non-ASCII, a quote), the result is not kept at all."""
    from mcptask.text import redact

    redact.release_all()
    try:
        redact.hold([secret])
        book.record_many(
            "http://h/mcp", {"t1": {"status": "completed", "result": _nested(1500, secret)}}
        )
        assert book.write_error is None
        book.close()
        with sqlite3.connect(book.path) as conn:
            rows = conn.execute("SELECT fields, result FROM tasks").fetchall()
        [(fields, result)] = rows
        stored = f"{fields} {result}"
        for form in (secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)):
            assert form.strip('"') not in stored
        assert (result is not None) is kept, fields
        if kept:
            assert redact.REDACTED in stored
    finally:
        redact.release_all()
