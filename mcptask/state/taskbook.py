"""The task book: every task this machine created or saw, with what is needed to reach it again
(protocol, MCP session, A2A context) and its last known result. Never a secret: every secret
the process holds is scrubbed from what is recorded (`redact.scrub`).

One JSON file in the state directory, mode 0600. Every change is a locked read-modify-write
(`fcntl.flock` on a side lock file) followed by an atomic replace, so parallel mcptask
processes cannot corrupt it. A corrupt file is set aside with a warning and a fresh book begins.

Limits (documented in README): results larger than 1 MiB are not kept; at most 16 MiB of results
in all (oldest dropped first); at most 1,000 tasks per endpoint (oldest dropped first).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcptask.state.endpoints import endpoint_key, same_place
from mcptask.state.files import locked, now_iso, state_dir, write_private
from mcptask.text import redact

VERSION = 1
MAX_RESULT_BYTES = 1024 * 1024
MAX_RESULTS_BYTES = 16 * 1024 * 1024
MAX_TASKS_PER_ENDPOINT = 1000
#: the shortest id prefix that stands for a task id (as git's short hashes)
MIN_PREFIX = 4
#: tool names kept per endpoint for completion
MAX_TOOLS_KEPT = 500

Record = dict[str, Any]
#: fields of a task record that readers use as text: anything else there means a damaged book
_TEXT_FIELDS = ("status", "protocol", "session", "contextId", "firstSeenAt", "lastSeenAt")


class TaskBook:
    def __init__(self, path: Path | None = None, warn: Callable[[str], None] | None = None):
        self.path = path or state_dir() / "tasks.json"
        self._warn = warn or (lambda _msg: None)
        #: why the last change could not be written (a read-only or full disk), else None:
        #: callers then say how to reach what was not recorded
        self.write_error: str | None = None

    # -- storage ------------------------------------------------------------------------------

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        return locked(self.path)

    def _read(self) -> dict[str, Any]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {"version": VERSION, "endpoints": {}}
        except OSError as exc:
            self._warn(f"cannot read the task book {self.path}: {exc.strerror}; starting afresh")
            return {"version": VERSION, "endpoints": {}}
        try:
            data = json.loads(raw)
            if not isinstance(data, dict) or not isinstance(data.get("endpoints"), dict):
                raise ValueError("unexpected shape")
            for ep in data["endpoints"].values():
                if not isinstance(ep, dict) or not isinstance(ep.get("tasks", {}), dict):
                    raise ValueError("unexpected shape")
                for rec in ep.get("tasks", {}).values():
                    if not isinstance(rec, dict) or not all(
                        isinstance(rec.get(k), str | None) for k in _TEXT_FIELDS
                    ):
                        raise ValueError("unexpected shape")
        except (ValueError, UnicodeDecodeError, RecursionError):
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            with contextlib.suppress(OSError):
                os.replace(self.path, aside)
            self._warn(f"the task book {self.path} was corrupt; set aside as {aside.name}")
            return {"version": VERSION, "endpoints": {}}
        return data

    def _write(self, data: dict[str, Any]) -> None:
        # json.dumps is the C encoder; json.dump to a file is the pure-Python one (~10x)
        write_private(self.path, json.dumps(data, separators=(",", ":")))

    def _update(self, change: Callable[[dict[str, Any]], None]) -> None:
        try:
            with self._locked():
                data = self._read()
                change(data)
                _enforce_limits(data)
                self._write(data)
        except OSError as exc:
            self.write_error = self._why(exc)
            self._warn(f"cannot write the task book {self.path}: {self.write_error}")
        else:
            self.write_error = None

    def _why(self, exc: OSError) -> str:
        """A failed write in words; a state directory that names a file says so."""
        parent = self.path.parent
        for d in (parent, *parent.parents):
            if d.exists():
                if not d.is_dir():
                    return f"{d} is a file, not a directory (MCPTASK_STATE_DIR?)"
                break
        return exc.strerror or str(exc)

    def _snapshot(self) -> dict[str, Any]:
        try:
            with self._locked():
                return self._read()
        except OSError:
            return {"version": VERSION, "endpoints": {}}

    # -- queries ----------------------------------------------------------------------------

    def endpoint(self, url: str) -> Record:
        """The endpoint's record (its own key first, else one of its other spellings)."""
        eps = self._snapshot()["endpoints"]
        keys = _matching(eps, url)
        ep = eps.get(keys[0], {}) if keys else {}
        return ep if isinstance(ep, dict) else {}

    def tasks(self, url: str) -> dict[str, Record]:
        """The endpoint's tasks, under every spelling of it (its own key wins)."""
        eps = self._snapshot()["endpoints"]
        merged: dict[str, Record] = {}
        for key in reversed(_matching(eps, url)):
            tasks = eps[key].get("tasks", {}) if isinstance(eps[key], dict) else {}
            merged.update(tasks if isinstance(tasks, dict) else {})
        return merged

    def find(self, task_id: str) -> list[tuple[str, str, Record]]:
        """(endpoint, task id, record) for every endpoint that knows `task_id`; when none
        does, for every task whose id starts with it (a prefix of at least MIN_PREFIX
        characters). Endpoints that are one place (`same_place`) count once."""
        eps = self.all_endpoints()

        def hits(match: Callable[[str], bool]) -> list[tuple[str, str, Record]]:
            out: dict[tuple[str, str], tuple[str, str, Record]] = {}
            for key, ep in eps.items():
                tasks = ep.get("tasks") if isinstance(ep, dict) else None
                for tid, rec in (tasks if isinstance(tasks, dict) else {}).items():
                    if match(tid) and isinstance(rec, dict):
                        out.setdefault((same_place(key), tid), (key, tid, rec))
            return list(out.values())

        exact = hits(lambda tid: tid == task_id)
        if exact or len(task_id) < MIN_PREFIX:
            return exact
        return hits(lambda tid: tid.startswith(task_id))

    def lookup(self, url: str, task_id: str) -> Record | None:
        rec = self.tasks(url).get(task_id)
        return rec if isinstance(rec, dict) else None

    def all_endpoints(self) -> dict[str, Record]:
        eps = self._snapshot()["endpoints"]
        return eps if isinstance(eps, dict) else {}

    # -- changes ------------------------------------------------------------------------------

    def set_endpoint(self, url: str, **fields: Any) -> None:
        def change(data: dict[str, Any]) -> None:
            key = _write_key(data["endpoints"], url)
            ep = data["endpoints"].setdefault(key, {"tasks": {}})
            ep.update(fields)

        self._update(change)

    def record(self, url: str, task_id: str, **fields: Any) -> None:
        self.record_many(url, {task_id: fields})

    def record_many(self, url: str, updates: dict[str, Record]) -> None:
        if not updates:
            return
        # what a server echoed of a secret mcptask holds is never written down
        updates = redact.scrub(updates)
        stamp = now_iso()

        def change(data: dict[str, Any]) -> None:
            key = _write_key(data["endpoints"], url)
            ep = data["endpoints"].setdefault(key, {"tasks": {}})
            tasks = ep.setdefault("tasks", {})
            for task_id, fields in updates.items():
                rec = tasks.setdefault(task_id, {"firstSeenAt": stamp})
                result = fields.get("result")
                if result is not None:
                    size = len(json.dumps(result))
                    if size > MAX_RESULT_BYTES:
                        fields = {k: v for k, v in fields.items() if k != "result"}
                        fields["resultNotKept"] = f"{size} bytes, over the 1 MiB limit"
                    else:
                        fields = {**fields, "resultKeptAt": stamp}
                rec.update({k: v for k, v in fields.items() if v is not None})
                rec["lastSeenAt"] = stamp

        self._update(change)

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


def _matching(endpoints: dict[str, Any], url: str) -> list[str]:
    """The stored keys that name the endpoint at `url`: its own key first, then its other
    spellings (loopback names)."""
    own = endpoint_key(url)
    place = same_place(own)
    others = [k for k in endpoints if k != own and same_place(k) == place]
    return ([own] if own in endpoints else []) + sorted(others)


def _write_key(endpoints: dict[str, Any], url: str) -> str:
    """Where a change for `url` goes: the endpoint's existing record under any spelling, else
    a new one under its own key."""
    keys = _matching(endpoints, url)
    return keys[0] if keys else endpoint_key(url)


def _enforce_limits(data: dict[str, Any]) -> None:
    all_results: list[tuple[str, Record]] = []
    for ep in data["endpoints"].values():
        tasks: dict[str, Record] = ep.get("tasks", {})
        if len(tasks) > MAX_TASKS_PER_ENDPOINT:
            by_age = sorted(tasks, key=lambda t: str(tasks[t].get("lastSeenAt", "")))
            for old in by_age[: len(tasks) - MAX_TASKS_PER_ENDPOINT]:
                del tasks[old]
        all_results.extend(
            (str(rec.get("resultKeptAt", "")), rec) for rec in tasks.values() if "result" in rec
        )
    total = sum(len(json.dumps(rec["result"])) for _, rec in all_results)
    for _, rec in sorted(all_results, key=lambda x: x[0]):
        if total <= MAX_RESULTS_BYTES:
            break
        total -= len(json.dumps(rec.pop("result")))
        rec.pop("resultKeptAt", None)
