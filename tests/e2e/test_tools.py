"""Every tool, not only task tools: the tool list, plain `tools/call` with progress, logs and
elicitation (on the call's stream and the session's GET stream), argument checks against the
`inputSchema`, SSE resumption (SEP-1699) and progress of task-augmented calls in `watch`."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcptask.demo.server import DemoServer
from mcptask.errors import ProtocolError, UsageError
from mcptask.model.inputs import InputRequest
from mcptask.output import forms
from mcptask.output.console import Output
from mcptask.output.live import NdjsonEvents
from mcptask.protocols import tool_args as arguments
from mcptask.protocols.base import CallHooks, LogMessage, Progress
from mcptask.protocols.mcp2025 import Mcp2025
from mcptask.protocols.mcp2026 import Mcp2026
from mcptask.scheduler.watcher import WatchConfig, Watcher
from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.rpc import RpcClient

from conftest import RunCli, assert_one_line_error, rest_of
from servers.common import ServerProcess


def mcp2025(url: str, client: httpx.AsyncClient | None = None) -> Mcp2025:
    return Mcp2025(RpcClient(HttpTransport(HttpOptions(url=url), client)), url)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class Heard:
    """Collects what a plain call's hooks hear."""

    def __init__(self, answer: dict[str, Any] | None = None) -> None:
        self.progress: list[Progress] = []
        self.logs: list[LogMessage] = []
        self.asked: list[InputRequest] = []
        self.notes: list[str] = []
        self.answer = answer

    def hooks(self, *, respond: bool = True) -> CallHooks:
        async def responder(request: InputRequest) -> dict[str, Any] | None:
            self.asked.append(request)
            return self.answer

        return CallHooks(
            on_progress=self.progress.append,
            on_log=self.logs.append,
            responder=responder if respond else None,
            on_note=self.notes.append,
        )


# -- the tool list -------------------------------------------------------------------------------


def test_tools_on_server_everything_with_task_support(everything_server: ServerProcess) -> None:
    async def go() -> Any:
        proto = mcp2025(everything_server.url)
        try:
            return await proto.list_tools()
        finally:
            await proto.rpc.aclose()

    tools = {t.name: t for t in run(go())}
    assert tools["echo"].taskSupport == "forbidden"
    assert tools["simulate-research-query"].taskSupport in ("optional", "required")
    assert tools["get-sum"].required == ["a", "b"]
    shown = tools["echo"].to_json()
    assert list(shown) == ["name", "title", "description", "taskSupport", "inputSchema", "raw"]
    assert shown["raw"]["name"] == "echo" and shown["inputSchema"]["type"] == "object"


def test_tools_on_fastmcp4_say_optional_where_the_server_decides(
    fastmcp4_server: ServerProcess,
) -> None:
    async def go() -> Any:
        url = fastmcp4_server.url
        proto = Mcp2026(RpcClient(HttpTransport(HttpOptions(url=url))), url)
        try:
            return await proto.list_tools()
        finally:
            await proto.rpc.aclose()

    tools = {t.name: t for t in run(go())}
    assert tools["slow_echo"].taskSupport == "optional"
    assert tools["slow_echo"].required == ["text"]


# -- plain calls on real servers -----------------------------------------------------------------


def test_plain_call_reports_progress_on_the_calls_stream(everything_server: ServerProcess) -> None:
    heard = Heard()

    async def go() -> Any:
        proto = mcp2025(everything_server.url)
        try:
            return await proto.call_plain(
                "trigger-long-running-operation", {"duration": 1, "steps": 3}, heard.hooks()
            )
        finally:
            await proto.rpc.aclose()

    result = run(go())
    assert "Long running operation completed" in result["content"][0]["text"]
    assert [(p.progress, p.total) for p in heard.progress] == [(1, 3), (2, 3), (3, 3)]


def test_plain_call_answers_an_elicitation_on_the_calls_stream(
    everything_server: ServerProcess,
) -> None:
    heard = Heard({"action": "decline"})

    async def go() -> Any:
        proto = mcp2025(everything_server.url)
        try:
            return await proto.call_plain("trigger-elicitation-request", {}, heard.hooks())
        finally:
            await proto.rpc.aclose()

    result = run(go())
    assert [r.who for r in heard.asked] == ["tool trigger-elicitation-request"]
    assert "name" in heard.asked[0].schema["properties"]
    assert "declined" in json.dumps(result)


def test_plain_call_without_a_responder_declines_and_says_so(
    everything_server: ServerProcess,
) -> None:
    heard = Heard()

    async def go() -> Any:
        proto = mcp2025(everything_server.url)
        try:
            return await proto.call_plain(
                "trigger-elicitation-request", {}, heard.hooks(respond=False)
            )
        finally:
            await proto.rpc.aclose()

    result = run(go())
    assert "declined" in json.dumps(result)
    assert heard.notes and "declined" in heard.notes[0]


def test_plain_call_over_stdio_reports_progress(everything_stdio_cmd: list[str]) -> None:
    from mcptask.transports.stdio import StdioOptions, StdioTransport

    heard = Heard()

    async def go() -> Any:
        transport = StdioTransport(StdioOptions(command=everything_stdio_cmd, read_timeout=30))
        proto = Mcp2025(RpcClient(transport), transport.url)
        try:
            return await proto.call_plain(
                "trigger-long-running-operation", {"duration": 0.5, "steps": 2}, heard.hooks()
            )
        finally:
            await transport.aclose()

    result = run(go())
    assert "completed" in result["content"][0]["text"]
    assert [p.progress for p in heard.progress] == [1, 2]


def test_plain_call_on_2026_answers_input_required_and_retries(
    fastmcp4_server: ServerProcess,
) -> None:
    heard = Heard({"action": "accept", "content": {"name": "Ada"}})

    async def go() -> Any:
        url = fastmcp4_server.url
        proto = Mcp2026(RpcClient(HttpTransport(HttpOptions(url=url))), url)
        try:
            return await proto.call_plain("ask_name", {}, heard.hooks())
        finally:
            await proto.rpc.aclose()

    result = run(go())
    assert result["content"][0]["text"] == "Hello, Ada!"
    assert heard.asked[0].message == "What is your name?"


# -- argument checks -----------------------------------------------------------------------------

SUM = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}


def test_a_missing_required_argument_is_a_usage_error_naming_it() -> None:
    with pytest.raises(UsageError, match=r"needs argument b \(it takes: a\* \(number\), b\*"):
        arguments.check("get-sum", {"a": 1}, SUM, print)


def test_unknown_arguments_warn_or_fail_by_additional_properties() -> None:
    warned: list[str] = []
    arguments.check("get-sum", {"a": 1, "b": 2, "c": 3}, SUM, warned.append)
    assert warned == [
        "tool 'get-sum' takes no argument c (it takes: a* (number), b* (number)); sent anyway"
    ]
    strict = {**SUM, "additionalProperties": False}
    with pytest.raises(UsageError, match="takes no argument c"):
        arguments.check("get-sum", {"a": 1, "b": 2, "c": 3}, strict, warned.append)
    arguments.check("any", {"x": 1}, {"type": "object"}, warned.append)  # says nothing
    arguments.check("any", {"x": 1}, None, warned.append)
    assert len(warned) == 1


# -- SEP-1034 defaults ---------------------------------------------------------------------------

DEFAULTS_FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
        "note": {"type": "string"},
    },
}


def test_defaults_fill_what_the_answer_leaves_out() -> None:
    assert forms.with_defaults(DEFAULTS_FORM, {"age": 41}) == {
        "age": 41,
        "name": "John Doe",
        "status": "active",
        "verified": True,
    }


# -- SSE resumption (SEP-1699), scripted ---------------------------------------------------------


def resuming_server(
    *, answer_on_get: bool = True, get_status: int = 200
) -> tuple[Callable[[httpx.Request], httpx.Response], list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        sse = {"content-type": "text/event-stream"}
        if request.method == "POST":
            body = json.loads(request.content)
            if "id" not in body:
                return httpx.Response(202)
            # a priming event with an id and a retry, then the stream ends without an answer
            return httpx.Response(200, headers=sse, content=b"id: e1\nretry: 10\ndata: \n\n")
        if get_status != 200:
            return httpx.Response(get_status)
        answer = {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": "ok"}]},
        }
        text = f"id: e2\nevent: message\ndata: {json.dumps(answer)}\n\n" if answer_on_get else ""
        return httpx.Response(200, headers=sse, content=text.encode())

    return handler, seen


async def _request_over(handler: Callable[[httpx.Request], httpx.Response]) -> Any:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    transport = HttpTransport(HttpOptions(url="http://mock/mcp"), client)
    rpc = RpcClient(transport)
    try:
        return await rpc.request("tools/call", {"name": "x"}, headers={"Mcp-Session-Id": "s1"})
    finally:
        await client.aclose()


def test_a_stream_closed_before_the_answer_is_resumed_with_last_event_id() -> None:
    handler, seen = resuming_server()
    assert run(_request_over(handler)) == {"content": [{"type": "text", "text": "ok"}]}
    get = seen[-1]
    assert get.method == "GET"
    assert get.headers["last-event-id"] == "e1"
    assert get.headers["mcp-session-id"] == "s1"


def test_resumption_is_bounded() -> None:
    handler, seen = resuming_server(answer_on_get=False)
    with pytest.raises(ProtocolError, match="also after 5 reconnections"):
        run(_request_over(handler))
    assert [r.method for r in seen] == ["POST"] + ["GET"] * 5


def test_a_server_that_refuses_to_resume_is_one_clear_error() -> None:
    handler, _ = resuming_server(get_status=405)
    with pytest.raises(ProtocolError, match=r"refused to resume it \(HTTP 405\)"):
        run(_request_over(handler))


# -- progress of task-augmented calls in watch ---------------------------------------------------


def test_watch_reports_the_progress_a_server_pushes_for_a_task() -> None:
    import io
    import time

    out = Output(mode="ndjson", stdout=io.StringIO(), stderr=io.StringIO())

    async def go() -> int:
        with DemoServer(task_seconds=1.0, steps=["one", "two"]) as server:
            proto = mcp2025(server.url)
            created = await proto.call_tool("build-report", {"topic": "t"}, ttl=None)
            assert created.task is not None and created.ref is not None
            watcher = Watcher(
                fetch=proto.get,
                fetch_result=proto.result,
                config=WatchConfig(),
                events=NdjsonEvents(out, with_result=False),
                clock=time.monotonic,
                sleep=asyncio.sleep,
            )
            watcher.add(created.ref, created.task)
            watcher.feeds = proto.push_feeds([created.ref])
            try:
                return await watcher.run()
            finally:
                await proto.rpc.aclose()

    assert run(go()) == 0
    lines = [json.loads(ln) for ln in out.stdout.getvalue().splitlines()]  # type: ignore[attr-defined]
    progress = [ln for ln in lines if ln["event"] == "progress"]
    assert progress, lines
    assert progress[-1]["total"] == 2 and progress[-1]["taskId"] == lines[0]["taskId"]
    assert {p["progress"] for p in progress} <= {1, 2}


def test_progress_notifications_for_other_tasks_are_ignored() -> None:
    proto = mcp2025("http://unused/mcp")
    from mcptask.protocols.mcp2025 import SessionFeed

    feed = SessionFeed(proto, "s", {"mine"})
    got: list[Progress] = []
    feed.progress = got.append

    async def deliver(_: Any) -> None:
        pass

    def note(task_id: str) -> str:
        meta = {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
        params = {"progressToken": "t", "progress": 1, "total": 4, "_meta": meta}
        return json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    run(feed._handle(note("other"), deliver))
    run(feed._handle(note("mine"), deliver))
    assert [(p.task_id, p.progress, p.total) for p in got] == [("mine", 1, 4)]


# -- the command line, against server-everything -------------------------------------------------


def test_cli_tools_json_lists_task_support(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    r = run_cli("tools", "--url", everything_server.url, "-o", "json")
    assert r.code == 0, r.stderr
    tools = {t["name"]: t for t in r.json()["tools"]}
    assert tools["echo"]["taskSupport"] == "forbidden"
    assert tools["simulate-research-query"]["taskSupport"] in ("optional", "required")
    assert set(tools["echo"]) == {
        "name",
        "title",
        "description",
        "taskSupport",
        "inputSchema",
        "raw",
    }


def test_cli_tools_pretty_and_over_stdio(run_cli: RunCli, everything_stdio_cmd: list[str]) -> None:
    cmd = " ".join(everything_stdio_cmd)
    r = run_cli("tools", "--stdio", cmd, "-o", "pretty", env={"COLUMNS": "200"})
    assert r.code == 0, r.stderr
    row = next(ln for ln in r.stdout.splitlines() if "get-sum" in ln)
    assert "forbidden" in row and "a, b" in row


def test_cli_tools_on_an_a2a_target_is_a_usage_error(run_cli: RunCli) -> None:
    r = run_cli("tools", "--url", "http://127.0.0.1:9/", "-p", "a2a-1.0")
    assert r.code == 2
    assert_one_line_error(r)
    assert "lists MCP tools" in r.stderr


def test_cli_call_echo_is_a_plain_call(run_cli: RunCli, everything_server: ServerProcess) -> None:
    r = run_cli("call", "echo", "message=hi", "--url", everything_server.url)
    assert r.code == 0, r.stderr
    assert r.json() == {"content": [{"type": "text", "text": "Echo: hi"}]}
    pretty = run_cli("call", "echo", "message=hi", "--url", everything_server.url, "-o", "pretty")
    assert pretty.code == 0 and "Echo: hi" in pretty.stdout


def test_cli_call_checks_arguments_before_calling(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    r = run_cli("call", "get-sum", "a=1", "--url", everything_server.url, "--trace")
    assert r.code == 2
    assert "needs argument b" in r.stderr
    assert '"method":"tools/call"' not in r.stderr.replace(" ", "")  # nothing was sent
    extra = run_cli("call", "get-sum", "a=1", "b=2", "c=3", "--url", everything_server.url)
    assert extra.code == 0, extra.stderr
    assert "takes no argument c" in extra.stderr
    assert "The sum of 1 and 2 is 3" in extra.stdout


def test_cli_call_streams_progress_as_ndjson(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    r = run_cli(
        "call",
        "trigger-long-running-operation",
        "duration=2",
        "steps=4",
        "--url",
        everything_server.url,
        "-o",
        "ndjson",
    )
    assert r.code == 0, r.stderr
    lines = r.lines()
    progress = [ln for ln in lines if ln["event"] == "progress"]
    assert [(p["progress"], p["total"]) for p in progress] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    end = lines[-1]
    assert end["event"] == "end" and end["outcome"] == "completed" and end["exitCode"] == 0
    assert "Long running operation completed" in end["result"]["content"][0]["text"]


def test_cli_call_answers_questions_off_a_terminal(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    url = everything_server.url
    quiet = run_cli("call", "trigger-elicitation-request", "--url", url)
    assert quiet.code == 0, quiet.stderr
    assert "declined" in quiet.stdout and "declined (answer with --json" in quiet.stderr
    cancelled = run_cli("call", "trigger-elicitation-request", "--cancel", "--url", url)
    assert cancelled.code == 0 and "cancel" in cancelled.stdout
    content = '{"name": "Ada", "check": true, "email": "a@b.c", "homepage": "https://x.y",'
    content += ' "birthdate": "1815-12-10", "integer": 1, "number": 2.5}'
    given = run_cli("call", "trigger-elicitation-request", "--json", content, "--url", url)
    assert given.code == 0, given.stderr
    assert "Ada" in given.stdout and "accept" in given.stdout
    bad = run_cli("call", "trigger-elicitation-request", "--defaults", "--url", url)
    assert bad.code == 2
    assert "--defaults: missing required field name" in bad.stderr
    both = run_cli("call", "echo", "message=x", "--json", "{}", "--decline", "--url", url)
    assert both.code == 2 and "cannot go together" in both.stderr


def test_cli_call_task_and_no_task(run_cli: RunCli, everything_server: ServerProcess) -> None:
    url = everything_server.url
    forced = run_cli("call", "echo", "message=hi", "--task", "--url", url)
    assert forced.code == 4
    assert_one_line_error(forced)
    assert "does not run as a task (taskSupport: forbidden)" in forced.stderr
    plain = run_cli("call", "simulate-research-query", "topic=x", "--no-task", "--url", url)
    assert plain.code == 2
    assert "runs only as a task" in plain.stderr
    task = run_cli("call", "simulate-research-query", "topic=x", "--url", url, "-o", "json")
    assert task.code == 0 and task.json()["status"] == "working"


def test_cli_call_ctrl_c_cancels_the_request(
    everything_server: ServerProcess, tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys

    from conftest import clean_env

    cmd = [sys.executable, "-m", "mcptask", "call", "trigger-long-running-operation"]
    cmd += ["duration=30", "steps=30", "--url", everything_server.url, "-o", "ndjson", "--trace"]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(tmp_path)
    )
    assert proc.stdout is not None
    first = json.loads(proc.stdout.readline())
    assert first["event"] == "progress"
    os.kill(proc.pid, signal.SIGINT)
    out, err = rest_of(proc, 30)
    assert proc.returncode == 130, err[-2000:]
    assert '"method":"notifications/cancelled"' in err.replace(" ", "")
    assert json.loads(out.splitlines()[-1])["outcome"] == "interrupted"
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last == (
        "mcptask: interrupted: the server was told to cancel the call (notifications/cancelled)"
    )


def test_cli_watch_shows_the_progress_of_a_task(run_cli: RunCli) -> None:
    r = run_cli("demo", "--seconds", "2", "-o", "ndjson")
    assert r.code == 0, r.stderr
    progress = [ln for ln in r.lines() if ln["event"] == "progress"]
    assert progress and progress[-1]["progress"] == progress[-1]["total"]


def test_answer_json_fills_defaults() -> None:
    """SEP-1034 for `answer --json` too: the responder fills what the answer leaves out."""
    from mcptask.commands._answering import Responder

    class Quiet:
        def note(self, message: str) -> None:
            pass

    class Places:
        def note(self, *_args: Any, **_kw: Any) -> None:
            pass  # the question as asked goes to the log: none here

    class Ctx:
        out = Quiet()
        places = Places()

    request = InputRequest("t", "elicitation/create", {"requestedSchema": DEFAULTS_FORM})
    responder = Responder(Ctx(), content={"age": 41})  # type: ignore[arg-type]
    answer = run(responder(request))
    assert answer == {
        "action": "accept",
        "content": {"age": 41, "name": "John Doe", "status": "active", "verified": True},
    }


# -- on a terminal -------------------------------------------------------------------------------


def _on_terminal(state_dir: Path, *args: str) -> Any:
    from test_answer import Terminal

    from conftest import clean_env

    return Terminal(list(args), clean_env(state_dir))


def test_cli_plain_call_on_a_terminal_shows_a_progress_bar(
    everything_server: ServerProcess, state_dir: Path
) -> None:
    t = _on_terminal(
        state_dir,
        "call",
        "trigger-long-running-operation",
        "duration=2",
        "steps=4",
        "--url",
        everything_server.url,
    )
    try:
        t.expect("calling trigger-long-running-operation")
        t.expect("/4")  # the bar's count, as progress arrives
        t.expect("Long running operation completed")
        assert t.wait() == 0
    finally:
        if t.proc.poll() is None:
            t.proc.kill()


def test_cli_plain_call_on_a_terminal_asks_with_a_form(
    everything_server: ServerProcess, state_dir: Path
) -> None:
    t = _on_terminal(
        state_dir, "call", "trigger-elicitation-request", "--url", everything_server.url
    )
    try:
        t.expect("tool trigger-elicitation-request asks:")
        t.expect("Please provide inputs for the following fields")
        t.type("\x04")  # Ctrl-D: the form is dismissed, the server hears `cancel`
        t.expect("dismissed")
        t.expect("cancel")
        assert t.wait() == 0
    finally:
        if t.proc.poll() is None:
            t.proc.kill()


def test_cli_plain_call_on_2026_answers_with_json(
    run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    url = fastmcp4_server.url
    r = run_cli("call", "ask_name", "--no-task", "--json", '{"name": "Ada"}', "--url", url)
    assert r.code == 0, r.stderr
    assert r.json()["content"][0]["text"] == "Hello, Ada!"
    assert "tool ask_name asks: What is your name?" in r.stderr
    declined = run_cli("call", "ask_name", "--no-task", "--url", url)
    assert declined.code == 0, declined.stderr
    assert "No name given (decline)" in declined.stdout


def test_cli_plain_call_over_stdio(run_cli: RunCli, everything_stdio_cmd: list[str]) -> None:
    cmd = " ".join(everything_stdio_cmd)
    r = run_cli(
        "call",
        "trigger-long-running-operation",
        "duration=1",
        "steps=2",
        "--stdio",
        cmd,
        "-o",
        "ndjson",
    )
    assert r.code == 0, r.stderr
    assert [ln["event"] for ln in r.lines()] == ["progress", "progress", "end"]


def test_cli_plain_call_on_2026_streams_progress(
    run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    url = fastmcp4_server.url
    r = run_cli(
        "call", "slow_echo", "text=hi", "seconds=1", "--no-task", "--url", url, "-o", "ndjson"
    )
    assert r.code == 0, r.stderr
    lines = r.lines()
    progress = [ln for ln in lines if ln["event"] == "progress"]
    assert progress and progress[0]["total"] == 2 and progress[0]["message"] == "step 1/2"
    assert lines[-1]["result"]["content"][0]["text"] == "echo: hi"


def test_cli_call_suggests_the_closest_tool_names(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    r = run_cli("call", "get-summ", "a=1", "b=2", "--url", everything_server.url)
    assert r.code == 2
    assert_one_line_error(r)
    assert "has no tool 'get-summ'; did you mean get-sum?" in r.stderr
    r = run_cli("call", "trigger-elicitation", "--url", everything_server.url)
    assert "did you mean trigger-elicitation-request or trigger-elicitation-request-async" in (
        r.stderr
    )


def test_cli_call_checks_enum_values_before_sending(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    url = everything_server.url
    r = run_cli("call", "get-annotated-message", "messageType=bogus", "--url", url, "--trace")
    assert r.code == 2
    assert 'argument messageType="bogus": the tool expects one of "error", "success", "debug"' in (
        r.stderr
    )
    assert '"method":"tools/call"' not in r.stderr.replace(" ", "")  # nothing was sent
    ok = run_cli("call", "get-annotated-message", "messageType=debug", "--url", url)
    assert ok.code == 0, ok.stderr


@pytest.mark.parametrize(
    ("value", "prop", "problem"),
    [
        ("x", {"enum": ["a", "b"]}, 'one of "a", "b"'),
        (3, {"oneOf": [{"const": 1, "title": "one"}, {"const": 2}]}, "one of 1, 2"),
        (5, {"minimum": 6}, "at least 6"),
        (5, {"exclusiveMaximum": 5}, "less than 5"),
        ("ab", {"minLength": 3}, "at least 3 characters"),
        ("abcd", {"maxLength": 3}, "at most 3 characters"),
        ("b", {"const": "a"}, 'expects "a"'),
    ],
)
def test_schema_constraints_are_checked_before_sending(value: Any, prop: Any, problem: str) -> None:
    with pytest.raises(UsageError, match=re.escape(problem)):
        arguments.check("t", {"k": value}, {"properties": {"k": prop}}, lambda _: None)
    # a pattern is left to the server (a hostile one could backtrack for ever)
    good = {"enum": ["a"], "minimum": 0, "pattern": "^(a+)+$", "maxLength": 10}
    arguments.check("t", {"k": 5}, {"properties": {"k": {"maximum": 10**400}}}, lambda _: None)
    arguments.check("t", {"k": 5}, {"properties": {"k": {"minimum": float("-inf")}}}, print)
    arguments.check("t", {"k": "a"}, {"properties": {"k": good}}, lambda _: None)
