"""Traces join up (issue 35): where a task's trace comes from (a new one, `--traceparent`,
`TRACEPARENT`/`TRACESTATE`, the task book, ids derived for a task mcptask did not start), that
the book keeps it and later runs send it again, and what the output shows. In-process against
the scripted protocol; what reaches a real server is `tests/e2e/test_traceparent.py`."""

from __future__ import annotations

from pathlib import Path

import pytest
from scripted import Run, Scripted, tool

from mcptask.commands.call import CallOptions, run_call
from mcptask.commands.get import GetOptions, run_get
from mcptask.commands.watch import WatchOptions, run_watch
from mcptask.errors import ExitCode, UsageError
from mcptask.session.env import TraceGiven
from mcptask.text.traceparent import derived_ids

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"
GIVEN = f"00-{TRACE}-{SPAN}-01"
OTHER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.fixture(autouse=True)
def _no_trace_of_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACEPARENT", raising=False)
    monkeypatch.delenv("TRACESTATE", raising=False)


def _call(tmp_path: Path, proto: Scripted, traceparent: str | None = None) -> Run:
    proto.tools = [tool("slow")]
    run = Run(proto, tmp_path)
    opts = CallOptions("slow", traceparent=traceparent)
    assert run.go(lambda ctx: run_call(opts, ctx)) == ExitCode.OK
    return run


def test_call_starts_a_new_trace_the_book_keeps_and_a_later_get_sends(tmp_path: Path) -> None:
    proto = Scripted()
    run = _call(tmp_path, proto)
    [trace] = proto.traces
    assert trace is not None and trace.ids.parent_span_id is None  # the root of a new trace
    assert trace.fields == {"traceparent": f"00-{trace.ids.trace_id}-{trace.ids.span_id}-01"}
    shown = run.json()
    assert (shown["traceId"], shown["spanId"]) == (trace.ids.trace_id, trace.ids.span_id)
    assert list(shown)[-1] == "raw"
    kept = run.book.lookup(run.ctx.server, "task-1")
    assert kept is not None
    assert (kept["traceId"], kept["spanId"]) == (trace.ids.trace_id, trace.ids.span_id)
    assert "parentSpanId" not in kept
    # another run (another process): the book's trace, whatever the environment names
    later = Run(proto, tmp_path)
    later.ctx.name_trace(OTHER)
    assert later.go(lambda ctx: run_get(GetOptions("task-1"), ctx)) == ExitCode.OK
    sent = proto.refs[-1].trace
    assert sent is not None and sent.ids == trace.ids and sent.state is None
    assert later.json()["traceId"] == trace.ids.trace_id


def test_the_flag_beats_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACEPARENT", OTHER)
    monkeypatch.setenv("TRACESTATE", "congo=t61rcWkgMzE")
    proto = Scripted()
    run = _call(tmp_path, proto, GIVEN)
    [trace] = proto.traces
    assert trace is not None
    assert (trace.ids.trace_id, trace.ids.parent_span_id) == (TRACE, SPAN)
    assert trace.ids.span_id != SPAN  # the task's own span, under the one given
    assert trace.state is None  # TRACESTATE is TRACEPARENT's: not sent in another trace
    kept = run.book.lookup(run.ctx.server, "task-1")
    assert kept is not None and kept["parentSpanId"] == SPAN


def test_traceparent_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACEPARENT", GIVEN)
    proto = Scripted()
    _call(tmp_path, proto)
    monkeypatch.setenv("TRACESTATE", "congo=t61rcWkgMzE")
    _call(tmp_path, proto)
    # the flag naming the environment's trace: its TRACESTATE goes with it
    _call(tmp_path, proto, f"00-{TRACE}-00f067aa0ba902b7-01")
    first, second, third = proto.traces
    assert first is not None and first.ids.trace_id == TRACE and first.state is None
    assert second is not None and second.state == "congo=t61rcWkgMzE"
    assert second.fields["tracestate"] == "congo=t61rcWkgMzE"
    assert third is not None and third.ids.parent_span_id == "00f067aa0ba902b7"
    assert third.state == "congo=t61rcWkgMzE"


def test_a_malformed_traceparent_is_a_usage_error_before_any_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proto = Scripted()
    proto.tools = [tool("slow")]
    with pytest.raises(UsageError, match=r"^--traceparent '00-nope': not a W3C traceparent"):
        Run(proto, tmp_path).go(
            lambda ctx: run_call(CallOptions("slow", traceparent="00-nope"), ctx)
        )
    monkeypatch.setenv("TRACEPARENT", "ff-" + GIVEN[3:])
    with pytest.raises(UsageError, match=r"^TRACEPARENT '.*': traceparent version ff"):
        Run(proto, tmp_path).go(lambda ctx: run_watch(WatchOptions(["t1"]), ctx))
    assert [c for c in proto.calls if c[0] != "closed"] == []


def test_trace_given_reads_the_flag_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert TraceGiven.read(None) == TraceGiven()
    monkeypatch.setenv("TRACEPARENT", "  ")
    assert TraceGiven.read(None) == TraceGiven()  # set but empty: none named
    monkeypatch.setenv("TRACEPARENT", GIVEN)
    monkeypatch.setenv("TRACESTATE", "bad\x01state")
    given = TraceGiven.read(None)
    assert given.parent is not None and given.parent.span_id == SPAN
    assert given.state is None  # not one to pass on
    assert TraceGiven.read(OTHER).parent == TraceGiven.read(OTHER).parent
    assert TraceGiven.read(OTHER).parent.trace_id != TRACE  # type: ignore[union-attr]


def test_watch_keeps_a_task_s_trace_and_gives_one_to_a_task_without(tmp_path: Path) -> None:
    """`watch --traceparent`: a task that has a trace keeps it (its own ids, and no
    `tracestate` of another trace); one the book has none for joins the trace named, with a
    span derived from the endpoint and its id; the book keeps it from then on."""
    proto = Scripted()
    run = _call(tmp_path, proto)
    [own] = proto.traces
    assert own is not None
    proto.script("task-1", "working", "completed")
    proto.script("elsewhere", "working", "completed")
    watch = Run(proto, tmp_path, mode="ndjson")
    opts = WatchOptions(["task-1", "elsewhere"], traceparent=GIVEN)
    assert watch.go(lambda ctx: run_watch(opts, ctx)) == ExitCode.OK
    sent = {r.task_id: r.trace for r in proto.refs}
    assert sent["task-1"] is not None and sent["task-1"].ids == own.ids
    derived = derived_ids(run.ctx.server, "elsewhere", TraceGiven.read(GIVEN).parent)
    assert sent["elsewhere"] is not None and sent["elsewhere"].ids == derived
    assert derived.trace_id == TRACE and derived.parent_span_id == SPAN
    events = [e for e in watch.lines() if e.get("event") == "status"]
    assert {(e["taskId"], e["traceId"], e["spanId"]) for e in events} == {
        ("task-1", own.ids.trace_id, own.ids.span_id),
        ("elsewhere", TRACE, derived.span_id),
    }
    kept = watch.book.lookup(watch.ctx.server, "elsewhere")
    assert kept is not None and kept["spanId"] == derived.span_id


def test_a_task_nobody_named_a_trace_for_gets_derived_ids(tmp_path: Path) -> None:
    proto = Scripted()
    proto.script("t9", "working")
    run = Run(proto, tmp_path)
    assert run.go(lambda ctx: run_get(GetOptions("t9"), ctx)) == ExitCode.OK
    ids = derived_ids(run.ctx.server, "t9")
    assert proto.refs[-1].trace is not None and proto.refs[-1].trace.ids == ids
    assert run.json()["spanId"] == ids.span_id
    kept = run.book.lookup(run.ctx.server, "t9")
    assert kept is not None and kept["traceId"] == ids.trace_id
