"""The task book's storage: one SQLite database (the standard library's `sqlite3`) in the state
directory, mode 0600 (its `-wal` and `-shm` files too: SQLite gives them the database's mode),
WAL mode so that readers never wait for a writer, a busy timeout so that parallel mcptask
processes queue their writes instead of failing, a schema version (`PRAGMA user_version`) with
one migration per version.

A database SQLite calls damaged ("file is not a database", "malformed") is set aside, with a
one-line warning, as `tasks.db.corrupt-<time>`, and a fresh one begins: never silently
emptied. JSON held in the database (fields, results, event data) is text, read row by row: a
row that does not parse is skipped, the others stay."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcptask.state.files import check_dir, not_regular
from mcptask.text import jsonsafe

#: milliseconds a write waits for another process's write to finish (theirs take milliseconds);
#: a command waits so at most once: after one failed wait its later writes do not wait
#: (`TaskBook._write`), and a watch writes from a thread of its own (`state.writer`)
BUSY_TIMEOUT_MS = 15_000

#: the schema, one script per version: version N is reached by running MIGRATIONS[N - 1]
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS endpoints (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        place TEXT NOT NULL,
        fields TEXT NOT NULL DEFAULT '{}',
        created REAL NOT NULL,
        last_ok REAL,
        last_fail REAL
    );
    CREATE INDEX IF NOT EXISTS endpoints_place ON endpoints (place);
    CREATE TABLE IF NOT EXISTS tasks (
        endpoint INTEGER NOT NULL,
        id TEXT NOT NULL,
        status TEXT,
        message TEXT,
        first_seen TEXT,
        last_seen TEXT,
        seen REAL NOT NULL,
        fields TEXT NOT NULL DEFAULT '{}',
        result TEXT,
        result_size INTEGER,
        result_kept_at TEXT,
        PRIMARY KEY (endpoint, id)
    );
    CREATE INDEX IF NOT EXISTS tasks_id ON tasks (id);
    CREATE INDEX IF NOT EXISTS tasks_seen ON tasks (seen);
    CREATE TABLE IF NOT EXISTS events (
        n INTEGER PRIMARY KEY AUTOINCREMENT,
        endpoint INTEGER NOT NULL,
        task TEXT NOT NULL,
        at REAL NOT NULL,
        kind TEXT NOT NULL,
        via TEXT,
        status TEXT,
        message TEXT,
        command TEXT,
        data TEXT
    );
    CREATE INDEX IF NOT EXISTS events_task ON events (endpoint, task, n);
    CREATE INDEX IF NOT EXISTS events_at ON events (at);
    """,
    # 2: an event's time on the server's clock, where the server said when it happened
    """
    ALTER TABLE events ADD COLUMN server_at REAL;
    """,
)
VERSION = len(MIGRATIONS)


class Damaged(Exception):
    """The database is not one SQLite can read (set aside by `open_db`'s caller)."""


#: SQLite's primary result codes for a damaged file: SQLITE_CORRUPT, SQLITE_NOTADB
_DAMAGE_CODES = (11, 26)


def is_damage(exc: sqlite3.Error) -> bool:
    """A database that is not one (or is malformed), as opposed to a locked, read-only or
    missing one (`OperationalError`: a warning, the file left alone) or a row or rule that
    refuses a change (`IntegrityError`, say a trigger or constraint added by hand: that
    change fails, the book stays)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in _DAMAGE_CODES
    return type(exc) is sqlite3.DatabaseError


def open_db(path: Path) -> sqlite3.Connection:
    """The database at `path` (made, 0600 in a 0700 folder, when missing), migrated to
    VERSION. Raises OSError / sqlite3.Error; `Damaged` for a file that is not a database."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # a directory others may write to holds nothing of ours (they could swap the database)
    check_dir(path.parent)
    # made by us with mode 0600 before SQLite opens it: SQLite's own -wal and -shm files take
    # the database's mode. Never blocks (a FIFO), never follows a link, only a regular file
    flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link
            raise not_regular(path, os.lstat(path).st_mode) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(path, st.st_mode)
        if st.st_mode & 0o077:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                raise Damaged(str(exc)) from None
            raise
        if version == 0:
            # a new book gives back the space of what it drops (before any table is made)
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        # what is deleted is overwritten, not left in free pages (`forget` means it)
        conn.execute("PRAGMA secure_delete = ON")
        if version > VERSION:
            raise sqlite3.OperationalError(
                f"written by a newer mcptask (schema {version}, this one knows {VERSION})"
            )
        if version < VERSION:
            _migrate(conn, version)
    except sqlite3.DatabaseError as exc:
        conn.close()
        if is_damage(exc):
            raise Damaged(str(exc)) from None
        raise
    except BaseException:
        conn.close()
        raise
    return conn


def lenient_text(data: bytes) -> str:
    """A `text_factory` for a book that holds text that is not UTF-8 (written by another
    tool): read with U+FFFD instead of failing. Not the default (a Python call per value):
    a read that failed is tried once more with it (`TaskBook._read`)."""
    return data.decode("utf-8", "replace")


def open_readonly(path: Path) -> sqlite3.Connection:
    """The database at `path` for reading only: what a read-only state directory (or file)
    still allows, WAL and all (SQLite cannot make the `-shm` file there: `immutable`, the
    book read as it is). Raises sqlite3.Error when even that fails."""
    from urllib.parse import quote

    uri = f"file:{quote(str(path))}?mode=ro"
    for extra in ("", "&immutable=1"):
        conn = sqlite3.connect(uri + extra, uri=True, isolation_level=None)
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        except sqlite3.OperationalError:
            conn.close()
            if extra:
                raise
            continue
        if version != VERSION:
            conn.close()
            raise sqlite3.OperationalError(f"schema {version} (this mcptask reads {VERSION})")
        return conn
    raise sqlite3.OperationalError("cannot open the task book read-only")


def _migrate(conn: sqlite3.Connection, version: int) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        # another process may have migrated meanwhile
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        for n in range(version, VERSION):
            for statement in MIGRATIONS[n].split(";"):
                if statement.strip() and not _done(conn, statement):
                    conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise


def _done(conn: sqlite3.Connection, statement: str) -> bool:
    """An `ALTER TABLE t ADD COLUMN c` whose column is there already (a migration another
    process made while this one looked): nothing to do."""
    words = statement.split()
    if [w.upper() for w in words[:2]] != ["ALTER", "TABLE"] or len(words) < 6:
        return False
    table, column = words[2], words[5]
    return any(row[1] == column for row in conn.execute(f"PRAGMA table_info({table})"))


def give_back(conn: sqlite3.Connection) -> None:
    """Free pages returned to the file system (a book with `auto_vacuum = INCREMENTAL`; a
    no-op otherwise). Outside a transaction: `executescript` steps the pragma to its end (one
    `execute` frees a single page) and commits whatever is pending first."""
    conn.executescript("PRAGMA incremental_vacuum;")


def shrink(conn: sqlite3.Connection) -> None:
    """The WAL copied into the database and truncated to nothing (`TRUNCATE` checkpoint: its
    older frames keep whatever was deleted since the last one). Waits for readers up to the
    busy timeout; `sqlite3.OperationalError` when one still holds an old snapshot."""
    busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        raise sqlite3.OperationalError("another process is reading the task book")


def compact(conn: sqlite3.Connection) -> None:
    """A book made before `auto_vacuum` converted, by one `VACUUM` (rewrites the file at
    its smallest); then its free pages given back at every prune."""
    if int(conn.execute("PRAGMA auto_vacuum").fetchone()[0]) != 2:
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("VACUUM")
    else:
        give_back(conn)


def set_aside(path: Path) -> Path:
    """Move a damaged database (and its -wal and -shm files) aside; returns the new name."""
    aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
    os.replace(path, aside)
    for tail in ("-wal", "-shm"):
        with contextlib.suppress(OSError):
            os.replace(path.with_name(path.name + tail), aside.with_name(aside.name + tail))
    return aside


# -- JSON as text, whatever its depth ----------------------------------------------------------

#: the recursion limit while encoding or decoding a deeply nested value (a result ~1,000 deep)
DEEP_LIMIT = 20_000


def _deep(fn: Callable[[], Any]) -> Any:
    """Run `fn` (json's C encoder or decoder) with room to recurse: results nested near
    Python's recursion limit are stored and read back like any other."""
    try:
        return fn()
    except RecursionError:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, DEEP_LIMIT))
        try:
            return fn()
        finally:
            sys.setrecursionlimit(old)


#: `json.dumps(value, separators=(",", ":"))`, its encoder made once (`json.dumps` with an
#: option makes one per call: a third of the time of a small value)
_ENCODE = jsonsafe.encoder(separators=(",", ":"))


def dumps(value: Any) -> str:
    try:
        return _ENCODE(value)
    except RecursionError:
        text: str = _deep(lambda: _ENCODE(value))
        return text


def loads(text: object, default: Any = None) -> Any:
    """A stored JSON text; `default` for NULL or a text that does not parse (one bad row: a
    blob or a number where text belongs, too). Lone surrogates come out as U+FFFD."""
    if not isinstance(text, str):
        return default
    try:
        return jsonsafe.parsed_safe(text, _deep(lambda: json.loads(text)))
    except (ValueError, RecursionError):
        return default
