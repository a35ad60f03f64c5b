"""`mcptask log TASK_ID`: the task's story from the task book's event log, oldest first, with
times relative to its creation and the gaps between events; `--follow` keeps printing what any
mcptask process records (and polls the server itself when nothing else does)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.commands._history import ends, timeline
from mcptask.errors import ExitCode, McptaskError, TaskNotFound

if TYPE_CHECKING:
    from mcptask.session.context import Context


@dataclass
class LogOptions:
    task_id: str
    follow: bool = False
    #: `--follow`: give up after this many seconds (exit 7)
    timeout: float | None = None


#: seconds between two looks at the book while following
FOLLOW_EVERY = 0.25
#: seconds `--follow` waits, once the task ended, for what is recorded with its end
FOLLOW_TAIL = 1.0
#: while following, the server is polled by `log` itself when nothing recorded the task for
#: this many of its poll intervals (at least FOLLOW_SELF_MIN seconds)
FOLLOW_SELF_FACTOR = 3.0
FOLLOW_SELF_MIN = 5.0


async def run_log(opts: LogOptions, ctx: Context) -> int:
    from mcptask.commands._shared import in_book

    [(ctx, [task_id])] = in_book(ctx, [opts.task_id], "history of task")
    book = ctx.book
    events = book.events(ctx.server, task_id)
    if not events and not opts.follow:
        raise TaskNotFound(
            f"the task book has no history of task {task_id} on {ctx.server}"
            if ctx.has_target()
            else f"the task book has no history of task {task_id}"
        )
    printer = _Printer(ctx, task_id)
    printer.show(events)
    if opts.follow and not ends(events):
        await _follow(opts, ctx, task_id, printer)
    printer.finish()
    return ExitCode.OK


class _Printer:
    """Lines as they come (pretty, ndjson); one document at the end (json)."""

    def __init__(self, ctx: Context, task_id: str) -> None:
        self.ctx = ctx
        self.task_id = task_id
        self.events: list[dict[str, Any]] = []
        self.lines: list[dict[str, Any]] = []

    @property
    def last(self) -> int:
        return max((int(e["n"]) for e in self.events), default=0)

    def show(self, new: list[dict[str, Any]]) -> None:
        if not new:
            return
        before = len(self.events)
        self.events += new
        lines = timeline(self.task_id, self.ctx.server, self.events)[before:]
        self.lines += lines
        out = self.ctx.out
        if out.mode == "ndjson":
            for line in lines:
                out.line(line)
        elif out.pretty:
            from mcptask.output.history import log_line

            if before == 0:
                out.console.print(f"task {self.task_id} on {self.ctx.server}", markup=False)
            for line in lines:
                log_line(out, line)

    def finish(self) -> None:
        if self.ctx.out.mode == "json":
            self.ctx.out.line(
                {"taskId": self.task_id, "server": self.ctx.server, "events": self.lines}
            )


async def _follow(opts: LogOptions, ctx: Context, task_id: str, printer: _Printer) -> None:
    from mcptask.errors import TaskEnded

    book = ctx.book
    started = time.monotonic()
    last_news = time.time()
    while True:
        if opts.timeout is not None and time.monotonic() - started >= opts.timeout:
            raise TaskEnded(
                f"task {task_id}: --timeout {opts.timeout:g} s elapsed", ExitCode.TIMEOUT
            )
        await ctx.sleep(FOLLOW_EVERY)
        new = book.events(ctx.server, task_id, after=printer.last)
        if new:
            printer.show(new)
            last_news = time.time()
            if ends(printer.events):
                # what the watch writes with the end (the result, its end) comes a moment later
                await ctx.sleep(FOLLOW_TAIL)
                printer.show(book.events(ctx.server, task_id, after=printer.last))
                return
        rec = book.lookup(ctx.server, task_id)
        pace = rec.get("pollInterval") if rec else None
        interval = pace / 1000 if isinstance(pace, int) and pace > 0 else 1.0
        quiet_for = time.time() - max(last_news, _seen(rec))
        if quiet_for >= max(FOLLOW_SELF_FACTOR * interval, FOLLOW_SELF_MIN):
            if await _poll_once(ctx, task_id):
                return  # the server no longer knows it
            last_news = time.time()


def _seen(rec: dict[str, Any] | None) -> float:
    from mcptask.commands._history import _epoch

    return (_epoch(rec.get("lastSeenAt")) if rec else None) or 0.0


async def _poll_once(ctx: Context, task_id: str) -> bool:
    """Nothing else records the task: ask the server (recorded like any poll). True when
    the server does not know it any more."""
    if not ctx.places.remembers:  # a stdio server's task died with it
        return True
    try:
        proto = await ctx.endpoint.protocol()
        ref = ctx.places.ref(task_id)
        task = await proto.get(ref)
    except TaskNotFound as exc:
        ctx.out.note(f"task {task_id}: {exc.message}")
        return True
    except McptaskError as exc:
        ctx.out.note(f"task {task_id}: {exc.message}; trying again")
        return False
    ctx.places.remember(task, ref, via="poll")
    return False
