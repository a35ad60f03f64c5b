"""The task book's writer off the event loop: one thread, fed by a queue, with its own SQLite
connection (as datasette writes). A watch records what it sees every half second; on a book
another process holds locked, each write would wait its whole busy timeout where it was made:
polls, the live view and Ctrl-C with it. Here a change waits in memory instead, and is tried
again (in one transaction with those that came after it) until the lock is gone.

Bounds: at most MAX_PENDING changes wait (beyond, the oldest go, counted); each attempt waits
ATTEMPT_WAIT for the lock, then the thread sleeps up to RETRY_MAX; `finish` waits at most
`timeout` for what is left. Whatever could not be written by then is said once, by the book.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from mcptask.state import store

Change = Callable[[sqlite3.Connection], object]

#: changes that may wait for a busy book (a watch adds two a second at most)
MAX_PENDING = 10_000
#: milliseconds one attempt waits for another process's write lock
ATTEMPT_WAIT_MS = 250
#: the longest sleep between two attempts
RETRY_MAX = 1.0
#: SQLite's primary result codes for a lock held elsewhere: SQLITE_BUSY, SQLITE_LOCKED
_BUSY_CODES = (5, 6)


def is_busy(exc: BaseException) -> bool:
    """Another connection holds the lock (as opposed to a full disk or a read-only file)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in _BUSY_CODES


class Writer:
    """See the module docstring. `put` never blocks; `finish` ends the thread."""

    def __init__(
        self,
        path: Path,
        after: Callable[[sqlite3.Connection], None] | None = None,
        opener: Callable[[Path], sqlite3.Connection] = store.open_db,
    ) -> None:
        self.path = path
        #: run in each transaction after its changes (the book's age pruning)
        self._after = after
        self._open = opener
        self._pending: deque[Change] = deque()
        self._cond = threading.Condition()
        self._stop = False
        #: changes given up on (dropped past MAX_PENDING, or refused by the database)
        self.lost = 0
        #: why the last change could not be written, else None
        self.error: str | None = None
        #: `finish` was cut short by Ctrl-C
        self.interrupted = False
        self._thread = threading.Thread(target=self._run, name="mcptask-book-writer", daemon=True)
        self._thread.start()

    def put(self, change: Change) -> None:
        with self._cond:
            if len(self._pending) >= MAX_PENDING:
                self._pending.popleft()
                self.lost += 1
                self.error = f"more than {MAX_PENDING} changes waited for the book's lock"
            self._pending.append(change)
            self._cond.notify()

    def put_after(self, callback: Callable[[], None]) -> None:
        """Call `callback` (on the writer's thread) once every change put before it is
        committed, or given up on: what another reader of the book then reads includes them."""
        self.put(_After(callback))

    def finish(self, timeout: float) -> int:
        """Wait up to `timeout` seconds for what is pending (Ctrl-C ends the wait at once),
        then stop the thread; the changes not written (lost or still pending)."""
        deadline = time.monotonic() + timeout
        try:
            with self._cond:
                while self._pending and not self._stop:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(min(left, 0.05))
        except KeyboardInterrupt:
            self.interrupted = True
        finally:
            with self._cond:
                self._stop = True
                left_over = len(self._pending)
                self._pending.clear()
                self._cond.notify_all()
        self._thread.join(timeout=ATTEMPT_WAIT_MS / 1000 + 1)
        return self.lost + left_over

    # -- the thread -------------------------------------------------------------------------

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        pause = 0.05
        try:
            while True:
                with self._cond:
                    while not self._pending and not self._stop:
                        self._cond.wait()
                    if self._stop:
                        return
                    batch = list(self._pending)
                try:
                    if conn is None:
                        conn = self._open(self.path)
                        conn.execute(f"PRAGMA busy_timeout = {ATTEMPT_WAIT_MS}")
                    self._commit(conn, batch)
                except Exception as exc:  # a change that fails is counted, said
                    if isinstance(exc, sqlite3.Error) and is_busy(exc):
                        with self._cond:  # woken early by `finish`
                            if not self._stop:
                                self._cond.wait(pause)
                        pause = min(pause * 2, RETRY_MAX)
                        continue
                    if conn is None:  # the book cannot be opened at all: nothing will do
                        self._give_up(len(batch), exc)
                        continue
                    # one change the database refuses (a trigger, a full disk): the others
                    # are tried one by one, so one bad change does not take the batch along
                    done = 0
                    for change in batch:
                        try:
                            self._commit(conn, [change])
                        except Exception as one:
                            if isinstance(one, sqlite3.Error) and is_busy(one):
                                break
                            self.lost += 1
                            self.error = _why(one, self.path.parent)
                        done += 1
                    self._taken(done)
                    _call_after(batch[:done])
                    continue
                pause = 0.05
                self._taken(len(batch))
                _call_after(batch)
        finally:
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()

    def _commit(self, conn: sqlite3.Connection, batch: list[Change]) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for change in batch:
                change(conn)
            if self._after is not None:
                self._after(conn)
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _taken(self, n: int) -> None:
        with self._cond:
            for _ in range(min(n, len(self._pending))):
                self._pending.popleft()
            self._cond.notify_all()

    def _give_up(self, n: int, exc: BaseException) -> None:
        self.lost += n
        self.error = _why(exc, self.path.parent)
        with self._cond:
            given_up = list(self._pending)[:n]
        self._taken(n)
        _call_after(given_up)


class _After:
    """A change that changes nothing: its callback runs once the batch it is in is
    committed (`Writer.put_after`)."""

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback

    def __call__(self, conn: sqlite3.Connection) -> None:
        return None


def _call_after(batch: list[Change]) -> None:
    for change in batch:
        if isinstance(change, _After):
            with contextlib.suppress(Exception):  # a callback's failure is its own
                change.callback()


def _why(exc: BaseException, where: Path | None = None) -> str:
    if where is not None:
        with contextlib.suppress(OSError, AttributeError):
            if os.statvfs(where).f_bavail == 0:
                return "no space left on device (the disk is full)"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)
