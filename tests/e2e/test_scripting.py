"""What scripts lean on, through the real CLI against real servers: `--jq` on JSON output,
`watch --until`, target options before the command. server-everything's
`simulate-research-query ambiguous=true` asks for input (MCP 2025-11-25); fastmcp 3.4.11 runs
`slow_echo`."""

from __future__ import annotations

import pytest

from conftest import CliResult, RunCli, assert_one_line_error
from servers.common import ServerProcess

pytestmark = pytest.mark.timeout(180)


def ok(r: CliResult, *codes: int) -> CliResult:
    assert r.code in (codes or (0,)), (r.code, r.stdout[-2000:], r.stderr[-2000:])
    return r


def test_get_with_jq_prints_the_status(run_cli: RunCli, fastmcp3_server: ServerProcess) -> None:
    url = ("--url", fastmcp3_server.url)
    # a task that outlives any start-up, however busy the machine, for the status...
    slow = ok(run_cli("call", "slow_echo", "text=hi", "seconds=120", *url, "--jq", ".taskId"))
    slow_id = slow.stdout.strip()
    assert slow_id and '"' not in slow_id  # a string prints as plain text
    assert ok(run_cli("get", *url, "--jq", ".status", "--", slow_id)).stdout == "working\n"
    ok(run_cli("cancel", *url, "--", slow_id))
    # ...and a short one to follow to its end
    tid = ok(run_cli("call", "slow_echo", "text=hi", "seconds=1", *url, "--jq", ".taskId")).stdout
    tid = tid.strip()
    # on every line of a stream
    r = ok(run_cli("watch", *url, "--jq", 'select(.event == "end") | .outcome', "--", tid))
    assert r.stdout == "completed\n"
    r = ok(run_cli("get", *url, "--jq", "{id: .taskId, s: .status}", "--", tid))
    assert r.json() == {"id": tid, "s": "completed"}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--jq", ".a["], "--jq: syntax error"),
        (["--jq", ".status", "-o", "pretty"], "cannot go with -o pretty"),
    ],
)
def test_a_bad_jq_is_a_usage_error_before_any_request(
    run_cli: RunCli, args: list[str], says: str
) -> None:
    r = run_cli("get", "some-id", "--url", "http://127.0.0.1:9/mcp", *args)
    assert r.code == 2
    assert_one_line_error(r)
    assert says in r.stderr


def test_watch_until_input_required_exits_zero_when_the_task_asks(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    url = ("--url", everything_server.url)
    created = ok(
        run_cli("call", "simulate-research-query", "topic=tides", "ambiguous=true", *url)
    ).json()
    r = ok(
        run_cli("watch", *url, "--until", "input_required", "-o", "ndjson", "--", created["taskId"])
    )
    end = r.lines()[-1]
    assert end["event"] == "end"
    assert (end["outcome"], end["exitCode"]) == ("input_required", 0)
    assert "mcptask answer" in r.stderr  # and says how to answer it
    # without --until the same moment is exit 6
    assert run_cli("watch", *url, "-o", "json", "--", created["taskId"]).code == 6
    r = run_cli("watch", *url, "--until", "finished", "--", created["taskId"])
    assert r.code == 2
    assert_one_line_error(r)


def test_target_options_before_the_command(run_cli: RunCli, fastmcp3_server: ServerProcess) -> None:
    url = fastmcp3_server.url
    tid = ok(run_cli("--url", url, "-o", "json", "call", "quick", "x=2")).json()["taskId"]
    assert ok(run_cli("--url", url, "--jq", ".taskId", "get", "--", tid)).stdout == f"{tid}\n"
    r = ok(run_cli(f"--url={url}", "list", "--local", "-o", "ndjson"))
    assert [t["taskId"] for t in r.lines()] == [tid]
