"""MCP 2025-11-25 against real servers, through the real CLI in separate processes: the task book
carries the session from one process to the next."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import RunCli, assert_one_line_error, clean_env
from servers.common import ServerProcess
from servers.many_watch import POLLS_LINE

P = ("-p", "mcp-2025-11-25")


def create(run_cli: RunCli, url: str, *args: str) -> dict[str, Any]:
    r = run_cli("call", *args, "--url", url, "-o", "json")
    assert r.code == 0, r.stderr
    task: dict[str, Any] = r.json()
    return task


def book(state_dir: Path) -> dict[str, Any]:
    from mcptask.state.taskbook import TaskBook

    return {"endpoints": TaskBook(state_dir / "tasks.db").all_endpoints()}


def test_call_get_watch_result_list_through_the_remembered_session(
    run_cli: RunCli, everything_server: ServerProcess, state_dir: Path
) -> None:
    url = everything_server.url
    task = create(run_cli, url, "simulate-research-query", "topic=tide pools")
    tid = task["taskId"]
    assert task["status"] == "working"
    assert task["protocol"] == "mcp-2025-11-25"
    assert task["server"] == url
    assert task["raw"]["taskId"] == tid
    assert task["pollInterval"] == 1000 and task["ttl"] == 300000

    # the book holds the session (tasks are session-bound on this server), never a token
    rec = book(state_dir)["endpoints"][url]["tasks"][tid]
    assert rec["session"] and rec["protocol"] == "mcp-2025-11-25"
    assert (state_dir / "tasks.db").stat().st_mode & 0o777 == 0o600

    got = run_cli("get", "--url", url, "-o", "json", "--", tid)
    assert got.code == 0, got.stderr
    assert got.json()["taskId"] == tid

    watched = run_cli("watch", "--url", url, "-o", "ndjson", "--", tid)
    assert watched.code == 0, watched.stderr
    lines = watched.lines()
    assert lines[-1] == {"event": "end", "taskId": tid, "outcome": "completed", "exitCode": 0}
    statuses = [ln for ln in lines if ln["event"] == "status"]
    assert statuses[-1]["status"] == "completed"
    # the first poll and the push feed start together: on a loaded machine a push can be first
    assert {ln["via"] for ln in statuses} <= {"poll", "push"}
    # one line per observed change: no two consecutive identical (status, message)
    pairs = [(ln["status"], ln["statusMessage"]) for ln in statuses]
    assert all(a != b for a, b in itertools.pairwise(pairs))

    res = run_cli("result", "--url", url, "-o", "json", "--", tid)
    assert res.code == 0, res.stderr
    text = res.json()["content"][0]["text"]
    assert "Research Report: tide pools" in text

    listed = run_cli("list", "--url", url, "-o", "json")
    assert listed.code == 0, listed.stderr
    assert tid in [t["taskId"] for t in listed.json()["tasks"]]
    # listing read only the book's sessions; the record keeps what it knew of the task
    again = book(state_dir)["endpoints"][url]["tasks"][tid]
    assert again["session"] == rec["session"] and again["status"] == "completed"

    local = run_cli("list", "--local", "--url", url, "-o", "json")
    assert [t["taskId"] for t in local.json()["tasks"]] == [tid]


def test_a_plain_get_runs_without_typer_and_says_what_typer_s_would(
    run_cli: RunCli, everything_server: ServerProcess, state_dir: Path
) -> None:
    """`mcptask get ID` with the common options is read before Typer is imported
    (`cli/quick_get.py`): against the real server it gets the task, with the same output and
    exit statuses, and Typer is never imported; a line it does not take (`--history`) still
    runs through Typer."""
    url = everything_server.url
    tid = create(run_cli, url, "simulate-research-query", "topic=tide pools")["taskId"]
    code = (
        "import json, sys\n"
        "from mcptask.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "sys.stdout.flush()\n"
        "typer = sorted(m for m in sys.modules if m.split('.')[0] == 'typer')\n"
        "print(json.dumps({'code': code, 'typer': bool(typer)}), file=sys.stderr)\n"
    )

    def run(*words: str) -> tuple[dict[str, Any], str, str]:
        proc = subprocess.run(
            [sys.executable, "-c", code, *words],
            env=clean_env(state_dir),
            capture_output=True,
            text=True,
            timeout=90,
        )
        *said, last = proc.stderr.splitlines()
        return json.loads(last), proc.stdout, "\n".join(said)

    quick, out, said = run("--url", url, "get", "-o", "json", "--trace", "--", tid)
    assert quick == {"code": 0, "typer": False}, said
    got = json.loads(out)
    assert got["taskId"] == tid and got["protocol"] == "mcp-2025-11-25"
    assert "> POST " in said and "tasks/get" in said  # --trace, on stderr
    typer_s = run_cli("get", "--url", url, "-o", "json", "--history", "1", "--", tid).json()
    assert typer_s.keys() == got.keys() and typer_s["raw"].keys() == got["raw"].keys()

    # an unknown task: the same one-line error and exit status as through Typer
    unknown, _, said = run("get", "--url", url, "-o", "json", "--", "no-such-task")
    through_typer = run_cli("get", "--url", url, "-o", "json", "--history", "1", "no-such-task")
    assert unknown == {"code": through_typer.code, "typer": False}
    assert unknown["code"] != 0 and said == through_typer.stderr.rstrip("\n")

    # help is Typer's; an output mode mcptask does not know is the runner's usage error
    helped, out, _ = run("get", "--help")
    assert helped == {"code": 0, "typer": True} and "TASK_ID" in out
    bad, _, said = run("get", "--url", url, "-o", "yaml", "--", tid)
    assert bad == {"code": 2, "typer": False}
    assert said == "mcptask: error: --output must be one of auto, pretty, json, ndjson"


def test_a_second_session_cannot_see_the_task_but_the_book_can(
    run_cli: RunCli, everything_server: ServerProcess, tmp_path: Path
) -> None:
    url = everything_server.url
    tid = create(run_cli, url, "simulate-research-query", "topic=x")["taskId"]
    # another machine (an empty task book) opens a new session: the task is not there
    elsewhere = {"MCPTASK_STATE_DIR": str(tmp_path / "elsewhere")}
    other = run_cli("get", "--url", url, "-o", "json", "--", tid, env=elsewhere)
    assert other.code == 9, other.stderr
    assert_one_line_error(other)
    # a session the server does not know: the task cannot be reached
    bogus = run_cli("get", "--url", url, "--session", "not-a-session", "-o", "json", "--", tid)
    assert bogus.code == 9, bogus.stderr
    assert "session" in bogus.stderr
    ok = run_cli("get", "--url", url, "-o", "json", "--", tid)
    assert ok.code == 0


def test_watch_result_prints_the_result_in_the_end_line(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    url = everything_server.url
    r = run_cli(
        "call",
        "simulate-research-query",
        "topic=reefs",
        "--watch",
        "--result",
        "--url",
        url,
        "-o",
        "ndjson",
    )
    assert r.code == 0, r.stderr
    end = r.lines()[-1]
    assert end["outcome"] == "completed"
    assert "Research Report: reefs" in end["result"]["content"][0]["text"]


def test_watch_json_prints_one_object(run_cli: RunCli, everything_server: ServerProcess) -> None:
    url = everything_server.url
    tid = create(run_cli, url, "simulate-research-query", "topic=json")["taskId"]
    r = run_cli("watch", "--url", url, "-o", "json", "--", tid)
    assert r.code == 0
    data = r.json()
    assert data["exitCode"] == 0
    assert data["tasks"][0]["taskId"] == tid
    assert data["tasks"][0]["outcome"] == "completed"


def test_cancel_a_running_task_then_watch_exits_8(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    url = everything_server.url
    # `ambiguous`: the task stops at input_required and waits there: on a loaded machine the
    # cancel cannot come after it completed by itself (4 s of work otherwise)
    args = ("topic=cancel me", "ambiguous=true")
    tid = create(run_cli, url, "simulate-research-query", *args)["taskId"]
    c = run_cli("cancel", "--url", url, "-o", "json", "--", tid)
    assert c.code == 0, c.stderr
    assert c.json()["status"] == "cancelled"
    w = run_cli("watch", "--url", url, "-o", "ndjson", "--", tid)
    assert w.code == 8
    assert w.lines()[-1]["outcome"] == "cancelled"
    again = run_cli("cancel", "--url", url, "-o", "json", "--", tid)
    assert again.code == 11, again.stderr
    assert "cancelled" in again.stderr
    res = run_cli("result", "--url", url, "-o", "json", "--", tid)
    assert res.code == 8


def test_unknown_task_id_exits_9(run_cli: RunCli, everything_server: ServerProcess) -> None:
    for cmd in ("get", "result", "cancel"):
        r = run_cli(cmd, "no-such-task", "--url", everything_server.url, "-o", "json")
        assert r.code == 9, (cmd, r.stderr)
        assert_one_line_error(r)
    w = run_cli("watch", "no-such-task", "--url", everything_server.url, "-o", "ndjson")
    assert w.code == 9
    assert w.lines()[-1]["outcome"] == "unknown"


def test_arguments_are_coerced_to_the_schema(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    # ambiguous is a boolean in the tool's schema: "false" must be sent as false, not "false"
    r = run_cli(
        "call",
        "simulate-research-query",
        "topic=x",
        "ambiguous=false",
        "--trace",
        "--url",
        everything_server.url,
        "-o",
        "json",
    )
    assert r.code == 0, r.stderr
    assert '"ambiguous":false' in r.stderr.replace(" ", "")
    bad = run_cli("call", "simulate-research-query", "oops", "--url", everything_server.url)
    assert bad.code == 2
    assert_one_line_error(bad)
    missing = run_cli("call", "no-such-tool", "--url", everything_server.url)
    assert missing.code == 2
    assert "simulate-research-query" in missing.stderr


def test_result_waits_for_a_running_task_on_fastmcp3(
    run_cli: RunCli, fastmcp3_server: ServerProcess
) -> None:
    # fastmcp 3.4.11 answers tasks/result with an error while the task runs: mcptask must wait
    url = fastmcp3_server.url
    task = create(run_cli, url, "slow_echo", "text=patience", "seconds=2")
    assert task["status"] == "working"
    r = run_cli("result", "--url", url, "-o", "json", "--", task["taskId"])
    assert r.code == 0, r.stderr
    assert r.json()["content"][0]["text"] == "echo: patience"


def test_no_wait_fails_fast_on_a_running_task(
    run_cli: RunCli, fastmcp3_server: ServerProcess
) -> None:
    url = fastmcp3_server.url
    task = create(run_cli, url, "slow_echo", "text=x", "seconds=60")
    r = run_cli("result", "--no-wait", "--url", url, "-o", "json", "--", task["taskId"])
    assert r.code == 11
    assert_one_line_error(r)


def test_failed_task_prints_its_payload_and_exits_5(
    run_cli: RunCli, fastmcp3_server: ServerProcess
) -> None:
    url = fastmcp3_server.url
    task = create(run_cli, url, "fail_tool", "reason=the flux capacitor broke")
    r = run_cli("result", "--url", url, "-o", "json", "--", task["taskId"])
    assert r.code == 5, r.stderr
    assert r.json()["isError"] is True
    assert "flux capacitor" in r.json()["content"][0]["text"]
    pretty = run_cli("result", "--url", url, "-o", "pretty", "--", task["taskId"])
    assert pretty.code == 5
    assert "flux capacitor" in pretty.stdout


def test_kept_result_is_shown_after_the_task_is_gone(
    run_cli: RunCli, fastmcp3_server: ServerProcess, state_dir: Path
) -> None:
    url = fastmcp3_server.url
    task = create(run_cli, url, "quick", "x=21")
    assert run_cli("result", "--url", url, "-o", "json", "--", task["taskId"]).code == 0
    # pretend the server purged the task: rename it in the book so the server does not know it
    import sqlite3

    with sqlite3.connect(state_dir / "tasks.db") as conn:
        conn.execute("UPDATE tasks SET id = 'purged-task' WHERE id = ?", (task["taskId"],))
    r = run_cli("result", "purged-task", "--url", url, "-o", "json")
    assert r.code == 0, r.stderr
    assert r.json()["structuredContent"] == {"result": 42}
    assert "kept" in r.stderr
    g = run_cli("get", "purged-task", "--url", url, "-o", "json")
    assert g.code == 9
    # purged seconds after it was made, inside its ttl: lost, not expired (issue 25)
    assert "no longer knows task purged-task" in g.stderr and "inside its ttl" in g.stderr


def test_a_server_the_book_knows_to_hold_many_tasks_is_listed_on_lean_connections(
    run_cli: RunCli, everything_server: ServerProcess, state_dir: Path
) -> None:
    """A list of a server whose tasks the book knows to be many (LEAN_LIST) reads its pages on
    the poll pool's connections (a page costs less there), and lists what the general way
    lists; below that, one blocking request after another, as before."""
    from mcptask.commands.list import LEAN_LIST
    from mcptask.state.taskbook import TaskBook

    url = everything_server.url
    tid = create(run_cli, url, "simulate-research-query", "topic=many")["taskId"]
    few = run_cli("list", "--url", url, "-o", "ndjson", "--trace")
    assert few.code == 0, few.stderr
    assert POLLS_LINE not in few.stderr
    # tasks the book saw there earlier (the server has forgotten them: another session's)
    book = TaskBook(state_dir / "tasks.db")
    book.record_many(url, {f"gone-{n}": {"status": "completed"} for n in range(LEAN_LIST)})
    book.close()
    many = run_cli("list", "--url", url, "-o", "ndjson", "--trace")
    assert many.code == 0, many.stderr
    assert POLLS_LINE in many.stderr
    assert [t["taskId"] for t in many.lines()] == [t["taskId"] for t in few.lines()]
    assert tid in [t["taskId"] for t in many.lines()]
    # what the book keeps of the listed task is what the general way kept
    rec = TaskBook(state_dir / "tasks.db").lookup(url, tid)
    assert rec is not None and rec["session"] and rec["status"] in ("working", "completed")
