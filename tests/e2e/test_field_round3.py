"""The field, round three (issue 39): classes of failure met on implementations nobody here
wrote, each shown by a real server: `servers/a2a_field_server.py` (a2a-sdk 1.3.0's own handler
and JSON-RPC routes with one habit per flag), the a2a-sdk test agent, and fastmcp 4.1.4 over
stdio (the MCP SDK's dual-era loop, which locks a connection to 2026-07-28 after its first
request)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import Draft202012Validator

from mcptask import schemas

from conftest import RunCli, assert_one_line_error
from servers.a2a_plugin import A2AServerProcess, FieldAgents

pytestmark = pytest.mark.timeout(120)


def valid(name: str, data: Any) -> Any:
    errors = list(Draft202012Validator(schemas.bundle(name)).iter_errors(data))
    assert not errors, [e.message[:300] for e in errors]
    return data


def _send(run_cli: RunCli, *args: str) -> dict:
    r = run_cli("send", *args, "-o", "json")
    assert r.code == 0, r.stderr
    data: dict = r.json()
    return data


# -- 1. detection that confirms -----------------------------------------------------------------


def test_a_400_minus_32601_to_discover_is_not_taken_for_mcp(
    run_cli: RunCli, a2a_field: FieldAgents
) -> None:
    # the agent's card is where A2A keeps it: detection finds it after the -32601
    agent = a2a_field("--discover-400")
    sent = _send(run_cli, "quick hello", "--url", agent.url)
    assert sent["protocol"].startswith("a2a-"), sent
    tools = run_cli("tools", "--url", agent.url)
    assert tools.code == 2 and "a2a-1.0 has no tools" in tools.stderr, tools.stderr
    assert "-32601" not in tools.stderr


def test_no_mcp_and_no_card_says_what_to_try(run_cli: RunCli, a2a_field: FieldAgents) -> None:
    agent = a2a_field("--discover-400", "--no-card")
    for args in (("send", "hello"), ("tools",)):
        r = run_cli(*args, "--url", agent.url)
        assert r.code == 4, r.stderr
        assert_one_line_error(r)
        assert "is not an MCP server or A2A agent (try -p" in r.stderr
        assert "-p a2a-0.3" in r.stderr and "-p mcp-2025-11-25" in r.stderr
        # what was asked, and what came back, each time
        assert "initialize: -32601" in r.stderr and "no agent card" in r.stderr
        assert "starts tasks with `call`" not in r.stderr


def test_an_agent_card_url_is_accepted_as_the_target(
    run_cli: RunCli, a2a_field: FieldAgents
) -> None:
    agent = a2a_field("--discover-400", "--card-path", "/agents/echo/agent-card.json")
    sent = _send(run_cli, "quick hi", "--url", agent.card_url, "--trace")
    assert sent["protocol"] == "a2a-1.0", sent
    got = run_cli("get", "--url", agent.card_url, "-o", "json", "--", sent["taskId"])
    assert got.code == 0, got.stderr
    assert got.json()["taskId"] == sent["taskId"]


def test_an_mcp_server_answering_minus_32601_is_confirmed_by_one_initialize(
    run_cli: RunCli,
) -> None:
    # no real server in the suite answers server/discover -32601 over HTTP: the scripted
    # MCP 2025-11-25 server does (its unknown methods); the session `initialize` opened while
    # confirming is the one the command goes on with
    from servers.fault_server import FaultServer, task

    with FaultServer() as fault:
        url = fault.url(get=[task()])
        r = run_cli("get", "t-1", "--url", url, "-o", "json")
        assert r.code == 0, r.stderr
        assert r.json()["protocol"] == "mcp-2025-11-25"
        assert [q.method for q in fault.seen(url)] == [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tasks/get",
        ]


# -- 2. the book remembers how it spoke -------------------------------------------------------


def test_a_task_made_with_p_is_spoken_to_in_that_protocol_without_a_target(
    run_cli: RunCli, a2a_field: FieldAgents
) -> None:
    agent = a2a_field("--discover-400", "--no-card")
    sent = _send(run_cli, "hello", "-p", "a2a-0.3", "--url", agent.url)
    tid = sent["taskId"]
    got = run_cli("get", "-o", "json", "--", tid)
    assert got.code == 0, got.stderr
    assert got.json()["protocol"] == "a2a-0.3"
    book = run_cli("book", "-o", "json")
    [endpoint] = [e for e in book.json()["endpoints"] if e["tasks"]]
    assert endpoint["protocol"] == "a2a-0.3"
    result = run_cli("result", "-o", "json", "--", tid)
    assert result.code == 0, result.stderr
    assert "echo: hello" in result.json()["text"]
    cancel = run_cli("cancel", "--", tid)
    assert cancel.code == 11, cancel.stderr  # finished: not applicable, not a detection error


def test_each_task_keeps_its_own_protocol_on_an_endpoint_of_two(
    run_cli: RunCli, a2a_server: A2AServerProcess
) -> None:
    # the endpoint is detected as A2A 1.0; a task sent with -p a2a-0.3 is read in 0.3
    first = _send(run_cli, "hello", "--url", a2a_server.url)
    assert first["protocol"] == "a2a-1.0"
    old = _send(run_cli, "hello", "-p", "a2a-0.3", "--url", a2a_server.url)
    got = run_cli("get", "-o", "json", "--", old["taskId"])
    assert got.code == 0, got.stderr
    assert got.json()["protocol"] == "a2a-0.3"
    got = run_cli("get", "-o", "json", "--", first["taskId"])
    assert got.json()["protocol"] == "a2a-1.0"


# -- 3. -32603 where the spec has codes of its own ---------------------------------------------


def test_minus_32603_for_not_found_and_finished_is_read_as_the_spec_says(
    run_cli: RunCli, a2a_field: FieldAgents
) -> None:
    agent = a2a_field("--internal-errors")
    done = _send(run_cli, "quick x", "--url", agent.url)
    tid = done["taskId"]
    waited = run_cli("result", "-o", "json", "--", tid)
    assert waited.code == 0, waited.stderr
    # a finished task: the status is read before choosing the exit status (11, not 4)
    cancel = run_cli("cancel", "--", tid)
    assert cancel.code == 11, cancel.stderr
    assert_one_line_error(cancel)
    assert "has already ended: completed" in cancel.stderr
    assert "-32603" in cancel.stderr and "not the spec's -32002" in cancel.stderr
    # a task the agent does not have: 9, for get, result and cancel
    for command in ("get", "result", "cancel"):
        r = run_cli(command, "no-such-task", "--url", agent.url)
        assert r.code == 9, (command, r.stderr)
        assert_one_line_error(r)
        assert "-32603" in r.stderr and "not the spec's -32001" in r.stderr


def test_the_spec_s_not_found_is_said_as_it_is(run_cli: RunCli, a2a_field: FieldAgents) -> None:
    # the same agent answering the spec's -32001 (a genuine -32603 staying a server error is
    # tests/unit/test_off_spec_errors.py)
    agent = a2a_field()
    r = run_cli("get", "no-such-task", "--url", agent.url)
    assert r.code == 9 and "-32603" not in r.stderr, r.stderr


# -- 4. an HTTP 500 with a JSON body -----------------------------------------------------------


def test_an_http_500_with_a_json_body_shows_what_came_back(
    run_cli: RunCli, a2a_field: FieldAgents
) -> None:
    agent = a2a_field("--http500")
    r = run_cli("send", "explode now", "--url", agent.url)
    assert r.code == 4, r.stderr
    assert_one_line_error(r)
    assert "answered HTTP 500" in r.stderr
    assert "BACKEND_DOWN: the model backend did not answer in 30 s" in r.stderr


# -- 5. answers where agents put them -----------------------------------------------------------


def test_result_falls_back_to_the_last_agent_message_of_history(
    run_cli: RunCli, a2a_field: FieldAgents
) -> None:
    agent = a2a_field("--drop-artifacts")
    tid = _send(run_cli, "quick x", "--url", agent.url)["taskId"]
    r = run_cli("result", "--url", agent.url, "-o", "json", "--", tid)
    assert r.code == 0, r.stderr
    payload = valid("result", r.json())
    assert payload["artifacts"] == [] and payload["answerFrom"] == "history"
    assert payload["text"].startswith("echo: quick x")
    assert payload["statusMessage"] == "Task completed successfully"
    assert "last message in the task's history" in r.stderr


def test_result_keeps_the_artifacts_a_stream_carried(
    run_cli: RunCli, a2a_field: FieldAgents
) -> None:
    agent = a2a_field("--drop-artifacts")
    watched = run_cli("send", "hello", "--url", agent.url, "--watch", "-o", "ndjson")
    assert watched.code == 0, watched.stderr
    tid = watched.lines()[0]["taskId"]
    # another run: the artifacts the stream carried were kept in the task book
    r = run_cli("result", "-o", "json", "--", tid)
    assert r.code == 0, r.stderr
    payload = valid("result", r.json())
    assert payload["answerFrom"] == "artifactsSeen"
    assert [p["text"] for a in payload["artifacts"] for p in a["parts"]] == ["echo: hello"]
    assert "seen with earlier" in r.stderr


def test_a_question_kept_in_an_artifact_is_shown(run_cli: RunCli, a2a_field: FieldAgents) -> None:
    agent = a2a_field("--ask-in-artifact")
    tid = _send(run_cli, "ask me", "--url", agent.url)["taskId"]
    waiting = run_cli("result", "--", tid)  # waits until the agent asks
    assert waiting.code == 6, waiting.stderr
    got = run_cli("get", "-o", "json", "--", tid)
    assert got.code == 0, got.stderr
    assert got.json()["status"] == "input_required"
    assert got.json()["statusMessage"] == "What is your name?"
    answered = run_cli("answer", "--text", "Bob", "-o", "json", "--", tid)
    assert answered.code == 0, answered.stderr
    assert "asks: What is your name?" in answered.stderr
    assert "sent no message" not in answered.stderr
    result = run_cli("result", "-o", "json", "--", tid)
    assert "hello, Bob" in result.json()["text"]


# -- 6. progress with mcptask's own token, without related-task ---------------------------------


def _progress(r: Any) -> list[dict]:
    return [ln for ln in r.lines() if ln.get("event") == "progress"]


def test_progress_with_the_call_s_token_is_the_task_s(
    run_cli: RunCli, mcp_progress_server: Any
) -> None:
    url = mcp_progress_server.url
    r = run_cli("call", "count", "steps=3", "--task", "--watch", "-o", "ndjson", "--url", url)
    assert r.code == 0, r.stderr
    tid = r.lines()[0]["taskId"]
    progress = _progress(r)
    assert progress and {p["taskId"] for p in progress} == {tid}, r.stdout
    assert progress[-1]["progress"] == 3 and progress[-1]["total"] == 3
    # in a later run too: the token is kept with the task in the task book
    made = run_cli("call", "count", "steps=2", "--task", "-o", "json", "--url", url)
    assert made.code == 0, made.stderr
    later = made.json()["taskId"]
    watched = run_cli("watch", "-o", "ndjson", "--", later)
    assert watched.code == 0, watched.stderr
    assert [p["progress"] for p in _progress(watched)] == [1, 2], watched.stdout


# -- 7. stdio: the 2025 fallback on a fresh process ---------------------------------------------


PLAIN_FASTMCP4 = Path(__file__).parents[1] / "servers" / "fastmcp4_plain_server.py"


def _plain(*flags: str) -> str:
    from servers.mcp_envs import ENVIRONMENTS

    python = str(ENVIRONMENTS["fastmcp4"]())
    return subprocess.list2cmdline([python, str(PLAIN_FASTMCP4), *flags])


def test_a_stdio_server_keeping_its_first_era_gets_2025_on_a_fresh_process(
    run_cli: RunCli,
) -> None:
    # (the plain dual-era case: tests/e2e/test_unmet_servers.py); here the server that refuses
    # 2025-11-25 on a fresh process too: the first connection, which speaks 2026-07-28, stays
    command = _plain("--modern-only")
    tools = run_cli("tools", "--stdio", command, "-o", "json", "--trace")
    assert tools.code == 0, tools.stderr
    assert tools.json()["protocolVersion"] == "2026-07-28"
    assert [t["taskSupport"] for t in tools.json()["tools"]] == ["forbidden"]
    assert "speaks only MCP 2026-07-28" in tools.stderr
    call = run_cli("call", "hello", "x=2", "--stdio", command, "-o", "json")
    assert call.code == 0, call.stderr
    assert call.json()["structuredContent"] == {"result": "2"}
    # the dual-era server: a fresh process speaks 2025-11-25 (the trace says so)
    fresh = run_cli("tools", "--stdio", _plain(), "-o", "json", "--trace")
    assert fresh.code == 0, fresh.stderr
    assert fresh.json()["protocolVersion"] == "2025-11-25"
    assert "on a fresh process" in fresh.stderr


def test_the_form_on_a_terminal_asks_the_question_kept_in_an_artifact(
    run_cli: RunCli, a2a_field: FieldAgents, state_dir: Path
) -> None:
    from test_answer import Terminal

    from conftest import clean_env

    agent = a2a_field("--ask-in-artifact")
    tid = _send(run_cli, "ask again", "--url", agent.url)["taskId"]
    assert run_cli("result", "--", tid).code == 6  # waits until the agent asks
    t = Terminal(["answer", "--", tid], clean_env(state_dir))
    try:
        t.expect("asks:")
        t.expect("What is your name?")
        t.expect(": ")
        t.type("Ann\n")
        t.expect("send this answer? [Y]es, [e]dit: ")  # confirmed like an MCP form (issue 38)
        t.type("y\n")
        assert t.wait() == 0, t.screen
    finally:
        if t.proc.poll() is None:
            t.proc.kill()
    assert "sent no message" not in t.screen
    result = run_cli("result", "-o", "json", "--", tid)
    assert "hello, Ann" in result.json()["text"]
