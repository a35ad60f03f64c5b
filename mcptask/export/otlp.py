"""Spans (`spans.py`) out through the official OpenTelemetry SDK: to an OTLP/HTTP endpoint
(protobuf, the SDK's `OTLPSpanExporter`, which reads the `OTEL_EXPORTER_OTLP_*` environment as
every OTel SDK does: headers, timeout, compression, certificates) or to a file of OTLP JSON
lines (one `ExportTraceServiceRequest` a line, ids in hex: what the OpenTelemetry Collector's
file receiver reads). Imported only by the commands that export."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any

from mcptask.errors import TransportError, UsageError
from mcptask.export.spans import CLIENT, Span, TaskTrace

if TYPE_CHECKING:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan

    from mcptask.state.taskbook import TaskBook

#: spans sent in one request (the SDK's batch processor sends 512)
BATCH_SPANS = 512
#: the OTLP/HTTP path of traces under a base endpoint
TRACES_PATH = "/v1/traces"
#: the exporter's loggers: what they say of a failure is the error's reason
_LOGGERS = ("opentelemetry.exporter.otlp.proto.http", "opentelemetry.exporter.otlp.common")


def traces_url(endpoint: str | None = None) -> str | None:
    """Where traces go: `endpoint` (a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT; one ending in
    /v1/traces is taken as is), else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (as is), else
    OTEL_EXPORTER_OTLP_ENDPOINT plus /v1/traces; None when nothing names one."""
    if endpoint:
        url = endpoint.strip()
        return url if url.rstrip("/").endswith(TRACES_PATH) else url.rstrip("/") + TRACES_PATH
    signal = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if signal:
        return signal
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if base:
        return base.rstrip("/") + TRACES_PATH
    return None


def check_url(url: str) -> str:
    """An OTLP/HTTP URL, or a usage error saying why not."""
    from urllib.parse import urlsplit

    try:
        u = urlsplit(url)
        u.port  # noqa: B018 - a bad port raises here
    except ValueError as exc:
        raise UsageError(f"not an OTLP endpoint URL: {_safe(url)} ({exc})") from exc
    if u.scheme not in ("http", "https") or not u.hostname:
        raise UsageError(f"not an OTLP/HTTP endpoint URL (http:// or https://): {_safe(url)}")
    return url


def _safe(url: str) -> str:
    from mcptask.text.urls import safe_url

    return safe_url(url)


def resource() -> Resource:
    """mcptask's resource: `service.name` from OTEL_SERVICE_NAME (else "mcptask"), with
    OTEL_RESOURCE_ATTRIBUTES, as the SDK reads them."""
    from opentelemetry.sdk.resources import Resource

    from mcptask import __version__

    attrs: dict[str, Any] = {"service.version": __version__}
    if not os.environ.get("OTEL_SERVICE_NAME", "").strip():
        attrs["service.name"] = "mcptask"
    return Resource.create(attrs)


def book_trace(
    book: TaskBook,
    endpoint: str,
    task_id: str,
    record: dict[str, Any],
    skew: float,
    *,
    content: bool = False,
) -> TaskTrace | None:
    """A task's spans from its story in the book (`export` and `watch --otlp` alike); None
    when the book has no story of it."""
    from mcptask.export.spans import task_trace

    start, used, pages = book.story(endpoint, task_id, skew)
    if start is None:
        return None
    events = [e for page in pages for e in page]
    return task_trace(endpoint, task_id, record, events, skew=used, content=content)


def send_traces(
    book: TaskBook, sink: HttpSink | FileSink, traces: list[TaskTrace], res: Resource
) -> None:
    """`traces` to `sink`, then kept in the book as sent (`TaskBook.mark_exported`)."""
    sink.send(traces, res)
    by_endpoint: dict[str, dict[str, int]] = {}
    for trace in traces:
        by_endpoint.setdefault(trace.endpoint, {})[trace.task_id] = trace.last_event
    for endpoint, through in by_endpoint.items():
        book.mark_exported(endpoint, through)


def warm() -> None:
    """Import what `readable` and the exporter's encoder use (a live export does it before
    the watch polls)."""
    import opentelemetry.exporter.otlp.proto.common.trace_encoder
    import opentelemetry.sdk.trace
    import opentelemetry.sdk.util.instrumentation
    import opentelemetry.trace.status  # noqa: F401


def readable(traces: Iterable[TaskTrace], res: Resource) -> list[ReadableSpan]:
    """The SDK's spans of `traces`, with the ids and times the story gave them."""
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, TraceFlags
    from opentelemetry.trace.status import Status, StatusCode

    from mcptask import __version__

    scope = InstrumentationScope("mcptask", __version__)
    out = []
    for trace in traces:
        trace_id = int(trace.ids.trace_id, 16)
        for span in trace.spans:
            context = SpanContext(
                trace_id, int(span.span_id, 16), False, TraceFlags(TraceFlags.SAMPLED)
            )
            parent = (
                SpanContext(
                    trace_id,
                    int(span.parent_id, 16),
                    _remote_parent(trace, span),
                    TraceFlags(TraceFlags.SAMPLED),
                )
                if span.parent_id
                else None
            )
            status = Status(StatusCode.UNSET)
            if span.error == "":
                status = Status(StatusCode.OK)
            elif span.error:
                status = Status(StatusCode.ERROR, span.error)
            out.append(
                ReadableSpan(
                    name=span.name,
                    context=context,
                    parent=parent,
                    resource=res,
                    attributes=span.attributes,
                    events=[
                        Event(e.name, e.attributes, _ns(e.at), limit=None) for e in span.events
                    ],
                    kind=SpanKind.CLIENT if span.kind == CLIENT else SpanKind.INTERNAL,
                    status=status,
                    start_time=_ns(span.start),
                    end_time=_ns(max(span.end, span.start)),
                    instrumentation_scope=scope,
                )
            )
    return out


def _remote_parent(trace: TaskTrace, span: Span) -> bool:
    """The span's parent is another's: the task's span under a named trace (the calls' spans
    are under the task's, sent with them)."""
    return span.parent_id is not None and span.span_id == trace.ids.span_id


def _ns(at: float) -> int:
    return round(at * 1e9)


class ExportFailed(TransportError):
    """The backend did not take the spans (its answer, or why it could not be reached)."""


class HttpSink:
    """Spans to an OTLP/HTTP endpoint through the SDK's exporter (retries and backoff are
    its own, within the timeout)."""

    def __init__(self, url: str, timeout: float | None = None) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        self.url = url
        self.shown = _safe(url)
        cert = (
            os.environ.get("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE")
            or os.environ.get("OTEL_EXPORTER_OTLP_CERTIFICATE")
            or os.environ.get("SSL_CERT_FILE")  # as mcptask's own requests take it
            or None
        )
        self._exporter = OTLPSpanExporter(endpoint=url, timeout=timeout, certificate_file=cert)
        self._reasons = _Reasons()

    def send(self, traces: list[TaskTrace], res: Resource) -> None:
        from opentelemetry.sdk.trace.export import SpanExportResult

        spans = readable(traces, res)
        with self._reasons.capture():
            result = self._exporter.export(spans)
        if result is not SpanExportResult.SUCCESS:
            why = self._reasons.last or "the export failed"
            raise ExportFailed(f"cannot export to {self.shown}: {why}")

    def close(self) -> None:
        with self._reasons.capture():
            self._exporter.shutdown()  # type: ignore[no-untyped-call]


class FileSink:
    """Spans as OTLP JSON lines appended to a file (or written to a stream: `-`)."""

    def __init__(self, path: str, stream: IO[str] | None = None) -> None:
        self.shown = path
        self._own = stream is None
        if stream is None:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            except OSError as exc:
                raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc
            stream = os.fdopen(fd, "a", encoding="utf-8")
        self._stream = stream

    def send(self, traces: list[TaskTrace], res: Resource) -> None:
        doc = otlp_json(traces, res)
        try:
            self._stream.write(json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n")
            self._stream.flush()
        except OSError as exc:
            raise ExportFailed(f"cannot write {self.shown}: {exc.strerror or exc}") from exc

    def close(self) -> None:
        if self._own:
            self._stream.close()


def otlp_json(traces: list[TaskTrace], res: Resource) -> dict[str, Any]:
    """`traces` as one `ExportTraceServiceRequest` in OTLP's JSON encoding (the OTLP
    specification's "JSON Protobuf Encoding": camelCase, enums as numbers, trace and span ids
    as hex, 64-bit numbers as strings), what the SDK's protobuf encoder sends over the wire
    (`tests/unit/test_export_spans.py` holds the two equal)."""
    from mcptask import __version__

    spans = []
    for trace in traces:
        for span in trace.spans:
            out: dict[str, Any] = {
                "traceId": trace.ids.trace_id,
                "spanId": span.span_id,
            }
            if span.parent_id:
                out["parentSpanId"] = span.parent_id
            out["name"] = span.name
            out["kind"] = 3 if span.kind == CLIENT else 1
            out["startTimeUnixNano"] = str(_ns(span.start))
            out["endTimeUnixNano"] = str(_ns(max(span.end, span.start)))
            if span.attributes:
                out["attributes"] = _json_attrs(span.attributes)
            if span.events:
                out["events"] = [
                    {"timeUnixNano": str(_ns(e.at)), "name": e.name}
                    | ({"attributes": _json_attrs(e.attributes)} if e.attributes else {})
                    for e in span.events
                ]
            out["status"] = (
                {}
                if span.error is None
                else ({"code": 1} if span.error == "" else {"code": 2, "message": span.error})
            )
            # SpanFlags: whether the parent is remote is known (0x100); it is (0x200) for the
            # task's span under a trace named by someone else (`--traceparent`)
            out["flags"] = 256 | (512 if _remote_parent(trace, span) else 0)
            spans.append(out)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _json_attrs(dict(res.attributes))},
                "scopeSpans": [
                    {"scope": {"name": "mcptask", "version": __version__}, "spans": spans}
                ],
            }
        ]
    }


def _json_attrs(attrs: Any) -> list[dict[str, Any]]:
    return [{"key": k, "value": _json_value(v)} for k, v in attrs.items()]


def _json_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_json_value(v) for v in value]}}
    return {"stringValue": str(value)}


class _Reasons(logging.Handler):
    """What the exporter logs while it sends: the reason of a failure; none of it reaches
    stderr (a failure is mcptask's one line)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.said: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.WARNING or len(self.said) > 20:
            return
        try:
            self.said.append(record.getMessage())
        except Exception:  # a message that does not format: its template
            self.said.append(str(record.msg))

    @property
    def last(self) -> str | None:
        """A refused connection or a timeout where the exporter met one (its retries end in
        words of their own), else its last words."""
        from mcptask.text.sanitize import one_line

        for text in self.said:
            reason = _reason(text)
            if reason is not text:
                return reason
        return one_line(self.said[-1], 300) if self.said else None

    def capture(self) -> _Capture:
        return _Capture(self)


class _Capture:
    def __init__(self, handler: _Reasons) -> None:
        self.handler = handler
        self.saved: list[tuple[logging.Logger, bool]] = []

    def __enter__(self) -> None:
        self.handler.said.clear()
        for name in _LOGGERS:
            logger = logging.getLogger(name)
            self.saved.append((logger, logger.propagate))
            logger.propagate = False
            logger.addHandler(self.handler)

    def __exit__(self, *exc: object) -> None:
        for logger, propagate in self.saved:
            logger.removeHandler(self.handler)
            logger.propagate = propagate
        self.saved.clear()


def _reason(text: str) -> str:
    """The exporter's words made one short reason: a refused connection says so."""
    low = text.lower()
    if "connection refused" in low or "failed to establish a new connection" in low:
        return "connection refused (is the OTLP backend running?)"
    if "timed out" in low or "read timeout" in low:
        return "the backend did not answer in time"
    return text
