"""What the task book's history says about a task: its timeline (`log`) with times relative to
its creation and the gaps between events, and why it may look stuck (`get`)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from mcptask.model.events import EventKind
from mcptask.model.status import INTERRUPTED, TERMINAL
from mcptask.model.times import epoch, iso, ms_seconds
from mcptask.pacing import poll_seconds

if TYPE_CHECKING:
    from mcptask.model.task import Task
    from mcptask.session.context import Context

#: a watch that recorded the task within this many poll intervals is taken to be running
LIVE_FACTOR = 3.0


def happened(e: dict[str, Any], skew: float = 0.0) -> float:
    """When an event happened on this machine's clock: the server's time where it gave one
    (less the measured skew: `clockSkew`, the server's clock minus this machine's), else when
    mcptask saw it (or did it: an answer, a cancel). Never later than mcptask saw it: the skew
    is known only to within a second or so (`Date` headers), and nothing is seen before it
    happens."""
    seen = float(e["at"])
    server_at = e.get("serverAt")
    if isinstance(server_at, int | float):
        return min(float(server_at) - skew, seen)
    return seen


class Timeline:
    """The events as `log` prints them (docs/output.md, schema `log-event`), in the order they
    happened: each at the server's time where it said when (`clock: server`), else when
    mcptask saw it (`clock: local`), with when mcptask saw it (`seenAt`), how late (`late`),
    `sinceCreated` (from the task's creation: the server's `createdAt` where known) and
    `gap` (from the event before). Each batch added is ordered; later batches follow (what
    `log --follow` prints as it is recorded)."""

    def __init__(
        self,
        task_id: str,
        server: str,
        skew: float | None = None,
        start: float | None = None,
        *,
        stamps: bool = True,
    ) -> None:
        self.task_id = task_id
        self.server = server
        #: `at` and `seenAt` as ISO 8601 stamps; False: None (a pretty log shows times since
        #: creation and gaps, and 10,000 stamps were a fifth of a 5,000-event log's CPU)
        self.stamps = stamps
        self.skew = skew or 0.0
        #: when the story begins (the earliest time of all its events: a streamed story
        #: knows it before its first page)
        self.start: float | None = start
        self.last: float | None = None

    def add(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        skew = self.skew
        times = [(e["kind"] != EventKind.CREATED, happened(e, skew), e["n"], e) for e in events]
        # nothing happens to a task before its creation: a creation mcptask could only time
        # by its answer (no server time) still comes first, at the first thing known
        times.sort(key=lambda t: t[:3])
        for _, when, _, e in times:
            if self.start is None:
                self.start = min(t[1] for t in times)
            if e["kind"] == EventKind.CREATED and self.last is None:
                when = self.start  # at the latest when the first thing known of it happened
            seen = float(e["at"])
            server_at = e.get("serverAt")
            on_server = isinstance(server_at, int | float)
            shown = float(server_at) if isinstance(server_at, int | float) else seen
            last = self.last if self.last is not None else self.start
            out.append(
                {
                    "taskId": self.task_id,
                    "server": self.server,
                    "n": e["n"],
                    "at": iso(shown) if self.stamps else None,
                    "clock": "server" if on_server else "local",
                    "seenAt": iso(seen) if self.stamps else None,
                    "late": round(max(0.0, seen - when), 3) if on_server else None,
                    "sinceCreated": round(max(0.0, when - self.start), 3),
                    "gap": round(max(0.0, when - last), 3),
                    "kind": e["kind"],
                    "via": e.get("via"),
                    "status": e.get("status"),
                    "message": e.get("message"),
                    "command": e.get("command"),
                    "data": e.get("data") or {},
                }
            )
            self.last = max(when, last)
        return out


def timeline(
    task_id: str, server: str, events: list[dict[str, Any]], skew: float | None = None
) -> list[dict[str, Any]]:
    """The whole story at once (`Timeline`)."""
    return Timeline(task_id, server, skew).add(events)


#: commands that follow a task (their records mean something polls it)
FOLLOWERS = frozenset(("watch", "log", "call", "send", "demo"))


def live_follower(record: dict[str, Any] | None, events: list[dict[str, Any]]) -> bool:
    """Another process follows the task now: a following command recorded more than its
    creation, has not ended, and the book saw the task within a few of its poll intervals."""
    if record is None:
        return False
    follows = [
        e for e in events if e.get("command") in FOLLOWERS and e["kind"] != EventKind.CREATED
    ]
    if not follows or follows[-1]["kind"] == EventKind.END:
        return False
    seen = _epoch(record.get("lastSeenAt"))
    pace = record.get("pollInterval")
    interval = poll_seconds(pace if isinstance(pace, int) else None, 1.0)
    return seen is not None and time.time() - seen <= max(LIVE_FACTOR * interval, 5.0)


#: kinds of event after which the server has nothing more to say of the task
ENDING = frozenset((EventKind.EXPIRED, EventKind.LOST))


def ends(events: list[dict[str, Any]]) -> bool:
    """The history shows the task ended (a terminal status, expiry, a stdio server gone)."""
    return any(
        (e.get("status") in TERMINAL and e["kind"] in (EventKind.CREATED, EventKind.STATUS))
        or e["kind"] in ENDING
        for e in events
    )


def why_stuck(
    task: Task,
    record: dict[str, Any] | None,
    events: list[dict[str, Any]],
    now: float | None = None,
    *,
    skew: float | None = None,
    unreachable: str | None = None,
) -> dict[str, Any]:
    """What the history knows of a task that may look stuck (`get`'s and `why`'s `history`):
    how long nothing moved and since when (in the server's time where it said), the last
    message, the pace and how it moved, the next poll of a running watch, whether push is
    live, retries and the last error, the pending question and since when, the ttl and when
    the server will purge it; `reasons`, the likely causes in words, first of which the
    server being unreachable (`unreachable`: why) when it is."""
    now = time.time() if now is None else now
    skew = skew or 0.0
    changes = [
        e for e in events if e["kind"] in (EventKind.CREATED, EventKind.STATUS) and e.get("status")
    ]
    messages = [
        e
        for e in events
        if e["kind"] in (EventKind.CREATED, EventKind.STATUS, EventKind.MESSAGE)
        and e.get("message")
    ]
    out: dict[str, Any] = {"events": len(events)}
    if events:
        out["firstSeen"] = iso(min(float(e["at"]) for e in events))
    changed = _changed_at(task, changes, skew)
    if changed is not None:
        out["sinceChange"] = round(max(0.0, now - changed[0]), 3)
        out["statusSince"] = iso(changed[1])
        out["statusSinceClock"] = changed[2]
    out["sinceMessage"] = (
        round(max(0.0, now - happened(messages[-1], skew)), 3) if messages else None
    )
    out["lastMessage"] = task.statusMessage
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
    live_watch = not task.terminal and live_follower(record, events)
    out["watchedElsewhere"] = live_watch
    out["nextPoll"] = round(max(0.0, seen + interval - now), 3) if live_watch and seen else None
    push = None
    for e in events:
        if e["kind"] == EventKind.PUSH_OPEN:
            push = True
        elif e["kind"] in (EventKind.PUSH_LOST, EventKind.END):
            push = False
    out["pushLive"] = bool(push) and live_watch
    since = changes[-1]["n"] if changes else 0
    retries = [e for e in events if e["kind"] == EventKind.RETRY and e["n"] > since]
    errors = [e for e in events if e["kind"] in (EventKind.RETRY, EventKind.ERROR)]
    out["retries"] = len(retries)
    out["lastError"] = errors[-1].get("message") if errors else None
    out["lastErrorAt"] = iso(errors[-1]["at"]) if errors else None
    question = None
    if task.status in INTERRUPTED:
        asked = [e for e in events if e["kind"] == EventKind.QUESTION]
        keys = sorted((task.inputRequests or {}).keys())
        data = (asked[-1].get("data") or {}) if asked else {}
        settled = asked and any(
            e["kind"]
            in (EventKind.ANSWER, EventKind.DISMISSED, EventKind.ANSWER_REFUSED, EventKind.END)
            and e["n"] > asked[-1]["n"]
            for e in events
        )
        form = None if settled else data.get("form")
        if not keys and asked:
            keys = sorted(data.get("requests") or data.get("keys") or [])
        question = {
            "status": task.status,
            "keys": keys,
            "message": data.get("message") or task.statusMessage,
            "since": iso(changed[1]) if changed is not None else None,
            "waiting": round(max(0.0, now - changed[0]), 3) if changed is not None else None,
            # a watch on a terminal holds the question's form: the answer goes there
            "formOpenIn": form if live_watch and isinstance(form, str) else None,
        }
    out["pendingQuestion"] = question
    out["ttl"] = task.ttl
    purge = None
    if task.ttl is not None:
        base = _epoch(task.createdAt) or (events[0]["at"] if events else None)
        if base is not None:
            purge = iso(base + ms_seconds(task.ttl))
    out["purgeAt"] = purge
    out["clockSkew"] = round(skew, 3) if skew else None
    out["unreachable"] = unreachable
    out["reasons"] = _reasons(task, out)
    return out


def _changed_at(
    task: Task, changes: list[dict[str, Any]], skew: float
) -> tuple[float, float, str] | None:
    """When the task's status last changed: (on this machine's clock, as shown, which clock):
    the server's `lastUpdatedAt` for the status it is in where the history has no better."""
    if changes:
        last = changes[-1]
        server_at = last.get("serverAt")
        if isinstance(server_at, int | float):
            return happened(last, skew), float(server_at), "server"
        return float(last["at"]), float(last["at"]), "local"
    updated = _epoch(task.lastUpdatedAt)
    if updated is not None:
        return updated - skew, updated, "server"
    return None


def _reasons(task: Task, info: dict[str, Any]) -> list[str]:
    """Why the task may look stuck, most likely first."""
    out = []
    if info.get("unreachable"):
        out.append(f"the server cannot be reached: {info['unreachable']}")
    question = info.get("pendingQuestion")
    if question:
        out.append(
            "it waits for authentication"
            if task.status == "auth_required"
            else "it waits for an answer"
        )
    if info.get("retries"):
        out.append(f"{info['retries']} failed requests since its last change")
    if task.terminal:
        out.append(f"it has ended ({task.status})")
    elif not question and not info.get("watchedElsewhere"):
        out.append("no watch follows it: nothing records its changes")
    return out


def book_skew(ctx: Context) -> float | None:
    """The server's clock against this machine's, as the book keeps it for the endpoint."""
    if not ctx.places.records:
        return None
    skew = ctx.book.endpoint(ctx.server).get("clockSkew")
    return float(skew) if isinstance(skew, int | float) else None


def _epoch(stamp: Any) -> float | None:
    """An ISO 8601 time (a server's or the book's) as seconds since the epoch."""
    return epoch(stamp, naive_utc=True)
