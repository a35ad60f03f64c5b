"""The task book: every task this machine created or saw, with what is needed to reach it again
(protocol, MCP session, A2A context), its last known state and result, and an append-only log of
everything mcptask observed about it (`state.events`). Never a secret: every secret the process
holds is scrubbed from what is recorded (`redact.scrub`).

One SQLite database in the state directory (`tasks.db`, `state.store`): tables for endpoints,
tasks and events, indexed by task id (look-ups, prefixes and completion take the same time
with 100,000 tasks as with 10). Parallel mcptask processes write in turn (WAL, busy timeout);
each change is one transaction. A `tasks.json` of an older mcptask is imported once and kept
as `tasks.json.bak`.

Retention (documented in README): tasks not seen for MCPTASK_BOOK_DAYS days (default 30) are
dropped with their events; results larger than 1 MiB are not kept; at most 16 MiB of results
in all (oldest dropped first); at most `events.MAX_EVENTS_PER_TASK` events per task.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from mcptask.state import events as ev
from mcptask.state import store
from mcptask.state.endpoints import endpoint_key, same_place
from mcptask.state.files import now_iso, read_regular, state_dir
from mcptask.text import redact

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

#: pseudo-fields of `record_many`'s updates: how the state came (poll, push, listed) and when
VIA = "_via"
AT = "_at"

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

    # -- storage ------------------------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                conn = store.open_db(self.path)
            except store.Damaged:
                aside = store.set_aside(self.path)
                self._warn(f"the task book {self.path} was corrupt; set aside as {aside.name}")
                conn = store.open_db(self.path)
            self._conn = conn
            if self.legacy.exists() or self.legacy.is_symlink():
                self._import_legacy(conn)
        return self._conn

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
                self._read_failed(str(exc))
            except OSError as exc:
                self._read_failed(self._why(exc))
            break
        return default

    def _read_failed(self, why: str) -> None:
        if not self._read_warned:
            self._read_warned = True
            self._warn(f"cannot read the task book {self.path}: {why}")

    def _write(self, change: Callable[[sqlite3.Connection], T], default: T) -> T:
        for attempt in (1, 2):
            try:
                with self._tx() as conn:
                    out = change(conn)
                    self._maybe_prune(conn)
            except sqlite3.Error as exc:
                if store.is_damage(exc) and attempt == 1:
                    self._damaged(exc)
                    continue
                self.write_error = str(exc)
            except OSError as exc:
                self.write_error = self._why(exc)
            else:
                self.write_error = None
                return out
            self._warn(f"cannot write the task book {self.path}: {self.write_error}")
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

    def lookup(self, url: str, task_id: str) -> Record | None:
        return self.lookup_many(url, [task_id]).get(task_id)

    def unfinished(self, url: str) -> dict[str, Record]:
        """The endpoint's tasks last seen unfinished."""
        from mcptask.model import TERMINAL

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

    def find_prefix(self, url: str, prefix: str) -> list[str]:
        """The endpoint's task ids that begin with `prefix` (by index)."""
        where, args = _prefix(prefix)

        def q(conn: sqlite3.Connection) -> list[str]:
            ids = {r[0] for r in _endpoint_rows(conn, url)}
            return sorted(
                {
                    tid
                    for (tid,) in conn.execute(
                        f"SELECT t.id FROM tasks t WHERE {where} AND t.endpoint IN "
                        f"({','.join('?' * len(ids))})",
                        (*args, *ids),
                    )
                }
            )

        return self._read(q, [])

    def all_endpoints(self) -> dict[str, Record]:
        """Every endpoint's fields with its tasks (`tasks`): the whole book."""

        def q(conn: sqlite3.Connection) -> dict[str, Record]:
            out: dict[str, Record] = {}
            names: dict[int, str] = {}
            for eid, key, fields in conn.execute(
                "SELECT id, key, fields FROM endpoints ORDER BY id"
            ):
                out[key] = {**_fields(fields), "tasks": {}}
                names[eid] = key
            for row in conn.execute(f"SELECT endpoint, {_TASK_COLS} FROM tasks ORDER BY rowid"):
                key = names.get(row[0])
                if key is not None:
                    out[key]["tasks"][row[1]] = _record(row[1:])
            return out

        return self._read(q, {})

    def endpoint_keys(self) -> list[str]:
        return self._read(
            lambda c: [k for (k,) in c.execute("SELECT key FROM endpoints ORDER BY id")], []
        )

    def summary(self) -> list[Record]:
        """Each endpoint: key, protocol, tasks, unfinished tasks, events, first recorded,
        last contact (an answer), last failure (seconds since the epoch)."""
        from mcptask.model import TERMINAL

        done = ",".join(f"'{s}'" for s in sorted(TERMINAL))

        def q(conn: sqlite3.Connection) -> list[Record]:
            out = []
            for eid, key, fields, created, ok, fail in conn.execute(
                "SELECT id, key, fields, created, last_ok, last_fail FROM endpoints ORDER BY id"
            ):
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
                        "firstRecorded": created,
                        "lastSeen": seen,
                        "lastContact": ok,
                        "lastFailure": fail,
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
                for n, at, kind, via, status, message, command, data in conn.execute(
                    "SELECT n, at, kind, via, status, message, command, data FROM events "
                    "WHERE endpoint = ? AND task = ? AND n > ? ORDER BY n",
                    (eid, task_id, after),
                ):
                    rec: Record = {"n": n, "at": at, "kind": kind}
                    for name, value in (
                        ("via", via),
                        ("status", status),
                        ("message", message),
                        ("command", command),
                    ):
                        if value is not None:
                            rec[name] = value
                    extra = store.loads(data, {})
                    if isinstance(extra, dict) and extra:
                        rec["data"] = extra
                    rec["endpoint"] = key
                    out.append(rec)
            out.sort(key=lambda r: (r["at"], r["n"]))  # a batch's events, each when it was seen
            return out

        return self._read(q, [])

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
                if tid not in skip and tid not in out:
                    out[tid] = (tid, str(status or "?"), key)
            return list(out.values())[:limit]

        return self._read(q, [])

    # -- changes ------------------------------------------------------------------------------

    def set_endpoint(self, url: str, **fields: Any) -> None:
        fields = redact.scrub(fields)

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

        self._write(change, None)

    def contact(self, url: str, ok: bool) -> None:
        """The endpoint answered (ok) or could not be reached: `book` shows it, `watch --all`
        skips endpoints silent for a day. Only an endpoint already in the book is touched."""
        column = "last_ok" if ok else "last_fail"

        def change(conn: sqlite3.Connection) -> None:
            for eid, _key, _f in _endpoint_rows(conn, url):
                conn.execute(f"UPDATE endpoints SET {column} = ? WHERE id = ?", (time.time(), eid))

        if self._conn is not None or self.exists():
            self._write(change, None)

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
        transaction. A task's status or message that differs from the book's is an event
        (`created`, `status`, `message`, `pace`), with `_via` and `_at` of its fields."""
        if not updates and not events:
            return
        results: dict[str, Any] = {}
        plain: dict[str, Record] = {}
        for task_id, fields in updates.items():
            fields = dict(fields)
            if "result" in fields:
                results[task_id] = fields.pop("result")
            plain[task_id] = fields
        # what a server echoed of a secret mcptask holds is never written down
        plain = redact.scrub(plain)
        kept = {tid: _result_text(r) for tid, r in results.items() if r is not None}
        extra = redact.scrub(events or [])
        stamp = now_iso()

        def change(conn: sqlite3.Connection) -> None:
            eid, _ = _endpoint_for_write(conn, url, tasks=True)
            now = time.time()
            if plain:  # a task's state was seen: the endpoint answered
                conn.execute("UPDATE endpoints SET last_ok = ? WHERE id = ?", (now, eid))
            rows: list[tuple[Any, ...]] = []
            for task_id, fields in plain.items():
                rows += _upsert(conn, eid, task_id, fields, kept.get(task_id), stamp, now)
            for e in extra:
                rows.append(_event_row(eid, e, now))
            if rows:
                conn.executemany(
                    "INSERT INTO events (endpoint, task, at, kind, via, status, message, command,"
                    " data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(*r[:7], command, r[7]) for r in rows],
                )
            if any(text is not None and not isinstance(text, tuple) for text in kept.values()):
                _limit_results(conn)
            _limit_events(conn, eid, {r[1] for r in rows})

        self._write(change, None)

    def record_set(
        self,
        url: str,
        updates: dict[str, Record],
        *,
        events: list[Record] | None = None,
        command: str | None = None,
    ) -> None:
        """`record_many` by the set (`list`, a watch's flush): the same rows and events, but
        the tasks' old rows read in one query per batch of `BATCH` ids and written back in one
        statement per batch (new rows inserted, changed rows updated, unchanged rows only
        marked as seen)."""
        if not updates and not events:
            return
        results: dict[str, Any] = {}
        plain: dict[str, Record] = {}
        for task_id, fields in updates.items():
            fields = dict(fields)
            if "result" in fields:
                results[task_id] = fields.pop("result")
            plain[task_id] = fields
        plain = redact.scrub(plain)
        kept = {tid: _result_text(r) for tid, r in results.items() if r is not None}
        extra = redact.scrub(events or [])
        stamp = now_iso()

        def change(conn: sqlite3.Connection) -> None:
            eid, _ = _endpoint_for_write(conn, url, tasks=True)
            now = time.time()
            if plain:
                conn.execute("UPDATE endpoints SET last_ok = ? WHERE id = ?", (now, eid))
            rows = _upsert_set(conn, eid, plain, kept, stamp, now)
            rows += [_event_row(eid, e, now) for e in extra]
            if rows:
                conn.executemany(
                    "INSERT INTO events (endpoint, task, at, kind, via, status, message, command,"
                    " data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(*r[:7], command, r[7]) for r in rows],
                )
            if any(text is not None and not isinstance(text, tuple) for text in kept.values()):
                _limit_results(conn)
            _limit_events_set(conn, eid, {r[1] for r in rows})

        self._write(change, None)

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
        return self._write(change, 0)

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
        return self._write(change, 0)

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
                since = ok if ok is not None else created
                out[key] = f"{(now - since) / 86400:.1f} days"
            return out

        return self._read(q, {})

    def has_endpoint(self, url: str) -> bool:
        def q(conn: sqlite3.Connection) -> bool:
            return bool(_endpoint_rows(conn, url))

        return self._read(q, False)

    def prune(self, older_than: float) -> tuple[int, int]:
        """Drop tasks not seen for `older_than` seconds (with their events), and endpoints
        left with no task that have not answered for as long; (tasks, endpoints) dropped."""
        if self._conn is None and not self.exists():
            return (0, 0)
        return self._write(lambda c: _prune(c, time.time() - older_than), (0, 0))

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
        _prune(conn, now - keep_days() * 86400)
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
    if status is not None:
        rec["status"] = status
    if message is not None:
        rec["statusMessage"] = message
    if first is not None:
        rec["firstSeenAt"] = first
    if last is not None:
        rec["lastSeenAt"] = last
    if result is not None:
        value = store.loads(result, _BAD)
        if value is not _BAD:
            rec["result"] = value
            if kept_at is not None:
                rec["resultKeptAt"] = kept_at
    return rec


_BAD = object()


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
    return sorted(rows, key=lambda r: r[1] != own)


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


def _result_text(result: Any) -> str | tuple[str] | None:
    """A result as stored JSON text (scrubbed); a 1-tuple with why it is not kept."""
    try:
        value = redact.scrub(result)
        text = store.dumps(value)
    except RecursionError:  # deeper than scrubbing goes: scrub the text instead
        try:
            text = redact.scrub_text(store.dumps(result))
            store._deep(lambda: json.loads(text))
        except (RecursionError, ValueError):
            return ("too deeply nested to be scrubbed of secrets",)
    except (TypeError, ValueError) as exc:
        return (f"not JSON ({exc})",)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_RESULT_BYTES:
        return (f"{size} bytes, over the 1 MiB limit",)
    return text


def _upsert(
    conn: sqlite3.Connection,
    eid: int,
    task_id: str,
    fields: Record,
    result: str | tuple[str] | None,
    stamp: str,
    now: float,
) -> list[tuple[Any, ...]]:
    """Write one task's fields; the events its change of state makes."""
    via = fields.pop(VIA, None)
    at = fields.pop(AT, None)
    at = at if isinstance(at, int | float) else now
    old = conn.execute(
        "SELECT status, message, fields FROM tasks WHERE endpoint = ? AND id = ?", (eid, task_id)
    ).fetchone()
    status = fields.pop("status", None)
    message = fields.pop("statusMessage", None)
    fields.pop("firstSeenAt", None)
    fields.pop("lastSeenAt", None)
    fields.pop("resultKeptAt", None)
    new = {k: v for k, v in fields.items() if v is not None}
    if isinstance(result, tuple):
        new["resultNotKept"] = result[0]
    out: list[tuple[Any, ...]] = []
    pace = new.get("pollInterval")
    data = {
        k: new[k]
        for k in ("lastUpdatedAt", "pollInterval")
        if isinstance(new.get(k), str | int | float)
    }
    data_text = store.dumps(data) if data else None
    if old is None:
        conn.execute(
            "INSERT INTO tasks (endpoint, id, status, message, first_seen, last_seen, seen, fields)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (eid, task_id, status, message, stamp, stamp, now, store.dumps(new)),
        )
        if status is not None:
            out.append((eid, task_id, at, ev.CREATED, via, status, message, data_text))
        asked = new.get("inputRequests")
        if isinstance(asked, dict) and asked:
            out.append((eid, task_id, at, ev.QUESTION, via, status, None, _question(asked)))
    else:
        old_status, old_message, old_fields = old
        merged = {**_fields(old_fields), **new}
        if isinstance(result, str):
            merged.pop("resultNotKept", None)
        conn.execute(
            "UPDATE tasks SET status = COALESCE(?, status), message = CASE WHEN ? THEN ? ELSE "
            "message END, last_seen = ?, seen = ?, fields = ? WHERE endpoint = ? AND id = ?",
            (
                status,
                status is not None,
                message,
                stamp,
                now,
                store.dumps(merged),
                eid,
                task_id,
            ),
        )
        if status is not None:
            old_pace = _fields(old_fields).get("pollInterval")
            if status != old_status:
                out.append((eid, task_id, at, ev.STATUS, via, status, message, data_text))
            elif message != old_message:
                out.append((eid, task_id, at, ev.MESSAGE, via, status, message, data_text))
            elif pace is not None and pace != old_pace:
                out.append((eid, task_id, at, ev.PACE, via, status, None, data_text))
        asked = new.get("inputRequests")
        if isinstance(asked, dict) and asked and asked != _fields(old_fields).get("inputRequests"):
            out.append((eid, task_id, at, ev.QUESTION, via, status, None, _question(asked)))
    if isinstance(result, str):
        conn.execute(
            "UPDATE tasks SET result = ?, result_size = ?, result_kept_at = ? "
            "WHERE endpoint = ? AND id = ?",
            (result, len(result), stamp, eid, task_id),
        )
    return out


#: ids per query or statement of the batch functions (SQLite allows 32,766 parameters)
BATCH = 500
#: the fields of a task's record that its reference takes (`refs_many`)
REF_FIELDS = ("session", "contextId", "protocolVersion", "protocol")


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


def _upsert_set(
    conn: sqlite3.Connection,
    eid: int,
    updates: dict[str, Record],
    results: dict[str, str | tuple[str] | None],
    stamp: str,
    now: float,
) -> list[tuple[Any, ...]]:
    """`_upsert` for many tasks (`updates`, fields by id, consumed): the old rows in one query
    per BATCH, new rows in one INSERT, changed rows in one UPDATE, unchanged rows in one
    UPDATE of when they were seen, results in one more; the events their changes make."""
    olds: dict[str, tuple[Any, ...]] = {
        row[0]: row[1:] for row in _rows_in(conn, "id, status, message, fields", eid, list(updates))
    }
    inserts: list[tuple[Any, ...]] = []
    changed: list[tuple[Any, ...]] = []
    seen: list[str] = []
    kept: list[tuple[Any, ...]] = []
    out: list[tuple[Any, ...]] = []
    for task_id, fields in updates.items():
        result = results.get(task_id)
        via = fields.pop(VIA, None)
        at = fields.pop(AT, None)
        at = at if isinstance(at, int | float) else now
        status = fields.pop("status", None)
        message = fields.pop("statusMessage", None)
        fields.pop("firstSeenAt", None)
        fields.pop("lastSeenAt", None)
        fields.pop("resultKeptAt", None)
        new = {k: v for k, v in fields.items() if v is not None}
        if isinstance(result, tuple):
            new["resultNotKept"] = result[0]
        pace = new.get("pollInterval")
        asked = new.get("inputRequests")
        old = olds.get(task_id)
        if old is None:
            inserts.append((eid, task_id, status, message, stamp, stamp, now, store.dumps(new)))
            if status is not None:
                out.append((eid, task_id, at, ev.CREATED, via, status, message, _data(new)))
            if isinstance(asked, dict) and asked:
                out.append((eid, task_id, at, ev.QUESTION, via, status, None, _question(asked)))
        else:
            old_status, old_message, old_text = old
            old_fields = _quick_fields(old_text)
            merged = {**old_fields, **new}
            if isinstance(result, str):
                merged.pop("resultNotKept", None)
            to_status = status if status is not None else old_status
            to_message = message if status is not None else old_message
            if merged == old_fields and to_status == old_status and to_message == old_message:
                seen.append(task_id)  # nothing to write but when
            else:
                text = store.dumps(merged)
                changed.append((to_status, to_message, stamp, now, text, eid, task_id))
            if status is not None:
                if status != old_status:
                    out.append((eid, task_id, at, ev.STATUS, via, status, message, _data(new)))
                elif message != old_message:
                    out.append((eid, task_id, at, ev.MESSAGE, via, status, message, _data(new)))
                elif pace is not None and pace != old_fields.get("pollInterval"):
                    out.append((eid, task_id, at, ev.PACE, via, status, None, _data(new)))
            if isinstance(asked, dict) and asked and asked != old_fields.get("inputRequests"):
                out.append((eid, task_id, at, ev.QUESTION, via, status, None, _question(asked)))
        if isinstance(result, str):
            kept.append((result, len(result), stamp, eid, task_id))
    if inserts:
        conn.executemany(
            "INSERT INTO tasks (endpoint, id, status, message, first_seen, last_seen, seen, fields)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            inserts,
        )
    if changed:
        conn.executemany(
            "UPDATE tasks SET status = ?, message = ?, last_seen = ?, seen = ?, fields = ? "
            "WHERE endpoint = ? AND id = ?",
            changed,
        )
    for start in range(0, len(seen), BATCH):
        chunk = seen[start : start + BATCH]
        conn.execute(
            f"UPDATE tasks SET last_seen = ?, seen = ? WHERE endpoint = ? AND id IN "
            f"({','.join('?' * len(chunk))})",
            (stamp, now, eid, *chunk),
        )
    if kept:
        conn.executemany(
            "UPDATE tasks SET result = ?, result_size = ?, result_kept_at = ? "
            "WHERE endpoint = ? AND id = ?",
            kept,
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
    return (
        eid,
        str(e.get("task", "")),
        at if isinstance(at, int | float) else now,
        str(e.get("kind", "?")),
        e.get("via"),
        e.get("status"),
        e.get("message"),
        store.dumps(data) if isinstance(data, dict) and data else None,
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


def _prune(conn: sqlite3.Connection, before: float) -> tuple[int, int]:
    old = conn.execute("SELECT endpoint, id FROM tasks WHERE seen < ?", (before,)).fetchall()
    for eid, tid in old:
        conn.execute("DELETE FROM events WHERE endpoint = ? AND task = ?", (eid, tid))
    conn.execute("DELETE FROM tasks WHERE seen < ?", (before,))
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
