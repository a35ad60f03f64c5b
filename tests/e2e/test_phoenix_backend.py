"""The `phoenix` fixture against itself: spans made with the OpenTelemetry SDK (no mcptask code)
go to a real Arize Phoenix over OTLP/HTTP and come back over its REST API as
`servers/phoenix.py` says they do (ids, times, attributes, events, re-sent spans, projects)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from servers.phoenix import PhoenixServer

#: 2026-12-02T10:00:00Z in nanoseconds since the epoch
T0 = 1_796_205_600_000_000_000
T0_DT = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
RESOURCE = Resource.create({"service.name": "mcptask-fixture-test"})
MS = 1_000_000  # nanoseconds


def _ids() -> tuple[int, int, int]:
    """A fresh trace id and two span ids (the server is shared by the session's tests)."""
    return random.getrandbits(128) | 1, random.getrandbits(64) | 1, random.getrandbits(64) | 1


def _context(trace_id: int, span_id: int) -> SpanContext:
    return SpanContext(trace_id, span_id, is_remote=False, trace_flags=TraceFlags(1))


def _export(phoenix: PhoenixServer, spans: list[ReadableSpan]) -> None:
    exporter = OTLPSpanExporter(endpoint=phoenix.traces_url, timeout=30)
    try:
        assert exporter.export(spans) is SpanExportResult.SUCCESS
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]


def _at(ms: float) -> datetime:
    return T0_DT + timedelta(milliseconds=ms)


def _time(text: str) -> datetime:
    assert text.endswith("+00:00"), text  # ISO 8601 in UTC, written "+00:00"
    return datetime.fromisoformat(text)


def _by_name(spans: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {span["name"]: span for span in spans}


def test_two_spans_come_back_with_ids_times_attributes_and_events(phoenix: PhoenixServer) -> None:
    trace_id, root_id, child_id = _ids()
    root_ctx = _context(trace_id, root_id)
    root = ReadableSpan(
        name="task t-1",
        context=root_ctx,
        parent=None,
        resource=RESOURCE,
        kind=SpanKind.INTERNAL,
        attributes={"mcptask.task.id": "t-1", "mcptask.polls": 3, "mcptask.terminal": True},
        events=[
            Event("status", {"status": "working", "seq": 1}, timestamp=T0 + 100 * MS),
            Event("status", {"status": "input_required", "seq": 2}, timestamp=T0 + 1250 * MS),
            Event("status", {"status": "completed", "seq": 3}, timestamp=T0 + 2500 * MS),
        ],
        start_time=T0,
        end_time=T0 + 3000 * MS,
        status=Status(StatusCode.OK),
    )
    child = ReadableSpan(
        name="tasks/get",
        context=_context(trace_id, child_id),
        parent=root_ctx,
        resource=RESOURCE,
        kind=SpanKind.CLIENT,
        attributes={"rpc.method": "tasks/get", "http.status_code": 200, "retried": False},
        start_time=T0 + 500 * MS,
        end_time=T0 + 750 * MS + 999,  # nanoseconds: Phoenix keeps microseconds, rounded
        status=Status(StatusCode.ERROR, "boom"),
    )
    _export(phoenix, [root, child])

    spans = phoenix.wait_spans(f"{trace_id:032x}", 2)
    assert [span["name"] for span in spans] == ["task t-1", "tasks/get"]  # start_time order
    got_root, got_child = spans[0], spans[1]

    # ids: lowercase hex, 32 digits for a trace, 16 for a span; the parent is the span id
    assert got_root["context"] == {"trace_id": f"{trace_id:032x}", "span_id": f"{root_id:016x}"}
    assert got_child["context"] == {"trace_id": f"{trace_id:032x}", "span_id": f"{child_id:016x}"}
    assert got_root["parent_id"] is None
    assert got_child["parent_id"] == f"{root_id:016x}"

    assert _time(got_root["start_time"]) == _at(0)
    assert _time(got_root["end_time"]) == _at(3000)
    assert got_root["end_time"] == "2026-12-02T10:00:03+00:00"  # no fraction when it is zero
    assert _time(got_child["start_time"]) == _at(500)
    assert got_child["end_time"] == "2026-12-02T10:00:00.750001+00:00"

    assert got_root["attributes"] == {
        "mcptask.task.id": "t-1",
        "mcptask.polls": 3,
        "mcptask.terminal": True,
    }
    assert got_child["attributes"] == {
        "rpc.method": "tasks/get",
        "http.status_code": 200,
        "retried": False,
    }
    assert (got_root["status_code"], got_root["status_message"]) == ("OK", "")
    assert (got_child["status_code"], got_child["status_message"]) == ("ERROR", "boom")
    assert got_root["span_kind"] == "UNKNOWN"  # no openinference.span.kind attribute

    events = got_root["events"]
    assert [(e["name"], e["attributes"]) for e in events] == [
        ("status", {"status": "working", "seq": 1}),
        ("status", {"status": "input_required", "seq": 2}),
        ("status", {"status": "completed", "seq": 3}),
    ]
    assert [_time(e["timestamp"]) for e in events] == [_at(100), _at(1250), _at(2500)]
    assert events[1]["timestamp"] == "2026-12-02T10:00:01.250000+00:00"
    assert got_child["events"] == []


def test_spans_follow_the_pagination(phoenix: PhoenixServer) -> None:
    trace_id, first, second = _ids()
    _export(
        phoenix,
        [
            ReadableSpan(
                name=name,
                context=_context(trace_id, span_id),
                resource=RESOURCE,
                start_time=T0 + offset,
                end_time=T0 + offset + MS,
            )
            for name, span_id, offset in (("first", first, 0), ("second", second, MS))
        ],
    )
    phoenix.wait_spans(f"{trace_id:032x}", 2)
    one_by_one = phoenix.spans(trace_id=f"{trace_id:032x}", page_size=1)
    assert [span["name"] for span in one_by_one] == ["first", "second"]


def test_a_resent_span_is_dropped_not_duplicated(phoenix: PhoenixServer) -> None:
    """Unique on span id, ON CONFLICT DO NOTHING: the first version stays, whatever the later
    copies say; a span id already used in another trace is dropped too."""
    trace_id, root_id, child_id = _ids()
    root_ctx = _context(trace_id, root_id)

    def root(name: str, end_ms: int, attributes: dict[str, Any]) -> ReadableSpan:
        return ReadableSpan(
            name=name,
            context=root_ctx,
            resource=RESOURCE,
            attributes=attributes,
            start_time=T0,
            end_time=T0 + end_ms * MS,
        )

    child = ReadableSpan(
        name="child",
        context=_context(trace_id, child_id),
        parent=root_ctx,
        resource=RESOURCE,
        start_time=T0 + MS,
        end_time=T0 + 2 * MS,
    )
    _export(phoenix, [root("root", 10, {"v": 1}), child])
    assert len(phoenix.wait_spans(f"{trace_id:032x}", 2)) == 2

    _export(phoenix, [root("root", 10, {"v": 1}), child])  # the same again
    _export(phoenix, [root("root renamed", 20, {"v": 2})])  # the same ids, other content
    other_trace = random.getrandbits(128) | 1
    _export(  # another trace reusing the child's span id
        phoenix,
        [
            ReadableSpan(
                name="reused id",
                context=_context(other_trace, child_id),
                resource=RESOURCE,
                start_time=T0,
                end_time=T0 + MS,
            )
        ],
    )
    phoenix.settle()

    spans = _by_name(phoenix.spans(trace_id=f"{trace_id:032x}"))
    assert sorted(spans) == ["child", "root"]
    assert spans["root"]["attributes"] == {"v": 1}
    assert _time(spans["root"]["end_time"]) == _at(10)
    assert phoenix.spans(trace_id=f"{other_trace:032x}") == []


def test_the_first_span_of_a_trace_names_its_project(phoenix: PhoenixServer) -> None:
    """`openinference.project.name` on the resource picks the project; a trace stays in the
    project of its first span."""
    trace_id, root_id, child_id = _ids()
    project = f"fixture-test-{trace_id:x}"[:40]
    root_ctx = _context(trace_id, root_id)
    _export(
        phoenix,
        [
            ReadableSpan(
                name="root",
                context=root_ctx,
                resource=Resource.create(
                    {"service.name": "mcptask-fixture-test", "openinference.project.name": project}
                ),
                start_time=T0,
                end_time=T0 + MS,
            )
        ],
    )
    phoenix.wait_spans(f"{trace_id:032x}", 1, project=project)
    _export(
        phoenix,
        [
            ReadableSpan(
                name="child",
                context=_context(trace_id, child_id),
                parent=root_ctx,
                resource=RESOURCE,  # no project: would be "default" for a new trace
                start_time=T0,
                end_time=T0 + MS,
            )
        ],
    )
    spans = phoenix.wait_spans(f"{trace_id:032x}", 2, project=project)
    assert sorted(span["name"] for span in spans) == ["child", "root"]
    assert project in [p["name"] for p in phoenix.projects()]
    assert phoenix.spans(trace_id=f"{trace_id:032x}") == []  # nothing of it in "default"


def test_the_x_project_name_header_beats_the_resource(phoenix: PhoenixServer) -> None:
    """What `OTEL_EXPORTER_OTLP_HEADERS=x-project-name=NAME` does."""
    trace_id, span_id, _ = _ids()
    project = f"fixture-header-{trace_id:x}"[:40]
    exporter = OTLPSpanExporter(
        endpoint=phoenix.traces_url, headers={"x-project-name": project}, timeout=30
    )
    try:
        result = exporter.export(
            [
                ReadableSpan(
                    name="by header",
                    context=_context(trace_id, span_id),
                    resource=Resource.create({"openinference.project.name": "not-this-one"}),
                    start_time=T0,
                    end_time=T0 + MS,
                )
            ]
        )
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]
    assert result is SpanExportResult.SUCCESS
    assert [s["name"] for s in phoenix.wait_spans(f"{trace_id:032x}", 1, project=project)] == [
        "by header"
    ]
    assert "not-this-one" not in [p["name"] for p in phoenix.projects()]
