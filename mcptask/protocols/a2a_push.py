"""A2A push notifications as mcptask receives them: what a webhook body says (the task it is
about, its state, what changed), and the watch's third channel (`WebhookFeed`, `via:
webhook`) fed by a `transports.webhook.WebhookReceiver`.

An agent POSTs each update of a task to the URL of the task's push config: a `StreamResponse`
(`{"statusUpdate": ...}`, `{"artifactUpdate": ...}`, `{"task": ...}`) in 1.0, the task (or a
`kind`-tagged event) in 0.3."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Any, ClassVar

from mcptask.errors import McptaskError
from mcptask.protocols.a2a import classify, merge_event, message_text, normalize, normalize_state
from mcptask.protocols.base import Deliver, Health, PushFeed, TaskProtocol
from mcptask.transports.webhook import Delivery


def read_event(body: Any) -> tuple[str, dict[str, Any]] | None:
    """(kind, event) of a pushed body: `task`, `status`, `artifact` or `message`; None when
    it is none of them."""
    try:
        return classify(body)
    except McptaskError:
        return None


def task_id_of(body: Any) -> str | None:
    """The task a pushed body is about."""
    found = read_event(body)
    if found is None:
        return None
    kind, event = found
    value = event.get("id") if kind == "task" else event.get("taskId")
    return value if isinstance(value, str) and value else None


def notification_view(delivery: Delivery) -> dict[str, Any]:
    """One delivery as `push listen` prints it: the task, its state, what changed, whether
    the token matched, what the receiver answered."""
    out: dict[str, Any] = {
        "event": "notification",
        "receivedAt": _iso(delivery.received),
        "taskId": delivery.task_id,
        "status": None,
        "changed": None,
        "message": None,
        "artifact": None,
        "tokenMatched": delivery.token_matched,
        "authScheme": delivery.auth_scheme,
        "accepted": delivery.status == 200,
        "duplicate": delivery.duplicate,
        "httpStatus": delivery.status,
        "refused": delivery.reason,
    }
    found = read_event(delivery.body) if delivery.body is not None else None
    if found is not None:
        kind, event = found
        out["changed"] = kind
        status = event.get("status")
        if isinstance(status, dict) and isinstance(status.get("state"), str):
            out["status"] = normalize_state(status["state"])
            out["message"] = message_text(status.get("message"))
        if kind == "artifact" and isinstance(event.get("artifact"), dict):
            artifact = event["artifact"]
            name = artifact.get("name") or artifact.get("artifactId")
            out["artifact"] = name if isinstance(name, str) else None
        if kind == "message":
            out["message"] = message_text(event)
    if delivery.accepted or delivery.duplicate:
        out["body"] = delivery.body
    return out


def _iso(at: float) -> str:
    """An ISO 8601 time in UTC to the millisecond, as every other shape prints times."""
    from datetime import UTC, datetime

    stamp = datetime.fromtimestamp(at, tz=UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


class WebhookFeed(PushFeed):
    """The updates an agent POSTs to the watch's receiver for some tasks, applied as the
    subscription's would be: each event merged into the last known task. Live as soon as the
    tasks' push configs exist (made by the caller, who also deletes them)."""

    via: ClassVar[str] = "webhook"

    def __init__(self, proto: TaskProtocol, task_ids: Iterable[str]) -> None:
        super().__init__(set(task_ids))
        self.proto = proto
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=10_000)
        self._current: dict[str, dict[str, Any]] = {}

    def offer(self, delivery: Delivery) -> None:
        """From the receiver (must not block): a new delivery about one of our tasks."""
        if delivery.accepted and delivery.task_id in self.task_ids:
            with contextlib.suppress(asyncio.QueueFull):  # polling is the safety net
                self._queue.put_nowait(delivery.body)

    async def run(self, deliver: Deliver, health: Health) -> None:
        health(True)
        ended: set[str] = set()
        while ended != self.task_ids:
            body = await self._queue.get()
            found = read_event(body)
            task_id = task_id_of(body)
            if found is None or task_id is None or found[0] == "message":
                continue
            kind, event = found
            current = merge_event(self._current.get(task_id), kind, event)
            self._current[task_id] = current
            try:
                task = normalize(
                    current, protocol=self.proto.name, server=self.proto.server, what="pushed task"
                )
            except McptaskError:
                continue  # a body we cannot read: the poll will tell
            await deliver(task)
            if task.terminal:
                ended.add(task_id)
