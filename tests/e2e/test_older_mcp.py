"""Older MCP servers (issue 25, item 1): the official Python SDK at releases whose newest MCP
is 2025-06-18 (mcp 1.22.0) and 2025-03-26 (mcp 1.9.4). After `initialize` every request carries
the version the server agreed to in `MCP-Protocol-Version` (such servers answer any other with
400), and the session is labelled with it (`tools`, `--trace`)."""

from __future__ import annotations

import json
import shlex

import pytest

from conftest import RunCli
from servers.common import ServerProcess
from servers.mcp_envs import mcpsdk_stdio_command, start_mcpsdk


def _events(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


@pytest.fixture(params=["2025-06-18", "2025-03-26"])
def older(
    request: pytest.FixtureRequest,
) -> tuple[str, ServerProcess]:
    name = "mcpsdk0618_server" if request.param == "2025-06-18" else "mcpsdk0326_server"
    server: ServerProcess = request.getfixturevalue(name)
    return request.param, server


def test_tools_speaks_the_version_the_server_agreed(
    run_cli: RunCli, older: tuple[str, ServerProcess]
) -> None:
    version, server = older
    r = run_cli("tools", "--url", server.url, "-o", "json", "--trace")
    assert r.code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["protocolVersion"] == version
    assert {t["name"] for t in out["tools"]} >= {"slow_echo", "quick"}
    assert f"* MCP {version} on session" in r.stderr
    assert f"mcp-protocol-version: {version}" in r.stderr.lower()  # the requests after initialize
    assert "Unsupported protocol version" not in r.stderr


def test_tools_pretty_names_the_version(run_cli: RunCli, mcpsdk0618_server: ServerProcess) -> None:
    r = run_cli("tools", "--url", mcpsdk0618_server.url, "-o", "pretty", env={"COLUMNS": "160"})
    assert r.code == 0, r.stderr
    assert "slow_echo" in r.stdout and "MCP 2025-06-18" in r.stdout


def test_plain_call_with_progress(run_cli: RunCli, older: tuple[str, ServerProcess]) -> None:
    _, server = older
    r = run_cli("call", "slow_echo", "text=hi", "seconds=0.6", "--url", server.url, "-o", "ndjson")
    assert r.code == 0, r.stderr
    events = _events(r.stdout)
    progress = [e for e in events if e["event"] == "progress"]
    assert progress and progress[-1]["message"] == "step 3/3"
    end = events[-1]
    assert end["event"] == "end" and end["outcome"] == "completed"
    assert "echo: hi" in json.dumps(end["result"])


def test_elicitation_on_2025_06_18(run_cli: RunCli, mcpsdk0618_server: ServerProcess) -> None:
    r = run_cli(
        "call",
        "ask_name",
        "--json",
        '{"name": "Ada"}',
        "--url",
        mcpsdk0618_server.url,
        "-o",
        "json",
    )
    assert r.code == 0, r.stderr
    assert "Hello, Ada!" in r.stdout
    declined = run_cli("call", "ask_name", "--url", mcpsdk0618_server.url, "-o", "json")
    assert declined.code == 0, declined.stderr
    assert "no name (decline)" in declined.stdout


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26"])
def test_over_stdio_labels_the_session(run_cli: RunCli, version: str) -> None:
    cmd = shlex.join(mcpsdk_stdio_command(version))
    r = run_cli("tools", "--stdio", cmd, "-o", "json", "--trace")
    assert r.code == 0, r.stderr
    assert json.loads(r.stdout)["protocolVersion"] == version
    assert f"* MCP {version} on the session (mcptask asked for 2025-11-25)" in r.stderr
    c = run_cli("call", "slow_echo", "text=x", "seconds=0.4", "--stdio", cmd, "-o", "ndjson")
    assert c.code == 0, c.stderr
    assert any(e["event"] == "progress" for e in _events(c.stdout))


def test_check_speaks_the_version_the_server_agreed(
    run_cli: RunCli, older: tuple[str, ServerProcess]
) -> None:
    """`check`'s MCP 2025-11-25 suite asks for 2025-11-25 and, on a server that agrees to an
    older version, sends that one afterwards: the server's answers are judged, not its 400s
    to a version header it does not speak."""
    version, server = older
    r = run_cli("check", "--url", server.url, "-p", "mcp-2025-11-25", "-o", "json", "--trace")
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert "Unsupported protocol version" not in r.stdout + r.stderr
    sent = [
        line.split(":", 1)[1].strip()
        for line in r.stderr.lower().splitlines()
        if line.startswith("> mcp-protocol-version:")
    ]
    assert sent[0] == "2025-11-25" and set(sent[1:]) == {version}, sent
    report = json.loads(r.stdout)
    items = {item["id"]: item for item in report["checks"]}
    assert items["mcp2025.wire.protocol-version"]["verdict"] == "WARN"  # older, said as such
    assert version in items["mcp2025.wire.protocol-version"]["observed"]
    assert not [i for i in items.values() if "HTTP 400" in i.get("observed", "")], items


@pytest.mark.parametrize("way", ["streamable-http", "legacy-sse", "stdio"])
def test_a_ping_on_the_stream_of_tools_list_is_answered(run_cli: RunCli, way: str) -> None:
    """Issue 36: the official SDK's `tools/list` pings the client on the request's own stream
    (Streamable HTTP: the POST's event stream) and answers only once the ping is answered.
    mcptask answers it on every transport, as it does on stdio (over Streamable HTTP it was
    dropped: the server waited, then failed the request)."""
    if way == "stdio":
        cmd = shlex.join(mcpsdk_stdio_command("2025-06-18", ping_first=True))
        r = run_cli("tools", "--stdio", cmd, "-o", "json", "--trace")
    else:
        server = start_mcpsdk("2025-06-18", sse=way == "legacy-sse", ping_first=True)
        try:
            r = run_cli("tools", "--url", server.url, "-o", "json", "--trace")
        finally:
            server.stop()
    assert r.code == 0, r.stderr[-3000:]
    assert {t["name"] for t in json.loads(r.stdout)["tools"]} >= {"slow_echo", "quick"}
    assert '"method":"ping"' in r.stderr.replace(" ", ""), r.stderr[-3000:]
