"""Protocol modules, loaded by name only when needed. A new protocol is one new module plus
one line in `_MODULES`."""

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
}

NAMES = ("auto", "mcp-2025-11-25", "mcp-2026-07-28", "a2a-0.3", "a2a-1.0", "agno")


def protocol_class(name: str) -> type[TaskProtocol]:
    try:
        module, cls = _MODULES[name]
    except KeyError:
        known = ", ".join(NAMES)
        raise UsageError(f"protocol {name!r} is not supported yet; known: {known}") from None
    klass: type[TaskProtocol] = getattr(importlib.import_module(module), cls)
    return klass


def create(name: str, rpc: RpcClient, server: str, **kwargs: Any) -> TaskProtocol:
    return protocol_class(name)(rpc, server, **kwargs)


async def detect(rpc: RpcClient, url: str) -> str:
    """Which protocol an endpoint speaks, in as few requests as possible."""
    return "mcp-2025-11-25"
