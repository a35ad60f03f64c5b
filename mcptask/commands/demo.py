"""`mcptask demo`: an embedded task server on 127.0.0.1, and a watch of one task on it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcptask.commands._follow import FollowUp, after_create

if TYPE_CHECKING:
    from mcptask.session.context import Context


@dataclass
class DemoOptions:
    seconds: float = 8.0
    want_result: bool = True


async def run_demo(opts: DemoOptions, ctx: Context) -> int:
    from mcptask.demo.server import DemoServer
    from mcptask.protocols.mcp2025 import Mcp2025
    from mcptask.session.targets import Target

    with DemoServer(task_seconds=opts.seconds) as server:
        ctx.options.url = server.url
        ctx.options.protocol = Mcp2025.name
        ctx.use_target(Target(url=server.url, protocol=Mcp2025.name, ephemeral=True))
        if ctx.out.pretty:
            ctx.out.note(f"demo task server listening on {server.url}")
        proto = await ctx.endpoint.protocol()
        created = await proto.call_tool("build-report", {"topic": "tide pools"}, ttl=60_000)
        return await after_create(
            ctx,
            created,
            FollowUp(watch=True, want_result=opts.want_result),
            title="mcptask demo: watching a task on the embedded server",
        )
