"""Protocol modules, loaded by name only when needed. A new protocol is one new module plus
one line in `_MODULES` (and, if it can be recognised, a probe in `detect`)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..errors import UsageError

if TYPE_CHECKING:
    from ..rpc import RpcClient
    from .base import TaskProtocol

#: protocol name -> (module, class)
_MODULES: dict[str, tuple[str, str]] = {
    "mcp-2025-11-25": ("mcptask.protocols.mcp2025", "Mcp2025"),
    "mcp-2026-07-28": ("mcptask.protocols.mcp2026", "Mcp2026"),
    "a2a-0.3": ("mcptask.protocols.a2a", "A2A03"),
    "a2a-1.0": ("mcptask.protocols.a2a", "A2A10"),
    "agno": ("mcptask.protocols.agno", "Agno"),
}

NAMES = ("auto", "mcp-2025-11-25", "mcp-2026-07-28", "a2a-0.3", "a2a-1.0", "agno")


def protocol_class(name: str) -> type[TaskProtocol]:
    if name not in NAMES or name == "auto":
        known = ", ".join(NAMES)
        raise UsageError(f"unknown protocol {name!r}; known: {known}")
    try:
        module, cls = _MODULES[name]
    except KeyError:
        raise UsageError(f"protocol {name!r} is not supported yet") from None
    klass: type[TaskProtocol] = getattr(importlib.import_module(module), cls)
    return klass


def create(name: str, rpc: RpcClient, server: str, **kwargs: Any) -> TaskProtocol:
    return protocol_class(name)(rpc, server, **kwargs)


async def detect(rpc: RpcClient, url: str) -> str:
    """Which protocol an endpoint speaks, in as few requests as possible (the caller
    remembers the answer per endpoint). Each probe returns a protocol name or None."""
    for module in _PROBES:
        try:
            probe = importlib.import_module(module).probe
        except (ImportError, AttributeError):
            continue
        found: str | None = await probe(rpc, url)
        if found is not None:
            return found
    # nothing recognised it (e.g. a stateless MCP server that answers 200 -32601 to the
    # 2026 probe): MCP 2025-11-25's `initialize` will say clearly if that is wrong
    return "mcp-2025-11-25"


#: probes in order: URL shape first (free), then MCP (one request), then A2A agent cards
_PROBES = ("mcptask.protocols.agno", "mcptask.protocols.mcp2026", "mcptask.protocols.a2a")
