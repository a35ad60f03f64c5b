"""Next steps where a person needs them (issue 28, item 7): after `call`, on a task that asks,
on an expired task whose result the book kept, on an unknown id, and when a config `default`
shadows the server the task book has the task on. Real servers: fastmcp 4, the demo server."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcptask.demo.server import DemoServer

from conftest import RunCli, assert_one_line_error
from servers.common import ServerProcess


@pytest.fixture
def short_lived() -> Iterator[DemoServer]:
    """Tasks that end at once and are forgotten 2 s later."""
    with DemoServer(task_seconds=0.1, ttl_ms=2000, poll_interval_ms=250) as server:
        yield server


def test_call_says_how_to_follow_the_task(run_cli: RunCli, fastmcp4_server: ServerProcess) -> None:
    url = fastmcp4_server.url
    r = run_cli("call", "slow_echo", "text=x", "seconds=5", "--url", url, "-o", "pretty")
    assert r.code == 0, r.stderr
    task_id = r.stdout.split()[1]
    from mcptask.text.command_line import command_line

    # fastmcp's ids may begin with -: the hint puts `--` before such an id
    assert f"mcptask: follow it: {command_line('watch', task_id)}" in r.stderr


def test_get_on_a_task_that_asks_says_how_to_answer(
    run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    url = fastmcp4_server.url
    task_id = run_cli("call", "ask_name", "--url", url, "-o", "json").json()["taskId"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        r = run_cli("get", "--url", url, "-o", "pretty", "--", task_id)
        if "input_required" in r.stdout:
            break
        time.sleep(0.3)
    assert "input_required" in r.stdout, r.stdout
    from mcptask.text.command_line import command_line

    # (a fastmcp id that begins with - comes after `--` in the hint)
    assert f"answer it: {command_line('answer', task_id)}" in r.stderr
    quiet = run_cli("get", "--url", url, "-o", "json", "--", task_id)
    assert quiet.stderr == ""  # hints are for people, not for scripts


def test_an_expired_task_names_the_kept_result(run_cli: RunCli, short_lived: DemoServer) -> None:
    url = short_lived.url
    made = run_cli("call", "build-report", "--watch", "--url", url, "-o", "json")
    assert made.code == 0, made.stderr  # watched to its end: the book keeps its result
    task_id = made.json()["tasks"][0]["taskId"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        r = run_cli("get", "--", task_id)
        if r.code == 9:
            break
        time.sleep(0.2)
    assert r.code == 9, r.stderr
    assert_one_line_error(r)
    assert r.stderr.count(task_id) == 2  # the task, and the command that prints its result
    assert f"task {task_id} has expired (last seen completed): " in r.stderr
    assert f"`mcptask result {task_id}` prints it" in r.stderr
    kept = run_cli("result", "--", task_id)
    assert kept.code == 0 and "Report on demo" in kept.stdout, kept.stderr


def test_an_unknown_id_says_what_to_try(run_cli: RunCli, fastmcp4_server: ServerProcess) -> None:
    url = fastmcp4_server.url
    r = run_cli("get", "no-such-task", "--url", url)
    assert r.code == 9
    assert_one_line_error(r)
    assert f"`mcptask list --url {url}` shows the tasks the server lists" in r.stderr


def test_a_config_default_that_shadows_the_books_server(
    run_cli: RunCli,
    fastmcp4_server: ServerProcess,
    everything_server: ServerProcess,
    tmp_path: Path,
) -> None:
    url = fastmcp4_server.url
    task_id = run_cli("call", "slow_echo", "text=x", "--url", url, "-o", "json").json()["taskId"]
    config = tmp_path / "config.toml"
    config.write_text(
        f'default = "ev"\n[servers.one]\nurl = "{url}"\n'
        f'[servers.ev]\nurl = "{everything_server.url}"\n'
    )
    r = run_cli("get", "--", task_id, env={"MCPTASK_CONFIG": str(config)})
    assert r.code == 9
    assert_one_line_error(r)
    assert f"the task book has it on {url}, not on server 'ev'" in r.stderr
    # fastmcp's ids may begin with -: the flags then go before `--`
    dash = task_id.startswith("-")
    again = f"mcptask get -s one -- {task_id}" if dash else f"mcptask get {task_id} -s one"
    assert f"`{again}`" in r.stderr
    hint = again.split()[2:]  # the command line the hint gives, as it is
    assert run_cli("get", *hint, env={"MCPTASK_CONFIG": str(config)}).code == 0
    # a prefix too (issue 38): the hint names the whole id where the book has it
    prefix = task_id[:8]
    r = run_cli("get", "--", prefix, env={"MCPTASK_CONFIG": str(config)})
    assert r.code == 9
    assert_one_line_error(r)
    assert f"the task book has it on {url}, not on server 'ev'" in r.stderr
    assert f"`{again}`" in r.stderr
    # a prefix too short to stand for an id says so
    r = run_cli("get", "4b", env={"MCPTASK_CONFIG": str(config)})
    assert r.code == 9 and "a prefix of a task id needs at least 4 characters" in r.stderr
    r = run_cli("get", "4b")
    assert r.code == 2 and "a prefix of a task id needs at least 4 characters" in r.stderr


def test_the_hint_for_an_id_that_begins_with_a_dash_puts_the_flags_before_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`mcptask get -- -7Rq --url U` would take `--url U` for task ids: the flags go first."""
    from types import SimpleNamespace

    from mcptask.commands import _shared

    monkeypatch.setenv("MCPTASK_CONFIG", str(tmp_path / "none.toml"))
    book = SimpleNamespace(find=lambda tid: [("http://a.example/mcp", tid, None)])
    ctx = SimpleNamespace(
        places=SimpleNamespace(remembers=True),
        server="http://b.example/mcp",
        book=book,
        target=SimpleNamespace(name=None),
    )
    dashed = _shared._elsewhere(ctx, "-7Rq")  # type: ignore[arg-type]
    assert dashed is not None and dashed.endswith(
        "`mcptask get --url http://a.example/mcp -- -7Rq`"
    ), dashed
    plain = _shared._elsewhere(ctx, "7Rq")  # type: ignore[arg-type]
    assert plain is not None and plain.endswith("`mcptask get 7Rq --url http://a.example/mcp`")


UTC_Z = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z"


def test_timestamps_in_one_format_whatever_the_server_sent(
    run_cli: RunCli, fastmcp4_server: ServerProcess, everything_server: ServerProcess
) -> None:
    import re

    f4 = run_cli("call", "slow_echo", "text=x", "--url", fastmcp4_server.url, "-o", "json").json()
    assert f4["raw"]["createdAt"].endswith("+00:00")  # fastmcp 4 writes an offset
    ev = run_cli(
        "call", "simulate-research-query", "topic=x", "--url", everything_server.url, "-o", "json"
    ).json()
    for task in (f4, ev):
        assert re.fullmatch(UTC_Z, task["createdAt"]), task
        assert re.fullmatch(UTC_Z, task["lastUpdatedAt"]), task
    assert f4["createdAt"][:19] == f4["raw"]["createdAt"][:19]


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        ("2026-12-01T15:57:56+01:00", "2026-12-01T14:57:56Z"),
        ("2026-12-01T14:57:56.123456+00:00", "2026-12-01T14:57:56.123Z"),
        ("2026-12-01T14:57:56z", "2026-12-01T14:57:56Z"),
        ("2026-12-01 14:57:56", "2026-12-01 14:57:56"),  # no zone: kept as it came
        ("12", "12"),
    ],
)
def test_a_servers_time_in_utc_with_z(sent: str, shown: str) -> None:
    from mcptask.model.times import utc_stamp

    assert utc_stamp(sent) == shown
