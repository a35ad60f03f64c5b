"""`mcptask call TOOL [k=v ...]`: start an MCP tool call as a task."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ._follow import FollowUp, after_create

if TYPE_CHECKING:
    from ..context import Context


@dataclass
class CallOptions:
    tool: str
    pairs: list[str] = field(default_factory=list)
    args_json: str | None = None
    ttl: int | None = None
    then: FollowUp = field(default_factory=FollowUp)


async def run_call(opts: CallOptions, ctx: Context) -> int:
    from .. import arguments

    proto = await ctx.protocol()
    schema = await proto.tool_schema(opts.tool) if arguments.needs_schema(opts.pairs) else None
    args = arguments.build(opts.pairs, opts.args_json, schema)
    created = await proto.call_tool(opts.tool, args, ttl=opts.ttl)
    return await after_create(ctx, created, opts.then)
