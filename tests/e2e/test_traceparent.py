"""Traces join up (issue 35): the W3C trace of a task reaches real servers, on every request
mcptask makes about it, from the process that made the task and from others.

The servers record what they receive (`--record`, `tests/servers/wire_recorder.py`): fastmcp
3.4.11 (MCP 2025-11-25) and fastmcp 4.1.4 (MCP 2026-07-28) each request's `params._meta`; the
a2a-sdk 1.3.0 agent each request's `traceparent` header (JSON-RPC 1.0 and 0.3, HTTP+JSON, and
gRPC metadata) and the metadata of the message its executor was given."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import pytest

from mcptask.text.traceparent import derived_ids, parse

from conftest import RunCli, assert_one_line_error
from servers.a2a_plugin import A2AServerProcess
from servers.common import ServerProcess


def _traceparent() -> tuple[str, str, str]:
    """A fresh caller's trace: (traceparent, trace id, span id)."""
    trace, span = secrets.token_hex(16), secrets.token_hex(8)
    return f"00-{trace}-{span}-01", trace, span


def _mcp_requests(server: ServerProcess, task_id: str, method: str) -> list[dict[str, Any]]:
    """The `_meta` of each `method` request about `task_id` the server received."""
    out = []
    for rec in server.records():
        body = rec.get("body")
        if not isinstance(body, dict) or body.get("method") != method:
            continue
        params = body.get("params") or {}
        if params.get("taskId") == task_id:
            out.append(params.get("_meta") or {})
    return out


def _tools_calls(server: ServerProcess, trace_id: str) -> list[dict[str, Any]]:
    """The `_meta` of each `tools/call` the server received in this trace."""
    out = []
    for rec in server.records():
        body = rec.get("body")
        if isinstance(body, dict) and body.get("method") == "tools/call":
            meta = (body.get("params") or {}).get("_meta") or {}
            if trace_id in str(meta.get("traceparent", "")):
                out.append(meta)
    return out


# -- MCP ---------------------------------------------------------------------------------------


def test_mcp_2025_the_call_and_a_watch_in_another_process_carry_the_task_s_trace(
    fastmcp3_recording_server: ServerProcess, run_cli: RunCli
) -> None:
    server = fastmcp3_recording_server
    given, trace, span = _traceparent()
    other, _, _ = _traceparent()
    # the flag beats the environment's TRACEPARENT
    made = run_cli(
        *("call", "slow_echo", "text=traced", "seconds=1", "--url", server.url),
        *("--traceparent", given, "-o", "json"),
        env={"TRACEPARENT": other},
    )
    assert made.code == 0, made.stderr
    task = made.json()
    task_id, own = task["taskId"], task["spanId"]
    assert task["traceId"] == trace and own != span
    expected = f"00-{trace}-{own}-01"
    [call] = _tools_calls(server, trace)
    assert call["traceparent"] == expected
    assert "progressToken" in call  # merged with the `_meta` already there

    # another process: the task book's trace, the task's span as the parent of every poll
    watched = run_cli("watch", "--result", "-o", "ndjson", "--", task_id)
    assert watched.code == 0, watched.stderr
    statuses = [e for e in watched.lines() if e.get("event") == "status"]
    assert statuses and all((e["traceId"], e["spanId"]) == (trace, own) for e in statuses)
    polls = _mcp_requests(server, task_id, "tasks/get")
    results = _mcp_requests(server, task_id, "tasks/result")
    assert polls and results
    assert {m.get("traceparent") for m in polls + results} == {expected}

    got = run_cli("get", "-o", "json", "--", task_id)
    assert got.code == 0, got.stderr
    assert (got.json()["traceId"], got.json()["spanId"]) == (trace, own)
    log = run_cli("log", "-o", "json", "--", task_id).json()
    assert (log["traceId"], log["spanId"], log["parentSpanId"]) == (trace, own, span)


def test_mcp_2026_a_trace_from_the_environment_and_a_watch_that_names_another(
    fastmcp4_recording_server: ServerProcess, run_cli: RunCli
) -> None:
    """TRACEPARENT and TRACESTATE from the environment start the task in that trace, beside
    the 2026 client `_meta`; a watch that names another trace keeps the task's own (and
    sends no `tracestate` of another trace)."""
    server = fastmcp4_recording_server
    given, trace, _ = _traceparent()
    made = run_cli(
        *("call", "slow_echo", "text=traced", "seconds=1", "--url", server.url, "-o", "json"),
        env={"TRACEPARENT": given, "TRACESTATE": "congo=t61rcWkgMzE"},
    )
    assert made.code == 0, made.stderr
    task_id, own = made.json()["taskId"], made.json()["spanId"]
    [call] = _tools_calls(server, trace)
    assert call["traceparent"] == f"00-{trace}-{own}-01"
    assert call["tracestate"] == "congo=t61rcWkgMzE"
    assert call["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"

    other, other_trace, _ = _traceparent()
    watched = run_cli("watch", "--traceparent", other, "-o", "json", "--", task_id)
    assert watched.code == 0, watched.stderr
    [summary] = watched.json()["tasks"]
    assert (summary["traceId"], summary["spanId"]) == (trace, own)
    polls = _mcp_requests(server, task_id, "tasks/get")
    assert polls
    assert {m["traceparent"] for m in polls} == {f"00-{trace}-{own}-01"}
    assert all("tracestate" not in m for m in polls)
    assert all(m["io.modelcontextprotocol/protocolVersion"] == "2026-07-28" for m in polls)
    assert other_trace not in str(server.records())


def test_a_task_made_elsewhere_joins_the_trace_a_watch_names(
    fastmcp3_recording_server: ServerProcess, run_cli: RunCli, tmp_path: Any
) -> None:
    """A task the book has no trace for (made by another machine: another state directory)
    gets ids derived from its endpoint and id, under the trace the watch names; the book
    keeps them: a later `get` without a trace sends the same."""
    server = fastmcp3_recording_server
    made = run_cli("call", "slow_echo", "text=x", "seconds=1", "--url", server.url, "-o", "json")
    assert made.code == 0, made.stderr
    task_id, key = made.json()["taskId"], made.json()["server"]
    elsewhere = {"MCPTASK_STATE_DIR": str(tmp_path), "MCPTASK_CONFIG": str(tmp_path / "none")}
    given, trace, span = _traceparent()
    watched = run_cli(
        *("watch", "--url", server.url, "--traceparent", given, "-o", "json", "--", task_id),
        env=elsewhere,
    )
    assert watched.code == 0, watched.stderr
    ids = derived_ids(key, task_id, parse(given))
    assert (ids.trace_id, ids.parent_span_id) == (trace, span)
    [summary] = watched.json()["tasks"]
    assert (summary["traceId"], summary["spanId"]) == (trace, ids.span_id)
    got = run_cli("get", "--url", server.url, "-o", "json", "--", task_id, env=elsewhere)
    assert got.json()["spanId"] == ids.span_id
    polls = _mcp_requests(server, task_id, "tasks/get")
    assert polls[-1]["traceparent"] == f"00-{trace}-{ids.span_id}-01"


def test_the_lean_poll_lane_carries_the_trace(
    fastmcp3_recording_server: ServerProcess, a2a_recording_server: A2AServerProcess
) -> None:
    """The polls of a big watch (`HttpOptions.many`: `transports/poll_pool.py`) carry the
    task's trace like any other request."""
    from mcptask.model.refs import TaskRef
    from mcptask.protocols.a2a import A2A10
    from mcptask.protocols.mcp2025 import Mcp2025
    from mcptask.protocols.trace_context import TaskTrace
    from mcptask.text.traceparent import new_ids
    from mcptask.transports.http import HttpOptions, HttpTransport
    from mcptask.transports.rpc import RpcClient

    mcp, a2a = fastmcp3_recording_server, a2a_recording_server

    async def run() -> tuple[str, str, TaskTrace, TaskTrace]:
        polls: list[HttpTransport] = []

        def rpc(url: str) -> RpcClient:
            transport = HttpTransport(HttpOptions(url=url, many=True))
            polls.append(transport)
            return RpcClient(transport)

        m = Mcp2025(rpc(mcp.url), mcp.url)
        a = A2A10(rpc(a2a.url), a2a.url)
        t_mcp, t_a2a = TaskTrace(new_ids()), TaskTrace(new_ids())
        try:
            made = await m.call_tool("slow_echo", {"text": "lean", "seconds": 1}, ttl=None)
            sent = await a.send_message("hello", context_id=None)
            assert made.task is not None and sent.task is not None
            await m.get(TaskRef(made.task.taskId, session=m.session, trace=t_mcp))
            await a.get(TaskRef(sent.task.taskId, trace=t_a2a))
            assert all(t._polls is not None for t in polls)  # they went the lean way
            return made.task.taskId, sent.task.taskId, t_mcp, t_a2a
        finally:
            for t in polls:
                await t.aclose()

    mcp_task, a2a_task, t_mcp, t_a2a = asyncio.run(run())
    [poll] = _mcp_requests(mcp, mcp_task, "tasks/get")
    assert poll["traceparent"] == t_mcp.fields["traceparent"]
    gets = [
        r
        for r in a2a.records()
        if isinstance(r.get("body"), dict)
        and r["body"].get("method") == "GetTask"
        and r["body"]["params"]["id"] == a2a_task
    ]
    assert [r["headers"]["traceparent"] for r in gets] == [t_a2a.fields["traceparent"]]


# -- A2A ---------------------------------------------------------------------------------------


def _executor_metadata(server: A2AServerProcess, task_id: str) -> list[dict[str, Any]]:
    return [
        r["metadata"]
        for r in server.records()
        if r.get("via") == "executor" and r.get("taskId") == task_id
    ]


def _a2a_headers(server: A2AServerProcess, trace_id: str) -> list[tuple[str, str]]:
    """(what, traceparent) of each request the agent received in this trace: the JSON-RPC
    method, or the HTTP method and path, or the gRPC method."""
    out = []
    for rec in server.records():
        tp = rec.get("headers", {}).get("traceparent", "")
        if trace_id not in tp:
            continue
        body = rec.get("body")
        if rec["via"] == "grpc":
            what = rec["rpc"].rsplit("/", 1)[-1]
        elif isinstance(body, dict) and "jsonrpc" in body:
            what = body["method"]
        else:
            what = f"{rec['method']} {rec['path'].rsplit('/', 1)[-1]}"
        out.append((what, tp))
    return out


@pytest.mark.parametrize(
    ("protocol", "path", "send", "get", "cancel"),
    [
        ("a2a-1.0", "/", "SendMessage", "GetTask", "CancelTask"),
        ("a2a-0.3", "/", "message/send", "tasks/get", "tasks/cancel"),
        ("a2a-1.0-rest", "/rest", "POST message:send", "GET {id}", "POST {id}:cancel"),
    ],
)
def test_a2a_send_get_and_cancel_from_other_processes_carry_the_trace(
    a2a_recording_server: A2AServerProcess,
    run_cli: RunCli,
    protocol: str,
    path: str,
    send: str,
    get: str,
    cancel: str,
) -> None:
    server = a2a_recording_server
    url = server.base_url + path
    given, trace, _ = _traceparent()
    made = run_cli(
        *("send", "slow traced", "--url", url, "-p", protocol, "--traceparent", given),
        *("-o", "json"),
    )
    assert made.code == 0, made.stderr
    task_id, own = made.json()["taskId"], made.json()["spanId"]
    assert made.json()["traceId"] == trace
    expected = f"00-{trace}-{own}-01"
    assert run_cli("get", "-o", "json", "--", task_id).json()["spanId"] == own
    cancelled = run_cli("cancel", "-o", "json", "--", task_id)
    assert cancelled.code == 0, cancelled.stderr
    seen = _a2a_headers(server, trace)
    names = [what.replace(task_id, "{id}") for what, _ in seen]
    assert names[0] == send and get in names and cancel in names, names
    assert {tp for _, tp in seen} == {expected}
    # the message carried it in its metadata, as the agent's executor saw it
    assert _executor_metadata(server, task_id) == [{"traceparent": expected}]


def test_a2a_grpc_carries_the_trace_as_call_metadata(
    a2a_grpc_recording_server: A2AServerProcess, run_cli: RunCli
) -> None:
    server = a2a_grpc_recording_server
    given, trace, _ = _traceparent()
    made = run_cli("send", "traced", "--url", server.url, "--traceparent", given, "-o", "json")
    assert made.code == 0, made.stderr
    task_id, own = made.json()["taskId"], made.json()["spanId"]
    watched = run_cli("watch", "--no-push", "-o", "json", "--", task_id)
    assert watched.code == 0, watched.stderr
    expected = f"00-{trace}-{own}-01"
    seen = _a2a_headers(server, trace)
    assert [what for what, _ in seen][:2] == ["SendMessage", "GetTask"]
    assert {tp for _, tp in seen} == {expected}
    assert _executor_metadata(server, task_id) == [{"traceparent": expected}]


# -- mistakes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("call", "slow_echo", "--traceparent", "00-xyz"),
        ("send", "hi", "--traceparent", "not-a-trace"),
        ("watch", "t1", "--traceparent", f"00-{'0' * 32}-{'1' * 16}-01"),
    ],
)
def test_a_malformed_traceparent_is_one_line_exit_2(run_cli: RunCli, args: tuple[str, ...]) -> None:
    result = run_cli(*args, "--url", "http://127.0.0.1:9/mcp")
    assert result.code == 2, result.stderr
    assert_one_line_error(result)
    assert "--traceparent" in result.stderr


def test_a_malformed_traceparent_in_the_environment_is_one_line_exit_2(run_cli: RunCli) -> None:
    result = run_cli(
        "call", "slow_echo", "--url", "http://127.0.0.1:9/mcp", env={"TRACEPARENT": "garbage"}
    )
    assert result.code == 2, result.stderr
    assert_one_line_error(result)
    assert "TRACEPARENT 'garbage'" in result.stderr
