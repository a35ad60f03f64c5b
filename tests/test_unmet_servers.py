"""Behaviours seen on MCP servers and A2A agents the rest of the suite does not use (issue 18).
Each test runs against a real server that shows the behaviour (Python's own `http.server`,
fastmcp 4.1.4 over stdio without the tasks extension, Agno 3.1.10, a2a-sdk 1.3.0) or, where none
of them does, a scripted one (`servers/odd_server.py`, `servers/fault_server.py`)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import RunCli, assert_one_line_error
from servers.common import free_port, start_server
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
    port = free_port()
    cmd = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    proc = start_server(cmd, port=port, url=f"http://127.0.0.1:{port}/", cwd=root)
    try:
        yield f"http://127.0.0.1:{port}/"
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
    cards = [q for q in odd.seen(url) if q.http_method == "GET"]
    assert len(cards) == 1  # once (then the origin's card URL, which 404s)
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
    run_cli: RunCli, odd: OddServer
) -> None:
    url = odd.agent("0.3", drop_reused=True)
    tid = _send(run_cli, url, "hello", "-p", "a2a-0.3")["taskId"]
    # detection reads the card, then tasks/get goes out on the same (dead) connection
    r = run_cli("get", str(tid), "-u", url, "-o", "json", "--trace")
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
    posts = {q.path for q in odd.seen(url) if q.method in ("SendMessage", "message/send")}
    assert posts == {"/rpc"}


# -- 13. a cancel answered with the finished task -----------------------------------------------


def test_cancel_of_a_finished_task_answered_with_the_task_is_exit_11(
    run_cli: RunCli, odd: OddServer, fault: FaultServer
) -> None:
    url = odd.agent("1.0", cancel_answers_task=True, seconds=0.0)
    tid = str(_send(run_cli, url, "hello")["taskId"])
    r = run_cli("cancel", tid, "-u", url)
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
        r = run_cli("get", tid, "-u", url, "-o", "json")
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
    from mcptask.rpc import RpcClient
    from mcptask.transports.http import HttpOptions, HttpTransport

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


PLAIN_FASTMCP4 = Path(__file__).parent / "servers" / "fastmcp4_plain_server.py"


def test_a_2026_only_stdio_server_without_tasks_says_it_has_no_tasks(run_cli: RunCli) -> None:
    from servers.mcp_envs import ENVIRONMENTS

    python = str(ENVIRONMENTS["fastmcp4"]())
    command = subprocess.list2cmdline([python, str(PLAIN_FASTMCP4)])
    r = run_cli("call", "hello", "x=1", "--stdio", command)
    assert r.code == 4, r.stderr
    assert_one_line_error(r)
    assert "does not support tasks" in r.stderr
    assert "-32022" not in r.stderr
