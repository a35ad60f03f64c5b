"""Issue 35: a task's story as spans (`export.spans`) and as OTLP JSON lines (`export.otlp`),
from a real task book: ids kept or derived (the same on every export), events at the server's
times in order, the wire calls as child spans, the conventions' attributes, content only when
asked, secrets never."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from mcptask.export import otlp
from mcptask.export.spans import CLIENT, task_trace
from mcptask.model.events import event
from mcptask.model.times import iso
from mcptask.state.taskbook import AT, VIA, TaskBook
from mcptask.text import redact
from mcptask.text.traceparent import TraceIds, derived_ids

URL = "http://127.0.0.1:8123/mcp"
T0 = 1_790_000_000.0


@pytest.fixture
def book(tmp_path: Path) -> TaskBook:
    return TaskBook(tmp_path / "tasks.db")


def story(book: TaskBook, task_id: str, url: str = URL) -> tuple[dict[str, Any], list[Any], float]:
    record = book.lookup(url, task_id)
    assert record is not None
    _, skew, pages = book.story(url, task_id)
    return record, [e for page in pages for e in page], skew


def mcp_task(book: TaskBook, task_id: str = "t1", **extra: Any) -> None:
    times = {"createdAt": iso(T0), "protocol": "mcp-2025-11-25", "protocolVersion": "2025-11-25"}
    first = {"status": "working", "statusMessage": "queued", "lastUpdatedAt": iso(T0)}
    book.record_many(
        URL,
        {task_id: {**first, "tool": "build-report", **times, **extra, AT: T0 + 0.2}},
        command="call",
    )
    book.add_events(URL, [event(task_id, "push-open", at=T0 + 0.3, via="push")], command="call")
    book.record(
        URL,
        task_id,
        status="working",
        statusMessage="reading",
        lastUpdatedAt=iso(T0 + 2),
        **times,
        **{AT: T0 + 3, VIA: "poll"},
    )
    book.record(
        URL,
        task_id,
        status="failed",
        statusMessage="out of paper",
        lastUpdatedAt=iso(T0 + 5),
        **times,
        **{AT: T0 + 6, VIA: "poll"},
    )
    book.add_events(
        URL,
        [
            event(task_id, "result", at=T0 + 6.1, bytes=120),
            event(task_id, "end", at=T0 + 6.2, outcome="failed", exitCode=1),
        ],
        command="watch",
    )


def test_an_mcp_task_is_one_span_with_its_story_and_the_calls_under_it(book: TaskBook) -> None:
    mcp_task(book)
    record, events, skew = story(book, "t1")
    trace = task_trace(URL, "t1", record, events, skew=skew)
    assert trace is not None and trace.ended
    task, *calls = trace.spans
    # no trace kept with the task: derived from the endpoint and the id, the same every time
    assert trace.ids == derived_ids(URL, "t1")
    assert (task.span_id, task.parent_id) == (trace.ids.span_id, None)
    assert task.name == "execute_tool build-report"
    assert task.start == T0 and task.end == pytest.approx(T0 + 6.2)
    assert task.error == "failed" and task.attributes["error.type"] == "failed"
    attrs = task.attributes
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["gen_ai.tool.name"] == "build-report"
    assert attrs["mcp.protocol.version"] == "2025-11-25"
    assert (attrs["server.address"], attrs["server.port"], attrs["network.transport"]) == (
        "127.0.0.1",
        8123,
        "tcp",
    )
    assert attrs["mcptask.task.id"] == "t1"
    # the story in order, each at the server's time where it gave one
    names = [e.name for e in task.events]
    assert names == ["created", "push-open", "message", "status failed", "result", "end"]
    status = task.events[3]
    assert status.at == T0 + 5 and status.attributes["mcptask.clock"] == "server"
    assert status.attributes["mcptask.message"] == "out of paper"
    assert status.attributes["mcptask.seen_at"] == iso(T0 + 6)
    assert all(a.at <= b.at for a, b in zip(task.events, task.events[1:], strict=False))
    # the calls: the creation's, the polls that saw changes (one span), the result fetched
    by_name = {s.name: s for s in calls}
    assert set(by_name) == {"tools/call build-report", "tasks/get", "tasks/result"}
    assert all(s.parent_id == task.span_id and s.kind == CLIENT for s in calls)
    assert by_name["tasks/get"].attributes["mcptask.polls.changes_seen"] == 2
    assert by_name["tasks/get"].attributes["mcp.method.name"] == "tasks/get"
    assert by_name["tools/call build-report"].attributes["mcp.method.name"] == "tools/call"
    assert len({s.span_id for s in trace.spans}) == len(trace.spans)
    # the same story again: the same ids
    again = task_trace(URL, "t1", record, events, skew=skew)
    assert again is not None and [s.span_id for s in again.spans] == [
        s.span_id for s in trace.spans
    ]


def test_a_task_started_in_a_trace_keeps_it(book: TaskBook) -> None:
    ids = TraceIds("ab" * 16, "cd" * 8, "ef" * 8)
    mcp_task(book, **ids.fields())
    record, events, skew = story(book, "t1")
    trace = task_trace(URL, "t1", record, events, skew=skew)
    assert trace is not None and trace.ids == ids
    assert trace.spans[0].parent_id == "ef" * 8
    assert {s.parent_id for s in trace.spans[1:]} == {"cd" * 8}


def test_an_a2a_task_has_the_a2a_attributes_and_its_turns_only_with_content(
    book: TaskBook,
) -> None:
    a2a = {"protocol": "a2a-1.0", "contextId": "ctx-9", "createdAt": iso(T0)}
    book.record(URL, "a1", status="working", **a2a, **{AT: T0 + 0.1})
    book.add_events(
        URL,
        [event("a1", "history", at=T0 + 1, message="the secret plan", role="agent")],
        command="watch",
    )
    book.record(URL, "a1", status="completed", **a2a, **{AT: T0 + 2, VIA: "poll"})
    record, events, skew = story(book, "a1")
    trace = task_trace(URL, "a1", record, events, skew=skew)
    assert trace is not None
    task = trace.spans[0]
    assert task.name == "invoke_agent"
    assert task.attributes["a2a.task.id"] == "a1"
    assert task.attributes["a2a.task.state"] == "completed"
    assert task.attributes["gen_ai.conversation.id"] == "ctx-9"
    assert task.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert task.error == ""  # completed: OK
    history = next(e for e in task.events if e.name == "history")
    assert "mcptask.message" not in history.attributes
    assert [s.name for s in trace.spans[1:]] == ["GetTask"]
    full = task_trace(URL, "a1", record, events, skew=skew, content=True)
    assert full is not None
    turn = next(e for e in full.spans[0].events if e.name == "history")
    assert turn.attributes["mcptask.message"] == "the secret plan"


def test_secrets_never_go(book: TaskBook) -> None:
    redact.hold(["tok-123456789"])
    try:
        book.record(URL, "s1", status="working", protocol="mcp-2025-11-25", **{AT: T0})
        book.add_events(
            URL,
            [event("s1", "retry", at=T0 + 1, message="401 for Bearer tok-123456789", delay=1.0)],
            command="watch",
        )
        record, events, skew = story(book, "s1")
        trace = task_trace(URL, "s1", record, events, skew=skew)
        assert trace is not None
        text = json.dumps([e.attributes for e in trace.spans[0].events])
        assert "tok-123456789" not in text and "retry" in text
        retry = trace.spans[0].events[-1]
        assert retry.attributes["error.type"] == "retry"
    finally:
        redact.release_all()


def test_spans_as_otlp_json_lines_have_hex_ids_and_the_story(book: TaskBook) -> None:
    mcp_task(book)
    record, events, skew = story(book, "t1")
    trace = task_trace(URL, "t1", record, events, skew=skew)
    assert trace is not None
    stream = io.StringIO()
    sink = otlp.FileSink("test", stream)
    sink.send([trace], otlp.resource())
    doc = json.loads(stream.getvalue())
    [resource_spans] = doc["resourceSpans"]
    attrs = {a["key"]: a["value"] for a in resource_spans["resource"]["attributes"]}
    assert attrs["service.name"] == {"stringValue": "mcptask"}
    spans = resource_spans["scopeSpans"][0]["spans"]
    assert {s["traceId"] for s in spans} == {trace.ids.trace_id}
    root = next(s for s in spans if "parentSpanId" not in s)
    assert root["spanId"] == trace.ids.span_id
    assert root["status"] == {"code": 2, "message": "failed"}
    assert int(root["startTimeUnixNano"]) == round(T0 * 1e9)
    assert [e["name"] for e in root["events"]][-1] == "end"
    children = [s for s in spans if s.get("parentSpanId") == trace.ids.span_id]
    assert len(children) == 3 and all(s["kind"] == 3 for s in children)  # SPAN_KIND_CLIENT


def test_the_book_keeps_what_was_exported_and_lists_tasks_a_page_at_a_time(
    book: TaskBook,
) -> None:
    for n in range(7):
        book.record(URL, f"p{n}", status="completed", protocol="mcp-2025-11-25", **{AT: T0 + n})
    pages = list(book.exportable(None, None, page=3))
    assert [len(p) for p in pages] == [3, 3, 1]
    assert [row[1] for page in pages for row in page] == [f"p{n}" for n in range(7)]
    recent = [row[1] for page in book.exportable(URL, T0 + 5) for row in page]
    assert recent == ["p5", "p6"]
    book.mark_exported(URL, {"p1": 42})
    assert book.lookup(URL, "p1")["exportedThrough"] == 42  # type: ignore[index]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"),
        ("http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/traces"),
        ("https://otel.example/v1/traces", "https://otel.example/v1/traces"),
    ],
)
def test_where_traces_go(value: str, expected: str) -> None:
    assert otlp.traces_url(value) == expected


def test_the_environment_names_the_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    assert otlp.traces_url() is None
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
    assert otlp.traces_url() == "http://collector:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://other:1/custom")
    assert otlp.traces_url() == "http://other:1/custom"
    with pytest.raises(Exception, match="OTLP/HTTP"):
        otlp.check_url("ftp://collector")


def test_the_json_lines_say_what_the_sdk_s_protobuf_encoder_sends(book: TaskBook) -> None:
    """The file target writes OTLP's JSON encoding itself (protobuf's json_format is some 40
    times slower): it must be, field for field, the SDK's encoding of the same spans."""
    import base64

    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    mcp_task(book, **TraceIds("ab" * 16, "cd" * 8, "ef" * 8).fields())
    mcp_task(book, "t2")
    traces = []
    for tid in ("t1", "t2"):
        record, events, skew = story(book, tid)
        trace = task_trace(URL, tid, record, events, skew=skew)
        assert trace is not None
        traces.append(trace)
    res = otlp.resource()
    ours = json.loads(json.dumps(otlp.otlp_json(traces, res)))
    sdk = MessageToDict(encode_spans(otlp.readable(traces, res)), use_integers_for_enums=True)

    def hexed(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: base64.b64decode(v).hex()
                if k in ("traceId", "spanId", "parentSpanId")
                else hexed(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [hexed(v) for v in value]
        return value

    sdk = hexed(sdk)
    for doc in (ours, sdk):  # an unset status: {} in ours, absent in json_format's
        for rs in doc["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    if not span.get("status"):
                        span.pop("status", None)
    assert ours == sdk


def test_text_that_is_not_unicode_cannot_break_a_batch(book: TaskBook) -> None:
    book.record(URL, "u1", status="working", protocol="a2a-1.0", **{AT: T0})
    book.record(URL, "u1", status="completed", protocol="a2a-1.0", **{AT: T0 + 1, VIA: "poll"})
    record, events, skew = story(book, "u1")
    events[-1]["message"] = "half a pair \ud800 here"
    trace = task_trace(URL, "u1", record, events, skew=skew)
    assert trace is not None
    stream = io.StringIO()
    otlp.FileSink("t", stream).send([trace], otlp.resource())
    stream.getvalue().encode("utf-8")  # strict: no lone surrogate left
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    encode_spans(otlp.readable([trace], otlp.resource())).SerializeToString()


def test_a_task_still_running_goes_as_a_snapshot_under_ids_of_its_own(book: TaskBook) -> None:
    """Backends keep the first version of a span (Phoenix drops one sent again): the task's own
    span goes once, whole; what is sent before is a snapshot, a child of it."""
    book.record_many(
        URL,
        {"o1": {"status": "working", "protocol": "mcp-2025-11-25", "tool": "t", AT: T0}},
        command="call",
    )
    record, events, skew = story(book, "o1")
    early = task_trace(URL, "o1", record, events, skew=skew)
    assert early is not None and not early.ended
    root = early.spans[0]
    assert root.span_id != early.ids.span_id and root.parent_id == early.ids.span_id
    assert root.attributes["mcptask.task.open"] is True
    book.record(
        URL, "o1", status="completed", protocol="mcp-2025-11-25", **{AT: T0 + 1, VIA: "poll"}
    )
    record, events, skew = story(book, "o1")
    final = task_trace(URL, "o1", record, events, skew=skew)
    assert final is not None and final.ended
    assert final.spans[0].span_id == final.ids.span_id
    assert not {s.span_id for s in early.spans} & {s.span_id for s in final.spans}
