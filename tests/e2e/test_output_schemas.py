"""Every JSON shape mcptask prints validates against the schema it ships (`mcptask/schemas/`),
checked on real output: the real CLI in a subprocess against fastmcp 3.4.11 (MCP 2025-11-25),
server-everything, fastmcp 4.1.4 + fastmcp-tasks (MCP 2026-07-28), a2a-sdk 1.3.0 and the
embedded demo server. docs/output.md documents each shape."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import Draft202012Validator

from mcptask import schemas

from conftest import CliResult, RunCli, ok
from servers.a2a_plugin import A2AServerProcess
from servers.common import ServerProcess

pytestmark = pytest.mark.timeout(240)
ROOT = Path(__file__).resolve().parents[2]


@cache
def validator(name: str) -> Draft202012Validator:
    # the bundled schema, as `mcptask schema NAME` prints it: it must stand alone
    return Draft202012Validator(schemas.bundle(name))


def valid(name: str, data: Any) -> Any:
    errors = sorted(validator(name).iter_errors(data), key=lambda e: list(e.absolute_path))
    assert not errors, (name, [f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors])
    return data


def events(r: CliResult) -> list[dict[str, Any]]:
    lines = r.lines()
    assert lines, r.stderr
    for line in lines:
        valid("watch-event", line)
    return lines


# -- the schemas themselves ----------------------------------------------------------------------


@pytest.mark.parametrize("name", schemas.NAMES)
def test_each_schema_is_a_valid_2020_12_schema_and_documented(name: str) -> None:
    Draft202012Validator.check_schema(schemas.bundle(name))
    assert schemas.load(name)["$id"] == schemas.URN + name
    # every reference resolves inside the bundle
    assert json.loads(schemas.text(name)) == schemas.bundle(name)
    doc = (ROOT / "docs" / "output.md").read_text()
    assert f"`{name}`" in doc


def test_the_package_ships_exactly_the_named_schemas() -> None:
    shipped = {p.stem for p in (ROOT / "mcptask" / "schemas").glob("*.json")}
    assert shipped == set(schemas.NAMES)


def test_the_schemas_refuse_what_is_not_the_shape() -> None:
    task = {"taskId": "t", "status": "working", "protocol": "x", "server": "s", "raw": {}}
    assert not validator("task").is_valid(task)  # every key is always there, null or not
    full = {
        **task,
        **dict.fromkeys(("statusMessage", "createdAt", "lastUpdatedAt", "ttl", "contextId")),
        "pollInterval": 1000,
    }
    valid("task", full)
    assert not validator("task").is_valid({**full, "status": "paused"})
    assert not validator("task").is_valid({**full, "extra": 1})
    assert not validator("watch-event").is_valid({**full, "event": "status"})  # no `via`
    assert not validator("watch-event").is_valid({"event": "end", "taskId": "t"})
    assert not validator("list").is_valid({"tasks": [task]})


# -- MCP 2025-11-25 (fastmcp 3.4.11) ------------------------------------------------------------


def test_task_watch_result_and_list_on_mcp2025(
    run_cli: RunCli, fastmcp3_server: ServerProcess
) -> None:
    url = ("--url", fastmcp3_server.url)
    created = valid("task", ok(run_cli("call", "slow_echo", "text=hi", "seconds=1", *url)).json())
    tid = created["taskId"]
    valid("task", ok(run_cli("get", *url, "-o", "json", "--", tid)).json())
    lines = events(ok(run_cli("watch", *url, "--result", "-o", "ndjson", "--", tid)))
    assert lines[-1]["event"] == "end" and lines[-1]["result"]["content"]
    assert {line["event"] for line in lines[:-1]} == {"status"}
    valid("result", ok(run_cli("result", *url, "-o", "json", "--", tid)).json())
    valid("list", ok(run_cli("list", *url, "-o", "json")).json())
    local = ok(run_cli("list", "--local", *url, "-o", "ndjson")).lines()
    assert [t["taskId"] for t in local] == [tid]
    for line in local:
        valid("task", line)

    failing = ok(run_cli("call", "fail_tool", "reason=nope", *url)).json()["taskId"]
    summary = ok(run_cli("watch", *url, "--result", "-o", "json", "--", failing), 5).json()
    valid("watch-summary", summary)
    assert summary["tasks"][0]["result"]["isError"] is True
    valid("result", ok(run_cli("result", *url, "-o", "json", "--", failing), 5).json())


def test_list_ndjson_prints_one_task_a_line_on_server_everything(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    url = ("--url", everything_server.url)
    ids = [
        ok(run_cli("call", "simulate-research-query", f"topic=t{i}", *url)).json()["taskId"]
        for i in range(2)
    ]
    r = ok(run_cli("list", *url, "-o", "ndjson"))
    listed = r.lines()
    assert len(listed) == len(r.stdout.splitlines())
    for task in listed:
        valid("task", task)
    assert set(ids) <= {t["taskId"] for t in listed}
    as_json = valid("list", ok(run_cli("list", *url, "-o", "json")).json())
    assert set(ids) <= {t["taskId"] for t in as_json["tasks"]}


# -- MCP 2026-07-28 (fastmcp 4.1.4 + fastmcp-tasks) ---------------------------------------------


def test_failed_input_unknown_and_cancel_on_mcp2026(
    run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    url = ("--url", fastmcp4_server.url)  # its ids may begin with "-": `--` before them
    failed = ok(run_cli("call", "rpc_error", *url)).json()["taskId"]
    asking = ok(run_cli("call", "ask_name", *url)).json()["taskId"]
    # several tasks, one the server never heard of: status, end (with `error`), done
    r = ok(run_cli("watch", *url, "--result", "-o", "ndjson", "--", failed, asking, "nope-0000"), 9)
    lines = events(r)
    assert lines[-1]["event"] == "done"
    ends = {line["taskId"]: line for line in lines if line["event"] == "end"}
    assert ends["nope-0000"]["outcome"] == "unknown" and ends["nope-0000"]["error"]
    assert ends[failed]["result"]["error"]["code"] == -32603
    assert ends[asking]["outcome"] == "input_required"
    r = ok(run_cli("watch", *url, "--result", "-o", "json", "--", failed, asking, "nope-0000"), 9)
    summary = valid("watch-summary", r.json())
    assert {t["outcome"] for t in summary["tasks"]} == {"failed", "input_required", "unknown"}
    waiting = valid("task", ok(run_cli("get", *url, "-o", "json", "--", asking)).json())
    assert waiting["inputRequests"]
    valid("result", ok(run_cli("result", *url, "-o", "json", "--", failed), 5).json())

    running = ok(run_cli("call", "slow_echo", "text=x", "seconds=30", *url)).json()["taskId"]
    valid("cancel", ok(run_cli("cancel", *url, "-o", "json", "--", running)).json())


# -- A2A (a2a-sdk 1.3.0) ------------------------------------------------------------------------


def test_task_events_and_result_on_a2a(run_cli: RunCli, a2a_server: A2AServerProcess) -> None:
    url = ("--url", a2a_server.url)
    task = valid("task", ok(run_cli("send", "hello schemas", *url, "-o", "json")).json())
    lines = events(ok(run_cli("watch", *url, "--result", "-o", "ndjson", "--", task["taskId"])))
    assert lines[-1]["result"]["artifacts"]
    result = valid("result", ok(run_cli("result", *url, "-o", "json", "--", task["taskId"])).json())
    assert "echo: hello schemas" in result["text"]
    valid("list", ok(run_cli("list", *url, "-o", "json")).json())


# -- check, servers, demo -------------------------------------------------------------------------


def test_check_report(run_cli: RunCli, fastmcp3_server: ServerProcess) -> None:
    r = ok(run_cli("check", "--url", fastmcp3_server.url, "--category", "capability", "--rpc"))
    report = valid("check", r.json())
    assert report["checks"] and all(c["rpc"] is not None for c in report["checks"])


def test_servers_listing(run_cli: RunCli, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'default = "web"\n'
        '[servers.web]\nurl = "https://example.test/mcp?token=abc"\n'
        'headers = { "X-Key" = "secret" }\ntoken_env = "WEB_TOKEN"\n'
        '[servers.local]\ncommand = "node"\nargs = ["server.js"]\nenv = { A = "1" }\n'
    )
    listing = valid("servers", ok(run_cli("servers", "--config", str(config), "-o", "json")).json())
    assert {s["kind"] for s in listing["servers"]} == {"url", "stdio"}


def test_demo_events_and_summary(run_cli: RunCli) -> None:
    lines = events(ok(run_cli("demo", "--seconds", "1", "-o", "ndjson")))
    assert lines[-1]["event"] == "end" and "result" in lines[-1]
    valid("watch-summary", ok(run_cli("demo", "--seconds", "1", "-o", "json")).json())


# -- tools and plain calls (server-everything) ----------------------------------------------------


def test_tools_and_a_plain_calls_events(run_cli: RunCli, everything_server: ServerProcess) -> None:
    url = ("--url", everything_server.url)
    tools = valid("tools", ok(run_cli("tools", *url, "-o", "json")).json())
    assert {"echo", "simulate-research-query"} <= {t["name"] for t in tools["tools"]}
    r = ok(
        run_cli(
            "call", "trigger-long-running-operation", "duration=2", "steps=4", *url, "-o", "ndjson"
        )
    )
    lines = events(r)
    kinds = [line["event"] for line in lines]
    assert "progress" in kinds and kinds[-1] == "end" and "taskId" not in lines[-1]
    valid("result", lines[-1]["result"])
    valid("result", ok(run_cli("call", "echo", "message=hi", *url, "-o", "json")).json())


# -- the task book's history (fastmcp 4.1.4, MCP 2026-07-28) -------------------------------------


def test_log_book_forget_prune_and_get_s_history(
    run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    url = ("--url", fastmcp4_server.url)
    tid = ok(run_cli("call", "ask_name", *url, "-o", "json")).json()["taskId"]
    ok(run_cli("watch", *url, "--until", "input_required", "-o", "ndjson", "--", tid))
    task = valid("task", ok(run_cli("get", *url, "-o", "json", "--", tid)).json())
    assert task["history"]["pendingQuestion"] is not None
    why = valid("task", ok(run_cli("why", *url, "-o", "json", "--", tid)).json())
    assert why["source"] == "server" and why["history"]["reasons"]
    doc = valid("log", ok(run_cli("log", *url, "-o", "json", "--", tid)).json())
    kinds = {e["kind"] for e in doc["events"]}
    assert {"created", "status", "question", "end"} <= kinds
    for line in ok(run_cli("log", *url, "-o", "ndjson", "--", tid)).lines():
        valid("log-event", line)
    done_id = ok(run_cli("call", "slow_echo", "text=x", "seconds=0.5", *url, "-o", "json")).json()[
        "taskId"
    ]
    ok(run_cli("result", *url, "-o", "json", "--", done_id))
    events_ = ok(run_cli("log", *url, "-o", "json", "--", done_id)).json()["events"]
    assert "result" in {e["kind"] for e in events_}
    valid("book", ok(run_cli("book", "-o", "json")).json())
    valid("forget", ok(run_cli("forget", *url, "-o", "json", "--", tid)).json())
    valid("prune", ok(run_cli("prune", "--older-than", "1d", "-o", "json")).json())
    valid("forget", ok(run_cli("forget", "--endpoint", fastmcp4_server.url, "-o", "json")).json())
