"""`mcptask list`: the server's tasks, or the task book's (`--local`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.errors import ExitCode, UsageError
from mcptask.model.task import Task

if TYPE_CHECKING:
    from mcptask.protocols.base import TaskFilter
    from mcptask.session.context import Context


#: listed tasks recorded in the task book per transaction
RECORD_BATCH = 5000
#: a server the task book knows to hold this many tasks is listed on the poll pool's lean
#: connections (an event loop costs ~30 ms at start; a page of 100 tasks through the general
#: client ~2.3 ms more than there: bench/README.md)
LEAN_LIST = 2000


def many_pages(ctx: Context) -> bool:
    """Whether the target's list will be long: the book knows LEAN_LIST tasks there."""
    return ctx.has_target() and ctx.places.remembers and ctx.book.count(ctx.server) >= LEAN_LIST


@dataclass
class ListOptions:
    local: bool = False
    #: `--status working,input_required`
    status: str | None = None
    #: `--context ID`
    context: str | None = None
    #: `--since 1h`
    since: str | None = None
    #: `--limit N`
    limit: int | None = None

    def task_filter(self, now: float) -> TaskFilter | None:
        """The filters as one `TaskFilter` (None: none given); bad words are usage errors."""
        from mcptask.protocols.base import TaskFilter

        given = (self.status, self.context, self.since, self.limit)
        if all(v is None for v in given):
            return None
        statuses: frozenset[str] = frozenset()
        if self.status is not None:
            from mcptask.scheduler.watcher import parse_until

            try:
                statuses = parse_until(self.status)
            except UsageError as exc:
                raise UsageError(exc.message.replace("--until", "--status", 1)) from None
        since = now - parse_since(self.since) if self.since is not None else None
        return TaskFilter(statuses, self.context, since, self.limit)


def parse_since(text: str) -> float:
    """`--since`: `90s`, `30m`, `1h`, `2d`, `1w` (a bare number: seconds) -> seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text.lower())
    if m is None:
        raise UsageError(f"--since {text!r}: give a time span like 90s, 30m, 1h, 2d or 1w")
    value = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    if not 0 < value <= 100 * 365 * 86400:
        raise UsageError(f"--since {text!r}: give a span more than 0 and at most 100 years")
    return value


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


async def run_list(opts: ListOptions, ctx: Context) -> int:
    import time

    wanted = opts.task_filter(time.time())
    if opts.local and not ctx.has_target():
        _whole_book(ctx, wanted)
        return ExitCode.OK
    if opts.local:
        ctx.out.tasks(_kept(local_tasks(ctx), wanted), title="tasks in the task book")
        return ExitCode.OK
    if not ctx.has_target():
        from mcptask.session.targets import NoTarget, choose

        try:
            choose(ctx.options)
        except NoTarget as exc:  # the book's tasks need no server
            exc.hint = "`mcptask list --local` lists the task book's tasks of every server"
            raise
    from mcptask.protocols.base import CannotList

    proto = await ctx.endpoint.protocol()
    if not proto.can_list:
        ctx.out.note(f"{proto.name} has no method to list tasks; showing the task book's tasks")
        ctx.out.tasks(_kept(local_tasks(ctx), wanted), title="tasks in the task book")
        return ExitCode.OK
    proto.list_filter = wanted
    from mcptask.model.refs import TaskRef

    if proto.lists_by_session:
        # only where to list: the sessions the book's tasks were made in (and those where a
        # task may exist that the book does not know: a lost answer), not every record. A
        # listed task's record keeps what the book knew of it (a write merges), so nothing
        # of it is read here but by the write
        known: dict[str, dict[str, Any]] = {}
        refs = [TaskRef("", session=s) for s in ctx.places.known_sessions()]
        ref_of: dict[str, TaskRef] = {}
    else:
        known = ctx.places.known()  # every task the book knows there, in one read
        refs = ctx.places.refs_from(known, known)
        ref_of = {ref.task_id: ref for ref in refs}  # made once: a listed task takes its own
        refs += [TaskRef("", session=s) for s in ctx.places.orphan_sessions()]
    # -o ndjson passes each page on as it comes (a line per task); the other outputs need
    # the whole list. Either way the tasks are recorded by the batch, their references from
    # the read above (not read again), and each batch let go once written
    streaming = ctx.out.mode == "ndjson" and wanted is None  # filters see the whole list
    tasks: list[Task] = []
    batch: list[Task] = []
    count = 0

    # a session-bound list reads no record: every task's reference says the same (the
    # options' session and context), so one serves them all (the write keeps what the book knew)
    shared = ctx.places.refs_from([""], {})[0] if proto.lists_by_session else None

    def record() -> None:
        if shared is not None:
            seen = [(t, shared) for t in batch]
        else:
            new = [t.taskId for t in batch if t.taskId not in ref_of]
            ref_of.update((r.task_id, r) for r in ctx.places.refs_from(new, known))
            seen = [(t, ref_of[t.taskId]) for t in batch]
        ctx.places.remember_many(seen, via="listed")
        batch.clear()

    try:
        async for page in proto.list_pages(refs):
            count += len(page)
            batch.extend(page)
            if streaming:
                ctx.out.tasks(page)
            else:
                tasks.extend(page)
            if len(batch) >= RECORD_BATCH:
                record()
    except CannotList as exc:  # the server turned out not to list after all
        ctx.out.note(f"{exc.message}; showing the task book's tasks")
        ctx.out.tasks(_kept(local_tasks(ctx), wanted), title="tasks in the task book")
        return ExitCode.OK
    if batch:
        record()
    if not streaming:
        ctx.out.tasks(_kept(tasks, wanted))
    if proto.list_cut:
        ctx.out.note(f"the list is cut short: {proto.list_cut}; showing {count} tasks")
    return ExitCode.OK


def _kept(tasks: list[Task], wanted: TaskFilter | None) -> list[Task]:
    return wanted.apply(tasks) if wanted is not None else tasks


def _whole_book(ctx: Context, wanted: TaskFilter | None = None) -> None:
    """`list --local` without a target: every endpoint's tasks, grouped by server (the
    filters' `--limit` counts them all)."""
    by_server = {
        server: _kept(book_tasks(ep.get("tasks") or {}, server), wanted)
        for server, ep in ctx.book.all_endpoints().items()
    }
    if wanted is not None and wanted.limit is not None:
        left = wanted.limit
        for server, tasks in by_server.items():
            by_server[server] = tasks[:left]
            left -= len(by_server[server])
    if not ctx.out.pretty:
        ctx.out.tasks([t for tasks in by_server.values() for t in tasks])
        return
    if not any(by_server.values()):
        ctx.out.tasks([], title="tasks in the task book")
    for server, tasks in by_server.items():
        if tasks:
            ctx.out.tasks(tasks, title=f"tasks in the task book on {server}")


def local_tasks(ctx: Context) -> list[Task]:
    return book_tasks(ctx.book.tasks(ctx.server), ctx.server)


def book_tasks(records: dict[str, dict[str, Any]], server: str) -> list[Task]:
    """The task book's records of one endpoint as normalized tasks: the server's data as last
    seen (status, message, times, ttl, pace), and when mcptask last saw it (`lastSeenAt`)."""
    return [book_task(task_id, rec, server) for task_id, rec in records.items()]


def book_task(task_id: str, rec: dict[str, Any], server: str) -> Task:
    """One record as a task; an unfinished task of a stdio server that no process follows any
    more is `unknown` (the server exited with the mcptask that ran it), its last status said."""
    import time

    from mcptask.commands._history import _epoch
    from mcptask.model.status import TERMINAL, normalize_status
    from mcptask.model.times import iso
    from mcptask.pacing import poll_seconds

    def text(key: str) -> str | None:
        value = rec.get(key)
        return value if isinstance(value, str) else None

    def number(key: str) -> int | None:
        value = rec.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    status = normalize_status(str(rec.get("status", "working")))
    note = None
    seen = _epoch(rec.get("lastSeenAt"))
    if server.startswith("stdio:") and status not in TERMINAL:
        # the watch that ran it said so as it ended; else (a mcptask killed) nothing recorded
        # it for a while
        quiet = max(3 * poll_seconds(number("pollInterval"), 1.0), 5.0)
        if rec.get("lost") or seen is None or time.time() - seen > quiet:
            note = f"its stdio server has exited; last seen {status}"
            status = "unknown"
    return Task(
        taskId=task_id,
        status=status,
        statusMessage=text("statusMessage"),
        createdAt=text("createdAt"),
        lastUpdatedAt=text("lastUpdatedAt"),
        ttl=number("ttl"),
        pollInterval=number("pollInterval"),
        protocol=str(rec.get("protocol", "?")),
        server=server,
        contextId=text("contextId"),
        lastSeenAt=iso(seen) if seen is not None else None,
        bookNote=note,
        raw=rec,
    )
