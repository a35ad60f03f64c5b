"""The task book's writer thread (state/writer.py): changes wait for a locked book and are
written once it is free, a refused change does not take the others with it, the memory bound
holds, and what was not written is counted."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mcptask.state import writer as writer_mod
from mcptask.state.taskbook import TaskBook
from mcptask.state.writer import Writer

URL = "http://127.0.0.1:9/mcp"


@pytest.fixture
def book(tmp_path: Path) -> TaskBook:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    b = TaskBook(state / "tasks.db")
    b.record(URL, "t0", status="working")  # the book exists
    return b


def test_changes_wait_for_a_locked_book_and_are_written_after(book: TaskBook) -> None:
    other = sqlite3.connect(book.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    book.write_in_background()
    for n in range(20):
        book.record(URL, "t1", status="working", statusMessage=f"step {n}")  # never blocks
    other.execute("COMMIT")
    other.close()
    book.finish_writes(30)
    assert book.write_error is None
    messages = [e.get("message") for e in book.events(URL, "t1")]
    assert messages == [f"step {n}" for n in range(20)]


def test_after_writes_runs_once_what_came_before_is_readable(book: TaskBook) -> None:
    """`watch --otlp` hands a task to the exporter once its end is in the book: a reader on
    another connection then reads it, even when the book was locked meanwhile."""
    import threading

    other = sqlite3.connect(book.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    book.write_in_background()
    book.record(URL, "t1", status="completed", statusMessage="done")
    seen: list[str | None] = []
    done = threading.Event()

    def read() -> None:
        fresh = TaskBook(book.path)
        rec = fresh.lookup(URL, "t1")
        seen.append(rec.get("status") if rec else None)
        fresh.close()
        done.set()

    book.after_writes(read)
    assert not done.is_set()  # the book is locked: nothing written, nothing called
    other.execute("COMMIT")
    other.close()
    assert done.wait(30)
    assert seen == ["completed"]
    book.finish_writes(30)
    # without a writer thread: at once
    called: list[bool] = []
    book.after_writes(lambda: called.append(True))
    assert called == [True]


def test_a_book_locked_to_the_end_is_said_once(book: TaskBook) -> None:
    said: list[str] = []
    book._warn = said.append
    other = sqlite3.connect(book.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        book.write_in_background()
        for n in range(5):
            book.record(URL, "t1", status="working", statusMessage=f"step {n}")
        book.finish_writes(0.5)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert len(said) == 1 and "5 change(s)" in said[0] and "write lock" in said[0], said


def test_a_refused_change_does_not_take_the_batch_with_it(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (x INTEGER CHECK (x >= 0))")
    conn.commit()
    conn.close()

    def opener(path: Path) -> sqlite3.Connection:
        return sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    w = Writer(db, opener=opener)
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # so that the three go in one batch
    for x in (1, -1, 2):
        w.put(lambda c, x=x: c.execute("INSERT INTO t VALUES (?)", (x,)))
    other.execute("COMMIT")
    assert w.finish(30) == 1
    assert w.error is not None and "CHECK" in w.error
    rows = sorted(x for (x,) in other.execute("SELECT x FROM t"))
    assert rows == [1, 2]


def test_at_most_max_pending_changes_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer_mod, "MAX_PENDING", 3)
    db = tmp_path / "w.db"
    sqlite3.connect(db).close()
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        w = Writer(db, opener=lambda p: sqlite3.connect(p, isolation_level=None))
        for _ in range(10):
            w.put(lambda c: None)
        assert w.lost == 7
        assert w.finish(0.3) == 10  # 7 dropped, 3 still waiting for the lock
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_a_change_tried_again_writes_what_it_wrote_the_first_time(book: TaskBook) -> None:
    """A batch that one change spoils is rolled back and tried again one change at a time:
    a task's record (status, message, their event) must come out whole the second time."""
    other = sqlite3.connect(book.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # so that both changes go in one batch
    book.write_in_background()
    book.record(URL, "t0", status="completed", statusMessage="done", _via="poll")
    assert book._writer is not None

    def refused(conn: sqlite3.Connection) -> None:
        raise sqlite3.IntegrityError("refused")

    book._writer.put(refused)
    other.execute("COMMIT")
    other.close()
    book.finish_writes(30)
    rec = book.lookup(URL, "t0")
    assert rec is not None
    assert (rec["status"], rec["statusMessage"]) == ("completed", "done")
    changes = [(e["kind"], e.get("status")) for e in book.events(URL, "t0")]
    assert changes[-1] == ("status", "completed"), changes
