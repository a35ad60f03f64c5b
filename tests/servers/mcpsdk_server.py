"""A plain MCP server on an older release of the official Python SDK (``mcp``), which tops out
at MCP 2025-06-18 (mcp 1.22.0) or 2025-03-26 (mcp 1.9.4) and refuses any other
``MCP-Protocol-Version`` header with 400.

Run with the ``mcp0618`` or ``mcp0326`` venv (see ``mcp_envs.py``):

    python mcpsdk_server.py --port P          # Streamable HTTP, endpoint http://127.0.0.1:P/mcp
    python mcpsdk_server.py --port P --sse    # legacy HTTP+SSE (2024-11-05): GET /sse
    python mcpsdk_server.py --stdio           # stdio

Tools: ``slow_echo`` (progress "step i/n" every 0.2 s), ``quick``, and where the SDK has
elicitation (2025-06-18) ``ask_name``.

``--ping-first``: ``tools/list`` first pings the client on the request's own stream (the
SDK's ``related_request_id``: over Streamable HTTP, the POST's event stream) and answers only
once the ping is answered; a ping left unanswered for 20 s makes ``tools/list`` an error.
"""

import argparse
import asyncio

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel, Field

mcp = FastMCP("mcptask-mcpsdk")


@mcp.tool()
async def slow_echo(text: str, ctx: Context, seconds: float = 1.0) -> str:
    """Sleep ``seconds`` in 0.2 s steps, reporting "step i/n", then echo ``text``."""
    steps = max(1, round(seconds / 0.2))
    for i in range(1, steps + 1):
        await ctx.report_progress(progress=i, total=steps, message=f"step {i}/{steps}")
        await asyncio.sleep(0.2)
    return f"echo: {text}"


@mcp.tool()
async def quick(x: int) -> int:
    """Return ``x * 2`` at once."""
    return x * 2


class Name(BaseModel):
    name: str = Field(description="Your name")


if hasattr(Context, "elicit"):

    @mcp.tool()
    async def ask_name(ctx: Context) -> str:
        """Ask for a name (form elicitation), then greet."""
        answer = await ctx.elicit("What is your name?", Name)
        if answer.action == "accept" and answer.data is not None:
            return f"Hello, {answer.data.name}!"
        return f"no name ({answer.action})"


def ping_first() -> None:
    """`tools/list` pings the client on its own stream before it answers (``--ping-first``)."""
    from datetime import timedelta

    from mcp import types
    from mcp.server.lowlevel.server import request_ctx
    from mcp.shared.message import ServerMessageMetadata

    async def list_tools() -> list[types.Tool]:
        ctx = request_ctx.get()
        await ctx.session.send_request(
            types.ServerRequest(types.PingRequest(method="ping")),
            types.EmptyResult,
            request_read_timeout_seconds=timedelta(seconds=20),
            metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
        )
        return await mcp.list_tools()

    mcp._mcp_server.list_tools()(list_tools)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    parser.add_argument("--sse", action="store_true")
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--ping-first", action="store_true")
    args = parser.parse_args()
    if args.ping_first:
        ping_first()
    if args.stdio:
        mcp.run(transport="stdio")
        return
    mcp.settings.host = "127.0.0.1"
    mcp.settings.port = args.port
    mcp.run(transport="sse" if args.sse else "streamable-http")


if __name__ == "__main__":
    main()
