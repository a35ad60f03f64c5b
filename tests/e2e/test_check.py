"""`mcptask check` against the real servers, through the real CLI: server-everything passes (its
ttl override is a WARN), fastmcp 3.4.11 fails the checks it breaks, fastmcp 4.1.4 passes the
2026-07-28 checks with `--tool` and is incomplete without it, a2a-sdk 1.3.0 passes the A2A
checks. Selection, JUnit XML, `--rpc` and pretty output; the outcome rules and helpers in-process.

Tasks are kept short with tool arguments (fastmcp `seconds`); server-everything's task always
takes 4 s.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from mcptask.check.engine import Report, select
from mcptask.check.report import junit_xml
from mcptask.check.suite import (
    COULD_NOT_RUN,
    NOT_APPLICABLE,
    CheckDef,
    CheckResult,
    entropy_bits,
    fill_arguments,
    timestamp,
)

from conftest import CliResult, RunCli, assert_one_line_error
from servers.a2a_plugin import A2AServerProcess
from servers.common import ServerProcess

pytestmark = pytest.mark.timeout(120)


def _run(run_cli: RunCli, *args: str, code: int) -> dict[str, Any]:
    r = run_cli("check", *args, "-o", "json")
    assert "Traceback" not in r.stderr, r.stderr
    assert r.code == code, f"exit {r.code}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    report: dict[str, Any] = r.json()
    assert report["exitCode"] == code
    assert {"outcome", "exitCode", "protocol", "server", "checks"} <= set(report)
    for check in report["checks"]:
        assert {"id", "category", "verdict", "requirement", "spec", "observed"} <= set(check)
        assert check["verdict"] in ("PASS", "WARN", "FAIL", "INFO", "SKIP")
        assert check["id"].split(".")[0] in ("mcp2025", "mcp2026", "a2a")
        assert ("skipReason" in check) == (check["verdict"] == "SKIP")
    report["stderr"] = r.stderr
    return report


def verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["verdict"] for c in report["checks"]}


def by_id(report: dict[str, Any], check_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in report["checks"] if c["id"] == check_id)
    return found


# -- MCP 2025-11-25 ---------------------------------------------------------------------------


def test_server_everything_passes_with_its_ttl_override_as_a_warning(
    run_cli: RunCli, everything_server: ServerProcess, tmp_path: Path
) -> None:
    junit = tmp_path / "check.xml"
    report = _run(run_cli, "-u", everything_server.url, "--junit", str(junit), code=0)
    assert report["outcome"] == "passed"
    assert report["protocol"] == "mcp-2025-11-25"
    assert report["serverInfo"]["name"] == "mcp-servers/everything"
    assert report["tool"] == {
        "name": "simulate-research-query",
        "arguments": {"topic": "test"},
        "chosen": "auto",
    }
    v = verdicts(report)
    assert "FAIL" not in v.values()
    ttl = by_id(report, "mcp2025.creation.ttl-honoured")
    assert ttl["verdict"] == "WARN" and "300000" in ttl["observed"]
    for passing in (
        "mcp2025.capability.tasks",
        "mcp2025.capability.tools",
        "mcp2025.creation.shape",
        "mcp2025.creation.ttl",
        "mcp2025.status.get",
        "mcp2025.status.message",
        "mcp2025.result.waits",
        "mcp2025.status.lifecycle",
        "mcp2025.status.timestamps",
        "mcp2025.result.related-task",
        "mcp2025.result.payload",
        "mcp2025.list.includes-task",
        "mcp2025.list.bad-cursor",
        "mcp2025.cancel.terminal",
        "mcp2025.cancel.running",
        "mcp2025.errors.unknown-task",
    ):
        assert v[passing] == "PASS", by_id(report, passing)
    # refused, but inside an isError tool result rather than as a JSON-RPC -32601 error
    assert v["mcp2025.creation.required-tool"] == "WARN"
    assert v["mcp2025.creation.forbidden-tool"] == "WARN"  # -32602 instead of -32601
    binding = by_id(report, "mcp2025.session.binding")
    assert binding["verdict"] == "INFO" and "bound to their session" in binding["observed"]
    failed = by_id(report, "mcp2025.errors.failed-status")
    assert failed["verdict"] == "SKIP" and failed["skipReason"] == NOT_APPLICABLE
    assert "no tool known to fail" in failed["observed"]
    assert "task tool: simulate-research-query" in report["stderr"]

    root = ET.parse(junit).getroot()
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == [c["id"] for c in report["checks"]]
    assert root.get("failures") == "0"
    assert root.get("skipped") == str(sum(c["verdict"] == "SKIP" for c in report["checks"]))
    ttl_case = next(c for c in cases if c.get("name") == "mcp2025.creation.ttl-honoured")
    assert ttl_case.find("failure") is None
    assert (ttl_case.findtext("system-out") or "").startswith("WARN: ")


def test_fastmcp3_fails_the_checks_it_breaks(
    run_cli: RunCli, fastmcp3_server: ServerProcess, tmp_path: Path
) -> None:
    junit = tmp_path / "check.xml"
    args = f"-u {fastmcp3_server.url} --tool slow_echo text=x seconds=2 --junit {junit}"
    report = _run(run_cli, *args.split(), code=5)
    assert report["outcome"] == "failed"
    assert report["tool"]["arguments"] == {"text": "x", "seconds": 2}
    v = verdicts(report)
    # tasks/result errors at once on a running task; the completed result lacks related-task
    assert v["mcp2025.result.waits"] == "FAIL"
    assert "instead of waiting" in by_id(report, "mcp2025.result.waits")["observed"]
    assert v["mcp2025.result.related-task"] == "FAIL"
    # tasks/list is always []: a MUST, so FAIL; cancelling a finished task is accepted
    listed = by_id(report, "mcp2025.list.includes-task")
    assert listed["verdict"] == "FAIL" and "listed 0 tasks" in listed["observed"]
    cancel = by_id(report, "mcp2025.cancel.terminal")
    assert cancel["verdict"] == "FAIL" and "was accepted" in cancel["observed"]
    assert "tasks/get now says completed" in cancel["observed"]
    assert v["mcp2025.list.bad-cursor"] == "FAIL"
    # what it does right
    for passing in (
        "mcp2025.creation.shape",
        "mcp2025.creation.ttl-honoured",
        "mcp2025.status.message",
        "mcp2025.status.lifecycle",
        "mcp2025.cancel.running",
        "mcp2025.errors.unknown-task",
        "mcp2025.errors.failed-status",
        "mcp2025.result.failed-payload",
    ):
        assert v[passing] == "PASS", by_id(report, passing)
    # the failing tool was picked by its name, and the run says so
    assert report["failingTool"] == {"name": "fail_tool", "arguments": {}, "chosen": "its name"}
    assert "failing tool: fail_tool (picked by its name" in report["stderr"]
    binding = by_id(report, "mcp2025.session.binding")
    assert binding["verdict"] == "INFO" and "not bound" in binding["observed"]
    assert v["mcp2025.creation.required-tool"] == "SKIP"  # slow_echo's taskSupport is optional

    root = ET.parse(junit).getroot()
    failures = {c.get("name") for c in root.iter("testcase") if c.find("failure") is not None}
    assert failures == {k for k, verdict in v.items() if verdict == "FAIL"}
    assert root.get("failures") == str(len(failures))


def test_stdio_target_and_selection_by_category(
    run_cli: RunCli, everything_stdio_cmd: list[str]
) -> None:
    select_ = ["--category", "capability", "--category", "session", "--check", "mcp2025."]
    report = _run(run_cli, "--stdio", " ".join(everything_stdio_cmd), *select_, code=0)
    assert [c["id"] for c in report["checks"]] == [
        "mcp2025.capability.tasks",
        "mcp2025.capability.tools",
        "mcp2025.session.binding",
    ]
    binding = by_id(report, "mcp2025.session.binding")
    assert binding["skipReason"] == NOT_APPLICABLE and "stdio" in binding["observed"]


# -- MCP 2026-07-28 ---------------------------------------------------------------------------


def test_fastmcp4_passes_the_2026_checks_with_a_tool(
    run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    report = _run(
        run_cli, "-u", fastmcp4_server.url, "--tool", "slow_echo", "text=x", "seconds=1", code=0
    )
    assert report["protocol"] == "mcp-2026-07-28"
    assert report["outcome"] == "passed"
    expected = {
        "mcp2026.capability.discover": "PASS",
        "mcp2026.capability.tool-metadata": "INFO",
        "mcp2026.creation.undeclared": "PASS",
        "mcp2026.creation.result-type": "PASS",
        "mcp2026.creation.durable": "PASS",
        "mcp2026.status.result-type": "PASS",
        "mcp2026.status.ttl": "PASS",
        "mcp2026.status.message": "PASS",
        "mcp2026.update.unknown-key": "PASS",
        "mcp2026.wire.mcp-name": "PASS",
        "mcp2026.wire.mcp-method": "PASS",
        "mcp2026.status.lifecycle": "PASS",
        "mcp2026.status.timestamps": "PASS",
        "mcp2026.result.inline": "PASS",
        "mcp2026.result.removed": "PASS",
        "mcp2026.list.removed": "PASS",
        "mcp2026.errors.undeclared": "PASS",
        "mcp2026.errors.unknown-task": "PASS",
        "mcp2026.cancel.ack": "PASS",
        "mcp2026.result.failed": "PASS",
        "mcp2026.security.task-ids": "PASS",
    }
    assert verdicts(report) == expected
    assert "-32020" in by_id(report, "mcp2026.wire.mcp-name")["observed"]
    assert "-32021" in by_id(report, "mcp2026.errors.undeclared")["observed"]
    assert "directly" in by_id(report, "mcp2026.creation.undeclared")["observed"]
    failed = by_id(report, "mcp2026.result.failed")["observed"]
    assert "rpc_error failed with error -32603" in failed
    assert "failing tool: rpc_error (picked by its name" in report["stderr"]


def test_fastmcp4_without_a_tool_is_incomplete(
    run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    report = _run(run_cli, "-u", fastmcp4_server.url, code=10)
    assert report["outcome"] == "incomplete"
    assert "--tool" in report["stderr"] and "incomplete" in report["stderr"]
    creation = by_id(report, "mcp2026.creation.result-type")
    assert creation["verdict"] == "SKIP" and creation["skipReason"] == COULD_NOT_RUN
    assert "--tool is needed" in creation["observed"]
    v = verdicts(report)
    assert "FAIL" not in v.values()
    # what needs no task still runs
    assert v["mcp2026.capability.discover"] == "PASS"
    assert v["mcp2026.errors.unknown-task"] == "PASS"
    assert v["mcp2026.list.removed"] == "PASS"


def test_selection_rpc_and_pretty_output(run_cli: RunCli, fastmcp4_server: ServerProcess) -> None:
    # only checks that need no task are selected: the run passes without --tool
    select_ = ["--check", "mcp2026.capability", "--check", "mcp2026.list", "--rpc"]
    report = _run(run_cli, "-u", fastmcp4_server.url, *select_, code=0)
    assert [c["id"] for c in report["checks"]] == [
        "mcp2026.capability.discover",
        "mcp2026.capability.tool-metadata",
        "mcp2026.list.removed",
    ]
    exchange = by_id(report, "mcp2026.list.removed")["rpc"][0]
    assert exchange["request"]["method"] == "tasks/list"
    assert exchange["headers"]["Mcp-Method"] == "tasks/list"
    assert exchange["error"]["code"] == -32601 and exchange["httpStatus"] == 404

    pretty = run_cli("check", "-u", fastmcp4_server.url, "--category", "capability", "-o", "pretty")
    assert pretty.code == 0, pretty.stderr
    assert "mcp2026.capability.discover" in pretty.stdout
    assert "PASS" in pretty.stdout and "INFO" in pretty.stdout
    assert "passed (exit 0)" in pretty.stdout


def test_bad_selections_are_usage_errors(run_cli: RunCli, fastmcp4_server: ServerProcess) -> None:
    for args, text in (
        (["--check", "nope.nothing"], "matches no check"),
        (["--category", "nope"], "known categories"),
        (["--check", "mcp2025.result"], "no mcp-2026-07-28 check matches"),
        (["text=x"], "--tool"),
    ):
        r: CliResult = run_cli("check", "-u", fastmcp4_server.url, *args, "-o", "json")
        assert r.code == 2, (args, r.stderr)
        assert_one_line_error(r)
        assert text in r.stderr


# -- A2A ----------------------------------------------------------------------------------------


def test_a2a_sdk_passes_the_a2a_checks(run_cli: RunCli, a2a_server: A2AServerProcess) -> None:
    report = _run(run_cli, "-u", a2a_server.url, code=0)
    assert report["protocol"] == "a2a-1.0"
    assert report["serverInfo"]["name"] == "mcptask test agent"
    v = verdicts(report)
    push_needs = ("a2a.push.delivery", "a2a.push.authentication", "a2a.push.after-delete")
    assert {v.pop(name) for name in push_needs} == {"SKIP"}  # its card says no push
    assert set(v.values()) == {"PASS"}, report["checks"]
    assert set(v) == {
        "a2a.card.fields",
        "a2a.card.interfaces",
        "a2a.wire.unsupported-version",
        "a2a.wire.version-header",
        "a2a.creation.send",
        "a2a.stream.subscribe",
        "a2a.wire.v03-compat",
        "a2a.cancel.running",
        "a2a.status.lifecycle",
        "a2a.status.states",
        "a2a.list.includes-task",
        "a2a.cancel.terminal",
        "a2a.errors.unknown-task",
        "a2a.push.capability",
        "a2a.push.configs",
    }
    assert "-32003" in by_id(report, "a2a.push.configs")["observed"]
    assert "-32009" in by_id(report, "a2a.wire.version-header")["observed"]
    assert "-32002" in by_id(report, "a2a.cancel.terminal")["observed"]
    assert "-32001" in by_id(report, "a2a.errors.unknown-task")["observed"]


@pytest.mark.parametrize("proto", ["a2a-1.0", "a2a-0.3", "a2a-1.0-rest"])
def test_check_on_push_against_an_agent_that_pushes(
    run_cli: RunCli, request: pytest.FixtureRequest, proto: str
) -> None:
    # over HTTP+JSON: the same agent in `--rest-only` mode, its config routes on the binding
    agent = "a2a_rest_push_server" if proto.endswith("-rest") else "a2a_push_server"
    server: A2AServerProcess = request.getfixturevalue(agent)
    report = _run(run_cli, "-u", server.url, "-p", proto, code=0)
    assert report["protocol"] == proto
    v = {k: x for k, x in verdicts(report).items() if k.startswith("a2a.push.")}
    assert v == {
        "a2a.push.capability": "PASS",
        "a2a.push.configs": "PASS",
        "a2a.push.delivery": "PASS",
        "a2a.push.authentication": "PASS",
        "a2a.push.after-delete": "PASS",
    }, report["checks"]
    assert "completed" in by_id(report, "a2a.push.delivery")["observed"]
    assert "§3.1.10" in by_id(report, "a2a.push.after-delete")["spec"]
    if proto.endswith("-rest"):
        assert "over HTTP+JSON" in by_id(report, "a2a.push.configs")["observed"]
        # streaming off: `:subscribe` is refused with UNSUPPORTED_OPERATION, read as -32004
        stream = by_id(report, "a2a.stream.subscribe")
        assert stream["verdict"] == "PASS" and "-32004" in stream["observed"], stream


def test_check_on_push_against_the_a2a_js_agent(
    run_cli: RunCli, a2a_js_server: A2AServerProcess
) -> None:
    report = _run(run_cli, "-u", a2a_js_server.url, "-p", "a2a-1.0", code=0)
    v = {k: x for k, x in verdicts(report).items() if k.startswith("a2a.push.")}
    # @a2a-js/sdk 1.3.0 sends a config's authentication *instead of* its token
    assert v == {
        "a2a.push.capability": "PASS",
        "a2a.push.configs": "PASS",
        "a2a.push.delivery": "PASS",
        "a2a.push.authentication": "WARN",
        "a2a.push.after-delete": "PASS",
    }, report["checks"]
    assert "X-A2A-Notification-Token" in by_id(report, "a2a.push.authentication")["observed"]


def test_a2a_sdk_over_http_json_passes_the_a2a_checks(
    run_cli: RunCli, a2a_rest_server: A2AServerProcess
) -> None:
    report = _run(run_cli, "-u", a2a_rest_server.url, code=0)
    assert report["protocol"] == "a2a-1.0-rest"
    v = verdicts(report)
    assert v.pop("a2a.wire.v03-compat") == "SKIP"  # the card offers no JSON-RPC 0.3
    push = {k: v.pop(k) for k in list(v) if k.startswith("a2a.push.")}
    # the card says no push, and the binding's config route refuses one (-32003)
    assert push.pop("a2a.push.capability") == "PASS"
    assert push.pop("a2a.push.configs") == "PASS"
    assert "-32003" in by_id(report, "a2a.push.configs")["observed"]
    assert set(push.values()) == {"SKIP"}, push
    assert set(v.values()) == {"PASS"}, report["checks"]
    assert "-32009" in by_id(report, "a2a.wire.unsupported-version")["observed"]
    assert "-32002" in by_id(report, "a2a.cancel.terminal")["observed"]
    assert "-32001" in by_id(report, "a2a.errors.unknown-task")["observed"]
    assert "Task" in by_id(report, "a2a.stream.subscribe")["observed"]


# -- in-process: outcome rules, JUnit, helpers ----------------------------------------------------

D = CheckDef("mcp2025.x.y", "status", "a requirement", "a section")


def _report(*verdicts_: tuple[str, str | None]) -> Report:
    return Report(
        "mcp-2025-11-25",
        "http://x/mcp",
        [CheckResult(D, verdict, "seen", reason) for verdict, reason in verdicts_],
    )


def test_outcome_rules() -> None:
    assert _report(("PASS", None), ("WARN", None), ("INFO", None)).exit_code == 0
    # not applicable never turns a run red; could not run makes it incomplete
    assert _report(("PASS", None), ("SKIP", NOT_APPLICABLE)).outcome == "passed"
    assert _report(("PASS", None), ("SKIP", COULD_NOT_RUN)).exit_code == 10
    # failed beats incomplete
    assert _report(("SKIP", COULD_NOT_RUN), ("FAIL", None)).outcome == "failed"
    assert _report(("SKIP", COULD_NOT_RUN), ("FAIL", None)).exit_code == 5


def test_selection_by_prefix_and_category() -> None:
    defs = [
        CheckDef("mcp2025.result.waits", "result", "", ""),
        CheckDef("mcp2025.result.related-task", "result", "", ""),
        CheckDef("mcp2025.list.includes-task", "list", "", ""),
    ]
    assert select(defs, [], []) == {d.id for d in defs}
    assert select(defs, ["mcp2025.result"], []) == {
        "mcp2025.result.waits",
        "mcp2025.result.related-task",
    }
    assert select(defs, ["mcp2025.list.includes-task"], []) == {"mcp2025.list.includes-task"}
    assert select(defs, [], ["list"]) == {"mcp2025.list.includes-task"}
    assert select(defs, ["mcp2025."], ["result"]) == {
        "mcp2025.result.waits",
        "mcp2025.result.related-task",
    }


def test_junit_xml_is_valid_even_with_control_characters() -> None:
    report = _report(("FAIL", None), ("SKIP", NOT_APPLICABLE), ("WARN", None), ("PASS", None))
    report.results[0].observed = "bad \x1b[31m\x00 text"
    root = ET.fromstring(junit_xml(report))
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "1", "1")
    cases = suite.findall("testcase")
    assert cases[0].find("failure") is not None
    assert cases[1].find("skipped") is not None
    assert (cases[2].findtext("system-out") or "").startswith("WARN: ")
    assert cases[3].find("failure") is None and cases[3].find("skipped") is None


def test_helpers() -> None:
    schema = {
        "type": "object",
        "properties": {
            "topic": {"type": "string"},
            "n": {"type": "integer"},
            "flag": {"type": "boolean"},
            "kind": {"enum": ["b", "a"]},
            "level": {"type": "number", "default": 3},
            "optional": {"type": "string"},
        },
        "required": ["topic", "n", "flag", "kind", "level"],
    }
    assert fill_arguments(schema) == {
        "topic": "test",
        "n": 1,
        "flag": False,
        "kind": "b",
        "level": 3,
    }
    assert fill_arguments({"properties": {"o": {"type": "object"}}, "required": ["o"]}) is None
    assert entropy_bits("5b910f14-0fa2-40cc-90bc-786b32b204a8") == 122
    assert entropy_bits("65a49ad5594dcccd14389ee8127b00d4") == 128
    assert entropy_bits("42") < 10
    assert timestamp("2026-11-30T06:38:51.084042Z")[1] is None
    assert timestamp("2026-11-30T06:42:46.960+00:00")[1] is None
    assert timestamp("2026-11-30T06:42:46")[1] == "no UTC offset"
    assert timestamp("yesterday")[0] is None
    assert timestamp(None)[1] == "missing"


def test_check_is_not_imported_at_start_up() -> None:
    code = "import sys, mcptask.cli; print('mcptask.check.engine' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_check_against_agno_says_in_one_line_what_it_covers(
    run_cli: RunCli, agno_server: Any
) -> None:
    r = run_cli("check", "--url", agno_server.url, "-o", "pretty")
    assert r.code == 10, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    # the target, one sentence for every check (no table of 13 SKIP rows), the outcome
    assert "│" not in r.stdout and r.stdout.count("SKIP") == 2, r.stdout
    assert lines[1].startswith("SKIP all ") and "Agno" in " ".join(lines)
    assert lines[-1].startswith("incomplete (exit 10)")
