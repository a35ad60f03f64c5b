"""`list --status/--context/--since/--limit`, against real servers: the a2a-sdk 1.3.0 agent over
JSON-RPC and HTTP+JSON (ListTasks filters on the server: `status`, `contextId`,
`statusTimestampAfter`, `pageSize`), server-everything (MCP `tasks/list` has no filters: they
are applied to what it lists) and the task book (`list --local`); and `result --save` of an MCP
result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import CliResult, RunCli, assert_one_line_error
from servers.a2a_plugin import A2AServerProcess
from servers.common import ServerProcess

pytestmark = pytest.mark.timeout(240)


def _ok(r: CliResult, code: int = 0) -> CliResult:
    assert r.code == code, f"exit {r.code}\nstdout: {r.stdout[-3000:]}\nstderr: {r.stderr}"
    assert "Traceback" not in r.stderr, r.stderr
    return r


def _listed(run_cli: RunCli, *args: str) -> list[dict[str, Any]]:
    tasks: list[dict[str, Any]] = _ok(run_cli("list", *args, "-o", "json")).json()["tasks"]
    return tasks


@pytest.mark.parametrize("binding", ["a2a-1.0", "a2a-1.0-rest"])
def test_a2a_list_filters(
    run_cli: RunCli, binding: str, request: pytest.FixtureRequest, tmp_path: Any
) -> None:
    server: A2AServerProcess = request.getfixturevalue(
        "a2a_server" if binding == "a2a-1.0" else "a2a_rest_server"
    )
    url = ("-u", server.url)
    done = _ok(run_cli("send", "hello filters", *url, "--watch", "-o", "json")).json()
    done_id = done["tasks"][0]["taskId"]
    # running until cancelled, however long the steps below take on a loaded machine
    slow = _ok(run_cli("send", "hold filters", *url, "-o", "json")).json()
    ask = _ok(run_cli("send", "ask filters", *url, "-o", "json")).json()
    # wait for the question (no sleeping: the watch ends when the task asks)
    _ok(run_cli("watch", "--until", "input_required", "-o", "json", "--", ask["taskId"]))

    running = {t["taskId"]: t for t in _listed(run_cli, *url, "--status", "working,input_required")}
    assert slow["taskId"] in running and ask["taskId"] in running
    assert done_id not in running
    assert {t["status"] for t in running.values()} <= {"working", "input_required"}

    asking = _listed(run_cli, *url, "--status", "input_required")
    assert ask["taskId"] in {t["taskId"] for t in asking}
    assert {t["status"] for t in asking} == {"input_required"}

    one_context = _listed(run_cli, *url, "--context", ask["contextId"])
    assert [t["taskId"] for t in one_context] == [ask["taskId"]]

    recent = {t["taskId"] for t in _listed(run_cli, *url, "--since", "1h")}
    assert {done_id, slow["taskId"], ask["taskId"]} <= recent

    assert len(_listed(run_cli, *url, "--limit", "1")) == 1
    completed = _listed(run_cli, *url, "--status", "completed", "--limit", "2")
    assert 1 <= len(completed) <= 2 and {t["status"] for t in completed} == {"completed"}

    # the same flags on the task book
    local = _listed(run_cli, "--local", *url, "--status", "input_required")
    assert ask["taskId"] in {t["taskId"] for t in local}
    assert {t["status"] for t in local} == {"input_required"}
    assert [
        t["taskId"] for t in _listed(run_cli, "--local", *url, "--context", ask["contextId"])
    ] == [ask["taskId"]]
    assert len(_listed(run_cli, "--local", "--limit", "2")) == 2  # the whole book, no target
    _ok(run_cli("cancel", *url, "-o", "json", "--", slow["taskId"]))
    _ok(run_cli("cancel", *url, "-o", "json", "--", ask["taskId"]))


def test_mcp_list_filters_apply_to_what_the_server_lists(
    run_cli: RunCli, everything_server: ServerProcess, tmp_path: Path
) -> None:
    url = ("-u", everything_server.url)
    created = _ok(
        run_cli("call", "simulate-research-query", "topic=filters", *url, "-o", "json")
    ).json()
    task_id = created["taskId"]
    either = _listed(run_cli, *url, "--status", "working,completed")
    assert task_id in {t["taskId"] for t in either}
    assert {t["status"] for t in either} <= {"working", "completed"}
    assert task_id not in {t["taskId"] for t in _listed(run_cli, *url, "--status", "failed")}
    _ok(run_cli("watch", *url, "-o", "json", "--", task_id))
    assert task_id in {t["taskId"] for t in _listed(run_cli, *url, "--status", "completed")}
    assert task_id not in {t["taskId"] for t in _listed(run_cli, *url, "--status", "working")}
    assert task_id in {t["taskId"] for t in _listed(run_cli, *url, "--since", "10m")}

    # `result --save` of an MCP result: its content items as files
    result = _ok(run_cli("result", *url, "-o", "json", "--", task_id)).json()
    texts = [c["text"] for c in result["content"] if c.get("type") == "text"]
    out = tmp_path / "mcp"
    manifest = _ok(run_cli("result", *url, "--save", str(out), "-o", "json", "--", task_id)).json()
    written = [Path(f["path"]) for f in manifest["files"] if f["kind"] == "text"]
    assert [p.read_text() for p in written][: len(texts)] == texts
    assert texts and written[0].name == "content-1.txt"


def test_bad_filters_are_one_line_usage_errors(run_cli: RunCli) -> None:
    for args in (["--status", "bogus"], ["--since", "1y"], ["--since", "0s"], ["--limit", "0"]):
        r = run_cli("list", "--local", *args)
        assert r.code == 2, (args, r.stderr)
        assert_one_line_error(r)
