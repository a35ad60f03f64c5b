"""What the task book's history says about a task: its timeline (`log`) with times relative to
its creation and the gaps between events, and why it may look stuck (`get`)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from mcptask.model import INTERRUPTED, TERMINAL, Task, epoch, ms_seconds
from mcptask.pacing import poll_seconds

#: a watch that recorded the task within this many poll intervals is taken to be running
LIVE_FACTOR = 3.0


#: the latest instant shown as a date (a server's ttl of 1e999 ms lands past any calendar)
LAST_DATE = 253402300799.0  # 9999-12-31T23:59:59Z


def iso(at: float) -> str:
    """Seconds since the epoch as ISO 8601 UTC with milliseconds (within year 1 to 9999)."""
    at = min(max(at, -62135596800.0), LAST_DATE) if at == at else LAST_DATE
    stamp = datetime.fromtimestamp(at, tz=UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def timeline(task_id: str, server: str, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events as `log` prints them (docs/output.md, schema `log-event`): oldest first, each
    with `sinceCreated` and `gap` (seconds)."""
    out = []
    start = events[0]["at"] if events else 0.0
    last = start
    for e in events:
        at = float(e["at"])
        line: dict[str, Any] = {
            "taskId": task_id,
            "server": server,
            "n": e["n"],
            "at": iso(at),
            "sinceCreated": round(max(0.0, at - start), 3),
            "gap": round(max(0.0, at - last), 3),
            "kind": e["kind"],
            "via": e.get("via"),
            "status": e.get("status"),
            "message": e.get("message"),
            "command": e.get("command"),
            "data": e.get("data") or {},
        }
        out.append(line)
        last = at
    return out


def ends(events: list[dict[str, Any]]) -> bool:
    """The history shows the task ended (a terminal status)."""
    return any(e.get("status") in TERMINAL and e["kind"] in ("created", "status") for e in events)


def why_stuck(
    task: Task,
    record: dict[str, Any] | None,
    events: list[dict[str, Any]],
    now: float | None = None,
) -> dict[str, Any]:
    """What the history knows of a task that may look stuck (`get`'s `history` field):
    seconds since the last change and the last message, the pace and how it moved, the next
    poll of a running watch, whether push is live, retries and the last error, the pending
    question and since when, the ttl and when the record will be purged."""
    now = time.time() if now is None else now
    changes = [e for e in events if e["kind"] in ("created", "status")]
    messages = [
        e for e in events if e["kind"] in ("created", "status", "message") and e.get("message")
    ]
    out: dict[str, Any] = {"events": len(events)}
    if events:
        out["firstSeen"] = iso(events[0]["at"])
    if changes:
        out["sinceChange"] = round(now - changes[-1]["at"], 3)
        out["statusSince"] = iso(changes[-1]["at"])
    out["sinceMessage"] = round(now - messages[-1]["at"], 3) if messages else None
    paces: list[int] = []
    for e in events:
        pace = (e.get("data") or {}).get("pollInterval")
        if isinstance(pace, int) and (not paces or paces[-1] != pace):
            paces.append(pace)
    if task.pollInterval is not None and (not paces or paces[-1] != task.pollInterval):
        paces.append(task.pollInterval)
    out["pollInterval"] = task.pollInterval
    out["paceHistory"] = paces
    # a watch running elsewhere: the last time anything recorded the task, and its pace
    seen = _epoch(record.get("lastSeenAt")) if record else None
    interval = poll_seconds(task.pollInterval, 1.0)  # the pace a watch keeps
    watched = [e for e in events if e.get("command") == "watch"]
    live_watch = bool(
        not task.terminal
        and watched
        and watched[-1]["kind"] != "end"
        and seen is not None
        and now - seen <= max(LIVE_FACTOR * interval, 5.0)
    )
    out["watchedElsewhere"] = live_watch
    out["nextPoll"] = round(max(0.0, seen + interval - now), 3) if live_watch and seen else None
    push = None
    for e in events:
        if e["kind"] == "push-open":
            push = True
        elif e["kind"] in ("push-lost", "end"):
            push = False
    out["pushLive"] = bool(push) and live_watch
    since = changes[-1]["n"] if changes else 0
    retries = [e for e in events if e["kind"] == "retry" and e["n"] > since]
    errors = [e for e in events if e["kind"] in ("retry", "error")]
    out["retries"] = len(retries)
    out["lastError"] = errors[-1].get("message") if errors else None
    out["lastErrorAt"] = iso(errors[-1]["at"]) if errors else None
    question = None
    if task.status in INTERRUPTED:
        asked = [e for e in events if e["kind"] == "question"]
        at = changes[-1]["at"] if changes else None
        keys = sorted((task.inputRequests or {}).keys())
        if not keys and asked:
            data = asked[-1].get("data") or {}
            keys = sorted(data.get("requests") or data.get("keys") or [])
        question = {
            "status": task.status,
            "keys": keys,
            "since": iso(at) if at is not None else None,
            "waiting": round(now - at, 3) if at is not None else None,
        }
    out["pendingQuestion"] = question
    out["ttl"] = task.ttl
    purge = None
    if task.ttl is not None:
        base = _epoch(task.createdAt) or (events[0]["at"] if events else None)
        if base is not None:
            purge = iso(base + ms_seconds(task.ttl))
    out["purgeAt"] = purge
    return out


def _epoch(stamp: Any) -> float | None:
    """An ISO 8601 time (a server's or the book's) as seconds since the epoch."""
    return epoch(stamp, naive_utc=True)
