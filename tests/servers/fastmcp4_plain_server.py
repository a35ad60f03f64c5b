"""fastmcp 4.1.4 over stdio, without the tasks extension: it speaks only MCP 2026-07-28 and
refuses a 2025-11-25 `initialize` (-32022). Run with the fastmcp4 venv (see ``mcp_envs.py``):
``python fastmcp4_plain_server.py``."""

from __future__ import annotations

from fastmcp import FastMCP

mcp = FastMCP("mcptask-fastmcp4-plain")


@mcp.tool
def hello(x: str) -> str:
    """Echo ``x``."""
    return x


if __name__ == "__main__":
    mcp.run(transport="stdio", show_banner=False)
