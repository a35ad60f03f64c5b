"""What a plain `call` prints: ndjson events, the json result, the live progress bar."""

from __future__ import annotations

import asyncio
import io
import json

from rich.console import Console

from mcptask.output.call_view import LiveCallEvents, call_events, outcome_of
from mcptask.output.console import Output
from mcptask.protocols.base import LogMessage, Progress

RESULT = {"content": [{"type": "text", "text": "Echo: hi"}]}


def output(mode: str) -> Output:
    return Output(mode=mode, stdout=io.StringIO(), stderr=io.StringIO())


def printed(out: Output) -> str:
    return out.stdout.getvalue()  # type: ignore[attr-defined]


def test_ndjson_prints_progress_log_and_an_end_line() -> None:
    out = output("ndjson")
    with call_events(out, "t") as events:
        events.progress(Progress(progress=1, total=4, message="step 1"))
        events.log(LogMessage(level="info", data={"k": 1}, logger="srv"))
        code = events.end(outcome_of(RESULT), RESULT)
    assert code == 0
    lines = [json.loads(ln) for ln in printed(out).splitlines()]
    assert lines == [
        {"event": "progress", "progress": 1, "total": 4, "message": "step 1"},
        {"event": "log", "level": "info", "logger": "srv", "data": {"k": 1}},
        {"event": "end", "outcome": "completed", "exitCode": 0, "result": RESULT},
    ]


def test_ndjson_end_line_of_a_tool_error_and_of_a_json_rpc_error() -> None:
    out = output("ndjson")
    failed = {**RESULT, "isError": True}
    assert call_events(out, "t").end(outcome_of(failed), failed) == 5
    assert call_events(out, "t").end("error", error={"code": -32602, "message": "bad"}) == 4
    ends = [json.loads(ln) for ln in printed(out).splitlines()]
    assert ends[0]["outcome"] == "failed" and ends[0]["exitCode"] == 5
    assert ends[1] == {
        "event": "end",
        "outcome": "error",
        "exitCode": 4,
        "error": {"code": -32602, "message": "bad"},
    }


def test_json_prints_only_the_result_and_logs_go_to_stderr() -> None:
    out = output("json")
    with call_events(out, "t") as events:
        events.progress(Progress(progress=1))
        events.log(LogMessage(level="warning", data="careful\x1b[31m"))
        events.end("completed", RESULT)
    assert json.loads(printed(out)) == RESULT
    err = out.stderr.getvalue()  # type: ignore[attr-defined]
    assert "log [warning]: careful" in err and "\x1b" not in err


def test_the_live_bar_shows_progress_then_the_result() -> None:
    out = output("pretty")
    buf = io.StringIO()
    out._console = Console(file=buf, width=100, force_terminal=True, color_system=None)
    events = call_events(out, "long-op")
    assert isinstance(events, LiveCallEvents)

    async def go() -> int:
        with events:
            events.progress(Progress(progress=2, total=4, message="half\x1b]0;evil\x07 way"))
            async with events.paused():
                pass
            events.log(LogMessage(level="error", data="oops"))
            return events.end("completed", RESULT)

    assert asyncio.run(go()) == 0
    text = buf.getvalue()
    assert "long-op: half" in text and "2/4" in text
    assert "[error]: oops" in text
    assert "Echo: hi" in text
    assert "evil\x07" not in text


def test_the_tool_table_and_the_json_list() -> None:
    from mcptask.protocols.base import tool_from_wire

    wire = {
        "name": "get-sum",
        "description": "Adds two numbers\nand more\x1b[2J",
        "inputSchema": {"type": "object", "required": ["a", "b"]},
        "execution": {"taskSupport": "optional"},
    }
    tool = tool_from_wire(wire)
    assert tool is not None
    out = output("json")
    out.tools([tool])
    assert json.loads(printed(out)) == {
        "tools": [
            {
                "name": "get-sum",
                "title": None,
                "description": "Adds two numbers\nand more\x1b[2J",
                "taskSupport": "optional",
                "inputSchema": wire["inputSchema"],
                "raw": wire,
            }
        ]
    }
    pretty = output("pretty")
    buf = io.StringIO()
    pretty._console = Console(file=buf, width=120, color_system=None)
    pretty.tools([tool])
    text = buf.getvalue()
    assert "get-sum" in text and "optional" in text and "a, b" in text
    assert "Adds two numbers and more" in text and "\x1b" not in text
