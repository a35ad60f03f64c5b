"""The polls of a large watch on the poll pool (transports/poll_pool.py) over A2A and Agno,
against the real agents: JSON-RPC `GetTask` POSTs, HTTP+JSON `GET /tasks/{id}`, Agno's
`/a2a/.../v1/tasks:get` (a URL of its own on the endpoint's origin). A watch of one real task
and enough unknown ids to make it a large watch: the real task ends `completed`, the unknown
ones `unknown`, each by polls that went the lean way."""

from __future__ import annotations

from typing import Any

import pytest

from mcptask.session.endpoint import MANY_TASKS

from conftest import RunCli
from servers.a2a_plugin import A2AServerProcess
from servers.many_watch import POLLS_LINE


@pytest.mark.parametrize("kind", ["a2a-1.0", "a2a-1.0-rest", "a2a-0.3", "agno"])
def test_a_large_watch_polls_agents_the_lean_way(
    run_cli: RunCli, request: pytest.FixtureRequest, kind: str
) -> None:
    if kind == "agno":
        server: A2AServerProcess = request.getfixturevalue("agno_server")
        extra = ["--context-id", "c1"]
    elif kind == "a2a-1.0-rest":
        server = request.getfixturevalue("a2a_rest_server")
        extra = []
    else:
        server = request.getfixturevalue("a2a_server")
        extra = ["-p", "a2a-0.3"] if kind == "a2a-0.3" else []
    sent = run_cli("send", "hello lean", "-u", server.url, "-o", "json", *extra)
    assert sent.code == 0, sent.stderr
    made: dict[str, Any] = sent.json()
    tid = made["taskId"]
    unknown = [f"no-such-task-{i}" for i in range(MANY_TASKS)]
    r = run_cli("watch", "-u", server.url, "-o", "ndjson", "--trace", *extra, "--", tid, *unknown)
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert POLLS_LINE in r.stderr, r.stderr[-3000:]
    ends = {ln["taskId"]: ln for ln in r.lines() if ln.get("event") == "end"}
    assert ends[tid]["outcome"] == "completed", ends[tid]
    assert {ends[u]["outcome"] for u in unknown} == {"unknown"}, r.stderr[-2000:]
    if kind == "a2a-1.0-rest":
        assert f"> GET {server.rest_url.rstrip('/')}/tasks/{tid}" in r.stderr
