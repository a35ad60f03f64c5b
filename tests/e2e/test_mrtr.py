"""MCP 2026-07-28 without the tasks extension (issue 25, item 3), against a real server on the
TypeScript SDK v2 (`@modelcontextprotocol/server` 2.4.0): a tool that needs input answers a
multi round-trip `input_required` result, which mcptask fills (a form on a terminal, `--json`,
`--defaults`) and retries; progress is shown; and in auto mode the plain call goes over the
version that can ask (the server's 2025 leg keeps no session)."""

from __future__ import annotations

import json
from collections.abc import Callable

from test_answer import Terminal
from test_answer import terminal as terminal  # the fixture

from conftest import RunCli
from servers.common import ServerProcess

P2026 = ("-p", "mcp-2026-07-28")


def _events(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_auto_mode_answers_by_the_version_that_can_ask(
    run_cli: RunCli, ts2_server: ServerProcess
) -> None:
    url = ts2_server.url
    r = run_cli(
        "call", "ask_name", "--json", '{"name": "Ada"}', "--url", url, "-o", "json", "--trace"
    )
    assert r.code == 0, r.stderr
    assert "Hello, Ada!" in r.stdout
    assert "this plain call goes over MCP 2026-07-28" in r.stderr
    declined = run_cli("call", "ask_name", "--url", url, "-o", "json")
    assert declined.code == 0, declined.stderr
    assert "no name (decline)" in declined.stdout


def test_forced_2026_answers_input_required_and_shows_progress(
    run_cli: RunCli, ts2_server: ServerProcess
) -> None:
    url = ts2_server.url
    r = run_cli("call", "ask_name", "--json", '{"name": "Bo"}', "--url", url, *P2026, "-o", "json")
    assert r.code == 0, r.stderr
    assert "Hello, Bo!" in r.stdout
    assert "cannot answer" not in r.stderr
    d = run_cli("call", "ask_size", "--defaults", "--url", url, *P2026, "-o", "json")
    assert d.code == 0, d.stderr
    assert "size m" in d.stdout
    p = run_cli("call", "slow_echo", "text=hi", "--url", url, *P2026, "-o", "ndjson")
    assert p.code == 0, p.stderr
    events = _events(p.stdout)
    assert [e["message"] for e in events if e["event"] == "progress"] == [
        "step 1/3",
        "step 2/3",
        "step 3/3",
    ]
    assert events[-1]["event"] == "end" and events[-1]["outcome"] == "completed"
    t = run_cli("tools", "--url", url, *P2026, "-o", "json")
    assert t.code == 0 and t.json()["protocolVersion"] == "2026-07-28"


def test_the_form_on_a_terminal(
    terminal: Callable[..., Terminal], ts2_server: ServerProcess
) -> None:
    t = terminal("call", "ask_name", "--url", ts2_server.url, *P2026)
    t.expect("What is your name?")
    t.expect("text: ")
    t.type("Cy\n")
    t.expect("send this answer?")
    t.type("\n")
    assert t.wait() == 0, t.screen
    t.expect("Hello, Cy!")
