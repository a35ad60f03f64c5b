"""`mcptask tools`: the target's tools, with their task support and required arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcptask.errors import ExitCode

if TYPE_CHECKING:
    from mcptask.session.context import Context


@dataclass
class ToolsOptions:
    """`tools` takes only the target options."""


async def run_tools(opts: ToolsOptions, ctx: Context) -> int:
    proto = await ctx.endpoint.protocol()
    tools = await proto.list_tools()
    if ctx.places.remembers:  # TAB completes `call TOOL` from them
        ctx.book.remember_tools(ctx.server, [(t.name, t.taskSupport) for t in tools])
    ctx.out.tools(tools, version=proto.protocol_version, via=proto.transport_label)
    if proto.list_cut:
        ctx.out.note(f"the list is cut short: {proto.list_cut}; showing {len(tools)} tools")
    return ExitCode.OK
