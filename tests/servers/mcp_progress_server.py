"""An MCP 2025-11-25 task server on the official Python SDK (``mcp`` 1.30, the fastmcp3 venv),
low-level: its task's progress goes out as the SDK sends a notification with no request to
relate it to, on the session's standalone GET stream, with the client's ``progressToken`` and
without ``io.modelcontextprotocol/related-task`` ``_meta`` (issue 39: servers do so).

    python mcp_progress_server.py --port P       # endpoint http://127.0.0.1:P/mcp

Tool ``count(steps=3)`` (task support optional): ``steps`` progress notifications, one every
``--step-seconds`` (0.3 s), then ``counted to <steps>``. Progress is sent only once the client
holds the GET stream (the SDK drops a notification sent before), so a client that opens it sees
every one (it waits for the stream, at most 60 s).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import AsyncIterator

import anyio
import mcp.types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.routing import Mount

server: Server = Server("mcptask-progress-without-related-task")
server.experimental.enable_tasks()
STEP = 0.3


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return [
        types.Tool(
            name="count",
            description="Count to `steps`, reporting progress with the caller's token.",
            inputSchema={"type": "object", "properties": {"steps": {"type": "integer"}}},
            execution=types.ToolExecution(taskSupport="optional"),
        )
    ]


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> types.CallToolResult | types.CreateTaskResult:
    ctx = server.request_context
    token = ctx.meta.progressToken if ctx.meta is not None else None
    session = ctx.session
    steps = int(arguments.get("steps", 3))

    session_id = ctx.request.headers.get("mcp-session-id") if ctx.request is not None else None

    async def work(task: object) -> types.CallToolResult:
        await _get_stream_open(session_id)
        for i in range(1, steps + 1):
            await anyio.sleep(STEP)
            if token is not None:
                # no related_request_id: the SDK sends it on the session's GET stream
                await session.send_progress_notification(token, i, steps, f"step {i}/{steps}")
        await anyio.sleep(STEP)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"counted to {steps}")]
        )

    if ctx.experimental.is_task:
        return await ctx.experimental.run_task(work)
    return await work(None)


MANAGER: StreamableHTTPSessionManager | None = None


async def _get_stream_open(session_id: str | None, limit: float = 60.0) -> None:
    """Wait (at most `limit` s) until the session's client holds its GET stream: the SDK
    drops a notification with nowhere to go (its transport's own table, read here)."""
    from mcp.server.streamable_http import GET_STREAM_KEY

    with anyio.move_on_after(limit):
        while True:
            transport = MANAGER._server_instances.get(session_id or "") if MANAGER else None
            if transport is not None and GET_STREAM_KEY in transport._request_streams:
                return
            await anyio.sleep(0.05)


def main() -> None:
    global STEP, MANAGER
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--step-seconds", type=float, default=STEP)
    args = parser.parse_args()
    STEP = args.step_seconds
    manager = MANAGER = StreamableHTTPSessionManager(app=server)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    app = Starlette(routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
