"""Behaviours seen on MCP servers and A2A agents the rest of the suite does not use (issue 18).
Each test runs against a real server that shows the behaviour (Python's own `http.server`,
fastmcp 4.1.4 over stdio without the tasks extension, Agno 3.1.10, a2a-sdk 1.3.0) or, where none
of them does, a scripted one (`servers/odd_server.py`, `servers/fault_server.py`)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import CliResult, RunCli, assert_one_line_error
from servers.a2a_plugin import AgnoServerProcess
from servers.common import start_on_free_port
from servers.fault_server import (
    INIT_RESULT,
    FaultServer,
    hang,
    reset_at_once,
    rpc_error,
    slow,
    task,
)
from servers.odd_server import OddServer

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def odd() -> Iterator[OddServer]:
    with OddServer() as server:
        yield server


@pytest.fixture(scope="module")
def fault() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs


@pytest.fixture(scope="module")
def plain_web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Python's own static web server (a directory listing), a real server that speaks
    neither protocol."""
    root = tmp_path_factory.mktemp("www")
    (root / "index.txt").write_text("hello\n")
    proc = start_on_free_port(
        lambda port: [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        path="/",
        cwd=root,
    )
    try:
        yield proc.url
    finally:
        proc.stop()


def _send(run_cli: RunCli, url: str, text: str, *extra: str) -> dict[str, object]:
    r = run_cli("send", text, "-u", url, "-o", "json", *extra)
    assert r.code == 0, r.stderr
    out: dict[str, object] = r.json()
    return out


# -- 5. endpoints that speak neither protocol ----------------------------------------------------


def test_a_plain_web_server_is_neither_mcp_nor_a2a(run_cli: RunCli, plain_web: str) -> None:
    for args in (("get", "t1"), ("check",), ("watch", "t1")):
        r = run_cli(*args, "-u", plain_web)
        assert r.code == 4, (args, r.stderr)
        assert_one_line_error(r)
        assert "is not an MCP server or A2A agent" in r.stderr
        assert "HTTP 501" in r.stderr  # what it got: http.server refuses POST
        assert "no agent card" in r.stderr and "HTTP 404" in r.stderr
        assert "retrying" not in r.stderr


def test_watch_never_retries_an_endpoint_that_never_spoke_the_protocol(
    run_cli: RunCli, plain_web: str
) -> None:
    r = run_cli("watch", "t1", "-u", plain_web, "-p", "mcp-2025-11-25", "-o", "ndjson")
    assert r.code == 4, r.stderr
    assert "retrying" not in r.stderr
    end = r.lines()[-1]
    assert end["event"] == "end" and end["outcome"] == "error", end


# -- 6. a card URL that answers an endless event stream ---------------------------------------


def test_detection_gives_up_at_once_on_a_card_that_is_an_event_stream(
    run_cli: RunCli, odd: OddServer
) -> None:
    url = odd.endless_card()
    r = run_cli("get", "t1", "-u", url)
    assert r.code == 4, r.stderr
    assert_one_line_error(r)
    assert "not an MCP server or A2A agent" in r.stderr
    assert "text/event-stream" in r.stderr
    cards = [
        q
        for q in odd.seen(url)
        if q.http_method == "GET" and q.headers.get("accept") != "text/event-stream"
    ]
    assert len(cards) == 1  # once (then the origin's card URL, which 404s)
    # the HTTP+SSE fallback's GET (issue 25) read one event, not `endpoint`, and hung up
    # the client hung up at once: the server could write only what the socket buffers hold
    assert odd.sent[url.split("/")[3]] < 8 * 1024 * 1024


# -- 10. an agent that leaves the connection dead after a 500 ----------------------------------


def test_a_dead_keep_alive_connection_after_a_500_does_not_break_send(
    run_cli: RunCli, odd: OddServer
) -> None:
    url = odd.agent("1.0", dead_after_500=True)
    for _ in range(3):
        sent = _send(run_cli, url, "hello")
        assert sent["status"] in ("working", "completed")
    # the probe asked the agent to close its connection
    probes = [q for q in odd.seen(url) if q.method == "server/discover"]
    assert probes and all(q.headers.get("connection") == "close" for q in probes)


def test_a_safe_request_is_sent_once_more_when_its_pooled_connection_is_dead(
    run_cli: RunCli, odd: OddServer, tmp_path: Path
) -> None:
    url = odd.agent("0.3", drop_reused=True)
    tid = _send(run_cli, url, "hello", "-p", "a2a-0.3")["taskId"]
    # detection reads the card, then tasks/get goes out on the same (dead) connection (from
    # a task book that does not know the endpoint: the one `send` wrote remembers 0.3)
    fresh = {"MCPTASK_STATE_DIR": str(tmp_path)}
    r = run_cli("get", "-u", url, "-o", "json", "--trace", "--", str(tid), env=fresh)
    assert r.code == 0, r.stderr
    assert "sending once more" in r.stderr
    gets = [q for q in odd.seen(url) if q.method == "tasks/get"]
    assert len(gets) == 2


# -- 11. the endpoint the card names ------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_requests_go_to_the_endpoint_the_card_names(
    run_cli: RunCli, odd: OddServer, version: str
) -> None:
    url = odd.agent(version, endpoint_elsewhere=True)
    for typed in (url, url + ".well-known/agent-card.json"):
        r = run_cli("send", "hello", "-u", typed, "-o", "json", "--trace")
        assert r.code == 0, r.stderr
        assert f"names the endpoint {url}rpc" in r.stderr
        tid = r.json()["taskId"]
        got = run_cli("get", "-u", typed, "-o", "json", "--trace", "--", tid)
        assert got.code == 0, got.stderr
        assert f"posting to {url}rpc" in got.stderr  # remembered for the endpoint
        assert [ln for ln in got.stderr.splitlines() if ln.startswith("> POST")] == [
            f"> POST {url}rpc"
        ]
    posts = {q.path for q in odd.seen(url) if q.method in ("SendMessage", "message/send")}
    assert posts == {"/rpc"}


# -- 13. a cancel answered with the finished task -----------------------------------------------


def test_cancel_of_a_finished_task_answered_with_the_task_is_exit_11(
    run_cli: RunCli, odd: OddServer, fault: FaultServer
) -> None:
    url = odd.agent("1.0", cancel_answers_task=True, seconds=0.0)
    tid = str(_send(run_cli, url, "hello")["taskId"])
    r = run_cli("cancel", "-u", url, "--", tid)
    assert r.code == 11, r.stderr
    assert_one_line_error(r)
    assert "completed" in r.stderr
    # MCP 2025-11-25 the same way
    mcp = fault.url(cancel=[task(status="completed")])
    r = run_cli("cancel", "t-1", "-u", mcp, "-p", "mcp-2025-11-25")
    assert r.code == 11, r.stderr
    assert "completed" in r.stderr


# -- 15. check judges each A2A rule by the version that has it ---------------------------------


def test_check_allows_a_0_3_subscription_to_begin_with_a_status_update(
    run_cli: RunCli, odd: OddServer
) -> None:
    url = odd.agent("0.3", status_first=True, seconds=3.0)
    r = run_cli("check", "-u", url, "--check", "a2a.stream.subscribe", "-o", "json")
    assert r.code == 0, r.stdout + r.stderr
    [check] = [c for c in r.json()["checks"] if c["id"] == "a2a.stream.subscribe"]
    assert check["verdict"] == "PASS", check
    assert "status update" in check["observed"]
    # in 1.0 the same subscription breaks §3.1.6
    url = odd.agent("1.0", status_first=True, seconds=3.0)
    r = run_cli("check", "-u", url, "--check", "a2a.stream.subscribe", "-o", "json")
    assert r.code == 5, r.stdout + r.stderr
    [check] = [c for c in r.json()["checks"] if c["id"] == "a2a.stream.subscribe"]
    assert check["verdict"] == "FAIL" and "MUST be the Task" in check["observed"]


# -- 16. questions in data parts -----------------------------------------------------------------


def test_a_question_in_a_data_part_is_shown_as_text_and_json(
    run_cli: RunCli, odd: OddServer
) -> None:
    for quirk in ("ask_with_data", "ask_data_only"):
        url = odd.agent("1.0", **{quirk: True})
        tid = str(_send(run_cli, url, "ask me")["taskId"])
        r = run_cli("get", "-u", url, "-o", "json", "--", tid)
        assert r.code == 0, r.stderr
        message = r.json()["statusMessage"]
        assert "a call of get_weather(city=null" in message
        assert '"unit": "celsius"' in message
        if quirk == "ask_with_data":
            assert message.startswith("Which city?")


# -- 2. check never leaves a request behind ------------------------------------------------------


def test_check_leaves_no_request_behind_when_the_server_dies(
    run_cli: RunCli, fault: FaultServer
) -> None:
    tool = {
        "name": "slow",
        "inputSchema": {"type": "object", "properties": {}},
        "execution": {"taskSupport": "required"},
    }
    working = task(status="working", pollInterval=200)
    url = fault.url(
        tools=[{"tools": [tool]}],
        call=[{"task": working}],
        # the server dies while tasks/result waits: the next read is reset, later ones hang
        get=[working, reset_at_once(), hang()],
        result=[slow(1.0, reset_at_once())],
    )
    r = run_cli(
        "check",
        "-u",
        url,
        "-p",
        "mcp-2025-11-25",
        "--category",
        "result",
        "-o",
        "json",
        env={"MCPTASK_READ_TIMEOUT": "3"},
    )
    assert r.code in (5, 10), r.stdout + r.stderr
    assert "never retrieved" not in r.stderr
    assert "Traceback" not in r.stderr
    assert "destroyed" not in r.stderr


# -- 3 (protocol side). MCP servers that cannot list ------------------------------------------


def test_a_server_without_tasks_list_is_reported_as_unable_to_list() -> None:
    import asyncio

    from mcptask.protocols.base import CannotList
    from mcptask.protocols.mcp2025 import Mcp2025
    from mcptask.transports.http import HttpOptions, HttpTransport
    from mcptask.transports.rpc import RpcClient

    init = {**INIT_RESULT, "capabilities": {"tasks": {"cancel": {}}}}
    with FaultServer() as fs:
        for url in (fs.url(init=[init]), fs.url(list=[rpc_error(-32601, "Method not found")])):

            async def go(url: str = url) -> None:
                rpc = RpcClient(HttpTransport(HttpOptions(url=url)))
                try:
                    await Mcp2025(rpc, url).list_tasks([])
                finally:
                    await rpc.aclose()

            with pytest.raises(CannotList):
                asyncio.run(go())


# -- 4. MCP 2026-07-28 without the tasks extension over stdio ----------------------------------


PLAIN_FASTMCP4 = Path(__file__).parents[1] / "servers" / "fastmcp4_plain_server.py"


def _without_waiting_notes(r: CliResult) -> CliResult:
    """`r` without mcptask's notes that a slow stdio server is still starting."""
    kept = [ln for ln in r.stderr.splitlines(True) if "waiting for the stdio server" not in ln]
    return CliResult(r.code, r.stdout, "".join(kept))


def test_a_2026_only_stdio_server_without_tasks_says_it_has_no_tasks(run_cli: RunCli) -> None:
    from servers.mcp_envs import ENVIRONMENTS

    python = str(ENVIRONMENTS["fastmcp4"]())
    command = subprocess.list2cmdline([python, str(PLAIN_FASTMCP4)])
    r = run_cli("call", "hello", "x=1", "--task", "--stdio", command)
    assert r.code == 4, r.stderr
    # on a loaded machine the server may take more than 3 s to start: mcptask then says it is
    # waiting (a note of its own, not the error); the error is still one line
    assert_one_line_error(_without_waiting_notes(r))
    assert "does not support tasks" in r.stderr
    assert "-32022" not in r.stderr and "speaks only" not in r.stderr
    # a plain call goes over the version the server speaks (issue 25: chosen per command)
    plain = run_cli("call", "hello", "x=1", "--stdio", command, "-o", "json")
    assert plain.code == 0, plain.stderr
    assert plain.json()["structuredContent"] == {"result": "1"}
    # the first process served server/discover (2026-07-28) and keeps to it (the MCP SDK's
    # dual-era loop): MCP 2025-11-25 goes to a fresh one (issue 39)
    tools = run_cli("tools", "--stdio", command, "-o", "json")
    assert tools.code == 0 and tools.json()["protocolVersion"] == "2025-11-25", tools.stderr
    assert [t["taskSupport"] for t in tools.json()["tools"]] == ["forbidden"]
    # over 2026-07-28 without the tasks extension a tool runs as no task either
    newer = run_cli("tools", "--stdio", command, "-p", "mcp-2026-07-28", "-o", "json")
    assert newer.code == 0 and newer.json()["protocolVersion"] == "2026-07-28", newer.stderr
    assert [t["taskSupport"] for t in newer.json()["tools"]] == ["forbidden"]
    check = run_cli("check", "--stdio", command, "-o", "json")
    verdicts = {c["id"]: c["verdict"] for c in check.json()["checks"]}
    assert verdicts["mcp2025.wire.protocol-version"] == "PASS", check.stdout
    # the truth: it has no tasks, which the spec allows (issue 38: INFO, no task support, exit 4)
    assert verdicts["mcp2025.capability.tasks"] == "INFO"
    assert check.code == 4 and check.json()["taskSupport"] is False


# -- 3 and 14. list falls back to the task book ---------------------------------------------------


def test_list_falls_back_to_the_task_book_when_the_server_cannot_list(
    run_cli: RunCli, odd: OddServer, fault: FaultServer
) -> None:
    # A2A 1.0 ListTasks answered -32004 UnsupportedOperation
    url = odd.agent("1.0", list_unsupported=True)
    tid = _send(run_cli, url, "hello")["taskId"]
    r = run_cli("list", "-u", url, "-o", "json")
    assert r.code == 0, r.stderr
    assert [t["taskId"] for t in r.json()["tasks"]] == [tid]
    assert "does not support ListTasks" in r.stderr and "task book" in r.stderr
    # MCP 2025-11-25 without tasks.list in its capabilities, and one that answers -32601
    init = {**INIT_RESULT, "capabilities": {"tasks": {"cancel": {}}}}
    for mcp in (fault.url(init=[init]), fault.url(list=[rpc_error(-32601, "Method not found")])):
        r = run_cli("list", "-u", mcp, "-p", "mcp-2025-11-25", "-o", "json")
        assert r.code == 0, r.stderr
        assert r.json()["tasks"] == []
        assert "task book" in r.stderr and r.stderr.count("\n") == 1


# -- 9. over stdio, a task that needs input dies with the server -----------------------------


def test_the_input_hint_over_stdio_says_what_works(run_cli: RunCli) -> None:
    from servers.mcp_envs import ENVIRONMENTS

    python = str(ENVIRONMENTS["fastmcp4"]())
    server = Path(__file__).parents[1] / "servers" / "fastmcp4_server.py"
    command = subprocess.list2cmdline([python, str(server), "--stdio"])
    r = run_cli("call", "ask_name", "--stdio", command, "-o", "ndjson")
    assert r.code == 6, r.stderr
    assert "over stdio the task ends with the server" in r.stderr
    assert "answer it with `mcptask answer" not in r.stderr


# -- 12. Agno: the URLs it announces, and workflows -------------------------------------------


def test_agno_accepts_the_urls_it_announces(
    run_cli: RunCli, agno_server: AgnoServerProcess
) -> None:
    for suffix in ("/v1/message:send", "/v1/message:stream", "/v1"):
        url = agno_server.url + suffix
        r = run_cli("send", "hi", "-u", url, "--context-id", "c-urls", "-o", "json", "--trace")
        assert r.code == 0, r.stderr
        assert r.json()["protocol"] == "agno"
        posts = [ln for ln in r.stderr.splitlines() if ln.startswith("> POST")]
        assert posts == [f"> POST {agno_server.url}/v1/message:send"]
    forced = run_cli(
        "send", "hi", "-u", agno_server.url + "/v1/message:send", "-p", "agno",
        "--context-id", "c-urls", "-o", "json", "--trace",
    )  # fmt: skip
    assert forced.code == 0, forced.stderr
    assert f"> POST {agno_server.url}/v1/message:send\n" in forced.stderr


def test_agno_workflow_tasks_come_from_their_answer(
    run_cli: RunCli, agno_server: AgnoServerProcess
) -> None:
    url = f"{agno_server.base_url}/a2a/workflows/pipeline/v1/message:stream"  # as its card says
    r = run_cli("send", "hi", "-u", url, "--result", "-o", "json")
    assert r.code == 0, r.stderr
    assert r.json()["text"] == "echo: hi"
    r = run_cli("send", "again", "-u", url, "--watch", "-o", "ndjson")
    assert r.code == 0, r.stderr
    assert r.lines()[-1]["outcome"] == "completed"
    tid = r.lines()[0]["taskId"]
    for args in (("get",), ("watch", "-o", "ndjson")):
        r = run_cli(*args, "-u", url, "--", tid)
        assert r.code == 4, r.stderr
        assert "Agno cannot look up workflow tasks" in r.stdout + r.stderr


# -- 16. answer --data -------------------------------------------------------------------------


def test_answer_with_a_data_part(run_cli: RunCli, odd: OddServer) -> None:
    url = odd.agent("1.0", ask_with_data=True)
    tid = str(_send(run_cli, url, "ask me")["taskId"])
    r = run_cli("answer", "-u", url, "--data", '{"city": "Paris"}', "-o", "json", "--", tid)
    assert r.code == 0, r.stderr
    assert "a call of get_weather" in r.stderr  # the question, readable
    assert r.json()["status"] == "completed"
    agent = odd.scenario(url)
    assert agent.answers[-1] == [{"data": {"city": "Paris"}}]
    bad = run_cli("answer", "-u", url, "--data", "{nope", "--", tid)
    assert bad.code == 2
    assert_one_line_error(bad)


# -- 17. a new task for the answer -------------------------------------------------------------


def test_answer_names_the_new_task_a_server_starts(run_cli: RunCli, odd: OddServer) -> None:
    url = odd.agent("0.3", answer_new_task=True)
    tid = str(_send(run_cli, url, "ask me")["taskId"])
    r = run_cli("answer", "-u", url, "--text", "Paris", "-o", "json", "--", tid)
    assert r.code == 0, r.stderr
    new = r.json()["taskId"]
    assert new != tid
    assert f"started a new task for the answer: {new}" in r.stderr
    assert run_cli("get", "-u", url, "-o", "json", "--", new).json()["status"] == "completed"


# -- 18. an empty task id ----------------------------------------------------------------------


def test_an_empty_task_id_is_a_usage_error(run_cli: RunCli, fault: FaultServer) -> None:
    url = fault.url()
    for args in (("get", ""), ("cancel", " "), ("watch", "t-1", ""), ("result", "")):
        r = run_cli(*args, "-u", url, "-p", "mcp-2025-11-25")
        assert r.code == 2, (args, r.stderr)
        assert_one_line_error(r)
        assert "task id cannot be empty" in r.stderr
    assert fault.seen(url) == []  # never a request


# -- 7. questions on the standalone GET stream ---------------------------------------------------


def test_answer_takes_a_question_the_server_sends_on_the_get_stream(
    run_cli: RunCli, odd: OddServer
) -> None:
    url = odd.stream_questions()
    r = run_cli("call", "ask", "-u", url, "-p", "mcp-2025-11-25", "-o", "json")
    assert r.code == 0, r.stderr
    tid = r.json()["taskId"]
    r = run_cli("answer", "-u", url, "--json", '{"name": "Ada"}', "-o", "json", "--", tid)
    assert r.code == 0, r.stderr
    assert "What is your name?" in r.stderr
    assert r.json()["status"] == "completed"
    server = odd.scenario(url)
    assert server.names[tid] == "Ada"
    got = run_cli("result", "-u", url, "-o", "json", "--", tid)
    assert got.json()["content"][0]["text"] == "Hello, Ada!"


def test_watch_on_a_terminal_answers_a_question_from_the_get_stream(
    odd: OddServer, run_cli: RunCli, state_dir: Path
) -> None:
    from test_answer import Terminal

    from conftest import clean_env

    url = odd.stream_questions()
    r = run_cli("call", "ask", "-u", url, "-p", "mcp-2025-11-25", "-o", "json")
    assert r.code == 0, r.stderr
    tid = r.json()["taskId"]
    t = Terminal(["watch", "--url", url, "--result", "--", tid], clean_env(state_dir))
    try:
        t.expect("What is your name?")
        t.expect("text: ")
        t.type("Di\n")
        t.expect("send this answer?")
        t.type("\n")
        assert t.wait() == 0, t.screen
        t.expect("Hello, Di!")
    finally:
        if t.proc.poll() is None:
            t.proc.kill()
            t.proc.wait()


# -- 8. check: status.message over two poll intervals; forbidden-tool refusals -----------------


def _from_then(seconds: float, before: dict[str, object], after: dict[str, object]) -> Any:
    """A fault-server answer that changes with time: `before` until `seconds` after the first
    request it answers, `after` from then on (a server whose message comes a moment later)."""
    first: list[float] = []

    def answer(h: Any, msg: dict[str, Any]) -> None:
        first.append(first[0] if first else time.monotonic())
        h.answer(after if time.monotonic() - first[0] >= seconds else before, msg)

    return answer


TASK_TOOL = {
    "name": "slow",
    "inputSchema": {"type": "object", "properties": {}},
    "execution": {"taskSupport": "required"},
}


def _check(run_cli: RunCli, url: str, check_id: str) -> dict[str, Any]:
    r = run_cli("check", "-u", url, "-p", "mcp-2025-11-25", "--check", check_id, "-o", "json")
    assert "Traceback" not in r.stderr, r.stderr
    [found] = [c for c in r.json()["checks"] if c["id"] == check_id]
    result: dict[str, Any] = found
    return result


def test_check_samples_status_message_for_two_poll_intervals(
    run_cli: RunCli, fault: FaultServer
) -> None:
    quiet = task(status="working", statusMessage=None, pollInterval=1000)
    talking = task(status="working", statusMessage="reading sources", pollInterval=1000)
    url = fault.url(
        tools=[{"tools": [TASK_TOOL]}],
        call=[{"task": quiet}],
        get=[_from_then(0.5, quiet, talking)],  # the message comes half a poll interval late
    )
    check = _check(run_cli, url, "mcp2025.status.message")
    assert check["verdict"] == "PASS", check
    assert "reading sources" in check["observed"]


def test_check_calls_an_is_error_refusal_of_a_forbidden_tool_a_refusal(
    run_cli: RunCli, fault: FaultServer
) -> None:
    plain = {
        "name": "lookup",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    }
    refusal = {
        "content": [{"type": "text", "text": "lookup cannot run as a task"}],
        "isError": True,
    }
    url = fault.url(tools=[{"tools": [TASK_TOOL, plain]}], call=[refusal])
    check = _check(run_cli, url, "mcp2025.creation.forbidden-tool")
    assert check["verdict"] == "WARN", check
    assert "refused inside a tool result" in check["observed"]
    assert "lookup cannot run as a task" in check["observed"]
