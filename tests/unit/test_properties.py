"""Property-based tests (hypothesis) for every parser of outside data: whatever comes in, the
answer is a normalized value or a typed mcptask error (`McptaskError`), never another exception;
and nothing a server sends reaches a terminal as an escape sequence."""

from __future__ import annotations

import asyncio
import io
import json
import math
import os
import re
import tempfile
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mcptask.commands.list import local_tasks
from mcptask.errors import McptaskError, ProtocolError
from mcptask.model.results import TaskResult
from mcptask.model.status import STATUSES
from mcptask.model.task import Task
from mcptask.output.console import Output, result_renderable, task_panel
from mcptask.output.live import LiveEvents
from mcptask.pacing import MAX_POLL_INTERVAL as MAX_INTERVAL
from mcptask.pacing import MIN_POLL_INTERVAL as MIN_INTERVAL
from mcptask.protocols import mcp2025
from mcptask.protocols import tool_args as arguments
from mcptask.scheduler.watcher import WatchConfig, Watched, interval_for
from mcptask.state.taskbook import TaskBook
from mcptask.text import sanitize
from mcptask.text.sanitize import INVISIBLE, clean, one_line
from mcptask.transports.http import HttpOptions, HttpTransport, _retry_after
from mcptask.transports.rpc import RpcClient

pytestmark = pytest.mark.timeout(120)
#: more examples for a deeper search: HYPOTHESIS_EXAMPLES=5000 pytest tests/unit/test_properties.py
SETTINGS = settings(
    max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- strategies ---------------------------------------------------------------------------------

#: bits of text a hostile server likes: escape sequences, C0/C1 controls, bidi overrides
NASTY = [
    "\x1b",
    "\x1b[",
    "\x1b[2J",
    "\x1b[31m",
    "\x1b]0;title\x07",
    "\x1b]52;c;QUJD\x1b\\",
    "\x1bP+q\x1b\\",
    "\x1b_apc\x9c",
    "\x9b",
    "\x9b1;2H",
    "\x9d8;;x\x07",
    "\x90dcs",
    "\r",
    "\r\n",
    "\n",
    "\t",
    "\x00",
    "\x07",
    "\x08",
    "\x7f",
    "\u202e",
    "\u2066",
    "\u2028",
    "é",
    "✔",
    "[bold]",
    ":smile:",
]
nasty_text = st.lists(st.one_of(st.sampled_from(NASTY), st.text(max_size=8)), max_size=12).map(
    "".join
)
any_text = st.one_of(st.text(), nasty_text)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(),
    any_text,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(any_text, inner, max_size=4)
    ),
    max_leaves=20,
)
#: JSON as `text.jsonsafe.loads` lets it in: no NaN or infinity (refused at the door, so never
#: in what is shown or stored)
wire_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        any_text,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(any_text, inner, max_size=4)
    ),
    max_leaves=20,
)
STATUS_WORDS = [*sorted(STATUSES), "canceled", "Completed", "input-required", "paused", ""]
wire_tasks = st.fixed_dictionaries(
    {},
    optional={
        "taskId": st.one_of(any_text, json_values),
        "status": st.one_of(st.sampled_from(STATUS_WORDS), any_text, json_values),
        "statusMessage": st.one_of(any_text, json_values),
        "createdAt": json_values,
        "lastUpdatedAt": json_values,
        "ttl": json_values,
        "pollInterval": json_values,
        "extra": json_values,
    },
)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- sanitize -----------------------------------------------------------------------------------

UNSAFE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]|" + INVISIBLE
)


@SETTINGS
@given(any_text)
@example("\x1b]52;c;" + "A" * 100)  # unterminated OSC
@example("\x1b" * 5 + "[[[")
def test_clean_never_lets_an_escape_through(text: str) -> None:
    out = clean(text)
    assert not UNSAFE.search(out), repr(out)
    assert clean(out) == out
    line = clean(text, multiline=False)
    assert not UNSAFE.search(line) and "\n" not in line and "\t" not in line
    short = one_line(text, 40)
    assert len(short) <= 40 and "\n" not in short and not UNSAFE.search(short)


@SETTINGS
@given(st.one_of(any_text, st.text(st.characters(max_codepoint=0x7F))), st.booleans())
@example("plain words", True)
@example("a\tb", False)
def test_clean_s_quick_path_agrees_with_the_long_way(text: str, multiline: bool) -> None:
    """Printable ASCII skips the regular expressions: the same text either way."""
    assert clean(text, multiline=multiline) == sanitize._clean(text, multiline)


@SETTINGS
@given(st.text().filter(lambda t: not UNSAFE.search(t)))
def test_clean_keeps_text_that_is_safe(text: str) -> None:
    assert clean(text) == text


# -- rendering: Rich's own styling only --------------------------------------------------------

RICH_SGR = re.compile(r"\x1b\[[0-9;]*m")


def rendered(*things: Any) -> str:
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, color_system="truecolor", width=100)
    for thing in things:
        console.print(thing)
    return RICH_SGR.sub("", buf.getvalue())


def assert_safe(text: str) -> None:
    assert not UNSAFE.search(text), repr(text)


@SETTINGS
@given(wire_tasks, json_values)
def test_pretty_output_of_any_task_and_result_is_safe(data: dict[str, Any], payload: Any) -> None:
    try:
        task = mcp2025.normalize(data, protocol="mcp-2025-11-25", server="http://s/mcp")
    except ProtocolError:
        return
    result = TaskResult(task=task, payload=payload)
    error = TaskResult(task=task, error={"code": 1, "message": str(payload)})
    assert_safe(rendered(task_panel(task), result_renderable(result), result_renderable(error)))
    out = Output(mode="pretty", stdout=io.StringIO(), stderr=io.StringIO())
    out.tasks([task, task])
    out.error(str(payload))
    out.note(task.statusMessage or "")
    err = out.stderr.getvalue()  # type: ignore[attr-defined]
    assert_safe(err.replace("\n", ""))
    assert len(err.splitlines()) == 2
    live = LiveEvents(out, with_result=True, clock=lambda: 10.0)
    w = Watched(ref=SimpleNamespace(task_id=task.taskId), task=task)  # type: ignore[arg-type]
    live.track([w])
    live.retry(w, str(payload), 1.0)
    assert_safe(rendered(live.render()))
    # and JSON keeps the exact data
    assert json.loads(json.dumps(task.to_json()))["raw"].keys() == data.keys()


# -- task objects -----------------------------------------------------------------------------


@SETTINGS
@given(st.one_of(wire_tasks, json_values))
@example({"taskId": "t", "status": "paused"})
@example({"taskId": "t", "status": None})
@example({"taskId": "t", "status": "working", "pollInterval": 10**400, "ttl": -(10**400)})
def test_normalize_any_task(data: Any) -> None:
    try:
        task = mcp2025.normalize(data, protocol="mcp-2025-11-25", server="http://s/mcp")
    except ProtocolError:
        assert not (
            isinstance(data, dict)
            and isinstance(data.get("taskId"), str)
            and isinstance(data.get("status"), str)
        )
        return
    assert isinstance(data, dict)
    assert task.status in STATUSES
    assert task.raw == data
    assert isinstance(data["status"], str)  # a status that is not a string is refused
    word = data["status"].strip().lower().replace("-", "_")
    if word not in STATUSES and word != "canceled":
        assert task.status == "working"  # unknown words count as working...
        assert task.raw["status"] == data["status"]  # ...and stay in raw
    for name in ("ttl", "pollInterval"):
        assert getattr(task, name) is None or isinstance(getattr(task, name), int)
    json.dumps(task.to_json())
    interval = interval_for(task, WatchConfig())
    assert MIN_INTERVAL <= interval <= MAX_INTERVAL


@SETTINGS
@given(
    st.one_of(st.none(), st.integers(min_value=-(10**500), max_value=10**500)), st.floats(0, 1e6)
)
def test_poll_intervals_are_clamped(hint: int | None, floor: float) -> None:
    task = Task(taskId="t", status="working", pollInterval=hint, protocol="p", server="s", raw={})
    interval = interval_for(task, WatchConfig(floor=floor))
    assert MIN_INTERVAL <= interval <= max(MAX_INTERVAL, floor)
    assert math.isfinite(interval)


@SETTINGS
@given(
    st.one_of(
        st.none(),
        any_text,
        st.sampled_from(
            [
                "1",
                "-5",
                "1e400",
                "nan",
                "inf",
                "Wed, 21 Oct 2015 07:28:00 GMT",
                "Fri, 31 Dec 9999 23:59:59 GMT",
                "Mon, 32 Foo 2015 99:99:99 XYZ",
            ]
        ),
    )
)
def test_retry_after_header(value: str | None) -> None:
    delay = _retry_after(value)
    assert delay is None or delay >= 0


# -- JSON-RPC envelopes -------------------------------------------------------------------------


class ScriptedTransport:
    """A Transport that answers every message with the same scripted sequence."""

    url = "http://fake/mcp"

    def __init__(self, messages: list[Any]) -> None:
        self.messages = messages
        self.headers: dict[str, str] = {}
        self.session_id: str | None = None

    async def send(
        self,
        message: dict[str, Any],
        *,
        headers: Mapping[str, str] | None = None,
        url: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        for m in self.messages:
            yield m

    async def aclose(self) -> None:
        pass

    def redact(self, message: str) -> str:
        return message


ids = st.one_of(st.just(1), st.just(2), st.just("1"), st.none(), json_values)
messages = st.one_of(
    st.dictionaries(any_text, json_values, max_size=4),
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "id": ids},
        optional={"result": json_values, "error": json_values},
    ),
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "id": ids},
        optional={
            "error": st.fixed_dictionaries(
                {"code": st.one_of(st.integers(), json_values)},
                optional={"message": json_values, "data": json_values},
            )
        },
    ),
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "method": st.one_of(any_text, json_values)},
        optional={"id": ids, "params": json_values},
    ),
)


@SETTINGS
@given(st.lists(messages, max_size=6))
@example([{"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}])
@example([{"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "x"}}])
@example([{"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}])
@example([{"jsonrpc": "2.0", "id": 7, "result": 1}])
def test_rpc_client_handles_any_message_sequence(sequence: list[dict[str, Any]]) -> None:
    seen: list[dict[str, Any]] = []

    async def on_message(m: dict[str, Any]) -> None:
        seen.append(m)

    async def go() -> Any:
        rpc = RpcClient(ScriptedTransport(sequence))
        return await rpc.request("tasks/get", {"taskId": "t"}, on_message=on_message)

    try:
        result = run(go())
    except McptaskError:
        return
    answer = next(m for m in sequence if "method" not in m and ("result" in m or "error" in m))
    assert answer.get("id") == 1 and answer.get("error") is None
    assert result == answer.get("result")
    assert all("method" in m for m in seen)


# -- the HTTP transport: JSON and SSE bodies --------------------------------------------------


def sse_text(events: list[tuple[str, str]], eol: str) -> str:
    return "".join(f"{field}:{value}{eol}" if field else eol for field, value in events)


sse_lines = st.lists(
    st.one_of(
        st.tuples(st.just("data"), st.one_of(any_text, json_values.map(json.dumps))),
        st.tuples(st.sampled_from(["event", "id", "retry", ":", "junk", ""]), any_text),
        st.tuples(
            st.just("data"),
            st.just(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"ok": 1}})),
        ),
    ),
    max_size=10,
)
sse_bodies = st.builds(
    lambda events, eol: sse_text(events, eol).encode("utf-8", "surrogatepass"),
    sse_lines,
    st.sampled_from(["\n", "\r\n", "\r"]),
)
bodies = st.one_of(
    st.binary(max_size=300),
    sse_bodies,
    json_values.map(lambda v: json.dumps(v).encode()),
    messages.map(lambda v: json.dumps(v).encode()),
    st.lists(messages, max_size=3).map(lambda v: json.dumps(v).encode()),
)
CTYPES = [
    "application/json",
    "text/event-stream",
    "text/event-stream; charset=latin-1",
    "text/event-stream; charset=bogus",
    "text/html",
    "",
]


@SETTINGS
@given(
    body=bodies,
    cuts=st.lists(st.integers(0, 400), max_size=5),
    status=st.sampled_from([200, 201, 202, 204, 400, 401, 403, 404, 429, 500, 502]),
    ctype=st.sampled_from(CTYPES),
    retry_after=st.one_of(st.none(), st.text(st.characters(min_codepoint=32, max_codepoint=126))),
    cap=st.sampled_from([50, 4096, 32 * 1024 * 1024]),
)
def test_http_transport_turns_any_answer_into_messages_or_an_error(
    body: bytes,
    cuts: list[int],
    status: int,
    ctype: str,
    retry_after: str | None,
    cap: int,
) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        at = 0
        for cut in sorted(cuts):
            yield body[at:cut]
            at = max(at, cut)
        yield body[at:]

    def handler(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": ctype} if ctype else {}
        if retry_after is not None:
            headers["retry-after"] = retry_after
        return httpx.Response(status, headers=headers, content=chunks())

    async def go() -> Any:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        transport = HttpTransport(HttpOptions(url="http://s/mcp", max_body=cap), client=client)
        try:
            return await RpcClient(transport).request("tasks/get", {"taskId": "t"})
        finally:
            await client.aclose()

    try:
        run(go())
    except McptaskError as exc:
        assert exc.message and "\n" not in one_line(exc.message)


@SETTINGS
@given(
    cuts=st.lists(st.integers(0, 400), max_size=8),
    eol=st.sampled_from(["\n", "\r\n", "\r"]),
    keepalive=st.booleans(),
)
def test_a_valid_event_stream_is_read_whatever_its_chunking(
    cuts: list[int], eol: str, keepalive: bool
) -> None:
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"text": "é ✔ 漢字"}}
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
    body = (
        f"id: prime{eol}data: {eol}{eol}"
        + (f": ping{eol}{eol}" if keepalive else "")
        + f"event: message{eol}data: {json.dumps(note)}{eol}{eol}"
        + f"event: message{eol}data: {json.dumps(answer, ensure_ascii=False)}{eol}{eol}"
    ).encode()

    async def chunks() -> AsyncIterator[bytes]:
        at = 0
        for cut in sorted(cuts):
            yield body[at:cut]
            at = max(at, cut)
        yield body[at:]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=chunks())

    seen: list[dict[str, Any]] = []

    async def on_message(m: dict[str, Any]) -> None:
        seen.append(m)

    async def go() -> Any:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        transport = HttpTransport(HttpOptions(url="http://s/mcp"), client=client)
        try:
            return await RpcClient(transport).request("tasks/get", on_message=on_message)
        finally:
            await client.aclose()

    assert run(go()) == {"text": "é ✔ 漢字"}
    assert seen == [note]


# -- the task book -----------------------------------------------------------------------------

book_records = st.dictionaries(
    any_text,
    st.one_of(
        json_values,
        st.fixed_dictionaries(
            {},
            optional={
                k: st.one_of(st.text(max_size=5), json_values)
                for k in ("status", "session", "contextId", "lastSeenAt", "protocol", "result")
            },
        ),
    ),
    max_size=3,
)
book_files = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries(
        {"version": json_values},
        optional={
            "endpoints": st.dictionaries(
                st.sampled_from(["http://s/mcp", "x"]),
                st.one_of(json_values, st.fixed_dictionaries({"tasks": book_records})),
                max_size=2,
            )
        },
    ).map(lambda v: json.dumps(v).encode()),
)


@SETTINGS
@given(book_files)
@example(b"[" * 100_000)
@example(b'{"endpoints": {"http://s/mcp": {"tasks": {"t": 5}}}}')
def test_any_task_book_file_is_read_or_set_aside(content: bytes) -> None:
    warnings: list[str] = []
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "tasks.json"
        path.write_bytes(content)
        book = TaskBook(path, warn=warnings.append)
        book.lookup("http://s/mcp", "t")
        ctx = SimpleNamespace(book=book, server="http://s/mcp")
        for task in local_tasks(ctx):  # type: ignore[arg-type]
            json.dumps(task.to_json())
        book.record("http://s/mcp", "new", status="working", session="s1", result={"a": 1})
        book.set_endpoint("http://s/mcp", protocol="mcp-2025-11-25")
        rec = book.lookup("http://s/mcp", "new")
        assert rec is not None and rec["status"] == "working" and rec["result"] == {"a": 1}
        # imported (kept as .bak) or set aside, never lost
        kept = [p for p in Path(d).iterdir() if p.name.startswith("tasks.json.")]
        assert len(kept) == 1 and kept[0].read_bytes() == content
        assert len(warnings) <= 1


# -- tool arguments ----------------------------------------------------------------------------

pairs = st.lists(
    st.one_of(
        any_text,
        st.builds(lambda k, v: f"{k}={v}", st.sampled_from(["a", "b", "n", ""]), any_text),
        st.builds(
            lambda k, v: f"{k}:={v}",
            st.sampled_from(["a", "b", ""]),
            st.one_of(any_text, json_values.map(json.dumps), st.sampled_from(["NaN", "[" * 5000])),
        ),
        st.sampled_from(["n=nan", "n=1e999", "n=-inf", "n=12", "b=yes", "a=[1]", "a=null"]),
    ),
    max_size=5,
)
TYPES = ["string", "integer", "number", "boolean", "null", "array", "object", "bogus"]
prop_schemas = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"type": st.one_of(st.sampled_from(TYPES), st.lists(st.sampled_from(TYPES)))}
    ),
    st.fixed_dictionaries(
        {"anyOf": st.lists(st.fixed_dictionaries({"type": st.sampled_from(TYPES)}), max_size=3)}
    ),
)
schemas = st.one_of(
    st.none(),
    st.dictionaries(any_text, json_values, max_size=3),
    st.fixed_dictionaries(
        {
            "properties": st.one_of(
                json_values, st.dictionaries(st.sampled_from(["a", "b", "n"]), prop_schemas)
            )
        }
    ),
)


@SETTINGS
@given(pairs, st.one_of(st.none(), any_text, json_values.map(json.dumps)), schemas)
def test_tool_arguments_are_normalized_or_a_usage_error(
    items: list[str], args_json: str | None, schema: Any
) -> None:
    try:
        out = arguments.build(items, args_json, schema)
    except McptaskError:
        return
    assert isinstance(out, dict)
    json.dumps(out, allow_nan=False)  # what is sent is JSON: never NaN or Infinity


# -- the other protocol modules' parsers -------------------------------------------------------

a2a_parts = st.lists(
    st.one_of(
        json_values,
        st.fixed_dictionaries({"kind": st.just("text"), "text": any_text}),
        st.fixed_dictionaries({"text": st.one_of(any_text, json_values)}),
        st.fixed_dictionaries({"kind": st.just("data"), "data": json_values}),
        st.fixed_dictionaries(
            {
                "kind": st.just("file"),
                "file": st.one_of(
                    json_values,
                    st.dictionaries(
                        st.sampled_from(["name", "mimeType", "uri", "bytes"]), json_values
                    ),
                ),
            }
        ),
        st.dictionaries(
            st.sampled_from(["url", "raw", "filename", "mediaType", "data"]), json_values
        ),
    ),
    max_size=3,
)
a2a_messages = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"parts": st.one_of(a2a_parts, json_values)},
        optional={"role": st.one_of(st.sampled_from(["agent", "ROLE_AGENT", "user"]), json_values)},
    ),
)
A2A_STATES = [
    "submitted",
    "working",
    "input-required",
    "auth-required",
    "completed",
    "failed",
    "canceled",
    "rejected",
    "unknown",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_UNSPECIFIED",
    "task_state_working",
    "",
]
a2a_tasks = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.text(max_size=5), json_values),
        "contextId": json_values,
        "kind": st.sampled_from(["task", "message", "status-update", "artifact-update", "x"]),
        "status": st.one_of(
            json_values,
            st.fixed_dictionaries(
                {"state": st.one_of(st.sampled_from(A2A_STATES), any_text, json_values)},
                optional={"message": a2a_messages, "timestamp": json_values},
            ),
        ),
        "artifacts": st.one_of(
            json_values,
            st.lists(
                st.one_of(
                    json_values,
                    st.fixed_dictionaries(
                        {"parts": st.one_of(a2a_parts, json_values)},
                        optional={"artifactId": json_values, "name": json_values},
                    ),
                ),
                max_size=3,
            ),
        ),
        "history": st.one_of(json_values, st.lists(a2a_messages, max_size=3)),
    },
)


@SETTINGS
@given(st.one_of(a2a_tasks, json_values))
def test_a2a_tasks_normalize_or_are_refused(data: Any) -> None:
    from mcptask.protocols import a2a

    for protocol in ("a2a-0.3", "a2a-1.0"):
        try:
            task = a2a.normalize(data, protocol=protocol, server="http://s/a2a")
        except ProtocolError:
            continue
        assert task.status in STATUSES and task.raw == data
        json.dumps(task.to_json())
        payload = a2a.result_payload(task.raw)
        assert isinstance(payload["text"], str)
        assert_safe(rendered(task_panel(task), result_renderable(TaskResult(task, payload))))


@pytest.mark.parametrize("odd", [{"artifacts": True}, {"history": 5}, {"artifacts": 1.5}])
def test_a2a_result_of_a_task_with_odd_artifacts_or_history(odd: dict[str, Any]) -> None:
    from mcptask.protocols import a2a

    raw = {"id": "t", "status": {"state": "completed"}, **odd}
    task = a2a.normalize(raw, protocol="a2a-1.0", server="http://s/a2a")
    assert isinstance(a2a.result_payload(task.raw)["text"], str)


@SETTINGS
@given(
    st.lists(
        st.one_of(
            a2a_tasks,
            json_values,
            st.dictionaries(
                st.sampled_from(["task", "message", "statusUpdate", "artifactUpdate", "kind"]),
                st.one_of(a2a_tasks, json_values),
            ),
        ),
        max_size=4,
    )
)
def test_a2a_stream_events_merge_or_are_refused(events: list[Any]) -> None:
    from mcptask.protocols import a2a

    current: dict[str, Any] | None = None
    for event in events:
        try:
            kind, body = a2a.classify(event)
            if kind == "message":
                a2a.message_payload(body)
                continue
            current = a2a.merge_event(current, kind, body)
            a2a.normalize(current, protocol="a2a-1.0", server="http://s/a2a")
        except McptaskError:
            continue


@SETTINGS
@given(json_values)
def test_a2a_agent_cards(card: Any) -> None:
    from mcptask.protocols import a2a

    found = a2a.protocol_from_card(card)
    assert found is None or found in ("a2a-0.3", "a2a-1.0")


@SETTINGS
@given(
    st.one_of(
        wire_tasks,
        json_values,
        st.fixed_dictionaries(
            {"taskId": st.text(max_size=3), "status": st.sampled_from(STATUS_WORDS)},
            optional={
                "ttlMs": json_values,
                "pollIntervalMs": json_values,
                "inputRequests": wire_values,
                "result": json_values,
                "error": json_values,
            },
        ),
    )
)
def test_mcp2026_tasks_normalize_or_are_refused(data: Any) -> None:
    from mcptask.protocols import mcp2026

    try:
        task = mcp2026.normalize(data, server="http://s/mcp")
    except ProtocolError:
        return
    assert task.status in STATUSES and task.raw == data
    assert task.inputRequests is None or isinstance(task.inputRequests, dict)
    json.dumps(task.to_json())
    assert MIN_INTERVAL <= interval_for(task, WatchConfig()) <= MAX_INTERVAL
    assert_safe(rendered(task_panel(task)))


@SETTINGS
@given(any_text)
def test_agno_urls(url: str) -> None:
    from mcptask.protocols import agno

    base, kind = agno.agno_base(url)
    assert kind in ("agents", "teams") and isinstance(base, str)


@given(
    json_values,
    st.booleans(),
    st.sampled_from([(", ", ": "), (",", ":")]),
)
def test_the_encoder_made_once_writes_what_json_dumps_writes(
    value: Any, ascii_only: bool, separators: tuple[str, str]
) -> None:
    """`jsonsafe.encoder` (the C encoder made once) gives the text, and the errors, of
    `json.JSONEncoder(...).encode` with the same options: non-finite numbers refused where
    `allow_nan` is False, surrogates kept as they are."""
    from mcptask.text import jsonsafe

    for allow_nan in (True, False):
        ours = jsonsafe.encoder(ensure_ascii=ascii_only, allow_nan=allow_nan, separators=separators)
        theirs = json.JSONEncoder(
            ensure_ascii=ascii_only, allow_nan=allow_nan, separators=separators
        ).encode
        try:
            expected: str | type[Exception] = theirs(value)
        except ValueError:
            expected = ValueError
        try:
            got: str | type[Exception] = ours(value)
        except ValueError:
            got = ValueError
        assert got == expected


secrets_held = st.lists(
    st.one_of(
        st.sampled_from(["tok3n-secret", "s3cr", "ab", "p@ss", 'q"uote', "back\\slash", "ünï"]),
        st.text(min_size=1, max_size=6),
    ),
    min_size=1,
    max_size=3,
)


@given(json_values, secrets_held)
@example({"url": "https://user:hunter2@host/x", "k": ["tok3n-secret"]}, ["tok3n-secret"])
@example({"tok3n-secret": 1}, ["tok3n-secret"])
@example({"url": "https://user:hunter2@host/x"}, ["unrelated"])
@example(['a q"uote in it'], ['q"uote'])
@example({"k": "back\\slash"}, ["back\\slash"])
@example({"k": "ünï"}, ["ünï"])
@example({"k": "line\nbreak"}, ["e\nb"])
@example({"k": "del\x7fete"}, ["l\x7fe"])
def test_scrub_s_quick_answer_is_the_long_way_s(value: Any, secrets: list[str]) -> None:
    """With secrets held, `redact.scrub` may answer from one encoding of the value (nothing
    to scrub): whatever the data and the secrets, its result is what walking every string
    gives, and `may_hold` of a page's lines says False only where scrubbing changes nothing."""
    from mcptask.text import jsonsafe, redact

    redact.release_all()
    try:
        redact.hold(secrets)
        long_way = redact._scrub(value, redact.scrub_text)
        assert redact.scrub(value) == long_way or (
            long_way != long_way  # NaN inside: compared by its JSON text instead
            and json.dumps(redact.scrub(value)) == json.dumps(long_way)
        )
        try:
            text = jsonsafe.lines([value])
        except jsonsafe.Refused:
            return
        if not redact.may_hold(text):
            assert jsonsafe.lines([long_way]) == text
    finally:
        redact.release_all()
