"""What a person sees, round three (issue 38): one shape per command, exit codes and advice that
fit, checked against real servers (the real CLI in a subprocess)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mcptask import schemas

from conftest import CliResult, RunCli, assert_one_line_error  # noqa: F401
from servers.odd_server import OddServer
from servers.plugin import ServerProcess

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def odd() -> Iterator[OddServer]:
    with OddServer() as server:
        yield server


def ok(r: CliResult, code: int = 0) -> CliResult:
    assert r.code == code, f"exit {r.code}\nstdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr, r.stderr
    return r


def valid(data: Any, name: str) -> Any:
    validator = Draft202012Validator(schemas.bundle(name))
    errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(data)]
    assert not errors, errors
    return data


# -- shapes ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_send_watch_ndjson_with_a_message_reply_prints_a_watch_event(
    run_cli: RunCli, odd: OddServer, version: str
) -> None:
    """An agent that answers with a Message and no task: `send --watch -o ndjson` still
    prints ndjson watch events (its one `end` line, with the reply as the result)."""
    url = odd.agent(version, message_reply=True)
    r = ok(run_cli("send", "hi there", "-u", url, "--watch", "-o", "ndjson"))
    lines = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert len(lines) == 1, r.stdout
    end = valid(lines[0], "watch-event")
    assert end["event"] == "end" and end["outcome"] == "completed" and end["exitCode"] == 0
    assert "hello back: hi there" in json.dumps(end["result"])


def test_call_watch_says_how_to_have_the_result(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    """`call --watch` shows how the task ended; without --result it names the command that
    prints what it made (as `demo` prints it)."""
    r = ok(
        run_cli(
            "call",
            "simulate-research-query",
            "topic=tides",
            "--watch",
            "-o",
            "pretty",
            "--url",
            everything_server.url,
        )
    )
    created = next(ln for ln in r.stderr.splitlines() if ln.startswith("mcptask: task "))
    task_id = created.split()[2]
    assert f"its result: `mcptask result {task_id}`" in r.stderr, r.stderr
    shown = ok(run_cli("result", task_id, "-o", "json"))
    assert shown.stdout.strip()
    # with --result the result is printed, and no hint
    r = ok(
        run_cli(
            "call",
            "simulate-research-query",
            "topic=tides",
            "--watch",
            "--result",
            "-o",
            "pretty",
            "--url",
            everything_server.url,
        )
    )
    assert "its result:" not in r.stderr
    assert "tides" in r.stdout
