"""MCP 2026-07-28 + tasks extension server on fastmcp 4.1.4 + fastmcp-tasks 4.1.4.

Run with the fastmcp4 venv (see ``mcp_envs.py``): ``python fastmcp4_server.py --port P``
(``--stdio``: over stdin/stdout instead).
Endpoint: ``http://127.0.0.1:P/mcp``. Every tool supports tasks (``taskSupport: optional``).
``--record FILE``: every request it receives over HTTP, one JSON line each (``wire_recorder.py``).
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import timedelta

import fastmcp_tasks
import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from mcp.shared.exceptions import MCPError

TASK = TaskConfig(mode="optional", poll_interval=timedelta(seconds=1))

mcp = FastMCP("mcptask-fastmcp4")
mcp.add_extension(fastmcp_tasks.TasksExtension())


@mcp.tool(task=TASK)
async def slow_echo(text: str, ctx: Context, seconds: float = 3.0) -> str:
    """Sleep ``seconds`` in 0.5 s steps, reporting "step i/n", then echo ``text``."""
    steps = max(1, round(seconds / 0.5))
    for i in range(1, steps + 1):
        await ctx.report_progress(progress=i - 1, total=steps, message=f"step {i}/{steps}")
        await asyncio.sleep(0.5)
    return f"echo: {text}"


@mcp.tool(task=TASK)
async def rpc_error() -> str:
    """Raise a protocol error: as a task it ends ``failed`` with a JSON-RPC ``error``."""
    raise MCPError(code=-32603, message="rpc_error: deliberate protocol failure")


@mcp.tool(task=TASK)
async def tool_error() -> str:
    """Raise a ToolError: as a task it ends ``completed`` with an ``isError`` result."""
    raise ToolError("tool_error: deliberate tool failure")


@mcp.tool(task=TASK)
async def ask_name(ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Ask for a name with a form elicitation (``input_required``), then greet."""
    responses = ctx.input_responses or {}
    answer = responses.get("name")
    if isinstance(answer, mcp_types.ElicitResult) and answer.action == "accept":
        name = (answer.content or {}).get("name")
        if isinstance(name, str) and name:
            return f"Hello, {name}!"
    if isinstance(answer, mcp_types.ElicitResult):
        return f"No name given ({answer.action})."
    return mcp_types.InputRequiredResult(
        input_requests={
            "name": mcp_types.ElicitRequest(
                params=mcp_types.ElicitRequestFormParams(
                    message="What is your name?",
                    requested_schema={
                        "type": "object",
                        "properties": {"name": {"type": "string", "description": "Your name"}},
                        "required": ["name"],
                    },
                )
            )
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    parser.add_argument("--stdio", action="store_true", help="serve over stdin/stdout")
    parser.add_argument("--record", help="write each HTTP request received to this file")
    args = parser.parse_args()
    if args.stdio:
        mcp.run(transport="stdio", show_banner=False)
        return
    if args.port is None:
        parser.error("--port or --stdio is required")
    from wire_recorder import middleware

    mcp.run(
        transport="http",
        host="127.0.0.1",
        port=args.port,
        show_banner=False,
        middleware=middleware(args.record),
    )


if __name__ == "__main__":
    main()
