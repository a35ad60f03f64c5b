"""A2A 1.0 / 0.3 (a2a-sdk 1.3.0) and Agno AgentOS 3.1.10 through the real CLI, each command in
its own process (the task book carries the protocol and the context between them); plus the
subscription stream and the normalization rules, called directly."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest

from mcptask.protocols import a2a as a2a_mod
from mcptask.protocols import a2a_rest as rest_mod
from mcptask.protocols import agno as agno_mod

from conftest import CliResult, RunCli, assert_one_line_error
from servers.a2a_plugin import A2AServerProcess, AgnoServerProcess

STEPS = ["step 1/3", "step 2/3", "step 3/3"]


def _ok(r: CliResult, code: int = 0) -> CliResult:
    assert r.code == code, f"exit {r.code}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    assert "Traceback" not in r.stderr, r.stderr
    return r


def _send(run_cli: RunCli, url: str, text: str, *extra: str) -> dict[str, Any]:
    task: dict[str, Any] = _ok(run_cli("send", text, "-u", url, "-o", "json", *extra)).json()
    assert task["taskId"]
    return task


@dataclass
class Agent:
    """The a2a-sdk agent over one A2A 1.0 binding: `url` as a user types it."""

    url: str
    protocol: str
    server: A2AServerProcess


@pytest.fixture(params=["a2a-1.0", "a2a-1.0-rest"])
def agent(request: pytest.FixtureRequest) -> Agent:
    """JSON-RPC (`a2a_server`, at its endpoint) and HTTP+JSON (`a2a_rest_server`, whose card
    at the origin offers only that binding): the same tests pass over both."""
    if request.param == "a2a-1.0":
        server: A2AServerProcess = request.getfixturevalue("a2a_server")
    else:
        server = request.getfixturevalue("a2a_rest_server")
    return Agent(server.url, request.param, server)


# -- a2a-sdk 1.3.0, A2A 1.0 (auto-detected), over JSON-RPC and HTTP+JSON ----------------------


def test_a2a10_send_get_watch_result_list(run_cli: RunCli, agent: Agent) -> None:
    url = agent.url
    task = _send(run_cli, url, "hello tests", "--trace")
    assert task["protocol"] == agent.protocol
    assert task["status"] in ("submitted", "working")
    assert task["contextId"] and task["raw"]["id"] == task["taskId"]
    tid = task["taskId"]

    got = _ok(run_cli("get", "-u", url, "-o", "json", "--", tid)).json()
    assert got["taskId"] == tid and got["protocol"] == agent.protocol
    assert got["status"] in ("submitted", "working", "completed")
    assert got["pollInterval"] is None and got["ttl"] is None

    watched = _ok(run_cli("watch", "-u", url, "-o", "ndjson", "--", tid))
    lines = watched.lines()
    assert lines[-1] == {"event": "end", "taskId": tid, "outcome": "completed", "exitCode": 0}
    statuses = [ln for ln in lines if ln.get("event") == "status"]
    assert statuses[-1]["status"] == "completed"
    assert statuses[-1]["lastUpdatedAt"]  # status.timestamp
    assert {ln["statusMessage"] for ln in statuses} <= {*STEPS, None}

    result = _ok(run_cli("result", "-u", url, "-o", "json", "--", tid)).json()
    assert result["text"] == "echo: hello tests"
    assert result["artifacts"][0]["name"] == "echo"
    assert result["artifacts"][0]["parts"] == [{"kind": "text", "text": "echo: hello tests"}]
    pretty = _ok(run_cli("result", "-u", url, "-o", "pretty", "--", tid))
    assert pretty.stdout.strip() == "echo: hello tests"

    listed = _ok(run_cli("list", "-u", url, "-o", "json")).json()
    mine = [t for t in listed["tasks"] if t["taskId"] == tid]
    assert mine and mine[0]["status"] == "completed" and mine[0]["protocol"] == agent.protocol

    # --history N -> historyLength (1.0 omits the history for 0)
    brief = _ok(run_cli("get", "-u", url, "-o", "json", "--history", "0", "--", tid)).json()
    assert "history" not in brief["raw"]
    full = _ok(run_cli("get", "-u", url, "-o", "json", "--", tid)).json()
    assert [p["text"] for m in full["raw"]["history"][1:] for p in m["parts"]] == STEPS


def test_a2a_detection_costs_one_card_request(
    run_cli: RunCli, a2a_server: A2AServerProcess
) -> None:
    r = _ok(run_cli("send", "detect me", "-u", a2a_server.url, "-o", "json", "--trace"))
    gets = [ln for ln in r.stderr.splitlines() if ln.startswith("> GET ")]
    assert gets == [f"> GET {a2a_server.base_url}/.well-known/agent-card.json"]
    # remembered: the next command asks nothing again
    tid = r.json()["taskId"]
    again = _ok(run_cli("get", "-u", a2a_server.url, "-o", "json", "--trace", "--", tid))
    requests = [ln for ln in again.stderr.splitlines() if ln.startswith(("> GET ", "> POST "))]
    assert requests == [f"> POST {a2a_server.url}"]
    assert "A2A-Version: 1.0".lower() in again.stderr.lower()


def test_a2a10_cancel_slow_task(run_cli: RunCli, agent: Agent) -> None:
    url = agent.url
    tid = _send(run_cli, url, "slow cancel me")["taskId"]
    cancelled = _ok(run_cli("cancel", "-u", url, "-o", "json", "--", tid)).json()
    assert cancelled["taskId"] == tid and cancelled["status"] == "cancelled"
    assert cancelled["statusMessage"] == "cancelled by request"

    again = run_cli("cancel", "-u", url, "-o", "json", "--", tid)
    assert again.code == 11
    assert_one_line_error(again)
    assert "cancelled" in again.stderr

    watched = _ok(run_cli("watch", "-u", url, "-o", "ndjson", "--", tid), 8)
    assert watched.lines()[-1]["outcome"] == "cancelled"
    no_result = run_cli("result", "-u", url, "-o", "json", "--", tid)
    assert no_result.code == 8


def test_a2a_failed_and_input_required(run_cli: RunCli, agent: Agent) -> None:
    url = agent.url
    failed = _ok(run_cli("send", "fail now", "-u", url, "-o", "ndjson", "--watch", "--result"), 5)
    end = failed.lines()[-1]
    assert end["outcome"] == "failed" and end["exitCode"] == 5
    assert end["result"]["statusMessage"] == "failed on purpose: fail now"
    tid = end["taskId"]
    result = _ok(run_cli("result", "-u", url, "-o", "json", "--", tid), 5).json()
    assert result["text"] == "failed on purpose: fail now"

    asking = _ok(run_cli("send", "ask me", "-u", url, "-o", "ndjson", "--watch"), 6)
    last_status = [ln for ln in asking.lines() if ln.get("event") == "status"][-1]
    assert last_status["status"] == "input_required"
    assert last_status["statusMessage"] == "What is your answer?"


def test_a2a_unknown_task(run_cli: RunCli, agent: Agent) -> None:
    for command in ("get", "cancel", "result"):
        r = run_cli(command, "no-such-task", "-u", agent.url, "-o", "json")
        assert r.code == 9, (command, r.stderr)
        assert_one_line_error(r)
        assert "Task not found" in r.stderr
    if agent.protocol == "a2a-1.0":
        r = run_cli("get", "no-such-task", "-u", agent.url, "-p", "a2a-0.3", "-o", "json")
        assert r.code == 9


# -- the same server spoken to as A2A 0.3 -----------------------------------------------------


def test_a2a03_send_get_watch_result(run_cli: RunCli, a2a_server: A2AServerProcess) -> None:
    url = a2a_server.url
    v03 = ("-p", "a2a-0.3")
    task = _send(run_cli, url, "old hello", *v03)
    assert task["protocol"] == "a2a-0.3" and task["raw"]["kind"] == "task"
    assert task["status"] == "submitted"
    tid = task["taskId"]

    got = _ok(run_cli("get", "-u", url, "-o", "json", *v03, "--", tid)).json()
    assert got["protocol"] == "a2a-0.3" and got["raw"]["kind"] == "task"

    watched = _ok(run_cli("watch", "-u", url, "-o", "ndjson", *v03, "--", tid))
    assert watched.lines()[-1]["outcome"] == "completed"
    result = _ok(run_cli("result", "-u", url, "-o", "json", *v03, "--", tid)).json()
    assert result["text"] == "echo: old hello"

    listed = _ok(run_cli("list", "-u", url, "-o", "json", *v03))
    assert "no method to list" in listed.stderr  # 0.3 has no list: the task book's tasks
    assert tid in [t["taskId"] for t in listed.json()["tasks"]]


# -- subscriptions, called directly -----------------------------------------------------------


async def _follow(cls: type[a2a_mod.A2ABase], url: str, text: str) -> tuple[list[Any], list[Any]]:
    from mcptask.transports.http import HttpOptions, HttpTransport
    from mcptask.transports.rpc import RpcClient

    rpc = RpcClient(HttpTransport(HttpOptions(url=url)))
    try:
        proto = cls(rpc, url)
        assert proto.can_subscribe
        created = await proto.send_message(text, context_id=None)
        assert created.ref is not None
        live = [t async for t in proto.subscribe(created.ref)]
        finished = [t async for t in proto.subscribe(created.ref)]
        return live, finished
    finally:
        await rpc.aclose()


@pytest.mark.parametrize("cls", [a2a_mod.A2A10, a2a_mod.A2A03, rest_mod.A2ARest])
def test_subscribe_yields_stages(
    cls: type[a2a_mod.A2ABase], request: pytest.FixtureRequest
) -> None:
    if cls is rest_mod.A2ARest:
        url = request.getfixturevalue("a2a_rest_server").rest_url
    else:
        url = request.getfixturevalue("a2a_server").url
    live, finished = asyncio.run(_follow(cls, url, "stream me"))
    messages = list(dict.fromkeys(t.statusMessage for t in live if t.statusMessage))
    assert messages[-2:] == STEPS[1:]  # step 1 may be over before the stream opens
    last = live[-1]
    assert last.status == "completed" and last.protocol == cls.name
    assert a2a_mod.result_payload(last.raw)["text"] == "echo: stream me"  # artifact event merged
    # subscribing to a finished task: the agent refuses (-32004); the task is read once instead
    assert [t.status for t in finished] == ["completed"]


# -- Agno AgentOS 3.1.10 ----------------------------------------------------------------------


def test_agno_send_watch_result(run_cli: RunCli, agno_server: AgnoServerProcess) -> None:
    url = agno_server.url
    task = _send(run_cli, url, "hello agno", "--context-id", "c1")
    assert task["protocol"] == "agno" and task["contextId"] == "c1"
    assert task["status"] == "submitted"
    tid = task["taskId"]

    # no --context-id from here on: the task book keeps it
    watched = _ok(run_cli("watch", "-u", url, "-o", "ndjson", "--", tid))
    lines = watched.lines()
    assert lines[-1] == {"event": "end", "taskId": tid, "outcome": "completed", "exitCode": 0}
    # history messageIds change on every poll: not a change, one line per status
    statuses = [ln["status"] for ln in lines if ln.get("event") == "status"]
    assert len(statuses) == len(set(statuses))

    result = _ok(run_cli("result", "-u", url, "-o", "json", "--", tid)).json()
    assert result["text"] == "echo: hello agno"
    assert result["artifacts"] == [] and result["statusMessage"] is None
    pretty = _ok(run_cli("result", "-u", url, "-o", "pretty", "--", tid))
    assert pretty.stdout.strip() == "echo: hello agno"

    finished = run_cli("cancel", "-u", url, "-o", "json", "--", tid)
    assert finished.code == 11
    assert_one_line_error(finished)
    assert "completed" in finished.stderr

    listed = _ok(run_cli("list", "-u", url, "-o", "json"))
    assert tid in [t["taskId"] for t in listed.json()["tasks"]]


def test_agno_cancel_and_errors(run_cli: RunCli, agno_server: AgnoServerProcess) -> None:
    url = agno_server.url + "/v1"  # the /v1 form is Agno's shape too
    tid = _send(run_cli, url, "slow agno")["taskId"]
    cancelled = _ok(run_cli("cancel", "-u", url, "-o", "json", "--", tid)).json()
    assert cancelled == {"taskId": tid, "cancelRequested": True}
    watched = _ok(run_cli("watch", "-u", url, "-o", "ndjson", "--timeout", "40", "--", tid), 8)
    assert watched.lines()[-1]["outcome"] == "cancelled"

    unknown = run_cli("cancel", "no-such-task", "-u", url, "--context-id", "c1", "-o", "json")
    assert unknown.code == 9
    assert_one_line_error(unknown)
    assert "no-such-task" in unknown.stderr

    no_context = run_cli("get", "no-such-task", "-u", url, "-o", "json")
    assert no_context.code == 2
    assert_one_line_error(no_context)
    assert "--context-id" in no_context.stderr


def test_agno_secure(run_cli: RunCli, agno_secure_server: AgnoServerProcess) -> None:
    url = agno_secure_server.url
    key = agno_secure_server.security_key
    assert key

    denied = run_cli("send", "x", "-u", url, "-o", "json")
    assert denied.code == 3
    assert_one_line_error(denied)
    assert "401" in denied.stderr and "MCPTASK_TOKEN" in denied.stderr

    token = {"MCPTASK_TOKEN": key}
    sent = _ok(run_cli("send", "secure hi", "-u", url, "-o", "json", "--trace", env=token))
    tid = sent.json()["taskId"]
    done = _ok(run_cli("result", "-u", url, "-o", "json", "--trace", "--", tid, env=token))
    assert done.json()["text"] == "echo: secure hi"
    for r in (denied, sent, done):
        assert key not in r.stdout and key not in r.stderr


# -- normalization and detection rules (no server) --------------------------------------------


@pytest.mark.parametrize(
    ("state", "status"),
    [
        ("submitted", "submitted"),
        ("working", "working"),
        ("input-required", "input_required"),
        ("auth-required", "auth_required"),
        ("completed", "completed"),
        ("canceled", "cancelled"),
        ("failed", "failed"),
        ("rejected", "rejected"),
        ("unknown", "working"),
        ("TASK_STATE_SUBMITTED", "submitted"),
        ("TASK_STATE_WORKING", "working"),
        ("TASK_STATE_INPUT_REQUIRED", "input_required"),
        ("TASK_STATE_AUTH_REQUIRED", "auth_required"),
        ("TASK_STATE_COMPLETED", "completed"),
        ("TASK_STATE_CANCELED", "cancelled"),
        ("TASK_STATE_CANCELLED", "cancelled"),
        ("TASK_STATE_FAILED", "failed"),
        ("TASK_STATE_REJECTED", "rejected"),
        ("TASK_STATE_UNSPECIFIED", "working"),
    ],
)
def test_states(state: str, status: str) -> None:
    assert a2a_mod.normalize_state(state) == status


def test_result_payload_parts() -> None:
    raw = {
        "id": "t",
        "status": {"state": "completed", "message": {"parts": [{"kind": "text", "text": "done"}]}},
        "artifacts": [
            {"name": "a", "parts": [{"text": "one", "filename": "", "mediaType": ""}]},
            {
                "parts": [
                    {"data": {"k": 1}},
                    {"url": "https://x/f.pdf", "filename": "f.pdf", "mediaType": "application/pdf"},
                ]
            },
            {
                "parts": [
                    {
                        "kind": "file",
                        "file": {"name": "g", "mimeType": "text/csv", "uri": "https://x/g"},
                    }
                ]
            },
        ],
    }
    payload = a2a_mod.result_payload(raw)
    assert payload["text"].splitlines() == [
        "one", "{", '  "k": 1', "}", "[file: f.pdf (application/pdf) https://x/f.pdf]",
        "[file: g (text/csv) https://x/g]", "done",
    ]  # fmt: skip
    assert payload["statusMessage"] == "done"
    assert payload["artifacts"][1]["parts"][0] == {"kind": "data", "data": {"k": 1}}


def test_merge_events() -> None:
    task = a2a_mod.merge_event(None, "status", {"taskId": "t", "status": {"state": "working"}})
    art = {"artifactId": "a", "parts": [{"text": "x"}]}
    task = a2a_mod.merge_event(task, "artifact", {"taskId": "t", "artifact": art})
    more = {"artifactId": "a", "parts": [{"text": "y"}]}
    task = a2a_mod.merge_event(task, "artifact", {"taskId": "t", "artifact": more, "append": True})
    assert task["artifacts"] == [{"artifactId": "a", "parts": [{"text": "x"}, {"text": "y"}]}]


def test_cards_and_url_shapes() -> None:
    both = {
        "supportedInterfaces": [
            {"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        ]
    }
    assert a2a_mod.protocol_from_card(both) == "a2a-1.0"
    assert a2a_mod.protocol_from_card({"url": "u", "protocolVersion": "0.3.0"}) == "a2a-0.3"
    assert a2a_mod.protocol_from_card({"name": "not a card"}) is None
    for url in ("http://h/a2a/agents/x", "http://h/a2a/teams/t/", "http://h/p/a2a/agents/x/v1"):
        assert asyncio.run(agno_mod.probe(None, url)) == "agno"  # type: ignore[arg-type]
    assert asyncio.run(agno_mod.probe(None, "http://h/mcp")) is None  # type: ignore[arg-type]
    assert agno_mod.agno_base("http://h/a2a/agents/x/v1/") == ("http://h/a2a/agents/x", "agents")


# -- A2A 1.0 over HTTP+JSON only ---------------------------------------------------------------


def test_cards_offering_http_json_or_grpc_only() -> None:
    rest = {
        "supportedInterfaces": [
            {"url": "http://h/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ]
    }
    assert a2a_mod.protocol_from_card(rest) == "a2a-1.0-rest"
    assert a2a_mod.card_endpoint(rest, "a2a-1.0-rest") == "http://h/rest"
    rest["supportedInterfaces"].append(
        {"url": "http://h/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    )
    assert a2a_mod.protocol_from_card(rest) == "a2a-1.0"  # JSON-RPC first where offered
    grpc = {
        "supportedInterfaces": [
            {"url": "h:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        ]
    }
    assert a2a_mod.protocol_from_card(grpc) == "a2a-1.0-grpc"
    assert a2a_mod.card_endpoint(grpc, "a2a-1.0-grpc") == "h:443"
    grpc["supportedInterfaces"][0]["protocolVersion"] = "0.3"
    with pytest.raises(Exception, match=r"it offers: GRPC 0.3;.*gRPC 1.0"):
        a2a_mod.protocol_from_card(grpc)


def test_rest_detection_reads_the_card_and_remembers(
    run_cli: RunCli, a2a_rest_server: A2AServerProcess
) -> None:
    server = a2a_rest_server
    r = _ok(run_cli("send", "detect me", "-u", server.url, "-o", "json", "--trace"))
    assert r.json()["protocol"] == "a2a-1.0-rest"
    assert f"> GET {server.base_url}/.well-known/agent-card.json" in r.stderr
    assert f"> POST {server.rest_url}/message:send" in r.stderr
    tid = r.json()["taskId"]
    again = _ok(run_cli("get", "-u", server.url, "-o", "json", "--trace", "--", tid))
    requests = [ln for ln in again.stderr.splitlines() if ln.startswith(("> GET ", "> POST "))]
    assert requests == [f"> GET {server.rest_url}/tasks/{tid}"]
    assert "a2a-version: 1.0" in again.stderr.lower()
    # forced, with the binding's base URL
    forced = _ok(
        run_cli("get", "-u", server.rest_url, "-p", "a2a-1.0-rest", "-o", "json", "--", tid)
    )
    assert forced.json()["taskId"] == tid


def test_rest_answer(run_cli: RunCli, a2a_rest_server: A2AServerProcess) -> None:
    url = a2a_rest_server.url
    tid = _send(run_cli, url, "ask over rest")["taskId"]
    watched = _ok(run_cli("watch", "-u", url, "-o", "ndjson", "--", tid), 6)
    assert [ln for ln in watched.lines() if ln.get("event") == "status"][-1]["statusMessage"] == (
        "What is your answer?"
    )
    r = _ok(run_cli("answer", "--url", url, "--text", "teal", "-o", "json", "--", tid))
    assert r.json()["status"] in ("working", "completed")
    result = _ok(run_cli("result", "--url", url, "-o", "json", "--", tid)).json()
    assert "answer: teal" in result["text"]
