"""`mcptask send TEXT`: start an A2A task with a non-blocking message."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcptask.commands._follow import FollowUp, after_create

if TYPE_CHECKING:
    from mcptask.session.context import Context


@dataclass
class SendOptions:
    text: str
    then: FollowUp = field(default_factory=FollowUp)
    #: `--traceparent`: the trace the task joins (over `TRACEPARENT`; else a new one)
    traceparent: str | None = None


async def run_send(opts: SendOptions, ctx: Context) -> int:
    from mcptask.commands.export import check_live

    check_live(opts.then.otlp, opts.then.watch)
    ctx.name_trace(opts.traceparent)
    proto = await ctx.endpoint.protocol()
    trace = ctx.places.new_trace()
    created = await proto.send_message(opts.text, context_id=ctx.options.context_id, trace=trace)
    return await after_create(ctx, created, opts.then, trace=trace)
