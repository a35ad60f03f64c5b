"""MCP 2025-11-25 task server on fastmcp 3.4.11 (``fastmcp[tasks]``, in-memory task backend).

Run with the fastmcp3 venv (see ``mcp_envs.py``): ``python fastmcp3_server.py --port P``.
Endpoint: ``http://127.0.0.1:P/mcp``. Every tool supports tasks (``taskSupport: optional``).
``--record FILE``: every request it receives, one JSON line each (``wire_recorder.py``).
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import timedelta

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.tasks import TaskConfig

TASK = TaskConfig(mode="optional", poll_interval=timedelta(seconds=1))

mcp = FastMCP("mcptask-fastmcp3")


@mcp.tool(task=TASK)
async def slow_echo(text: str, ctx: Context, seconds: float = 3.0) -> str:
    """Sleep ``seconds`` in 0.5 s steps, reporting "step i/n", then echo ``text``."""
    steps = max(1, round(seconds / 0.5))
    for i in range(1, steps + 1):
        await ctx.report_progress(progress=i - 1, total=steps, message=f"step {i}/{steps}")
        await asyncio.sleep(0.5)
    return f"echo: {text}"


@mcp.tool(task=TASK)
async def fail_tool(reason: str = "boom") -> str:
    """Raise a ToolError carrying ``reason``."""
    raise ToolError(reason)


@mcp.tool(task=TASK)
async def quick(x: int) -> int:
    """Return ``x * 2`` at once."""
    return x * 2


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    # HTTPS with a test CA's certificate (tests/e2e/test_proxy_tls.py)
    parser.add_argument("--certfile")
    parser.add_argument("--keyfile")
    parser.add_argument("--record", help="write each request received to this file")
    args = parser.parse_args()
    tls = {"ssl_certfile": args.certfile, "ssl_keyfile": args.keyfile} if args.certfile else None
    from wire_recorder import middleware

    mcp.run(
        transport="http",
        host="127.0.0.1",
        port=args.port,
        show_banner=False,
        uvicorn_config=tls,
        middleware=middleware(args.record),
    )


if __name__ == "__main__":
    main()
