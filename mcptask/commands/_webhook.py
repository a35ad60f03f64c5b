"""`watch --push-receiver` (and `send --watch --push-receiver`): a webhook receiver on
127.0.0.1 for the watch's A2A tasks. It registers a push config per task (a fresh random
path and token per watch), feeds what arrives into each endpoint's watcher as a third channel
(`via: webhook`) beside the subscription and polling, and deletes the configs it made when
the watch ends, however it ends."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.errors import (
    McptaskError,
    NotApplicable,
    PushUrlRefused,
    TaskNotFound,
    UsageError,
)

if TYPE_CHECKING:
    from mcptask.model.refs import TaskRef
    from mcptask.protocols.base import TaskProtocol
    from mcptask.session.context import Context

#: seconds the deletes of the watch's configs may take at its end, all together
CLEANUP_SECONDS = 10.0
#: config calls in flight at once (registering and deleting many tasks' configs)
REGISTER_AT_ONCE = 16


@dataclass
class PushReceiver:
    """`--push-receiver` with its options."""

    #: `--push-public-url`: where the agent reaches the receiver (a tunnel, a reachable host);
    #: the receiver's random path is added to it
    public_url: str | None = None
    #: `--push-port`: the local port (0: any free one)
    port: int = 0
    #: the address to bind (loopback unless told otherwise)
    host: str = "127.0.0.1"

    def check(self) -> None:
        if not 0 <= self.port <= 65535:
            raise UsageError(f"--push-port {self.port}: not a port (0-65535)")
        if self.public_url is not None:
            from urllib.parse import urlsplit

            u = urlsplit(self.public_url)
            if u.scheme not in ("http", "https") or not u.netloc:
                raise UsageError(f"--push-public-url {self.public_url!r}: not an http(s) URL")


@contextlib.asynccontextmanager
async def push_receiver(
    options: PushReceiver | None, groups: list[Any], ctx: Context
) -> AsyncIterator[None]:
    """Around a watch: the receiver and the configs for `groups` (the watch's endpoints, each
    with `.ctx` and `.watcher`); both gone when the block is left."""
    if options is None:
        yield
        return
    from mcptask.protocols.a2a_push import WebhookFeed, task_id_of
    from mcptask.text import redact
    from mcptask.transports.webhook import Delivery, WebhookReceiver

    feeds: list[WebhookFeed] = []
    known: set[str] = set()

    def offer(delivery: Delivery) -> None:
        for feed in feeds:
            feed.offer(delivery)

    receiver = WebhookReceiver(
        host=options.host,
        port=options.port,
        task_of=task_id_of,
        known=known.__contains__,
        on_delivery=offer,
    )
    try:
        await receiver.start()
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc}"
        ) from None
    redact.hold([receiver.token])
    url = receiver.url
    if options.public_url:
        url = options.public_url.rstrip("/") + receiver.path
    made: list[tuple[TaskProtocol, TaskRef, str]] = []
    #: config id -> the context of the endpoint it was made on (its log records it)
    owners: dict[str, Context] = {}
    try:
        for group in groups:
            before = len(made)
            feed = await _register(group, url, receiver.token, made, ctx)
            for _proto, _ref, config_id in made[before:]:
                owners[config_id] = group.ctx
            config_events(group.ctx, [(r.task_id, c) for _p, r, c in made[before:]], "created", url)
            if feed is not None:
                feeds.append(feed)
                known.update(feed.task_ids)
                group.watcher.feeds.append(feed)
        if feeds and ctx.options.trace:
            ctx.endpoint.trace(f"* push receiver at {receiver.url} for {len(known)} task(s)")
        yield
    finally:
        try:
            gone = [(ref.task_id, config_id) for _proto, ref, config_id in made]
            kept = await _delete(made, ctx)
            for owner in {id(c): c for c in owners.values()}.values():
                config_events(
                    owner,
                    [(t, c) for t, c in gone if owners.get(c) is owner and c not in kept],
                    "deleted",
                    url,
                )
        finally:
            await receiver.aclose()


def config_events(ctx: Context, made: list[tuple[str, str]], action: str, url: str) -> None:
    """The log's `push-config` events: configs (task id, config id) created or deleted."""
    from mcptask.model.events import EventKind, event

    ctx.places.note_events(
        [
            event(task_id, EventKind.PUSH_CONFIG, action=action, configId=c, url=url)
            for task_id, c in made
        ]
    )


async def _register(
    group: Any,
    url: str,
    token: str,
    made: list[tuple[TaskProtocol, TaskRef, str]],
    ctx: Context,
) -> Any:
    from mcptask.protocols.a2a_push import WebhookFeed

    gctx = group.ctx
    proto = await gctx.endpoint.protocol()
    where = gctx.server
    if not proto.can_push_configs:
        ctx.out.note(f"{where}: {proto.name} has no push notification configs; polling")
        return None
    if await proto.push_supported() is False:
        ctx.out.note(f"{where}: the agent card says pushNotifications: false; no webhook, polling")
        return None
    ids: list[str] = []
    failed: list[str] = []

    async def one(w: Any) -> None:
        config_id = "mcptask-" + secrets.token_hex(8)
        try:
            config = await proto.push_set(w.ref, url, token=token, config_id=config_id)
        except TaskNotFound:
            return  # its poll says so
        except McptaskError as exc:
            failed.append(exc.message)
            return
        made.append((proto, w.ref, config.id or config_id))
        ids.append(w.task_id)

    todo = [w for w in group.watcher.watched if not w.done]
    # the first alone: an agent that refuses push, or the URL, refuses it for every task
    for w in todo[:1]:
        try:
            config_id = "mcptask-" + secrets.token_hex(8)
            config = await proto.push_set(w.ref, url, token=token, config_id=config_id)
            made.append((proto, w.ref, config.id or config_id))
            ids.append(w.task_id)
        except TaskNotFound:
            pass
        except McptaskError as exc:
            ctx.out.note(f"{where}: no webhook: {exc.message}; polling")
            if isinstance(exc, NotApplicable | PushUrlRefused):
                return None
    gate = asyncio.Semaphore(REGISTER_AT_ONCE)

    async def gated(w: Any) -> None:
        async with gate:
            await one(w)

    await asyncio.gather(*(gated(w) for w in todo[1:]))
    if failed:
        ctx.out.note(
            f"{where}: no webhook for {len(failed)} task(s) ({failed[0]}); those are polled"
        )
    return WebhookFeed(proto, ids) if ids else None


async def _delete(made: list[tuple[TaskProtocol, TaskRef, str]], ctx: Context) -> set[str]:
    """Delete the configs the watch made, all at once, within CLEANUP_SECONDS; a failure is
    a note (the agent keeps a config that points nowhere). The ids of those not deleted."""
    if not made:
        return set()
    kept = {config_id for _proto, _ref, config_id in made}

    async def one(proto: TaskProtocol, ref: TaskRef, config_id: str) -> None:
        try:
            await proto.push_delete(ref, config_id)
            kept.discard(config_id)
        except TaskNotFound:
            kept.discard(config_id)  # the agent forgot the task, and its configs with it
        except McptaskError as exc:
            ctx.out.note(f"could not delete push config {config_id} of {ref.task_id}: {exc}")

    gate = asyncio.Semaphore(REGISTER_AT_ONCE)

    async def gated(proto: TaskProtocol, ref: TaskRef, config_id: str) -> None:
        async with gate:
            await one(proto, ref, config_id)

    jobs = asyncio.gather(*(gated(*m) for m in made))
    try:
        await asyncio.wait_for(jobs, CLEANUP_SECONDS)
    except TimeoutError:
        ctx.out.note(f"deleting the watch's push configs took over {CLEANUP_SECONDS:g} s")
    made.clear()
    return kept
