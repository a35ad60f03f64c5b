"""A task's W3C trace context on the wire (https://www.w3.org/TR/trace-context/): what every
request mcptask makes about a task carries, so that the server's spans and mcptask's join up.

- MCP (2025-11-25, 2026-07-28): the request's `params._meta`, `traceparent` and `tracestate`
  (SEP-414: unprefixed keys, beside the `_meta` already there);
- A2A JSON-RPC, HTTP+JSON and Agno: the HTTP headers `traceparent` and `tracestate`;
- A2A gRPC: the call's metadata `traceparent` and `tracestate`;
- A2A, every binding: on a SendMessage also the message's `metadata`.

Each protocol puts them in its one request helper, from the `TaskRef`'s `trace` (a task's
later requests) or the `trace` its create call was given. The `traceparent` names the task's
own span as the parent (`TraceIds.traceparent`), the create request's too. The forms a
protocol sends (the `_meta` and headers, a protocol's whole `_meta`, gRPC metadata) are made
once per task, not per poll (`TaskTrace.form`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from mcptask.text.traceparent import TraceIds

T = TypeVar("T")

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"


class TaskTrace:
    """A task's trace ids (kept with it in the task book) and the `tracestate` to send with
    them: the one given with the trace it joined (`--traceparent`, `TRACEPARENT` and
    `TRACESTATE`), never one of another trace."""

    __slots__ = ("_forms", "fields", "ids", "state")

    def __init__(self, ids: TraceIds, state: str | None = None) -> None:
        self.ids = ids
        self.state = state
        fields = {TRACEPARENT: ids.traceparent()}
        if state:
            fields[TRACESTATE] = state
        #: the `_meta` keys (MCP) and the HTTP headers (A2A): one mapping, never changed
        self.fields: Mapping[str, str] = fields
        self._forms: dict[str, Any] = {}

    def form(self, key: str, make: Callable[[Mapping[str, str]], T]) -> T:
        """`make(fields)`, made once per task and `key` (a protocol's own shape of them)."""
        try:
            made: T = self._forms[key]
        except KeyError:
            made = self._forms[key] = make(self.fields)
        return made

    def __repr__(self) -> str:
        return f"TaskTrace({self.fields[TRACEPARENT]!r})"


def traced_meta(params: dict[str, Any], trace: TaskTrace | None) -> dict[str, Any]:
    """`params` with the trace in `_meta`, merged with the `_meta` already there (MCP)."""
    if trace is None:
        return params
    meta = params.get("_meta")
    merged = {**meta, **trace.fields} if isinstance(meta, dict) else trace.fields
    return {**params, "_meta": merged}


def trace_headers(trace: TaskTrace | None) -> Mapping[str, str] | None:
    """The HTTP headers of a request about a task (A2A), or None."""
    return trace.fields if trace is not None else None


def traced_message(message: dict[str, Any], trace: TaskTrace | None) -> dict[str, Any]:
    """An A2A message with the trace in its `metadata` (beside what is there)."""
    if trace is not None:
        given = message.get("metadata")
        message["metadata"] = (
            {**given, **trace.fields} if isinstance(given, dict) else dict(trace.fields)
        )
    return message
