"""A watch of a few tasks beside a watch of many (polls on the poll pool,
mcptask/transports/poll_pool.py), on the same scripted scenario: what both must show alike."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcptask.session.endpoint import MANY_TASKS

if TYPE_CHECKING:
    from conftest import CliResult, RunCli

#: what `--trace` says when a watch's polls take the poll pool
POLLS_LINE = "* HTTP: polls on keep-alive connections of their own (many tasks)"
#: the fault server speaks MCP 2025-11-25
P = ("-p", "mcp-2025-11-25")


def norm(text: str) -> str:
    """A message with the scenario's own path taken out (each run has its own)."""
    return re.sub(r"/s\d+-[\w-]+/", "/S/", text)


#: the count of the same retry line said once a second (output/live.py `NdjsonEvents.retry`)
_MORE = r"(\d+) more retr(?:y|ies) like it since the last such line"


def retries(stderr: str) -> list[str]:
    """The watch's retry notes, one per retry (those counted in another's line too), task ids,
    ports and scenario paths taken out."""
    out = []
    for line in stderr.splitlines():
        counted = re.match(rf"mcptask: {_MORE}: (.*)$", line)
        if counted is not None:
            line, times = f"mcptask: {counted.group(2)}", int(counted.group(1))
        elif "retrying in" in line:
            more = re.search(_MORE, line)
            times = 1 + (int(more.group(1)) if more else 0)
            line = re.sub(r"\bt\d+: ", "", line).split("; retrying")[0]
        else:
            continue
        out += [norm(re.sub(r"127\.0\.0\.1:\d+", "HOST", line))] * times
    return sorted(out)


def few_and_many(
    run_cli: RunCli,
    scenario: Callable[[int], tuple[str, list[str]]],
    few: int,
    session: str,
    env: dict[str, str] | None = None,
) -> list[tuple[CliResult, list[str]]]:
    """Watch `scenario(few)` (httpx's transport) and `scenario(MANY_TASKS + 10)` (the poll
    pool, traced), each `scenario(n)` giving its URL and task ids; both exit 0 with no
    traceback and end every task. Returns `[(few, its ids), (many, its ids)]`."""
    runs = []
    for n, trace in ((few, ()), (MANY_TASKS + 10, ("--trace",))):
        url, ids = scenario(n)
        argv = ("watch", *ids, "--url", url, "--session", session, *P, "-o", "ndjson", *trace)
        runs.append((run_cli(*argv, env=env), ids))
    assert POLLS_LINE in runs[1][0].stderr
    for r, ids in runs:
        assert r.code == 0, r.stderr[-2000:]
        assert "Traceback" not in r.stderr and "Unclosed" not in r.stderr
        ends = [line for line in r.lines() if line["event"] == "end"]
        assert sorted(e["taskId"] for e in ends) == sorted(ids)
    return runs
