"""`mcptask log TASK_ID`: the task's story from the task book's event log, in the order things
happened (the server's time where it said when, `commands._history.Timeline`), with times
relative to its creation and the gaps between events; `--follow` keeps printing what is
recorded until the task ends: what a watch elsewhere records, else what `log` itself sees,
following the task at the server's pace (push where it offers it) as `watch` does."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.commands._history import Timeline, book_skew, ends, live_follower
from mcptask.errors import ExitCode, TaskEnded, TaskNotFound
from mcptask.model.events import EventKind

if TYPE_CHECKING:
    from mcptask.scheduler.watcher import Watched
    from mcptask.session.context import Context


@dataclass
class LogOptions:
    task_id: str
    follow: bool = False
    #: `--follow`: give up waiting after this many seconds (exit 7); the history is printed
    timeout: float | None = None


#: seconds between two looks at the book while following
FOLLOW_EVERY = 0.25
#: seconds `log --follow` waits for the book to show its own watch's last records
FINAL_WRITES = 5.0
#: exit statuses of `log --follow`'s own watch that `log` passes on (the rest: the story was
#: told to its end, exit 0)
PASSED_ON = frozenset(
    (
        ExitCode.AUTH,
        ExitCode.SERVER,
        ExitCode.TIMEOUT,
        ExitCode.NOT_FOUND,
        ExitCode.HANGUP,
        ExitCode.INTERRUPTED,
        ExitCode.QUIT,
        ExitCode.TERMINATED,
    )
)


async def run_log(opts: LogOptions, ctx: Context) -> int:
    from mcptask.commands._shared import in_book

    [(ctx, [task_id])] = in_book(ctx, [opts.task_id], "history of task")
    printer = Printer(ctx, task_id, keep=opts.follow)
    start, skew, pages = ctx.book.story(ctx.server, task_id, printer.skew or 0.0)
    if start is None and not opts.follow:
        raise TaskNotFound(
            f"the task book has no history of task {task_id} on {ctx.server}"
            if ctx.has_target()
            else f"the task book has no history of task {task_id}"
        )
    printer.timeline.start = start
    printer.timeline.skew = skew
    for page in pages:  # a history of any length streams, a page at a time
        printer.show(page)
    code: int = ExitCode.OK
    if opts.follow:
        code = await _follow(opts, ctx, task_id, printer)
    printer.finish()
    return code


class Printer:
    """A task's events as they are recorded: one line each (pretty, a screenful per print),
    one JSON object each (ndjson; `--jq` applies to each), or one document at the end
    (`-o json`)."""

    def __init__(self, ctx: Context, task_id: str, *, keep: bool = True) -> None:
        self.ctx = ctx
        self.task_id = task_id
        #: the events are kept (`--follow` reads them again); else only whether it ended
        self.keep = keep
        self.ended = False
        #: a follower's `end` was printed (it records it after the terminal status)
        self.ended_at_end = False
        self.skew = book_skew(ctx)
        self.timeline = Timeline(task_id, ctx.server, self.skew, stamps=not ctx.out.pretty)
        self.events: list[dict[str, Any]] = []
        self.lines: list[dict[str, Any]] = []
        self.last = 0

    def pull(self) -> None:
        """Print what was recorded since the last look."""
        self.show(self.ctx.book.events(self.ctx.server, self.task_id, after=self.last))

    def show(self, new: list[dict[str, Any]]) -> None:
        if not new:
            return
        first = not self.last
        if self.keep:
            self.events += new
        self.ended = self.ended or ends(new)
        self.ended_at_end = self.ended_at_end or any(e["kind"] == EventKind.END for e in new)
        self.last = max(self.last, *(int(e["n"]) for e in new))
        lines = self.timeline.add(new)
        out = self.ctx.out
        if out.mode == "json":
            self.lines += lines
        if out.mode == "ndjson":
            for line in lines:
                out.line(line)
        elif out.pretty:
            from mcptask.output.history import print_log

            print_log(out, lines, header=self._header() if first else None)

    def _header(self) -> str:
        head = f"task {self.task_id} on {self.ctx.server}"
        if self.skew is not None and abs(self.skew) >= 1.0:
            from mcptask.output.console import duration

            way = "ahead of" if self.skew > 0 else "behind"
            head += (
                f" (the server's clock is {duration(abs(self.skew))} {way} this machine's; "
                "its times are shown as it gave them)"
            )
        return head

    def finish(self) -> None:
        if self.ctx.out.mode == "json":
            doc: dict[str, Any] = {"taskId": self.task_id, "server": self.ctx.server}
            doc.update(self._trace())
            doc["events"] = self.lines
            self.ctx.out.line(doc)

    def _trace(self) -> dict[str, str]:
        """The trace the book keeps with the task (`traceId`, `spanId`, `parentSpanId`):
        where its story is in a trace backend; none for a task no request was made about
        since mcptask keeps traces."""
        from mcptask.text.traceparent import TraceIds

        record = self.ctx.book.lookup(self.ctx.server, self.task_id)
        ids = TraceIds.from_fields(record) if record else None
        return ids.fields() if ids is not None else {}


async def _follow(opts: LogOptions, ctx: Context, task_id: str, printer: Printer) -> int:
    """Print what is recorded until the task ends: while a watch elsewhere follows the task,
    what it records; else `log` follows it itself (a watch of its own, recorded in the book
    like any other). `--timeout` bounds the wait."""
    started = time.monotonic()
    while True:
        remembers = ctx.places.remembers
        # a watch elsewhere records the task: what it records is printed, up to its `end`
        # (recorded after the terminal status, once it has the result)
        live = remembers and live_follower(ctx.book.lookup(ctx.server, task_id), printer.events)
        if printer.ended and not live:
            return ExitCode.OK
        left = None if opts.timeout is None else opts.timeout - (time.monotonic() - started)
        if left is not None and left <= 0:
            raise TaskEnded(
                f"task {task_id}: --timeout {opts.timeout:g} s elapsed", ExitCode.TIMEOUT
            )
        if remembers and not live:
            return await _own_watch(ctx, task_id, printer, left)
        # a live watch elsewhere, or a stdio server's task, which only the process that
        # started it reaches: print what is recorded
        await ctx.sleep(FOLLOW_EVERY)
        printer.pull()
        if not remembers and not printer.events:
            return ExitCode.OK


async def _own_watch(ctx: Context, task_id: str, printer: Printer, timeout: float | None) -> int:
    """Nothing else follows the task: watch it here (its pace, push where the server offers
    it, the first look at once), each change printed from the book as it is recorded."""
    import asyncio  # only a follow needs the loop's tools (`log ID` alone does not import it)

    from mcptask.commands.watch import WatchOptions, run_watch

    tail = _Tail(printer)
    ticker = asyncio.ensure_future(_pull_now_and_then(printer))
    try:
        code = await run_watch(
            WatchOptions(
                task_ids=[task_id],
                timeout=timeout,
                sink=tail,
                book_flush=0.0,
                stop_on_input=False,
            ),
            ctx,
        )
    finally:
        ticker.cancel()
        printer.pull()
    await _last_records(ctx, printer, tail)
    return code if code in PASSED_ON else ExitCode.OK


async def _last_records(ctx: Context, printer: Printer, tail: _Tail) -> None:
    """The watch ended the task: its `end` is printed from the book, where it is once the
    watch's writes are done. A book that does not show it within FINAL_WRITES (another
    process's lock, a full disk) is said in one line, never silently."""
    if tail.ended is None or printer.ended_at_end:
        return
    waited = 0.0
    while waited < FINAL_WRITES and not printer.ended_at_end:
        await ctx.sleep(FOLLOW_EVERY)
        waited += FOLLOW_EVERY
        printer.pull()
    if not printer.ended_at_end:
        ctx.out.note(
            f"task {printer.task_id}: the watch ended ({tail.ended}) but the task book does "
            f"not show it yet: `mcptask log {printer.task_id}` later tells the rest"
        )


async def _pull_now_and_then(printer: Printer) -> None:
    """What other processes record meanwhile (an answer, a cancel) shows as it comes."""
    import asyncio

    while True:
        await asyncio.sleep(FOLLOW_EVERY)
        printer.pull()


class _Tail:
    """The events of `log --follow`'s own watch: each is in the book by now (the watch writes
    at once), and is printed from there, as every other process's records are."""

    def __init__(self, printer: Printer) -> None:
        self.printer = printer
        #: how the watch ended the task (its outcome), once it did
        self.ended: str | None = None

    def update(self, w: Watched, via: str) -> None:
        self.printer.pull()

    def retry(self, w: Watched, error: str, delay: float) -> None:
        self.printer.pull()

    def progress(self, w: Watched) -> None:
        self.printer.pull()

    def end(self, w: Watched) -> None:
        self.ended = w.outcome
        self.printer.pull()

    def artifact(self, w: Watched, update: Any) -> None:
        self.printer.pull()

    def late(self, note: Any) -> None:
        """Polls run late at the cap of polls in flight: one line on stderr."""
        self.printer.ctx.out.note(note.line())

    def finish(self, watched: list[Watched], code: int) -> None:
        self.printer.pull()
