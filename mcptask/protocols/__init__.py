"""Protocol modules, loaded by name only when needed; which ones exist is `registry`'s
business (one row per protocol)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mcptask.errors import ServerError, UsageError
from mcptask.protocols import registry

if TYPE_CHECKING:
    from mcptask.protocols.base import Found, TaskProtocol
    from mcptask.transports.rpc import RpcClient

NAMES = registry.CHOICES


def protocol_class(name: str) -> type[TaskProtocol]:
    row = registry.info(name)
    if row is None:
        raise UsageError(f"unknown protocol {name!r}; known: {', '.join(registry.CHOICES)}")
    klass: type[TaskProtocol] = registry.load(row.impl)  # type: ignore[assignment]
    return klass


def create(name: str, rpc: RpcClient, server: str, **kwargs: Any) -> TaskProtocol:
    return protocol_class(name)(rpc, server, **kwargs)


async def detect(rpc: RpcClient, url: str) -> Found:
    """Which protocol an endpoint speaks, in as few requests as possible (the caller
    remembers the answer per endpoint). Each probe returns a protocol name (or a `Found`,
    with the endpoint the server named) or None, or raises `Unrecognised` saying what it got
    instead of its protocol."""
    from mcptask.protocols.base import Found, Unrecognised

    unrecognised: list[Unrecognised] = []
    for module in registry.probe_modules():
        try:
            found: str | Found | None = await importlib.import_module(module).probe(rpc, url)
        except Unrecognised as exc:
            unrecognised.append(exc)
            continue
        if found is not None:
            return found if isinstance(found, Found) else Found(found)
    if any(u.decisive for u in unrecognised):
        # the 2025-11-25 fallback: an endpoint that refused the POST may be the deprecated
        # HTTP+SSE transport (a GET whose event stream names where to POST)
        from mcptask.transports.legacy_sse import open_legacy

        refused = any(u.status in (400, 404, 405) for u in unrecognised)
        card = url.rstrip("/").endswith(("/agent-card.json", "/agent.json"))
        legacy = await open_legacy(rpc.transport) if refused and not card else None
        if legacy is not None:
            rpc.transport = legacy
            return Found(registry.fallback().name)
        raise not_a_task_server(url, unrecognised)
    fallback = registry.fallback()
    if any(u.confirm for u in unrecognised):
        # a -32601 to `server/discover` and no agent card: MCP only if its handshake answers
        # (the session it opens is the one the run goes on with)
        confirm = importlib.import_module(fallback.impl.partition(":")[0]).confirm
        try:
            opened = await confirm(rpc, url)
        except Unrecognised as exc:
            raise not_a_task_server(url, [*unrecognised, exc]) from None
        return Found(fallback.name, opened=opened)
    # nothing recognised it: the fallback's own handshake will say clearly if that is wrong
    return Found(fallback.name)


def not_a_task_server(url: str, seen: list[Any]) -> ServerError:
    """Neither protocol answered: say what came instead (exit 4), and how to insist."""
    from mcptask.text.urls import safe_url

    got = "; ".join(u.message for u in seen)
    names = [p.name for p in registry.PROTOCOLS if p.probe_order is not None or p.fallback]
    forced = ", ".join(f"-p {n}" for n in names if n != "agno")
    return ServerError(f"{safe_url(url)} is not an MCP server or A2A agent (try {forced}): {got}")


async def open_fallback(rpc: RpcClient, url: str) -> TaskProtocol | None:
    """The fallback protocol with its session open on `rpc` (a fresh connection), or None
    when the server refuses it there too."""
    from mcptask.errors import McptaskError

    confirm = importlib.import_module(registry.fallback().impl.partition(":")[0]).confirm
    try:
        opened: TaskProtocol = await confirm(rpc, url)
    except McptaskError:
        return None
    return opened if opened.session is not None else None
