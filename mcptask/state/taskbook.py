"""The task book: every task this machine created or saw, with what is needed to reach it again
(protocol, MCP session, A2A context), its last known state and result, and an append-only log of
everything mcptask observed about it (`model.events`). Never a secret: every secret the process
holds is scrubbed from what is recorded (`redact.scrub`).

One SQLite database in the state directory (`tasks.db`, `state.store`): tables for endpoints,
tasks and events, indexed by task id (look-ups, prefixes and completion take the same time
with 100,000 tasks as with 10). Parallel mcptask processes write in turn (WAL, busy timeout);
each change is one transaction. A `tasks.json` of an older mcptask is imported once and kept
as `tasks.json.bak`.

Retention (documented in README): tasks not seen for MCPTASK_BOOK_DAYS days (default 30) are
dropped with their events; results larger than 1 MiB are not kept; at most 16 MiB of results
in all (oldest dropped first); at most `events.MAX_EVENTS_PER_TASK` events per task.

Size: every text a server sends that is stored beside a task or in an event (a status, a
status message, an event's message and data) is cut at the one write (`_bounded_row`,
`_bounded_fields`): `events.MAX_TEXT` characters of a status or message, MAX_EVENT_DATA of an
event's data. A server that changes a 1 MB message on every poll grows the book by at most
that much per event, and a task by at most MAX_EVENTS_PER_TASK events. The space of what is
dropped is given back to the file system (`auto_vacuum = INCREMENTAL`; an older book is
converted by `prune`'s `VACUUM`), and what `forget` drops is overwritten (`secure_delete`)
and leaves no copy in the WAL (a `TRUNCATE` checkpoint after it).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from mcptask.model import events as ev
from mcptask.model.events import EventKind
from mcptask.state import store
from mcptask.state.endpoints import endpoint_key, same_place
from mcptask.state.files import now_iso, read_regular, state_dir
from mcptask.state.writer import Writer, is_busy
from mcptask.text import jsonsafe, redact

VERSION = store.VERSION
MAX_RESULT_BYTES = 1024 * 1024
MAX_RESULTS_BYTES = 16 * 1024 * 1024
#: days a task is kept after it was last seen (MCPTASK_BOOK_DAYS)
KEEP_DAYS = 30.0
#: seconds between two age prunings (done by a write)
PRUNE_EVERY = 3600.0
#: the shortest id prefix that stands for a task id (as git's short hashes)
MIN_PREFIX = 4
#: tool names kept per endpoint for completion
MAX_TOOLS_KEPT = 500
#: completion candidates offered at most
MAX_COMPLETIONS = 50
#: ids beginning with a typed prefix that completion sorts itself; more are walked by recency
COMPLETION_SCAN = 2000

#: characters of an event's data (JSON text) kept; larger data is replaced by what it was
MAX_EVENT_DATA = 8192

#: pseudo-fields of `record_many`'s updates: how the state came (poll, push, listed) and when
VIA = "_via"
AT = "_at"
#: the messages of a task's own history (A2A) as seen, [(id, role, text)]: those the book has
#: not seen yet are `history` events
TURNS = "_turns"
#: message ids of a task's history kept to tell new ones
TURNS_KEPT = 200

Record = dict[str, Any]
T = TypeVar("T")

#: fields of a legacy record that readers use as text: anything else there means damage
_TEXT_FIELDS = ("status", "protocol", "session", "contextId", "firstSeenAt", "lastSeenAt")


def keep_days() -> float:
    """MCPTASK_BOOK_DAYS (a positive number of days), else KEEP_DAYS."""
    raw = os.environ.get("MCPTASK_BOOK_DAYS", "").strip()
    try:
        days = float(raw)
    except ValueError:
        return KEEP_DAYS
    return days if 0 < days < 1e6 else KEEP_DAYS


#: the largest `tasks.json` of an older mcptask imported (it capped itself well below this)
LEGACY_MAX_BYTES = 1024 * 1024 * 1024


class TaskBook:
    def __init__(self, path: Path | None = None, warn: Callable[[str], None] | None = None):
        path = path or state_dir() / "tasks.db"
        if path.suffix == ".json":  # the old book's name: the database beside it
            path = path.with_suffix(".db")
        self.path = path
        #: the JSON book of mcptask before 0.x: imported once, then kept as `.bak`
        self.legacy = path.with_suffix(".json")
        self._warn = warn or (lambda _msg: None)
        #: why the last change could not be written (a read-only or full disk), else None:
        #: callers then say how to reach what was not recorded
        self.write_error: str | None = None
        self._conn: sqlite3.Connection | None = None
        self._read_warned = False
        #: why the read that was said failed
        self._read_why: str | None = None
        #: the last write's age pruning dropped something (its space is given back after)
        self._pruned = False
        #: a write found the book locked by another process for its whole busy timeout: the
        #: run's later writes do not wait again (one failed lock ends the attempts)
        self._gave_up_waiting = False
        #: a failed write was said (once per run: a full disk is one line, not one a poll)
        self._write_warned = False
        #: `write_in_background`'s thread, while a watch runs
        self._writer: Writer | None = None
        #: opened for reading only (a read-only state directory): every write fails, said once
        self.read_only = False

    # -- storage ------------------------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                conn = store.open_db(self.path)
            except store.Damaged:
                aside = store.set_aside(self.path)
                self._warn(f"the task book {self.path} was corrupt; set aside as {aside.name}")
                conn = store.open_db(self.path)
            except (sqlite3.OperationalError, PermissionError):
                if not self._unwritable():
                    raise
                # a read-only state directory (or book): what is there can still be read
                conn = store.open_readonly(self.path)
                self.read_only = True
            self._conn = conn
            if self.legacy.exists() or self.legacy.is_symlink():
                self._import_legacy(conn)
        return self._conn

    def _unwritable(self) -> bool:
        """The book exists but this process may not write it or its directory."""
        return self.path.is_file() and not (
            os.access(self.path.parent, os.W_OK) and os.access(self.path, os.W_OK)
        )

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None

    def exists(self) -> bool:
        return self.path.exists() or self.legacy.exists()

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        conn = self._db()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _damaged(self, exc: sqlite3.Error) -> None:
        """SQLite found the database damaged mid-way: set it aside (once), start afresh."""
        self.close()
        with contextlib.suppress(OSError):
            aside = store.set_aside(self.path)
            self._warn(f"the task book {self.path} was corrupt ({exc}); set aside as {aside.name}")

    def _read(self, fn: Callable[[sqlite3.Connection], T], default: T) -> T:
        if self._conn is None and not self.exists():
            return default  # nothing recorded yet: no file is made by a look-up
        for attempt in (1, 2):
            try:
                return fn(self._db())
            except sqlite3.Error as exc:
                if store.is_damage(exc) and attempt == 1:
                    self._damaged(exc)
                    continue
                conn = self._conn
                if attempt == 1 and conn is not None and conn.text_factory is str:
                    # text that is not UTF-8 (edited by hand): once more, read leniently
                    conn.text_factory = store.lenient_text
                    continue
                self._read_failed(self._why_sqlite(exc))
            except OSError as exc:
                self._read_failed(self._why(exc))
            break
        return default

    def _read_failed(self, why: str) -> None:
        if not self._read_warned and not self._write_warned:
            self._read_warned = True
            self._read_why = why
            self._warn(f"cannot read the task book {self.path}: {why}")

    def _why_sqlite(self, exc: sqlite3.Error) -> str:
        """A failed read or write in words: a full disk says so (SQLite may call it only
        `disk I/O error`, when the `-shm` file cannot grow)."""
        try:
            full = os.statvfs(self.path.parent).f_bavail == 0
        except (OSError, AttributeError):
            full = False
        return "no space left on device (the disk is full)" if full else str(exc)

    def write_in_background(self) -> None:
        """From now on, the changes that return nothing (`record_many`, `add_events`,
        `set_endpoint`, `contact`) are written by one thread of their own (`state.writer`):
        a book locked by another process delays them, never the caller (a watch's polls, its
        view, Ctrl-C). `finish_writes` ends it."""
        if self._writer is None:
            self._writer = Writer(self.path, after=self._maybe_prune)

    def after_writes(self, callback: Callable[[], None]) -> None:
        """Call `callback` once what was written so far is in the book for any reader: at once
        without a background writer, else on its thread after its commit."""
        if self._writer is not None:
            self._writer.put_after(callback)
        else:
            callback()

    def finish_writes(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for the background writer's changes, then stop it;
        what could not be written is said in one line."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        unwritten = writer.finish(timeout)
        if unwritten:
            why = writer.error or (
                "interrupted while another process held its write lock"
                if writer.interrupted
                else "another process held its write lock"
            )
            self.write_error = why
            if why != self._read_why:  # else said already, when a read failed so
                self._warn(
                    f"{unwritten} change(s) this run saw could not be written to the task "
                    f"book {self.path}: {why}"
                )
        if writer.interrupted:
            raise KeyboardInterrupt

    def _write(
        self, change: Callable[[sqlite3.Connection], T], default: T, *, later: bool = False
    ) -> T:
        if later and self._writer is not None and not self.read_only:
            self._writer.put(change)
            return default
        for attempt in (1, 2):
            try:
                with self._tx() as conn:
                    out = change(conn)
                    self._maybe_prune(conn)
            except sqlite3.Error as exc:
                if store.is_damage(exc) and attempt == 1:
                    self._damaged(exc)
                    continue
                self.write_error = (
                    f"{self.path.parent} is read-only" if self.read_only else self._why_sqlite(exc)
                )
                if is_busy(exc) and not self._gave_up_waiting and self._conn is not None:
                    self._gave_up_waiting = True
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("PRAGMA busy_timeout = 0")
            except OSError as exc:
                self.write_error = self._why(exc)
            else:
                self.write_error = None
                if self._pruned:  # the age limit dropped tasks: their space given back
                    self._pruned = False
                    with contextlib.suppress(sqlite3.Error):
                        store.give_back(self._db())
                return out
            # said once a run: a full disk is one line, not one a poll (nor a second line
            # when a read failed for the same reason)
            if not self._write_warned and self.write_error != self._read_why:
                self._warn(f"cannot write the task book {self.path}: {self.write_error}")
            self._write_warned = True
            break
        return default

    def _why(self, exc: OSError) -> str:
        """A failed write in words; a state directory that names a file says so."""
        parent = self.path.parent
        for d in (parent, *parent.parents):
            if d.exists():
                if not d.is_dir():
                    return f"{d} is a file, not a directory (MCPTASK_STATE_DIR?)"
                break
        return exc.strerror or str(exc)

    # -- the old JSON book --------------------------------------------------------------------

    def _import_legacy(self, conn: sqlite3.Connection) -> None:
        """Bring an older mcptask's `tasks.json` in, once: kept as `tasks.json.bak` after; a
        damaged one is set aside as before (`tasks.json.corrupt-<time>`)."""
        try:
            # never blocks on a FIFO, never reads a device: a regular file of a sane size
            raw = read_regular(self.legacy, LEGACY_MAX_BYTES)
        except OSError as exc:
            self._read_failed(f"{self.legacy.name}: {exc.strerror or exc}")
            return
        data = _legacy_data(raw)
        if data is None:
            aside = self.legacy.with_name(f"{self.legacy.name}.corrupt-{int(time.time())}")
            with contextlib.suppress(OSError):
                os.replace(self.legacy, aside)
            self._warn(f"the task book {self.legacy} was corrupt; set aside as {aside.name}")
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if self.legacy.exists():  # another process may have imported it meanwhile
                    _import(conn, data)
                    os.replace(self.legacy, self.legacy.with_name(self.legacy.name + ".bak"))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except (OSError, sqlite3.Error) as exc:
            self._warn(f"cannot import {self.legacy}: {exc}")

    # -- queries ------------------------------------------------------------------------------

    def endpoint(self, url: str) -> Record:
        """The endpoint's fields (protocol, postTo, sessions, tools...): its own key first,
        else one of its other spellings."""

        def q(conn: sqlite3.Connection) -> Record:
            rows = _endpoint_rows(conn, url)
            return _fields(rows[0][2]) if rows else {}

        return self._read(q, {})

    def tasks(self, url: str) -> dict[str, Record]:
        """The endpoint's tasks, under every spelling of it (its own key wins)."""

        def q(conn: sqlite3.Connection) -> dict[str, Record]:
            merged: dict[str, Record] = {}
            for eid, _key, _f in reversed(_endpoint_rows(conn, url)):
                for row in conn.execute(
                    f"SELECT {_TASK_COLS} FROM tasks WHERE endpoint = ?", (eid,)
                ):
                    if isinstance(row[0], str):  # an id that is not text: a row edited by hand
                        merged[row[0]] = _record(row)
            return merged

        return self._read(q, {})

    def lookup_many(self, url: str, task_ids: Iterable[str]) -> dict[str, Record]:
        """Records of some of the endpoint's tasks (by index: one query per id)."""
        ids = list(dict.fromkeys(task_ids))

        def q(conn: sqlite3.Connection) -> dict[str, Record]:
            out: dict[str, Record] = {}
            rows = _endpoint_rows(conn, url)
            for eid, _key, _f in rows:
                for task_id in ids:
                    if task_id in out:
                        continue
                    row = conn.execute(
                        f"SELECT {_TASK_COLS} FROM tasks WHERE endpoint = ? AND id = ?",
                        (eid, task_id),
                    ).fetchone()
                    if row is not None:
                        out[task_id] = _record(row)
            return out

        return self._read(q, {}) if ids else {}

    def refs_many(self, url: str, task_ids: Iterable[str] | None = None) -> dict[str, Record]:
        """What reaches some of the endpoint's tasks again, by the set: for each id the book
        knows, its `status` and the fields a reference takes (`REF_FIELDS`), under every
        spelling of the endpoint (its own key wins). One query per batch of `BATCH` ids;
        None: every task of the endpoint, one query. Nothing else of a row is parsed (its
        result is not read)."""
        ids = None if task_ids is None else list(dict.fromkeys(task_ids))

        def q(conn: sqlite3.Connection) -> dict[str, Record]:
            out: dict[str, Record] = {}
            for eid, _key, _f in reversed(_endpoint_rows(conn, url)):
                for tid, status, fields in _ref_rows(conn, eid, ids):
                    out[tid] = _ref_record(status, fields)
            return out

        return self._read(q, {}) if ids is None or ids else {}

    def count(self, url: str) -> int:
        """How many tasks of the endpoint the book holds (under every spelling)."""

        def q(conn: sqlite3.Connection) -> int:
            return sum(
                int(
                    conn.execute(
                        "SELECT COUNT(*) FROM tasks WHERE endpoint = ?", (eid,)
                    ).fetchone()[0]
                )
                for eid, _key, _f in _endpoint_rows(conn, url)
            )

        return self._read(q, 0)

    def sessions(self, url: str) -> list[str | None]:
        """The sessions the endpoint's tasks were recorded in (their `session`; None for tasks
        recorded without one), each once, in the order the book first saw them: where a
        session-bound server lists them. One scan by SQLite's JSON functions: no row is
        parsed here (`list` of 100,000 tasks read every record for this)."""

        def q(conn: sqlite3.Connection) -> list[str | None]:
            out: dict[str | None, None] = {}
            for eid, _key, _f in reversed(_endpoint_rows(conn, url)):
                try:
                    rows = conn.execute(
                        "SELECT CASE WHEN json_valid(fields)"
                        " AND json_type(fields, '$.session') = 'text'"
                        " THEN json_extract(fields, '$.session') END AS s FROM tasks"
                        " WHERE endpoint = ? GROUP BY s ORDER BY MIN(rowid)",
                        (eid,),
                    ).fetchall()
                except sqlite3.OperationalError:  # an SQLite built without its JSON functions
                    every = _ref_rows(conn, eid, None)
                    rows = [(_quick_fields(f).get("session"),) for *_, f in every]
                # (a session that is not text was never one: as a reference reads it)
                out.update((s if isinstance(s, str) else None, None) for (s,) in rows)
            return list(out)

        return self._read(q, [])

    def lookup(self, url: str, task_id: str) -> Record | None:
        return self.lookup_many(url, [task_id]).get(task_id)

    def unfinished(self, url: str) -> dict[str, Record]:
        """The endpoint's tasks last seen unfinished."""
        from mcptask.model.status import TERMINAL

        return {t: r for t, r in self.tasks(url).items() if str(r.get("status")) not in TERMINAL}

    def find(self, task_id: str) -> list[tuple[str, str, Record]]:
        """(endpoint, task id, record) for every endpoint that knows `task_id`; when none
        does, for every task whose id starts with it (a prefix of at least MIN_PREFIX
        characters). Endpoints that are one place (`same_place`) count once."""

        def q(conn: sqlite3.Connection) -> list[tuple[str, str, Record]]:
            exact = _hits(conn, "t.id = ?", (task_id,))
            if exact or len(task_id) < MIN_PREFIX:
                return exact
            return _hits(conn, *_prefix(task_id))

        return self._read(q, [])

    def find_many(self, task_ids: Iterable[str]) -> dict[str, list[tuple[str, str, Record]]]:
        """`find` for many ids in one read (a watch of 1,000 ids named without a target)."""
        ids = list(dict.fromkeys(task_ids))

        def q(conn: sqlite3.Connection) -> dict[str, list[tuple[str, str, Record]]]:
            out: dict[str, list[tuple[str, str, Record]]] = {t: [] for t in ids}
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for hit in _hits(conn, f"t.id IN ({marks})", tuple(chunk)):
                    out[hit[1]].append(hit)
            for task_id, hits in out.items():
                if not hits and len(task_id) >= MIN_PREFIX:
                    out[task_id] = _hits(conn, *_prefix(task_id))
            return out

        return self._read(q, {t: [] for t in ids})

    def find_prefixes(self, url: str, prefixes: list[str]) -> dict[str, list[str]]:
        """The endpoint's task ids that begin with each prefix (by index), in one read (a
        watch of 1,000 ids the book does not know asks for all of them)."""
        none: dict[str, list[str]] = {p: [] for p in prefixes}

        def q(conn: sqlite3.Connection) -> dict[str, list[str]]:
            ids = [r[0] for r in _endpoint_rows(conn, url)]
            if not ids:
                return none
            marks = ",".join("?" * len(ids))
            out: dict[str, list[str]] = {}
            for prefix in prefixes:
                where, args = _prefix(prefix)
                out[prefix] = sorted(
                    {
                        tid
                        for (tid,) in conn.execute(
                            f"SELECT t.id FROM tasks t WHERE {where} AND t.endpoint IN ({marks})",
                            (*args, *ids),
                        )
                        if isinstance(tid, str)
                    }
                )
            return out

        return self._read(q, none)

    def all_endpoints(self) -> dict[str, Record]:
        """Every endpoint's fields with its tasks (`tasks`): the whole book."""

        def q(conn: sqlite3.Connection) -> dict[str, Record]:
            out: dict[str, Record] = {}
            names: dict[int, str] = {}
            for eid, key, fields in conn.execute(
                "SELECT id, key, fields FROM endpoints ORDER BY id"
            ):
                if isinstance(key, str):
                    out[key] = {**_fields(fields), "tasks": {}}
                    names[eid] = key
            for row in conn.execute(f"SELECT endpoint, {_TASK_COLS} FROM tasks ORDER BY rowid"):
                key = names.get(row[0])
                if key is not None and isinstance(row[1], str):
                    out[key]["tasks"][row[1]] = _record(row[1:])
            return out

        return self._read(q, {})

    def endpoint_keys(self) -> list[str]:
        return self._read(
            lambda c: [
                k
                for (k,) in c.execute("SELECT key FROM endpoints ORDER BY id")
                if isinstance(k, str)
            ],
            [],
        )

    def summary(self) -> list[Record]:
        """Each endpoint: key, protocol, tasks, unfinished tasks, events, first recorded,
        last contact (an answer), last failure (seconds since the epoch)."""
        from mcptask.model.status import TERMINAL

        done = ",".join(f"'{s}'" for s in sorted(TERMINAL))

        def q(conn: sqlite3.Connection) -> list[Record]:
            out = []
            for eid, key, fields, created, ok, fail in conn.execute(
                "SELECT id, key, fields, created, last_ok, last_fail FROM endpoints ORDER BY id"
            ):
                if not isinstance(key, str):
                    continue  # a row edited by hand: skipped
                n, open_, seen = conn.execute(
                    "SELECT COUNT(*), SUM(CASE WHEN status IN (" + done + ") THEN 0 ELSE 1 END),"
                    " MAX(seen) FROM tasks WHERE endpoint = ?",
                    (eid,),
                ).fetchone()
                (n_events,) = conn.execute(
                    "SELECT COUNT(*) FROM events WHERE endpoint = ?", (eid,)
                ).fetchone()
                f = _fields(fields)
                protocol = f.get("protocol")
                out.append(
                    {
                        "endpoint": key,
                        "kind": "stdio" if key.startswith("stdio:") else "http",
                        "protocol": protocol if isinstance(protocol, str) else None,
                        "tasks": int(n or 0),
                        "unfinished": int(open_ or 0),
                        "events": int(n_events or 0),
                        "firstRecorded": _number(created),
                        "lastSeen": _number(seen),
                        "lastContact": _number(ok),
                        "lastFailure": _number(fail),
                    }
                )
            return out

        return self._read(q, [])

    def events(self, url: str, task_id: str, after: int = 0) -> list[Record]:
        """The task's events recorded after event number `after`, oldest first (by when they
        were seen: a watch writes what it saw in batches)."""

        def q(conn: sqlite3.Connection) -> list[Record]:
            out = []
            for eid, key, _f in _endpoint_rows(conn, url):
                for row in conn.execute(
                    "SELECT n, at, kind, via, status, message, command, data, server_at "
                    "FROM events WHERE endpoint = ? AND task = ? AND n > ? ORDER BY n",
                    (eid, task_id, after),
                ):
                    rec = _event(row, key)
                    if rec is not None:  # a row edited by hand (no time, no kind): skipped
                        out.append(rec)
            out.sort(key=lambda r: (r["at"], r["n"]))  # a batch's events, each when it was seen
            # (`log` orders them by when they happened: `commands._history.timeline`)
            return out

        return self._read(q, [])

    def story(
        self, url: str, task_id: str, skew: float = 0.0, page: int = 1000
    ) -> tuple[float | None, float, Iterator[list[Record]]]:
        """A task's events in the order they happened, read a page at a time (a history of
        any length streams): its creation first, then each at the server's time less the skew
        where the server gave one, else when mcptask saw it. Returns (the earliest of those
        times, the skew used, the pages); (None, `skew`, no page) when the book has none.

        The skew used is `skew` (measured from `Date` headers, to a second or so) raised where
        the events prove it larger: nothing is seen before it happens, so the server's clock
        is at least `server_at - at` ahead of this machine's for every event. A skew off by
        less than a second would else put a change after the look that saw it."""

        def first(conn: sqlite3.Connection) -> tuple[float | None, float, list[int], str]:
            rows = _endpoint_rows(conn, url)
            ids = [r[0] for r in rows]
            if not ids:
                return None, skew, [], ""
            marks = ",".join("?" * len(ids))
            (ahead,) = conn.execute(
                f"SELECT MAX(server_at - at) FROM events WHERE endpoint IN ({marks}) AND task = ?",
                (*ids, task_id),
            ).fetchone()
            used = max(skew, float(ahead)) if isinstance(ahead, int | float) else skew
            (start,) = conn.execute(
                f"SELECT MIN(COALESCE(MIN(server_at - ?, at), at)) FROM events"
                f" WHERE endpoint IN ({marks}) AND task = ?",
                (used, *ids, task_id),
            ).fetchone()
            return (float(start) if start is not None else None), used, ids, rows[0][1]

        nothing: tuple[float | None, float, list[int], str] = (None, skew, [], "")
        start, used, ids, key = self._read(first, nothing)
        if start is None:
            return None, skew, iter(())
        return start, used, self._pages(ids, key, task_id, used, page)

    def _pages(
        self, ids: list[int], key: str, task_id: str, skew: float, page: int
    ) -> Iterator[list[Record]]:
        marks = ",".join("?" * len(ids))
        try:
            cursor = self._db().execute(
                "SELECT n, at, kind, via, status, message, command, data, server_at FROM events "
                f"WHERE endpoint IN ({marks}) AND task = ? "
                "ORDER BY kind != 'created', COALESCE(MIN(server_at - ?, at), at), n",
                (*ids, task_id, skew),
            )
            while rows := cursor.fetchmany(page):
                yield [e for e in (_event(row, key) for row in rows) if e is not None]
        except sqlite3.Error as exc:
            self._read_failed(str(exc))

    def exportable(
        self, url: str | None = None, since: float | None = None, page: int = 500
    ) -> Iterator[list[tuple[str, str, Record, float]]]:
        """Tasks to export, a page at a time (a book of any size streams): (endpoint key, task
        id, record, the endpoint's kept clock skew), every endpoint's or `url`'s, those seen
        since `since` (seconds since the epoch) when given, most recently seen last."""
        try:
            conn = self._db()
            where: list[str] = ["1"]
            args: list[Any] = []
            if url is not None:
                ids = [r[0] for r in _endpoint_rows(conn, url)]
                if not ids:
                    return
                where.append(f"t.endpoint IN ({','.join('?' * len(ids))})")
                args += ids
            if since is not None:
                where.append("t.seen >= ?")
                args.append(since)
            cols = ", ".join("t." + c.strip() for c in _TASK_COLS.split(","))
            cursor = conn.execute(
                f"SELECT e.key, e.fields, {cols}"
                f" FROM tasks t JOIN endpoints e ON e.id = t.endpoint WHERE {' AND '.join(where)}"
                " ORDER BY t.seen",
                args,
            )
            while rows := cursor.fetchmany(page):
                out = []
                for key, efields, *row in rows:
                    if not isinstance(key, str) or not isinstance(row[0], str):
                        continue  # a row edited by hand
                    skew = _number(_fields(efields).get("clockSkew")) or 0.0
                    out.append((key, row[0], _record(tuple(row)), skew))
                yield out
        except sqlite3.Error as exc:
            self._read_failed(str(exc))

    def mark_exported(self, url: str, through: dict[str, int]) -> None:
        """Keep with each task the last event `export` sent of it (`exportedThrough`): a later
        export skips a story it has sent whole."""
        if not through:
            return

        def change(conn: sqlite3.Connection) -> None:
            ids = [r[0] for r in _endpoint_rows(conn, url)]
            for task_id, n in through.items():
                for eid in ids:
                    conn.execute(
                        "UPDATE tasks SET fields = json_set(fields, '$.exportedThrough', ?)"
                        " WHERE endpoint = ? AND id = ? AND json_valid(fields)",
                        (n, eid, task_id),
                    )

        self._write(change, None)

    def complete(
        self,
        prefix: str,
        url: str | None = None,
        exclude: Iterable[str] = (),
        limit: int = MAX_COMPLETIONS,
    ) -> list[tuple[str, str, str]]:
        """(task id, status, endpoint) of the tasks whose id begins with `prefix` (on `url`'s
        endpoint when given), most recently seen first, at most `limit`."""
        skip = set(exclude)

        def q(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
            where, args = _prefix(prefix) if prefix else ("1", ())
            # few ids begin so: sort them; many do: walk the most recent first (by index) and
            # keep those that begin so; either way a bounded number of rows
            many = len(
                conn.execute(
                    f"SELECT 1 FROM tasks t WHERE {where} LIMIT {COMPLETION_SCAN}", args
                ).fetchall()
            )
            if many >= COMPLETION_SCAN:
                by_seen = "INDEXED BY tasks_seen"
            else:
                by_seen = "INDEXED BY tasks_id" if prefix else ""
            sql = (
                f"SELECT t.id, t.status, e.key FROM tasks t {by_seen} "
                f"JOIN endpoints e ON e.id = t.endpoint WHERE {where}"
            )
            params: tuple[Any, ...] = tuple(args)
            if url is not None:
                sql += " AND e.place = ?"
                params += (_place(conn, url),)
            sql += " ORDER BY t.seen DESC LIMIT ?"
            out: dict[str, tuple[str, str, str]] = {}
            for tid, status, key in conn.execute(sql, (*params, limit + len(skip))):
                if not isinstance(tid, str) or not isinstance(key, str):
                    continue
                if tid not in skip and tid not in out:
                    out[tid] = (tid, status if isinstance(status, str) else "?", key)
            return list(out.values())[:limit]

        return self._read(q, [])

    # -- changes ------------------------------------------------------------------------------

    def set_endpoint(self, url: str, **fields: Any) -> None:
        fields = jsonsafe.unicode_safe(redact.scrub(fields))

        def change(conn: sqlite3.Connection) -> None:
            eid, old = _endpoint_for_write(conn, url)
            merged = {**old, **fields}
            conn.execute("UPDATE endpoints SET fields = ? WHERE id = ?", (store.dumps(merged), eid))
            posts_to = fields.get("postTo")
            if isinstance(posts_to, str) and _same_origin(posts_to, url):
                # an alias: the URL's agent card named another endpoint of the same origin
                conn.execute(
                    "UPDATE endpoints SET place = ? WHERE id = ?",
                    (same_place(endpoint_key(posts_to)), eid),
                )

        self._write(change, None, later=True)

    def contact(self, url: str, ok: bool) -> None:
        """The endpoint answered (ok) or could not be reached: `book` shows it, `watch --all`
        skips endpoints silent for a day. Only an endpoint already in the book is touched."""
        column = "last_ok" if ok else "last_fail"

        def change(conn: sqlite3.Connection) -> None:
            for eid, _key, _f in _endpoint_rows(conn, url):
                conn.execute(f"UPDATE endpoints SET {column} = ? WHERE id = ?", (time.time(), eid))

        if self._conn is not None or self.exists():
            self._write(change, None, later=True)

    def record(self, url: str, task_id: str, **fields: Any) -> None:
        self.record_many(url, {task_id: fields})

    def record_many(
        self,
        url: str,
        updates: dict[str, Record],
        *,
        events: list[Record] | None = None,
        command: str | None = None,
    ) -> None:
        """Record tasks (fields by task id; None leaves a field as it was) and events, in one
        transaction, by the set: the tasks' old rows read in one query per batch of `BATCH`
        ids and written back in one statement per batch (new rows inserted, changed rows
        updated, unchanged rows only marked as seen). A task's status or message that
        differs from the book's is an event (`created`, `status`, `message`, `pace`), with
        `_via` and `_at` of its fields, at the server's time where it gave one."""
        if not updates and not events:
            return
        results: dict[str, Any] = {}
        plain: dict[str, Record] = {}
        for task_id, fields in updates.items():
            fields = _bounded_fields(fields)
            if "result" in fields:
                fields = dict(fields)  # the caller's stay as they were
                results[task_id] = fields.pop("result")
            plain[task_id] = fields
        # what a server echoed of a secret mcptask holds is never written down
        plain = redact.scrub(plain)
        kept = {tid: _result_text(r) for tid, r in results.items() if r is not None}
        # and never text SQLite cannot bind (a lone surrogate: `jsonsafe.text_safe`); each
        # task's kept fields made, and encoded, once, here
        prepared = _prepared(plain, kept)
        extra = jsonsafe.unicode_safe(redact.scrub(events or []))
        stamp = now_iso()

        def change(conn: sqlite3.Connection) -> None:
            eid, _ = _endpoint_for_write(conn, url, tasks=True)
            now = time.time()
            if prepared:  # a task's state was seen: the endpoint answered
                conn.execute("UPDATE endpoints SET last_ok = ? WHERE id = ?", (now, eid))
            rows = _upsert_set(conn, eid, prepared, kept, stamp, now)
            rows += [_event_row(eid, e, now) for e in extra]
            if rows:
                conn.executemany(
                    "INSERT INTO events (endpoint, task, at, kind, via, status, message, command,"
                    " data, server_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(*_bounded_row((*r[:7], command, r[7])), r[8]) for r in rows],
                )
            if any(text is not None and not isinstance(text, tuple) for text in kept.values()):
                _limit_results(conn)
            _limit_events_set(conn, eid, {r[1] for r in rows})

        self._write(change, None, later=True)

    #: `list` and a watch's flush call it so: one path for one task or 100,000
    record_set = record_many

    def add_events(self, url: str, events: list[Record], *, command: str | None = None) -> None:
        self.record_many(url, {}, events=events, command=command)

    def remember_tools(self, url: str, tools: list[tuple[str, str]]) -> None:
        """The endpoint's tools as its last `tools/list` named them, (name, task support), for
        completing `call TOOL`; at most MAX_TOOLS_KEPT."""
        kept = [{"name": n, "taskSupport": t} for n, t in tools[:MAX_TOOLS_KEPT]]
        self.set_endpoint(url, tools=kept, toolsSeenAt=now_iso())

    def tools(self, url: str) -> list[tuple[str, str]]:
        """What `remember_tools` kept for the endpoint: (name, task support)."""
        kept = self.endpoint(url).get("tools")
        return [
            (str(t["name"]), str(t.get("taskSupport", "")))
            for t in (kept if isinstance(kept, list) else [])
            if isinstance(t, dict) and isinstance(t.get("name"), str)
        ]

    def forget(self, url: str, task_id: str) -> int:
        """Drop a task (and its events) from the endpoint, under every spelling of it."""

        def change(conn: sqlite3.Connection) -> int:
            n = 0
            for eid, _key, _f in _endpoint_rows(conn, url):
                n += conn.execute(
                    "DELETE FROM tasks WHERE endpoint = ? AND id = ?", (eid, task_id)
                ).rowcount
                conn.execute("DELETE FROM events WHERE endpoint = ? AND task = ?", (eid, task_id))
            return n

        if self._conn is None and not self.exists():
            return 0
        n = self._write(change, 0)
        self._leave_no_copy()
        return n

    def forget_endpoint(self, url: str) -> int:
        """Drop an endpoint (every spelling), its tasks and events; the tasks dropped."""

        def change(conn: sqlite3.Connection) -> int:
            n = 0
            for eid, _key, _f in _endpoint_rows(conn, url):
                n += conn.execute("DELETE FROM tasks WHERE endpoint = ?", (eid,)).rowcount
                conn.execute("DELETE FROM events WHERE endpoint = ?", (eid,))
                conn.execute("DELETE FROM endpoints WHERE id = ?", (eid,))
            return n

        if self._conn is None and not self.exists():
            return 0
        n = self._write(change, 0)
        self._leave_no_copy()
        return n

    def _leave_no_copy(self) -> None:
        """After a change that drops data on purpose: the WAL copied into the database and
        emptied (its older frames still hold what was dropped), the free pages given back."""
        conn = self._conn
        if conn is None or self.write_error is not None:
            return  # nothing was dropped
        try:
            store.give_back(conn)
            store.shrink(conn)
        except sqlite3.Error as exc:
            self._warn(
                f"cannot empty the task book's journal ({exc}): {self.path}-wal may keep "
                "a copy of what was forgotten until the last mcptask using it ends"
            )

    def silent_endpoints(self, longer_than: float) -> dict[str, str]:
        """Endpoints whose last attempt failed and that have not answered for `longer_than`
        seconds: key -> for how long, in words."""

        def q(conn: sqlite3.Connection) -> dict[str, str]:
            now = time.time()
            out = {}
            for key, created, ok, _fail in conn.execute(
                "SELECT key, created, last_ok, last_fail FROM endpoints WHERE last_fail IS NOT "
                "NULL AND last_fail > COALESCE(last_ok, 0) AND COALESCE(last_ok, created) < ?",
                (now - longer_than,),
            ):
                since = _number(ok) if ok is not None else _number(created)
                if isinstance(key, str) and since is not None:
                    out[key] = f"{(now - since) / 86400:.1f} days"
            return out

        return self._read(q, {})

    def has_endpoint(self, url: str) -> bool:
        def q(conn: sqlite3.Connection) -> bool:
            return bool(_endpoint_rows(conn, url))

        return self._read(q, False)

    def prune(self, older_than: float, *, unfinished: bool = False) -> tuple[int, int]:
        """Drop tasks not seen for `older_than` seconds (with their events; those last seen
        unfinished only when `unfinished`), and endpoints left with no task that have not
        answered for as long; (tasks, endpoints) dropped."""
        if self._conn is None and not self.exists():
            return (0, 0)
        before = time.time() - older_than
        out = self._write(lambda c: _prune(c, before, keep_unfinished=not unfinished), (0, 0))
        if self.write_error is None:
            conn = self._conn
            try:
                if conn is not None:
                    store.compact(conn)
            except sqlite3.Error as exc:
                self._warn(f"cannot compact the task book {self.path}: {exc}")
            self._leave_no_copy()
        return out

    def _maybe_prune(self, conn: sqlite3.Connection) -> None:
        """The age limit, applied by a write at most once every PRUNE_EVERY seconds."""
        row = conn.execute("SELECT value FROM meta WHERE key = 'pruned'").fetchone()
        now = time.time()
        try:
            last = float(row[0]) if row else 0.0
        except ValueError:
            last = 0.0
        if now - last < PRUNE_EVERY:
            return
        if row is None:  # a new book: nothing to prune yet
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('pruned', ?)", (repr(now),))
            return
        self._pruned = any(_prune(conn, now - keep_days() * 86400))
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('pruned', ?)", (repr(now),))


# -- rows ---------------------------------------------------------------------------------------

_TASK_COLS = (
    "id, status, message, first_seen, last_seen, fields, result, result_size, result_kept_at"
)


def _fields(text: str | None) -> Record:
    value = store.loads(text, {})
    return value if isinstance(value, dict) else {}


def _record(row: tuple[Any, ...]) -> Record:
    """A task row as the record callers know: its fields, status, times, result."""
    _tid, status, message, first, last, fields, result, _size, kept_at = row
    rec = _fields(fields)
    # a column edited by hand to hold a blob or a number where text belongs is left out
    for name in ("status", "statusMessage", "firstSeenAt", "lastSeenAt", "resultKeptAt"):
        if not isinstance(rec.get(name), str | None):
            rec.pop(name)
    if isinstance(status, str):
        rec["status"] = status
    if isinstance(message, str):
        rec["statusMessage"] = message
    if isinstance(first, str):
        rec["firstSeenAt"] = first
    if isinstance(last, str):
        rec["lastSeenAt"] = last
    if result is not None:
        value = store.loads(result, _BAD)
        if value is not _BAD:
            rec["result"] = value
            if isinstance(kept_at, str):
                rec["resultKeptAt"] = kept_at
    return rec


def _number(value: Any) -> float | None:
    """A time or count read from the book: a finite number, else None (a row edited by hand
    to hold text or a blob there)."""
    kind = type(value)
    if kind is float:
        return float(value) if math.isfinite(value) else None
    if kind is int:  # (not bool, nor a subclass SQLite never returns)
        return int(value)
    return None


_BAD = object()


def _event(row: tuple[Any, ...], key: str) -> Record | None:
    """An event row as the record `log` reads (`n`, `at`, `kind`, `serverAt`, ...); None for a
    row edited by hand past reading (no time, no kind): it is skipped."""
    n, at, kind, via, status, message, command, data, server_at = row
    at = _number(at)
    if at is None or not isinstance(kind, str):
        return None
    rec: Record = {"n": n, "at": at, "kind": kind}
    server_at = _number(server_at)
    if server_at is not None:
        rec["serverAt"] = server_at
    for name, value in (
        ("via", via),
        ("status", status),
        ("message", message),
        ("command", command),
    ):
        if isinstance(value, str):  # a blob or a number there: left out
            rec[name] = value
    extra = store.loads(data, {})
    if isinstance(extra, dict) and extra:
        rec["data"] = extra
    rec["endpoint"] = key
    return rec


def _place(conn: sqlite3.Connection, url: str) -> str:
    """The place `url` is filed under: its own row's (an alias posts to another endpoint's
    place), else what its spelling says (`same_place`)."""
    own = endpoint_key(url)
    row = conn.execute("SELECT place FROM endpoints WHERE key = ?", (own,)).fetchone()
    return str(row[0]) if row else same_place(own)


def _endpoint_rows(conn: sqlite3.Connection, url: str) -> list[tuple[int, str, str]]:
    """(id, key, fields) of the stored endpoints that name `url`: its own key first, then its
    other spellings (loopback names) and aliases (URLs whose agent card named it), sorted."""
    own = endpoint_key(url)
    rows = conn.execute(
        "SELECT id, key, fields FROM endpoints WHERE place = ? ORDER BY key", (_place(conn, url),)
    ).fetchall()
    return sorted((r for r in rows if isinstance(r[1], str)), key=lambda r: r[1] != own)


def _endpoint_for_write(
    conn: sqlite3.Connection, url: str, *, tasks: bool = False
) -> tuple[int, Record]:
    """Where a change for `url` goes: the endpoint under any spelling (for `tasks`, the one
    an alias posts to), else a new one under its own key; (id, its fields)."""
    rows = _endpoint_rows(conn, url)
    if tasks and rows:
        place = _place(conn, url)
        rows = sorted(rows, key=lambda r: same_place(r[1]) != place)
    if rows:
        return rows[0][0], _fields(rows[0][2])
    key = endpoint_key(url)
    cur = conn.execute(
        "INSERT INTO endpoints (key, place, fields, created) VALUES (?, ?, '{}', ?)",
        (key, same_place(key), time.time()),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid, {}


def _hits(
    conn: sqlite3.Connection, where: str, args: tuple[Any, ...]
) -> list[tuple[str, str, Record]]:
    out: dict[tuple[str, str], tuple[str, str, Record]] = {}
    rows = conn.execute(
        f"SELECT e.place, e.key, {', '.join('t.' + c.strip() for c in _TASK_COLS.split(','))} "
        f"FROM tasks t JOIN endpoints e ON e.id = t.endpoint WHERE {where} ORDER BY e.id",
        args,
    ).fetchall()
    for row in rows:
        place, key, tid = row[0], row[1], row[2]
        if not isinstance(key, str) or not isinstance(tid, str):
            continue  # a row edited by hand: skipped
        out.setdefault((place, tid), (key, tid, _record(row[2:])))
    return list(out.values())


def _same_origin(one: str, other: str) -> bool:
    from urllib.parse import urlsplit

    try:
        a, b = urlsplit(endpoint_key(one)), urlsplit(endpoint_key(other))
    except ValueError:
        return False
    return (a.scheme, same_place(f"{a.scheme}://{a.netloc}")) == (
        b.scheme,
        same_place(f"{b.scheme}://{b.netloc}"),
    )


def _prefix(prefix: str) -> tuple[str, tuple[Any, ...]]:
    """An indexed range for ids beginning with `prefix` (`LIKE` would not use the index)."""
    return "t.id >= ? AND t.id < ?", (prefix, prefix + "\U0010ffff")


#: JSON text with every character as it is (a held secret shows as it was held)
_AS_IS = jsonsafe.encoder(ensure_ascii=False, separators=(",", ":"))


def _result_text(result: Any) -> str | tuple[str] | None:
    """A result as stored JSON text (scrubbed); a 1-tuple with why it is not kept."""
    try:
        value = redact.scrub(result)
        text = store.dumps(value)
    except RecursionError:  # deeper than scrubbing goes: scrub the text instead
        # (text as it is, not ASCII escapes: a held secret shows in it as it was held; one
        # that JSON escapes would not, so such a result is not kept)
        if not redact.held_show_in_json():
            return ("too deeply nested to be scrubbed of secrets",)
        try:
            text = jsonsafe.text_safe(redact.scrub_text(store._deep(lambda: _AS_IS(result))))
            store._deep(lambda: json.loads(text))
        except (RecursionError, ValueError):
            return ("too deeply nested to be scrubbed of secrets",)
    except (TypeError, ValueError) as exc:
        return (f"not JSON ({exc})",)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_RESULT_BYTES:
        return (f"{size} bytes, over the 1 MiB limit",)
    return text


def _turns(
    fields: Record, kept: Any, turns: list[Any], where: tuple[int, str, float, Any, Any]
) -> list[tuple[Any, ...]]:
    """`history` events for the messages of the task's history the book has not seen (the
    turns between two looks: an agent's intermediate messages, an answer given elsewhere);
    `history-gap` when the history no longer holds the last one it saw (the server keeps a
    window of it). The first sighting (`kept` None) records none: its history is its
    creation's. The ids seen go into `fields` (`turnsSeen`)."""
    eid, task_id, at, via, status = where
    seen = [t for t in kept if isinstance(t, str)] if isinstance(kept, list) else None
    good = [t for t in turns if isinstance(t, list | tuple) and len(t) == 3]
    ids = [str(t[0]) for t in good]
    out: list[tuple[Any, ...]] = []
    if seen is not None:
        known = set(seen)
        if seen and ids and not known & set(ids):
            gap = "the server's history no longer holds the messages before these"
            out.append((eid, task_id, at, EventKind.HISTORY_GAP, via, status, gap, None, None))
        for mid, role, text in good:
            if str(mid) in known or role == "status":
                continue
            data = store.dumps({"role": str(role), "messageId": str(mid)})
            out.append((eid, task_id, at, EventKind.HISTORY, via, status, str(text), data, None))
    fields["turnsSeen"] = list(dict.fromkeys([*(seen or []), *ids]))[-TURNS_KEPT:]
    return out


#: the range of a server's time taken as one (a year-1 or year-9999 stamp is no time at all)
SERVER_TIME_RANGE = (0.0, 253402300799.0)


def server_time(stamp: Any) -> float | None:
    """A server's ISO 8601 time as seconds since the epoch; None when it gave none (or one
    out of any calendar mcptask shows)."""
    from mcptask.model.times import epoch

    value = epoch(stamp) if isinstance(stamp, str) else None
    if value is None or not SERVER_TIME_RANGE[0] <= value <= SERVER_TIME_RANGE[1]:
        return None
    return value


def _bounded_fields(fields: Record) -> Record:
    """A task's fields with the server's status and message cut to `events.MAX_TEXT`
    characters (stored as the task's, compared with the next poll's): a copy where one was
    cut, else the fields themselves (never changed here)."""
    long = [
        name
        for name in ("status", "statusMessage")
        if isinstance(value := fields.get(name), str) and len(value) > ev.MAX_TEXT
    ]
    if not long:
        return fields  # the usual case: not copied (a list of 100,000 tasks)
    out = dict(fields)
    for name in long:
        out[name] = out[name][: ev.MAX_TEXT]
    return out


def _bounded_row(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """An event row as written: (endpoint, task, at, kind, via, status, message, command,
    data), its status and message cut to `events.MAX_TEXT` characters, its data (JSON text) to
    MAX_EVENT_DATA (replaced by its size). The one place every event kind is bounded."""
    eid, task, at, kind, via, status, message, command, data = row
    if isinstance(status, str) and len(status) > ev.MAX_TEXT:
        status = status[: ev.MAX_TEXT]
    if isinstance(message, str) and len(message) > ev.MAX_TEXT:
        message = message[: ev.MAX_TEXT]
    if isinstance(data, str) and len(data) > MAX_EVENT_DATA:
        data = store.dumps({"omitted": f"{len(data)} characters, over the book's limit"})
    return (eid, task, at, kind, via, status, message, command, data)


#: ids per query or statement of the batch functions (SQLite allows 32,766 parameters)
BATCH = 500
#: the fields of a task's record that its reference takes (`refs_many`)
REF_FIELDS = (
    "session",
    "contextId",
    "protocolVersion",
    "protocol",
    # what earlier runs saw of it, taken back by its protocol (`TaskProtocol.recall`)
    "artifactsSeen",
    "progressToken",
    # the task's trace (`text.traceparent.TraceIds.fields`): every request about it carries it
    "traceId",
    "spanId",
    "parentSpanId",
)


def _rows_in(
    conn: sqlite3.Connection, cols: str, eid: int, ids: list[str]
) -> Iterator[tuple[Any, ...]]:
    """The endpoint's task rows (`cols`) whose id is among `ids`: one query per BATCH."""
    for start in range(0, len(ids), BATCH):
        chunk = ids[start : start + BATCH]
        marks = ",".join("?" * len(chunk))
        yield from conn.execute(
            f"SELECT {cols} FROM tasks WHERE endpoint = ? AND id IN ({marks})", (eid, *chunk)
        )


def _ref_rows(
    conn: sqlite3.Connection, eid: int, ids: list[str] | None
) -> Iterable[tuple[Any, ...]]:
    """(id, status, fields) of the endpoint's tasks: all (`ids` None) or those among ids."""
    if ids is None:
        return conn.execute("SELECT id, status, fields FROM tasks WHERE endpoint = ?", (eid,))
    return _rows_in(conn, "id, status, fields", eid, ids)


def _ref_record(status: str | None, fields: str | None) -> Record:
    """A task's status and its reference's fields, from its row."""
    stored = _quick_fields(fields)
    rec = {k: stored[k] for k in REF_FIELDS if k in stored}
    if status is not None:
        rec["status"] = status
    return rec


#: a record's fields that are columns, or said once, not kept in its `fields`
_NOT_KEPT = frozenset(
    (VIA, AT, TURNS, "status", "statusMessage", "firstSeenAt", "lastSeenAt", "resultKeptAt")
)


#: a surrogate in a stored text, which is ASCII: the start of its escape (a character past
#: U+FFFF, written as a pair, shows so too: the task is then checked the long way)
_SURROGATE_ESCAPE = "\\ud"


def _kept(fields: Record, result: str | tuple[str] | None) -> tuple[Record, str]:
    """The fields a task's row keeps of an update (those not None and not columns), and
    their stored text."""
    new = {k: v for k, v in fields.items() if v is not None and k not in _NOT_KEPT}
    if isinstance(result, tuple):
        new["resultNotKept"] = result[0]
    return new, store.dumps(new)


def _prepared(
    plain: dict[str, Record], results: dict[str, str | tuple[str] | None]
) -> dict[str, tuple[Record, Record, str]]:
    """Each task's fields with every lone surrogate made U+FFFD (`jsonsafe.unicode_safe`,
    which SQLite needs), what its row keeps of them and that as text (`_kept`): by id. A
    task is checked by its kept text (ASCII, where a surrogate shows as its escape) and its
    other values, not encoded again; one that may hold a surrogate is made safe whole."""
    out: dict[str, tuple[Record, Record, str]] = {}
    for task_id, fields in plain.items():
        new, text = _kept(fields, results.get(task_id))
        if _SURROGATE_ESCAPE in text or _holds_surrogate(task_id, fields):
            safe_id = jsonsafe.text_safe(task_id)
            fields = jsonsafe.unicode_safe(fields)
            new, text = _kept(fields, results.get(safe_id))
            task_id = safe_id
        out[task_id] = (fields, new, text)
    return out


def _holds_surrogate(task_id: str, fields: Record) -> bool:
    """Whether a task's id, or a value of its fields that its kept text does not hold,
    holds a surrogate (ASCII text and numbers, as most are, hold none: not encoded)."""
    if not task_id.isascii() and jsonsafe.holds_surrogate(task_id):
        return True
    for name in _NOT_KEPT_NAMES:
        v = fields.get(name)
        if v is None or type(v) in _PLAIN_NUMBERS or (type(v) is str and v.isascii()):
            continue
        if jsonsafe.holds_surrogate(v):
            return True
    return False


_NOT_KEPT_NAMES = tuple(sorted(_NOT_KEPT))
_PLAIN_NUMBERS = (int, float, bool)


def _upsert_set(
    conn: sqlite3.Connection,
    eid: int,
    updates: dict[str, tuple[Record, Record, str]],
    results: dict[str, str | tuple[str] | None],
    stamp: str,
    now: float,
) -> list[tuple[Any, ...]]:
    """Write many tasks (`updates`: by id, the task's fields, what its row keeps of them and
    that as text (`_prepared`), left as they are: the writer may try a change again): the
    old rows in one query per BATCH, new rows in one INSERT, changed rows
    in one UPDATE, unchanged rows in one UPDATE of when they were seen, results in one more;
    the events their changes make (`_changes`), each row (endpoint, task, at, kind, via,
    status, message, data, server_at). A row whose kept fields, status and message are what
    came (a list seen again) is only marked seen, by its rowid (read with it, in this
    transaction): nothing of it is parsed."""
    olds: dict[str, tuple[Any, ...]] = {
        row[0]: row[1:]
        for row in _rows_in(conn, "id, status, message, fields, seen, rowid", eid, list(updates))
    }
    inserts: list[tuple[Any, ...]] = []
    changed: list[tuple[Any, ...]] = []
    seen: list[tuple[float, int]] = []
    kept: list[tuple[Any, ...]] = []
    out: list[tuple[Any, ...]] = []
    for task_id, (fields, new, text) in updates.items():
        result = results.get(task_id)
        via = fields.get(VIA)
        at = fields.get(AT)
        at = at if isinstance(at, int | float) else now
        turns = fields.get(TURNS)
        turns = turns if isinstance(turns, list) and turns else None
        status = fields.get("status")
        message = fields.get("statusMessage")
        old = olds.get(task_id)
        when_seen = min(at, now)  # a watch writes in batches: when it was seen
        if old is None:
            if turns is not None:
                new = dict(new)  # made once: the writer may run this again
                out += _turns(new, None, turns, (eid, task_id, at, via, status))
                text = store.dumps(new)
            out += _changes(eid, task_id, at, via, status, message, new, None)
            inserts.append((eid, task_id, status, message, stamp, stamp, when_seen, text))
        else:
            old_status, old_message, old_text, looked, rowid = old
            same = old_text == text
            if (
                same
                and turns is None
                and (status is None or (status == old_status and message == old_message))
            ):
                # what was kept is what came, its status and message too (a list seen
                # again): no event, nothing to parse, nothing to write but when
                seen.append((when_seen, rowid))
            else:
                old_fields = new if same else _quick_fields(old_text)
                merged = {**old_fields, **new}
                if isinstance(result, str):
                    merged.pop("resultNotKept", None)
                if turns is not None:
                    # they came between the last look and this one: timed at the last look
                    # (the earliest they can be), so that they come before the change they
                    # led to
                    between = looked if isinstance(looked, int | float) and looked < at else at
                    where = (eid, task_id, between, via, status)
                    out += _turns(merged, old_fields.get("turnsSeen"), turns, where)
                out += _changes(
                    eid,
                    task_id,
                    at,
                    via,
                    status,
                    message,
                    new,
                    (old_status, old_message, old_fields),
                )
                to_status = status if status is not None else old_status
                to_message = message if status is not None else old_message
                if merged == old_fields and to_status == old_status and to_message == old_message:
                    seen.append((when_seen, rowid))  # nothing to write but when
                else:
                    text = store.dumps(merged)
                    changed.append((to_status, to_message, stamp, when_seen, text, rowid))
        if isinstance(result, str):
            kept.append((result, len(result), stamp, eid, task_id))
    if inserts:
        conn.executemany(
            "INSERT INTO tasks (endpoint, id, status, message, first_seen, last_seen, seen, fields)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            inserts,
        )
    if changed:
        changed.sort(key=lambda row: row[-1])  # by rowid: the pages in the order they lie
        conn.executemany(
            "UPDATE tasks SET status = ?, message = ?, last_seen = ?, seen = ?, fields = ? "
            "WHERE rowid = ?",
            changed,
        )
    if seen:
        _mark_seen(conn, stamp, seen)
    if kept:
        conn.executemany(
            "UPDATE tasks SET result = ?, result_size = ?, result_kept_at = ? "
            "WHERE endpoint = ? AND id = ?",
            kept,
        )
    return out


def _mark_seen(conn: sqlite3.Connection, stamp: str, seen: list[tuple[float, int]]) -> None:
    """Rows with nothing new but when they were seen (by rowid): one UPDATE per BATCH rows
    seen at the same moment (a list's are all seen at once), not one per row, in the order
    the rows lie in the file (each page of the table and of its `seen` index changed once)."""
    by_when: dict[float, list[int]] = {}
    for when, rowid in seen:
        by_when.setdefault(when, []).append(rowid)
    for when, rowids in by_when.items():
        rowids.sort()
        for start in range(0, len(rowids), BATCH):
            chunk = rowids[start : start + BATCH]
            marks = ",".join("?" * len(chunk))
            conn.execute(
                f"UPDATE tasks SET last_seen = ?, seen = ? WHERE rowid IN ({marks})",
                (stamp, when, *chunk),
            )


def _changes(
    eid: int,
    task_id: str,
    at: float,
    via: Any,
    status: Any,
    message: Any,
    new: Record,
    old: tuple[Any, Any, Record] | None,
) -> list[tuple[Any, ...]]:
    """The events a task's new state makes against the book's (`old`: status, message,
    fields; None for a first sighting), each at the server's time where it gave one: the
    creation at `createdAt`, a change at a new `lastUpdatedAt` (a server that changes state
    without moving it gave no time for this change). A task first seen by a look (not its
    creation's answer) after it moved on is created at its `createdAt`, then changed at its
    `lastUpdatedAt`, not when mcptask looked."""
    out: list[tuple[Any, ...]] = []
    asked = new.get("inputRequests")
    if old is None:
        data = _data(new)
        updated = server_time(new.get("lastUpdatedAt"))
        if status is not None:
            created = server_time(new.get("createdAt"))
            moved_on = created is not None and updated is not None and updated - created > 0.0005
            if via is not None and moved_on:
                first = store.dumps({"firstSeen": True})
                out.append((eid, task_id, at, EventKind.CREATED, via, None, None, first, created))
                out.append(
                    (eid, task_id, at, EventKind.STATUS, via, status, message, data, updated)
                )
            else:
                when = created if created is not None else updated
                out.append((eid, task_id, at, EventKind.CREATED, via, status, message, data, when))
        if isinstance(asked, dict) and asked:
            out.append(
                (
                    eid,
                    task_id,
                    at,
                    EventKind.QUESTION,
                    via,
                    status,
                    None,
                    _question(asked),
                    updated,
                )
            )
        return out
    old_status, old_message, was = old
    pace = new.get("pollInterval")
    kind: EventKind | None = None
    if status is not None:
        if status != old_status:
            kind = EventKind.STATUS
        elif message != old_message:
            kind = EventKind.MESSAGE
        elif pace is not None and pace != was.get("pollInterval"):
            kind, message = EventKind.PACE, None
    question = asked if isinstance(asked, dict) and asked != was.get("inputRequests") else None
    if kind is None and not question:
        return out  # the common case (a look that found nothing new): no time parsed
    stamp = new.get("lastUpdatedAt")
    when = None if stamp == was.get("lastUpdatedAt") else server_time(stamp)
    if when is not None and when == server_time(was.get("lastUpdatedAt")):
        when = None  # the same instant written another way
    if kind is not None:
        out.append((eid, task_id, at, kind, via, status, message, _data(new), when))
    if question:
        out.append(
            (eid, task_id, at, EventKind.QUESTION, via, status, None, _question(question), when)
        )
    return out


def _quick_fields(text: str | None) -> Record:
    """`_fields` for the many small rows of the batch functions: json's decoder called
    directly, `_fields` (deep or bad text) only when it fails."""
    try:
        value = json.loads(text) if text is not None else {}
    except (ValueError, RecursionError, TypeError):
        return _fields(text)
    return value if isinstance(value, dict) else {}


def _data(new: Record) -> str | None:
    """A state event's data: the server's time and pace it came with (as `_upsert` keeps)."""
    data = {
        k: new[k]
        for k in ("lastUpdatedAt", "pollInterval")
        if isinstance(new.get(k), str | int | float)
    }
    return store.dumps(data) if data else None


def _limit_events_set(conn: sqlite3.Connection, eid: int, task_ids: set[str]) -> None:
    """`_limit_events` for the tasks among `task_ids` that may be over the cap, found in one
    query per BATCH."""
    cap = max(ev.MAX_EVENTS_PER_TASK - 1, 1)
    ids = sorted(task_ids)
    over: set[str] = set()
    for start in range(0, len(ids), BATCH):
        chunk = ids[start : start + BATCH]
        marks = ",".join("?" * len(chunk))
        over.update(
            tid
            for (tid,) in conn.execute(
                f"SELECT task FROM events WHERE endpoint = ? AND task IN ({marks}) "
                "GROUP BY task HAVING COUNT(*) >= ?",
                (eid, *chunk, cap),
            )
        )
    if over:
        _limit_events(conn, eid, over)


def _question(asked: dict[str, Any]) -> str:
    """A question event's data: the requests by key (their keys only when large)."""
    text = store.dumps({"requests": asked})
    if len(text) > 4096:
        text = store.dumps({"keys": sorted(str(k) for k in asked)[:100]})
    return text


def _event_row(eid: int, e: Record, now: float) -> tuple[Any, ...]:
    at = e.get("at")
    data = e.get("data")
    server_at = e.get("server_at")
    return (
        eid,
        str(e.get("task", "")),
        at if isinstance(at, int | float) else now,
        str(e.get("kind", "?")),
        e.get("via"),
        e.get("status"),
        e.get("message"),
        store.dumps(data) if isinstance(data, dict) and data else None,
        server_at if isinstance(server_at, int | float) else None,
    )


def _limit_results(conn: sqlite3.Connection) -> None:
    """At most MAX_RESULTS_BYTES of results in all: the oldest kept go first (the task stays)."""
    (total,) = conn.execute("SELECT COALESCE(SUM(result_size), 0) FROM tasks").fetchone()
    if total <= MAX_RESULTS_BYTES:
        return
    for rowid, size in conn.execute(
        "SELECT rowid, result_size FROM tasks WHERE result IS NOT NULL "
        "ORDER BY result_kept_at, rowid"
    ).fetchall():
        if total <= MAX_RESULTS_BYTES:
            break
        conn.execute(
            "UPDATE tasks SET result = NULL, result_size = NULL, result_kept_at = NULL "
            "WHERE rowid = ?",
            (rowid,),
        )
        total -= size or 0


def _limit_events(conn: sqlite3.Connection, eid: int, task_ids: set[str]) -> None:
    """At most MAX_EVENTS_PER_TASK events per task: the first (its creation) stays, the
    oldest after it go."""
    cap = ev.MAX_EVENTS_PER_TASK
    for task_id in task_ids:
        row = conn.execute(
            "SELECT n FROM events WHERE endpoint = ? AND task = ? ORDER BY n DESC LIMIT 1 OFFSET ?",
            (eid, task_id, max(cap - 2, 0)),
        ).fetchone()
        if row is None:
            continue
        first = conn.execute(
            "SELECT MIN(n) FROM events WHERE endpoint = ? AND task = ?", (eid, task_id)
        ).fetchone()[0]
        conn.execute(
            "DELETE FROM events WHERE endpoint = ? AND task = ? AND n < ? AND n != ?",
            (eid, task_id, row[0], first),
        )


def _prune(
    conn: sqlite3.Connection, before: float, *, keep_unfinished: bool = False
) -> tuple[int, int]:
    from mcptask.model.status import TERMINAL

    where = "seen < ?"
    args: tuple[Any, ...] = (before,)
    if keep_unfinished:
        where += f" AND status IN ({','.join('?' * len(TERMINAL))})"
        args += tuple(sorted(TERMINAL))
    old = conn.execute(f"SELECT endpoint, id FROM tasks WHERE {where}", args).fetchall()
    for eid, tid in old:
        conn.execute("DELETE FROM events WHERE endpoint = ? AND task = ?", (eid, tid))
    conn.execute(f"DELETE FROM tasks WHERE {where}", args)
    gone = conn.execute(
        "SELECT id FROM endpoints WHERE created < ? AND COALESCE(last_ok, created) < ? "
        "AND NOT EXISTS (SELECT 1 FROM tasks WHERE endpoint = endpoints.id)",
        (before, before),
    ).fetchall()
    for (eid,) in gone:
        conn.execute("DELETE FROM events WHERE endpoint = ?", (eid,))
        conn.execute("DELETE FROM endpoints WHERE id = ?", (eid,))
    return len(old), len(gone)


# -- the old JSON book --------------------------------------------------------------------------


def _legacy_data(raw: bytes) -> dict[str, Any] | None:
    """An older mcptask's book, checked as it checked it; None when damaged."""
    try:
        data = store._deep(lambda: json.loads(raw))
        if not isinstance(data, dict) or not isinstance(data.get("endpoints"), dict):
            return None
        for ep in data["endpoints"].values():
            if not isinstance(ep, dict) or not isinstance(ep.get("tasks", {}), dict):
                return None
            for rec in ep.get("tasks", {}).values():
                if not isinstance(rec, dict) or not all(
                    isinstance(rec.get(k), str | None) for k in _TEXT_FIELDS
                ):
                    return None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return data


def _import(conn: sqlite3.Connection, data: dict[str, Any]) -> None:
    now = time.time()
    for url, ep in data["endpoints"].items():
        if not isinstance(url, str):
            continue
        fields = {k: v for k, v in ep.items() if k != "tasks"}
        key = url  # kept as it was filed (its spellings are joined by `place`)
        row = conn.execute("SELECT id, fields FROM endpoints WHERE key = ?", (key,)).fetchone()
        if row is None:
            eid = conn.execute(
                "INSERT INTO endpoints (key, place, fields, created) VALUES (?, ?, ?, ?)",
                (key, same_place(key), store.dumps(fields), now),
            ).lastrowid
        else:
            eid = row[0]
        for task_id, rec in ep.get("tasks", {}).items():
            rec = dict(rec)
            result = rec.pop("result", None)
            text = store.dumps(result) if "result" in ep["tasks"][task_id] else None
            last = rec.pop("lastSeenAt", None)
            conn.execute(
                "INSERT OR REPLACE INTO tasks (endpoint, id, status, message, first_seen, "
                "last_seen, seen, fields, result, result_size, result_kept_at) "
                "VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?)",
                (
                    eid,
                    task_id,
                    rec.pop("status", None),
                    rec.pop("firstSeenAt", None),
                    last,
                    _epoch(last, now),
                    store.dumps({k: v for k, v in rec.items() if k != "resultKeptAt"}),
                    text,
                    len(text) if text is not None else None,
                    rec.get("resultKeptAt"),
                ),
            )


def _epoch(stamp: Any, default: float) -> float:
    if isinstance(stamp, str):
        with contextlib.suppress(ValueError):
            import calendar

            return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
    return default
