"""`mcptask export [ID...] [--since 2h] [--all]`: the task book's stories as OTLP traces, to the
backend the OpenTelemetry environment names (`OTEL_EXPORTER_OTLP_ENDPOINT`, ...; `--endpoint`
overrides) or to a file of OTLP JSON lines (`--to FILE`). One trace per task (its own, or the
one it was started in: `call --traceparent`), its span from creation to end with every event of
its story, the calls mcptask made about it as child spans (`export.spans`). Streams: the book is
read a page of tasks at a time and the spans go in batches, whatever its size.

A story sent whole is not sent again (the book keeps the last event sent; `--again` sends it
anyway, under the same span ids). A task still running is sent only when named (its span ends
at the last thing known, `mcptask.task.open`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcptask.errors import ExitCode, TaskNotFound, UsageError

if TYPE_CHECKING:
    from mcptask.export.otlp import FileSink, HttpSink
    from mcptask.export.spans import TaskTrace
    from mcptask.session.context import Context


@dataclass
class ExportOptions:
    task_ids: list[str] = field(default_factory=list)
    #: `--since 2h`: the tasks seen within that long
    since: str | None = None
    #: `--all`: every task of the book (of the target's endpoint, when one is given)
    all_tasks: bool = False
    #: `--to FILE`: OTLP JSON lines to a file (`-`: stdout) instead of an endpoint
    to: str | None = None
    #: `--endpoint URL`: the OTLP/HTTP endpoint (as OTEL_EXPORTER_OTLP_ENDPOINT)
    endpoint: str | None = None
    #: `--content`: what tasks carried (results, agents' messages, forms' questions) goes too
    content: bool = False
    #: `--again`: send stories already sent
    again: bool = False
    #: seconds the backend has to take a batch (else OTEL_EXPORTER_OTLP_TIMEOUT, else 10)
    timeout: float | None = None


#: tasks listed one by one in the pretty summary
LISTED = 20


def check_live(otlp: bool, watching: bool) -> None:
    """`--otlp` of `call`/`send`, before a task is made: it goes with `--watch`, and needs an
    endpoint to export to."""
    if not otlp:
        return
    if not watching:
        raise UsageError("--otlp exports what a watch sees: it goes with --watch")
    from mcptask.export import otlp as otlp_out

    url = otlp_out.traces_url(None)
    if url is None:
        raise UsageError(NOWHERE)
    otlp_out.check_url(url)


NOWHERE = (
    "nowhere to export to: set OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://localhost:4318),"
    " or give --endpoint URL or --to FILE"
)
#: seconds a live export has to send a batch, unless OTEL_EXPORTER_OTLP_TIMEOUT says
LIVE_TIMEOUT = 5.0


def make_sink(to: str | None, endpoint: str | None, timeout: float | None) -> HttpSink | FileSink:
    """Where the spans go: `--to FILE` (`-`: stdout), else the OTLP endpoint named by
    `--endpoint` or the environment; a usage error when nothing names one."""
    from mcptask.export import otlp

    if to is not None:
        if endpoint is not None:
            raise UsageError("give --to FILE or --endpoint URL, not both")
        if to == "-":
            import sys

            return otlp.FileSink("stdout", sys.stdout)
        return otlp.FileSink(to)
    url = otlp.traces_url(endpoint)
    if url is None:
        raise UsageError(NOWHERE)
    return otlp.HttpSink(otlp.check_url(url), timeout)


async def run_export(opts: ExportOptions, ctx: Context) -> int:
    chosen = sum((bool(opts.task_ids), opts.since is not None, opts.all_tasks))
    if chosen != 1:
        raise UsageError("export needs task ids, --since DURATION or --all (one of them)")
    since: float | None = None
    if opts.since is not None:
        from mcptask.commands.prune import parse_age

        since = time.time() - parse_age(opts.since, "--since")
    named = bool(opts.task_ids)
    tasks = _named(ctx, opts.task_ids) if named else _listed(ctx, since)
    sink = make_sink(opts.to, opts.endpoint, opts.timeout)
    exporter = _Exporter(ctx, sink, opts, named)
    try:
        for key, task_id, record, skew in tasks:
            exporter.add(key, task_id, record, skew)
        exporter.flush()
    except BaseException:
        if exporter.exported:  # what went before the failure is said, then the error
            exporter.summary()
        raise
    finally:
        sink.close()
    exporter.summary()
    if named and not exporter.exported and not exporter.unchanged:
        raise TaskNotFound(f"the task book has no history of task {', '.join(opts.task_ids)}")
    return ExitCode.OK


def _named(ctx: Context, task_ids: list[str]) -> Iterator[tuple[str, str, dict[str, Any], float]]:
    from mcptask.commands._history import book_skew
    from mcptask.commands._shared import in_book
    from mcptask.state.endpoints import endpoint_key

    for place, ids in in_book(ctx, task_ids, "task"):
        skew = book_skew(place) or 0.0
        for task_id in ids:
            record = place.book.lookup(place.server, task_id)
            if record is not None:
                yield endpoint_key(place.server), task_id, record, skew


def _listed(ctx: Context, since: float | None) -> Iterator[tuple[str, str, dict[str, Any], float]]:
    url = ctx.server if ctx.has_target() else None
    for page in ctx.book.exportable(url, since):
        yield from page


class _Exporter:
    """Stories read one task at a time, spans sent a batch at a time; each task said (ndjson)
    and marked sent in the book once its batch is taken."""

    def __init__(self, ctx: Context, sink: HttpSink | FileSink, opts: ExportOptions, named: bool):
        from mcptask.export import otlp

        self.ctx = ctx
        self.sink = sink
        self.opts = opts
        self.named = named
        self.resource = otlp.resource()
        self.pending: list[TaskTrace] = []
        self.pending_spans = 0
        self.exported = 0
        self.spans = 0
        #: sent before, nothing new (`--again` sends them)
        self.unchanged = 0
        #: still running, not named: left for later
        self.unfinished = 0
        self.listed: list[dict[str, Any]] = []

    def add(self, key: str, task_id: str, record: dict[str, Any], skew: float) -> None:
        from mcptask.export.otlp import book_trace

        trace = book_trace(self.ctx.book, key, task_id, record, skew, content=self.opts.content)
        if trace is None:
            return
        sent = record.get("exportedThrough")
        if not self.opts.again and isinstance(sent, int) and sent >= trace.last_event:
            self.unchanged += 1
            return
        if not trace.ended and not self.named:
            self.unfinished += 1
            return
        self.pending.append(trace)
        self.pending_spans += len(trace.spans)
        from mcptask.export.otlp import BATCH_SPANS

        if self.pending_spans >= BATCH_SPANS:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        from mcptask.export.otlp import send_traces

        batch, self.pending, self.pending_spans = self.pending, [], 0
        send_traces(self.ctx.book, self.sink, batch, self.resource)
        for trace in batch:
            self.exported += 1
            self.spans += len(trace.spans)
            line = {
                "taskId": trace.task_id,
                "server": trace.endpoint,
                "traceId": trace.ids.trace_id,
                "spanId": trace.ids.span_id,
                "spans": len(trace.spans),
                "ended": trace.ended,
            }
            if self.ctx.out.mode == "ndjson":
                self.ctx.out.line(line)
            elif len(self.listed) < LISTED or self.ctx.out.mode == "json":
                self.listed.append(line)

    def summary(self) -> None:
        out = self.ctx.out
        skipped = {"unchanged": self.unchanged, "unfinished": self.unfinished}
        if out.mode == "json":
            out.line(
                {
                    "destination": self.sink.shown,
                    "exported": self.exported,
                    "spans": self.spans,
                    "skipped": skipped,
                    "tasks": self.listed,
                }
            )
            return
        if out.mode == "ndjson":
            return
        words = [f"exported {self.exported} task(s), {self.spans} span(s), to {self.sink.shown}"]
        if self.unchanged:
            words.append(f"{self.unchanged} sent before left out (--again sends them)")
        if self.unfinished:
            words.append(f"{self.unfinished} still running left out (name one to send it now)")
        out.note("; ".join(words))
        if out.pretty and self.sink.shown != "stdout":
            for line in self.listed:
                out.console.print(f"{line['taskId']}  trace {line['traceId']}", markup=False)
            if self.exported > len(self.listed):
                out.console.print(f"... and {self.exported - len(self.listed)} more", markup=False)
