"""W3C Trace Context (`traceparent`, https://www.w3.org/TR/trace-context/): the trace a task
belongs to, as mcptask sends it (MCP: `_meta.traceparent`, SEP-414; A2A: the HTTP header) and
exports it (OTLP: `export/`).

A task's trace is three ids kept with it in the task book (`TraceIds`): the trace, the task's
own span (the span `export` sends for the task, and the parent of every request mcptask makes
about it), and the span it was started under (`--traceparent`, `TRACEPARENT`), if any. A task
mcptask did not start, and nobody named a trace for, gets ids derived from its endpoint and id:
exported twice, or by two machines, it is the same trace and span."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

#: version 00: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>` (lowercase)
_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")
#: `tracestate` as sent on: at most 512 characters of printable ASCII (the spec's bound)
MAX_TRACESTATE = 512
_PRINTABLE = re.compile(r"^[\x20-\x7e]*$")
SAMPLED = 0x01


class BadTraceparent(ValueError):
    """Not a W3C traceparent (the message says why, in one line)."""


@dataclass(frozen=True)
class Traceparent:
    """A parsed `traceparent`: the caller's trace and span."""

    trace_id: str
    span_id: str
    flags: int = SAMPLED

    def header(self) -> str:
        return f"00-{self.trace_id}-{self.span_id}-{self.flags:02x}"


def parse(value: str) -> Traceparent:
    """A `traceparent` header's value; BadTraceparent when it is not one. Version 00 exactly
    (four fields); a later version is read for its first four fields, as the spec asks."""
    text = value.strip()
    m = _TRACEPARENT.match(text)
    if m is None:
        raise BadTraceparent(
            "not a W3C traceparent (expected 00-<32 hex digits>-<16 hex digits>-<2 hex digits>)"
        )
    version, trace_id, span_id, flags, rest = m.groups()
    if version == "ff":
        raise BadTraceparent("traceparent version ff is invalid")
    if version == "00" and rest:
        raise BadTraceparent("a version 00 traceparent has exactly four fields")
    if trace_id == "0" * 32 or span_id == "0" * 16:
        raise BadTraceparent("a traceparent's trace id and parent id may not be all zeros")
    return Traceparent(trace_id, span_id, int(flags, 16))


def clean_tracestate(value: str | None) -> str | None:
    """A `tracestate` to send on, or None when it is empty, too long or not printable ASCII
    (the spec lets a vendor drop what it cannot carry)."""
    if not value:
        return None
    text = value.strip()
    if not text or len(text) > MAX_TRACESTATE or not _PRINTABLE.match(text):
        return None
    return text


@dataclass(frozen=True)
class TraceIds:
    """A task's place in a trace: the trace, the task's own span, the span it was started
    under (None: the task's span is the trace's root)."""

    trace_id: str
    span_id: str
    parent_span_id: str | None = None

    def traceparent(self) -> str:
        """What a request about the task carries: the task's span as the parent."""
        return f"00-{self.trace_id}-{self.span_id}-01"

    def fields(self) -> dict[str, str]:
        """The task book's fields for these ids (`traceId`, `spanId`, `parentSpanId`)."""
        out = {"traceId": self.trace_id, "spanId": self.span_id}
        if self.parent_span_id:
            out["parentSpanId"] = self.parent_span_id
        return out

    @classmethod
    def from_fields(cls, fields: dict[str, object]) -> TraceIds | None:
        """The ids kept in the book (`fields`), when they are well formed."""
        trace, span = fields.get("traceId"), fields.get("spanId")
        parent = fields.get("parentSpanId")
        if not (isinstance(trace, str) and _hex(trace, 32) and isinstance(span, str)):
            return None
        if not _hex(span, 16):
            return None
        return cls(trace, span, parent if isinstance(parent, str) and _hex(parent, 16) else None)


def _hex(value: str, n: int) -> bool:
    return len(value) == n and all(c in "0123456789abcdef" for c in value) and value != "0" * n


def new_ids(under: Traceparent | None = None) -> TraceIds:
    """Ids for a task mcptask is about to start: in `under`'s trace (a child of its span) when
    given, else a new trace with the task's span at its root."""
    span = secrets.token_hex(8)
    while span == "0" * 16:  # pragma: no cover - one chance in 2**64
        span = secrets.token_hex(8)
    if under is not None:
        return TraceIds(under.trace_id, span, under.span_id)
    trace = secrets.token_hex(16)
    while trace == "0" * 32:  # pragma: no cover
        trace = secrets.token_hex(16)
    return TraceIds(trace, span)


def derived_ids(endpoint: str, task_id: str, under: Traceparent | None = None) -> TraceIds:
    """Ids for a task mcptask did not start and knows no trace of: the same for the same
    endpoint (its book key) and task, on every machine and every export. Under `under` when a
    trace is named (the task's span is then derived from that trace as well)."""
    base = f"{endpoint}\0{task_id}"
    if under is not None:
        base += f"\0{under.trace_id}\0{under.span_id}"
    digest = hashlib.sha256(base.encode("utf-8", "surrogatepass")).hexdigest()
    trace = digest[:32] if digest[:32] != "0" * 32 else "1" * 32
    span = digest[32:48] if digest[32:48] != "0" * 16 else "1" * 16
    if under is not None:
        return TraceIds(under.trace_id, span, under.span_id)
    return TraceIds(trace, span)


def child_span_id(ids: TraceIds, name: str) -> str:
    """A span id under the task's span, the same for the same task and `name` (a wire call's
    span in `export`: re-exporting sends the same ids)."""
    digest = hashlib.sha256(f"{ids.trace_id}{ids.span_id}\0{name}".encode()).hexdigest()
    return digest[:16] if digest[:16] != "0" * 16 else "1" * 16
