"""`mcptask tools`: the target's tools, with their task support and required arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ExitCode

if TYPE_CHECKING:
    from ..context import Context


@dataclass
class ToolsOptions:
    """`tools` takes only the target options."""


async def run_tools(opts: ToolsOptions, ctx: Context) -> int:
    proto = await ctx.protocol()
    ctx.out.tools(await proto.list_tools())
    return ExitCode.OK
