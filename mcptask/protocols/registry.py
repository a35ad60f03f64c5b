"""The protocols mcptask speaks: one row each. The only place outside a protocol's own module
(and its check suite) that names it. A new protocol is its module under `protocols/`, its check
suite under `check/`, and one row here.

Kept free of imports: the CLI's help text reads the names at start-up."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProtocolInfo:
    #: the name users type (`-p NAME`) and the task book records
    name: str
    #: `module:Class` of its `TaskProtocol`
    impl: str
    #: `module:Class` of its `check` suite
    check: str
    #: "mcp" (tools) or "a2a" (messages)
    family: str
    #: when auto-detection runs this module's `probe(rpc, url)` (lower first); None: no probe
    probe_order: int | None = None
    #: what detection concludes when no probe recognised the endpoint
    fallback: bool = False


PROTOCOLS: tuple[ProtocolInfo, ...] = (
    ProtocolInfo(
        "mcp-2025-11-25",
        "mcptask.protocols.mcp2025:Mcp2025",
        "mcptask.check.mcp2025:Mcp2025Suite",
        "mcp",
        fallback=True,
    ),
    ProtocolInfo(
        "mcp-2026-07-28",
        "mcptask.protocols.mcp2026:Mcp2026",
        "mcptask.check.mcp2026:Mcp2026Suite",
        "mcp",
        probe_order=1,
    ),
    ProtocolInfo(
        "a2a-0.3",
        "mcptask.protocols.a2a:A2A03",
        "mcptask.check.a2a:A2ASuite",
        "a2a",
        probe_order=2,
    ),
    ProtocolInfo(
        "a2a-1.0",
        "mcptask.protocols.a2a:A2A10",
        "mcptask.check.a2a:A2ASuite",
        "a2a",
        probe_order=2,
    ),
    ProtocolInfo(
        "a2a-1.0-rest",
        "mcptask.protocols.a2a_rest:A2ARest",
        "mcptask.check.a2a:A2ASuite",
        "a2a",
        # found by the A2A probe, from a card that offers HTTP+JSON and no JSON-RPC
    ),
    ProtocolInfo(
        "a2a-1.0-grpc",
        "mcptask.protocols.a2a_grpc:A2AGrpc",
        "mcptask.check.a2a:A2ASuite",
        "a2a",
        # found by the A2A probe, from a card that offers gRPC alone (the grpc extra)
    ),
    ProtocolInfo(
        "agno",
        "mcptask.protocols.agno:Agno",
        "mcptask.check.a2a:A2ASuite",
        "a2a",
        # the URL shape alone tells (no request): first
        probe_order=0,
    ),
)

#: every protocol name, in the registry's order
NAMES: tuple[str, ...] = tuple(p.name for p in PROTOCOLS)
#: what `-p` accepts
CHOICES: tuple[str, ...] = ("auto", *NAMES)

_BY_NAME = {p.name: p for p in PROTOCOLS}


def info(name: str) -> ProtocolInfo | None:
    return _BY_NAME.get(name)


def fallback() -> ProtocolInfo:
    return next(p for p in PROTOCOLS if p.fallback)


def probe_modules() -> list[str]:
    """The modules whose `probe` detection runs, in order (each once)."""
    rows = sorted((p for p in PROTOCOLS if p.probe_order is not None), key=_probe_key)
    return list(dict.fromkeys(p.impl.partition(":")[0] for p in rows))


def check_modules() -> list[str]:
    """The check suites' modules, each once (for the catalogue of every check)."""
    return list(dict.fromkeys(p.check.partition(":")[0] for p in PROTOCOLS))


def _probe_key(p: ProtocolInfo) -> int:
    return p.probe_order if p.probe_order is not None else 0


def load(spec: str) -> object:
    """`module:Name` -> the object."""
    import importlib

    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)
