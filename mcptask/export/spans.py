"""A task's story as spans (plain descriptions; `otlp.py` makes OpenTelemetry's of them).

One span per task, from its creation (the server's `createdAt` where it gave one) to its end
(the last thing known of it), with every event of its story as a span event at the time it
happened, in the server's clock: the server's own time where it said when (the truth), else
when mcptask saw it moved into the server's clock by the measured skew. Under it, a span for
each call mcptask made about the task and that says something: the call that created it
(`tools/call`, `SendMessage`), the polls that saw it change (one span, summarized), the
result fetched, a cancel, an answer. Attributes follow the OpenTelemetry GenAI conventions for
MCP and A2A (status Development): `mcp.method.name`, `mcp.protocol.version`,
`gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.agent.name`, `gen_ai.conversation.id`,
`a2a.task.id`, `a2a.task.state`, `server.address`, `server.port`, `network.transport`,
`error.type`; mcptask's own under `mcptask.` (the task id and endpoint on every span).

Ids are the task's (`text.traceparent`): kept in the book where mcptask started the task or
sent its trace, else derived from the endpoint and the task id; a child span's id is derived
from the task's span and the event that made it. The same story exported twice is the same
spans, not new ones.

What a task carried (tool arguments, results, the text of an agent's messages, what a form
asked) stays out unless `content` is asked (the conventions' opt-in); secrets never go
(`text.redact`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcptask.model.events import EventKind
from mcptask.model.times import iso
from mcptask.text import redact
from mcptask.text.traceparent import TraceIds, child_span_id, derived_ids

#: span kinds (OpenTelemetry's names)
INTERNAL = "internal"
CLIENT = "client"

#: characters of a text attribute sent (a status message, an error)
MAX_TEXT = 1000
#: span events per task span (the OTel SDK's default limit is 128; a story is at most 5,000
#: events: the first ones and the last ones go, with a count of those left out between)
MAX_SPAN_EVENTS = 1000

Attrs = dict[str, str | int | float | bool]


@dataclass
class SpanEvent:
    name: str
    #: seconds since the epoch (the server's clock)
    at: float
    attributes: Attrs = field(default_factory=dict)


@dataclass
class Span:
    name: str
    span_id: str
    parent_id: str | None
    #: seconds since the epoch (the server's clock)
    start: float
    end: float
    kind: str = INTERNAL
    attributes: Attrs = field(default_factory=dict)
    events: list[SpanEvent] = field(default_factory=list)
    #: None: unset; "" ok; else the error's description
    error: str | None = None


@dataclass
class TaskTrace:
    """A task's spans in its trace (the task's span first)."""

    task_id: str
    endpoint: str
    ids: TraceIds
    spans: list[Span]
    #: the task's story had an end (a terminal status, expiry, lost); else exported as far
    #: as it goes
    ended: bool
    #: the last event number exported (the book keeps it: `export` skips what it sent)
    last_event: int


#: the statuses after which a task does nothing more
TERMINAL = frozenset(("completed", "failed", "cancelled", "rejected", "expired"))
#: statuses that are an error of the task (the span's status ERROR, `error.type` the status)
FAILED = frozenset(("failed", "rejected"))

#: the wire calls each family makes, by what they did
CALLS = {
    "mcp": {
        "create": "tools/call",
        "poll": "tasks/get",
        "result": "tasks/result",
        EventKind.CANCEL: "tasks/cancel",
        EventKind.ANSWER: "tasks/update",
    },
    "a2a": {
        "create": "SendMessage",
        "poll": "GetTask",
        "result": "GetTask",
        EventKind.CANCEL: "CancelTask",
        EventKind.ANSWER: "SendMessage",
    },
}

#: keys of an event's data that hold what a task carried (sent only with `content`)
CONTENT_KEYS = frozenset(("requests", "values", "arguments", "result", "text", "parts", "schema"))
#: event kinds whose message is what an agent or a form said (sent only with `content`)
CONTENT_MESSAGES = frozenset((EventKind.HISTORY, EventKind.QUESTION))


def family_of(protocol: str | None) -> str:
    """ "mcp" or "a2a" for a protocol the registry knows (by its row), else "mcp"."""
    from mcptask.protocols.registry import PROTOCOLS

    for row in PROTOCOLS:
        if row.name == protocol:
            return row.family
    return "mcp"


def task_ids(endpoint: str, task_id: str, record: dict[str, Any]) -> TraceIds:
    """The task's trace ids: the book's, else derived (`text.traceparent.derived_ids`)."""
    return TraceIds.from_fields(record) or derived_ids(endpoint, task_id)


def task_trace(
    endpoint: str,
    task_id: str,
    record: dict[str, Any],
    events: Iterable[dict[str, Any]],
    *,
    skew: float = 0.0,
    content: bool = False,
    now: float | None = None,
) -> TaskTrace | None:
    """The spans of one task from its book record and its story (`TaskBook.story`'s events,
    in order, with the skew it used); None when the story is empty."""
    story = list(events)
    if not story:
        return None
    ids = task_ids(endpoint, task_id, record)
    family = family_of(_str(record.get("protocol")))
    calls = CALLS[family]

    def when(e: dict[str, Any]) -> float:
        # the server's clock: its own time where it said (never after mcptask saw it),
        # else when mcptask saw it, moved by the skew
        seen = float(e["at"])
        server_at = e.get("serverAt")
        if isinstance(server_at, int | float):
            return min(float(server_at), seen + skew)
        return seen + skew

    times = [when(e) for e in story]
    start = min(times)
    created = _server_time(record.get("createdAt"))
    if created is not None and created <= start:
        start = created
    end = max(times)
    status = _str(record.get("status")) or next(
        (_str(e.get("status")) for e in reversed(story) if e.get("status")), None
    )
    ended = status in TERMINAL or any(
        e["kind"] in (EventKind.EXPIRED, EventKind.LOST, EventKind.END) for e in story
    )
    last_event = max(int(e["n"]) for e in story)
    # a task still running is sent as a snapshot under ids of its own (its span a child of the
    # task's span, which goes once it ends): backends keep the first version of a span id
    # (Phoenix drops a span sent again), so the task's own span must go whole, once
    snapshot = "" if ended else f"open@{last_event}/"
    own_span = child_span_id(ids, snapshot) if snapshot else ids.span_id

    common: Attrs = {
        "mcptask.task.id": _text(task_id),
        "mcptask.endpoint": _text(_safe_endpoint(endpoint)),
    }
    common.update(_server_attrs(endpoint))
    protocol = _str(record.get("protocol"))
    if protocol:
        common["mcptask.protocol"] = protocol
    task_attrs: Attrs = dict(common)
    tool = _str(record.get("tool"))
    agent = _str(record.get("agent"))
    if family == "mcp":
        # the session's version (2025-11-25), else the one the protocol's name says (MCP
        # 2026-07-28 has no session: every request names it)
        version = _str(record.get("protocolVersion")) or (
            protocol.removeprefix("mcp-") if protocol and protocol.startswith("mcp-") else None
        )
        if version:
            task_attrs["mcp.protocol.version"] = version
        task_attrs["gen_ai.operation.name"] = "execute_tool"
        if tool:
            task_attrs["gen_ai.tool.name"] = tool
        task_attrs["openinference.span.kind"] = "TOOL"
    else:
        task_attrs["a2a.task.id"] = _text(task_id)
        if status:
            task_attrs["a2a.task.state"] = status
        task_attrs["gen_ai.operation.name"] = "invoke_agent"
        if agent:
            task_attrs["gen_ai.agent.name"] = agent
        task_attrs["openinference.span.kind"] = "AGENT"
    context = _str(record.get("contextId"))
    if context:
        task_attrs["gen_ai.conversation.id"] = context
    if status:
        task_attrs["mcptask.task.status"] = status
    message = _str(record.get("statusMessage"))
    if message:
        task_attrs["mcptask.task.status_message"] = _text(message)
    for name in ("createdAt", "lastUpdatedAt"):
        value = _str(record.get(name))
        if value:
            task_attrs[f"mcptask.task.{_snake(name)}"] = value
    if not ended:
        task_attrs["mcptask.task.open"] = True
        task_attrs["mcptask.task.span_id"] = ids.span_id
    if content and "result" in record:
        task_attrs["mcptask.task.result"] = _json_text(record["result"])

    # the task's own span is the work it stands for (the conventions' `execute_tool` and
    # `invoke_agent` spans); the MCP and A2A methods are on the calls' spans under it
    operation = str(task_attrs["gen_ai.operation.name"])
    target = tool if family == "mcp" else agent
    name = f"{operation} {target}" if target else operation
    task_span = Span(
        name=name,
        span_id=own_span,
        parent_id=ids.span_id if snapshot else ids.parent_span_id,
        start=start,
        end=end,
        kind=INTERNAL,
        attributes=task_attrs,
        error=status if status in FAILED else ("" if status == "completed" else None),
    )
    if status in FAILED or status == "cancelled":
        task_attrs["error.type"] = status
    spans = [task_span]

    under = (ids, own_span, snapshot)
    #: the events that are a call of mcptask's, by the call they were
    made = {"result": "result", "cancel": "cancel", "answer": "answer", "answer-refused": "answer"}
    polls: list[tuple[float, dict[str, Any]]] = []
    for e, at in zip(story, times, strict=True):
        task_span.events.append(_span_event(e, at, family, content))
        kind = e["kind"]
        # a call's span ends when its answer came (in the server's clock)
        answered = max(at, float(e["at"]) + skew)
        if kind == EventKind.CREATED and e.get("command") in ("call", "send", "demo"):
            method, begun = calls["create"], start
        elif (
            kind in (EventKind.STATUS, EventKind.MESSAGE, EventKind.CREATED)
            and e.get("via") == "poll"
        ):
            polls.append((answered, e))
            continue
        elif kind in made:
            method, begun = calls[made[kind]], at
        else:
            continue
        spans.append(
            _call_span(under, e, method, begun, answered, common, family, tool, content=content)
        )
    if polls:
        first, last = polls[0][0], polls[-1][0]
        attrs: Attrs = dict(common)
        attrs.update(_method_attrs(family, calls["poll"], tool))
        attrs["mcptask.polls.changes_seen"] = len(polls)
        spans.append(
            Span(
                name=calls["poll"],
                span_id=child_span_id(ids, f"{snapshot}poll#{polls[0][1]['n']}"),
                parent_id=own_span,
                start=first,
                end=last,
                kind=CLIENT,
                attributes=attrs,
            )
        )
    task_span.end = max(task_span.end, *(s.end for s in spans))  # its calls' answers inside it
    _bound_events(task_span)
    return TaskTrace(task_id, endpoint, ids, spans, ended, last_event)


def _call_span(
    under: tuple[TraceIds, str, str],
    e: dict[str, Any],
    method: str,
    start: float,
    end: float,
    common: Attrs,
    family: str,
    tool: str | None,
    *,
    content: bool = False,
) -> Span:
    """A call's span under the task's (`under`: the task's ids, the span it hangs from, the
    snapshot prefix of its ids)."""
    ids, parent, prefix = under
    attrs: Attrs = dict(common)
    attrs.update(_method_attrs(family, method, tool))
    data = e.get("data") or {}
    refused = e["kind"] == EventKind.ANSWER_REFUSED
    for key, value in data.items():
        if (key in CONTENT_KEYS and not content) or redact.is_secret_name(key):
            continue
        if isinstance(value, bool | int | float | str):
            attrs[f"mcptask.{_snake(key)}"] = _text(value) if isinstance(value, str) else value
    error = None
    if refused:
        attrs["error.type"] = "refused"
        error = _text(_str(e.get("message")) or "refused")
    name = f"{method} {tool}" if family == "mcp" and tool and method == "tools/call" else method
    return Span(
        name=name,
        span_id=child_span_id(ids, f"{prefix}{method}#{e['n']}"),
        parent_id=parent,
        start=start,
        end=max(start, end),
        kind=CLIENT,
        attributes=attrs,
        error=error,
    )


def _method_attrs(family: str, method: str, tool: str | None) -> Attrs:
    if family == "mcp":
        out: Attrs = {"mcp.method.name": method}
        if method == "tools/call":
            out["gen_ai.operation.name"] = "execute_tool"
            if tool:
                out["gen_ai.tool.name"] = tool
        return out
    return {"rpc.method": method}


def _span_event(e: dict[str, Any], at: float, family: str, content: bool) -> SpanEvent:
    kind = str(e["kind"])
    attrs: Attrs = {"mcptask.event.n": int(e["n"])}
    status = _str(e.get("status"))
    if status:
        attrs["mcptask.task.status"] = status
        if family == "a2a":
            attrs["a2a.task.state"] = status
    message = _str(e.get("message"))
    if message and (content or kind not in CONTENT_MESSAGES):
        attrs["mcptask.message"] = _text(message)
    for name in ("via", "command"):
        value = _str(e.get(name))
        if value:
            attrs[f"mcptask.{name}"] = value
    attrs["mcptask.clock"] = "server" if isinstance(e.get("serverAt"), int | float) else "local"
    attrs["mcptask.seen_at"] = iso(float(e["at"]))
    for key, value in (e.get("data") or {}).items():
        if (key in CONTENT_KEYS and not content) or redact.is_secret_name(key):
            continue
        if isinstance(value, bool | int | float | str):
            attrs[f"mcptask.{_snake(key)}"] = _text(value) if isinstance(value, str) else value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            attrs[f"mcptask.{_snake(key)}"] = _text(", ".join(value))
    if kind in (EventKind.RETRY, EventKind.ERROR):
        attrs["error.type"] = _str((e.get("data") or {}).get("type")) or kind
    name = f"status {status}" if kind == EventKind.STATUS and status else kind
    return SpanEvent(name, at, attrs)


def _bound_events(span: Span) -> None:
    if len(span.events) <= MAX_SPAN_EVENTS:
        return
    keep = MAX_SPAN_EVENTS // 2
    dropped = len(span.events) - 2 * keep
    span.events = span.events[:keep] + span.events[-keep:]
    span.attributes["mcptask.events_dropped"] = dropped


def _server_attrs(endpoint: str) -> Attrs:
    if endpoint.startswith("stdio:"):
        return {"network.transport": "pipe"}
    try:
        u = urlsplit(endpoint)
        port = u.port or (443 if u.scheme == "https" else 80)
    except ValueError:
        return {}
    out: Attrs = {"network.transport": "tcp"}
    if u.hostname:
        out["server.address"] = u.hostname
        out["server.port"] = port
    return out


def _safe_endpoint(endpoint: str) -> str:
    from mcptask.text.urls import safe_url

    return endpoint if endpoint.startswith("stdio:") else safe_url(endpoint)


def _server_time(stamp: Any) -> float | None:
    from mcptask.state.taskbook import server_time

    return server_time(stamp)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _text(value: str) -> str:
    """Text bound for a backend: no held secret, at most MAX_TEXT characters, valid UTF-8
    (a lone surrogate would make the whole batch unencodable)."""
    text = redact.scrub_text(value)[:MAX_TEXT]
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def _json_text(value: Any) -> str:
    from mcptask.text import jsonsafe

    return _text(jsonsafe.dumps(redact.data(value)))


def _snake(name: str) -> str:
    out = []
    for c in name:
        if c.isupper():
            out.append("_" + c.lower())
        elif c in "-. ":
            out.append("_")
        else:
            out.append(c)
    return "".join(out).strip("_")
