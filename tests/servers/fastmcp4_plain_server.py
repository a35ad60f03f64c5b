"""fastmcp 4.1.4 over stdio, without the tasks extension. Its MCP SDK serves a connection in the
era of its first request (`serve_dual_era_loop`): after `server/discover` (2026-07-28) it refuses
a 2025-11-25 `initialize` (-32022), which a fresh process accepts. ``--modern-only`` serves every
connection as 2026-07-28 (the SDK's own modern loop), so a fresh process refuses it too. Run with
the fastmcp4 venv (see ``mcp_envs.py``): ``python fastmcp4_plain_server.py [--modern-only]``."""

from __future__ import annotations

from fastmcp import FastMCP

mcp = FastMCP("mcptask-fastmcp4-plain")


@mcp.tool
def hello(x: str) -> str:
    """Echo ``x``."""
    return x


def _modern_only() -> None:
    """Every connection served by the SDK's 2026-07-28 loop, whatever its first request."""
    import mcp.server.lowlevel.server as lowlevel
    from mcp.server import runner

    async def modern(server, read_stream, write_stream, *, lifespan_state, **kw):  # type: ignore[no-untyped-def]
        try:
            await runner._serve_modern_stream(
                server,
                read_stream,
                write_stream,
                lifespan_state=lifespan_state,
                raise_exceptions=kw.get("raise_exceptions", False),
            )
        finally:
            await write_stream.aclose()

    lowlevel.serve_dual_era_loop = modern  # type: ignore[assignment]


if __name__ == "__main__":
    import sys

    if "--modern-only" in sys.argv[1:]:
        _modern_only()
    mcp.run(transport="stdio", show_banner=False)
