"""Issue 27: faults, round two. Hostile encodings, redirect loops, trickling heads, depth,
numbers, files that are not files, jq that does not end, stray processes, push silence, cut
lists, results that are data, big listings.

Every command run goes through `case()`, which counts it and checks the invariants the issue
tallies (no traceback, no internal error, no hang; `lost()`, `orphans()` for the others); with
MCPTASK_FAULT_TALLY=PATH the counts are written there as JSON when the module ends.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from servers.fault_server import (
    FaultServer,
    Run,
    base_env,
    encoded,
    endless_pages,
    gzip_bomb,
    nested,
    raw_result,
    redirect,
    run_inprocess,
    task,
    trickle_head,
)

pytestmark = pytest.mark.timeout(120)
P = ("-p", "mcp-2025-11-25")
MIB = 1024 * 1024
TOOLS = {
    "tools": [
        {
            "name": "slow",
            "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "optional"},
        }
    ]
}
TALLY: dict[str, int] = {
    "cases": 0,
    "tracebacks": 0,
    "internal_errors": 0,
    "hangs": 0,
    "data_lost": 0,
    "secrets_leaked": 0,
    "orphans": 0,
}
SHORT_READ = {"MCPTASK_READ_TIMEOUT": "1.5"}
FAKE = Path(__file__).parents[1] / "fake_stdio_server.py"


@pytest.fixture(scope="module")
def fault() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs
    path = os.environ.get("MCPTASK_FAULT_TALLY")
    if path:
        Path(path).write_text(json.dumps(TALLY))


def case(run: Run) -> Run:
    """Count one fault case and check what every case must hold."""
    TALLY["cases"] += 1
    text = run.stdout + run.stderr
    if "Traceback" in text:
        TALLY["tracebacks"] += 1
    if run.code == 1 or "internal error" in run.stderr:
        TALLY["internal_errors"] += 1
    assert "Traceback" not in text, text
    assert run.code != 1 and "internal error" not in run.stderr, run.stderr
    return run


def lost(condition: bool) -> None:
    TALLY["data_lost"] += not condition
    assert condition


def cli(
    *args: str,
    state: Path,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    stdin: Any = subprocess.DEVNULL,
) -> Run:
    """The CLI in a subprocess: a run that does not end in `timeout` is a hang."""
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "mcptask", *args],
            env=base_env(state, env),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=stdin,
        )
    except subprocess.TimeoutExpired:
        TALLY["cases"] += 1
        TALLY["hangs"] += 1
        raise
    return Run(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def cli_rss(*args: str, state: Path, env: dict[str, str] | None = None) -> tuple[Run, int]:
    """The CLI in a subprocess, and its peak resident memory in bytes (`wait4`)."""
    import tempfile

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcptask", *args],
            env=base_env(state, env),
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 90
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                TALLY["hangs"] += 1
                raise AssertionError("hang")
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        run = Run(proc.returncode, out.read(), err.read())
    return run, usage.ru_maxrss * 1024


def one_line(run: Run, code: int) -> str:
    assert run.code == code, (run.code, run.stdout[-2000:], run.stderr[-2000:])
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("mcptask: error: "), run.stderr
    return lines[0]


# -- 1: encodings --------------------------------------------------------------------------------

NOT_GZIP = b'{"jsonrpc": "2.0", "id": 1, "result": {}}'


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (encoded(body=NOT_GZIP), "not valid gzip"),
        (encoded(body=b"\x1f\x8b\x08\x00garbage-after-a-gzip-magic"), "not valid gzip"),
        (encoded(body=b"\x00\x01\x02not deflate", encoding="deflate"), "not valid deflate"),
        (encoded(body=NOT_GZIP, ctype="text/event-stream"), "not valid gzip"),
    ],
    ids=["json-not-gzip", "gzip-magic-then-junk", "not-deflate", "sse-not-gzip"],
)
@pytest.mark.parametrize("command", ["get t-1", "result t-1 --no-wait", "list", "cancel t-1"])
def test_a_body_that_is_not_its_encoding_is_a_protocol_error(
    fault: FaultServer, tmp_path: Path, answer: Any, words: str, command: str
) -> None:
    url = fault.url(get=[answer], result=[answer], list=[answer], cancel=[answer])
    r = case(run_inprocess(*command.split(), "--url", url, *P, state_dir=tmp_path))
    assert words in one_line(r, 4)


def test_good_encodings_still_decode(fault: FaultServer, tmp_path: Path) -> None:
    for encoding, layers in (("gzip", 1), ("gzip", 3), ("deflate", 1), ("deflate", 2)):
        done = task(status="completed", statusMessage=f"{encoding} x{layers}")
        url = fault.url(get=[encoded(done, encoding=encoding, layers=layers)])
        r = case(run_inprocess("get", "t-1", "--url", url, *P, "-o", "json", state_dir=tmp_path))
        assert r.code == 0, r.stderr
        lost(r.json()["statusMessage"] == f"{encoding} x{layers}")


def test_in_watch_a_bad_encoding_is_a_failure_retried(fault: FaultServer, tmp_path: Path) -> None:
    # after a good answer (an endpoint that never spoke the protocol is not retried)
    url = fault.url(get=[task(), encoded(body=NOT_GZIP), task(status="completed")])
    r = case(cli("watch", "t-1", "--url", url, *P, "-o", "ndjson", state=tmp_path))
    assert r.code == 0, r.stderr
    assert "retrying in" in r.stderr and "not valid gzip" in r.stderr
    lost(r.lines()[-1]["outcome"] == "completed")


@pytest.mark.parametrize("ctype", ["application/json", "text/event-stream"])
def test_a_gzip_bomb_is_refused_at_the_cap_in_bounded_memory(
    fault: FaultServer, tmp_path: Path, ctype: str
) -> None:
    bomb = gzip_bomb()  # 1 GiB of spaces in about 270 bytes, three layers of gzip
    url = fault.url(get=[encoded(body=bomb, layers=3, ctype=ctype)])
    r, rss = cli_rss("get", "t-1", "--url", url, *P, state=tmp_path)
    case(r)
    assert "limit (MCPTASK_MAX_BODY)" in one_line(r, 4)
    assert rss < 250 * MIB, f"peak RSS {rss // MIB} MiB"


def test_every_layer_is_capped_not_only_the_last() -> None:
    """A layer under the answer that grows past the cap is refused even when the layer above
    it would shrink again (unit: `transports.body.decoded` over httpx.MockTransport, the path
    the OAuth web client shares through `read_capped`)."""
    import asyncio
    import gzip

    import httpx

    from mcptask.errors import ProtocolError
    from mcptask.transports.http import read_capped

    inner = gzip.compress(b" " * (4 * MIB))  # 4 MiB of spaces in a few KiB
    body = gzip.compress(inner)

    class Streamed(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            for i in range(0, len(body), 1000):
                yield body[i : i + 1000]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=Streamed(), headers={"Content-Encoding": "gzip, gzip"})

    async def read(cap: int) -> bytes:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        async with client, client.stream("GET", "http://x.test/") as response:
            return await read_capped(response, cap, lambda: ProtocolError("too big"))

    assert len(asyncio.run(read(8 * MIB))) == 4 * MIB
    with pytest.raises(ProtocolError, match="too big"):
        asyncio.run(read(MIB))


# -- 2: redirect loops and other transport exceptions ----------------------------------------------


def _loop(fault: FaultServer) -> str:
    url = fault.url("loop")
    fault.scenarios[fault.sid(url)].every = redirect(url)
    return url


@pytest.mark.parametrize(
    "command",
    [
        "get t-1",
        "tools",
        "list",
        "call slow",
        "check",
        "result t-1 --no-wait",
        "cancel t-1",
        "send hello -p a2a-1.0",
        "send hello -p a2a-0.3",
        "get t-1 -p auto",
    ],
)
def test_a_redirect_loop_is_one_line(fault: FaultServer, tmp_path: Path, command: str) -> None:
    url = _loop(fault)
    args = command.split()
    if "-p" not in args:
        args += P
    r = case(run_inprocess(*args, "--url", url, state_dir=tmp_path))
    assert r.code in (4, 11), r.stderr
    if command != "check":
        assert "too many redirects" in one_line(r, 4)


@pytest.mark.parametrize(
    ("location", "words"),
    [
        ("ftp://127.0.0.1/x", "ftp"),
        ("http://[::1", "location"),
        ("http://127.0.0.1:1/mcp", "refused"),
    ],
    ids=["unsupported-scheme", "invalid-location", "refused-target"],
)
def test_a_redirect_to_nowhere_is_one_line(
    fault: FaultServer, tmp_path: Path, location: str, words: str
) -> None:
    url = fault.url(get=[redirect(location)])
    r = case(run_inprocess("get", "t-1", "--url", url, *P, state_dir=tmp_path))
    assert words in one_line(r, 4).lower()


def test_in_watch_a_redirect_loop_is_a_failure_retried(fault: FaultServer, tmp_path: Path) -> None:
    url = fault.url(get=[task(), redirect(_loop(fault)), task(status="completed")])
    r = case(cli("watch", "t-1", "--url", url, *P, "-o", "ndjson", state=tmp_path))
    assert r.code == 0, r.stderr
    assert "too many redirects" in r.stderr
    lost(r.lines()[-1]["outcome"] == "completed")


# -- 3: an answer whose head trickles ------------------------------------------------------------


@pytest.mark.parametrize("command", ["get", "cancel", "result --no-wait"])
def test_a_trickling_head_is_bounded(fault: FaultServer, tmp_path: Path, command: str) -> None:
    slow = trickle_head(every=0.2)  # about 300 bytes of head: a minute; never 0.2 s silent
    url = fault.url(get=[slow], cancel=[slow], result=[slow])
    r = case(cli(*command.split(), "t-1", "--url", url, *P, state=tmp_path, env=SHORT_READ))
    assert "timed out" in one_line(r, 4)


def test_a_trickling_head_is_bounded_by_result_timeout(fault: FaultServer, tmp_path: Path) -> None:
    slow = trickle_head(every=0.2)
    url = fault.url(get=[task(status="completed")], result=[slow])
    r = case(cli("result", "t-1", "--url", url, *P, "--timeout", "2", state=tmp_path))
    assert "--timeout 2 s elapsed" in one_line(r, 7)


def test_in_watch_a_trickling_head_is_a_failure_retried(fault: FaultServer, tmp_path: Path) -> None:
    url = fault.url(get=[trickle_head(every=0.2), task(status="completed")])
    r = case(cli("watch", "t-1", "--url", url, *P, "-o", "ndjson", state=tmp_path, env=SHORT_READ))
    assert r.code == 0, r.stderr
    assert "retrying in" in r.stderr
    lost(r.lines()[-1]["outcome"] == "completed")


# -- 4: depth --------------------------------------------------------------------------------------


def strict(text: str) -> Any:
    """JSON as `JSON.parse` reads it: NaN and Infinity are not JSON."""

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=constant)


def deep_result(depth: int) -> Any:
    return raw_result(
        '{"content": [{"type": "text", "text": "deep"}], "structuredContent": '
        + nested(depth)
        + "}"
    )


@pytest.mark.parametrize(
    "command",
    [
        "result t-1 -o json",
        "result t-1 -o pretty",
        "result t-1 --jq .",
        "watch t-1 --result -o ndjson",
        "watch t-1 --result -o json",
        "watch t-1 --result -o pretty",
    ],
)
def test_a_result_nested_950_deep_is_refused_at_the_door(
    fault: FaultServer, tmp_path: Path, command: str
) -> None:
    url = fault.url(get=[task(status="completed")], result=[deep_result(950)])
    r = case(run_inprocess(*command.split(), "--url", url, *P, state_dir=tmp_path))
    assert r.code == 4, r.stderr
    assert "nested more than 256 levels deep" in r.stdout + r.stderr
    book = tmp_path / "tasks.json"
    if book.exists():
        strict(book.read_text())  # the book is still readable


@pytest.mark.parametrize(
    ("where", "answer"),
    [
        ("get", raw_result('{"taskId": "t-1", "status": "working", "_meta": ' + nested(950) + "}")),
        ("get", raw_result('{"taskId": "t-1", "status": "working", "_meta": ' + nested(300) + "}")),
        ("list", raw_result('{"tasks": [' + nested(400) + "]}")),
    ],
    ids=["task-950", "task-300", "list-400"],
)
def test_deep_tasks_and_lists_are_refused_at_the_door(
    fault: FaultServer, tmp_path: Path, where: str, answer: Any
) -> None:
    url = fault.url(**{where: [answer]})
    command = ["get", "t-1"] if where == "get" else ["list"]
    for output in ("json", "pretty"):
        r = case(run_inprocess(*command, "--url", url, *P, "-o", output, state_dir=tmp_path))
        assert "nested more than 256 levels deep" in one_line(r, 4)


def test_a_deep_event_and_a_deep_stdio_line_are_refused(fault: FaultServer, tmp_path: Path) -> None:
    from servers.fault_server import sse

    event = '{"jsonrpc": "2.0", "id": "$", "result": ' + nested(900) + "}"
    url = fault.url(get=[sse(event)])
    r = case(run_inprocess("get", "t-1", "--url", url, *P, state_dir=tmp_path))
    assert "nested more than 256 levels deep" in one_line(r, 4)
    fake = Path(__file__).parents[1] / "fake_stdio_server.py"
    command = f"{sys.executable} {fake} --deep"
    r = case(cli("list", "--stdio", command, state=tmp_path, env=SHORT_READ))
    assert "nested more than 256 levels deep" in one_line(r, 4)


def test_a_result_within_the_bound_prints_stores_and_reads_back(
    fault: FaultServer, tmp_path: Path
) -> None:
    from servers.fault_server import rpc_error

    gone = rpc_error(-32602, "Task not found")
    done = task(status="completed")
    url = fault.url(get=[done, done, done, done, gone], result=[deep_result(250)])
    state = tmp_path / "state"
    for args in (["-o", "json"], ["-o", "pretty"], ["--jq", ".structuredContent.a.a.a | keys"]):
        r = case(run_inprocess("result", "t-1", "--url", url, *P, *args, state_dir=state))
        assert r.code == 0, r.stderr
    r = case(run_inprocess("result", "t-1", "--url", url, *P, "-o", "json", state_dir=state))
    assert r.code == 0, r.stderr
    leaf = r.json()["structuredContent"]
    for _ in range(250):
        leaf = leaf["a"]
    lost(leaf == "deep")
    # the server forgets the task: the book's copy is read back, whole
    kept = case(run_inprocess("result", "t-1", "--url", url, *P, "-o", "json", state_dir=state))
    assert kept.code == 0, kept.stderr
    assert "kept" in kept.stderr
    lost(kept.json() == r.json())


def test_jsonsafe_units() -> None:
    from mcptask.text import jsonsafe

    for text in ("NaN", "[Infinity]", '{"x": -Infinity}', "1e999", "[-1e400]", nested(300)):
        with pytest.raises(jsonsafe.Refused):
            jsonsafe.loads(text)
    with pytest.raises(ValueError):
        jsonsafe.loads("[1,")
    assert jsonsafe.loads(nested(256))["a"]["a"]
    assert jsonsafe.loads('{"n": 1e308, "m": 12345678901234567890123}')["m"] > 10**22
    with pytest.raises(jsonsafe.Refused):
        jsonsafe.dumps({"ttl": float("inf")})
    assert jsonsafe.depth_over([[[1]]], 2) and not jsonsafe.depth_over([[[1]]], 3)


# -- 5: numbers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        "result t-1 --timeout nan",
        "result t-1 --timeout inf",
        "result t-1 --timeout -1",
        "result t-1 --timeout 1e10",
        "watch t-1 --timeout nan",
        "watch t-1 --interval nan",
        "watch t-1 --interval inf",
        "watch t-1 --interval -5",
        "call slow --watch --timeout nan",
        "check --task-timeout nan",
        "check --task-timeout 1e300",
        "demo --seconds inf",
    ],
)
def test_numbers_from_flags_are_bounded(fault: FaultServer, tmp_path: Path, args: str) -> None:
    url = fault.url(tools=[TOOLS])
    argv = args.split()
    if argv[0] != "demo":
        argv += ["--url", url, *P]
    r = case(cli(*argv, state=tmp_path, timeout=30))
    assert r.code == 2, r.stderr
    flag = next(a for a in argv if a.startswith("--t") or a.startswith("--i") or a == "--seconds")
    assert flag in r.stderr and "Traceback" not in r.stderr
    assert not fault.seen(url), "a refused number must refuse before any request"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MCPTASK_READ_TIMEOUT", "1e10"),
        ("MCPTASK_READ_TIMEOUT", "1e308"),
        ("MCPTASK_CONNECT_TIMEOUT", "1e300"),
        ("MCPTASK_CONNECT_TIMEOUT", "nan"),
        ("MCPTASK_MAX_BODY", "99999999999999999999999"),
        ("MCPTASK_MAX_BODY", "-5"),
    ],
)
def test_numbers_from_the_environment_are_bounded(
    fault: FaultServer, tmp_path: Path, name: str, value: str
) -> None:
    r = case(cli("get", "t-1", "--url", fault.url(), *P, state=tmp_path, env={name: value}))
    line = one_line(r, 2)
    assert name in line and ("out of range" in line or "not a whole number" in line)


def test_a_large_but_bounded_timeout_works(fault: FaultServer, tmp_path: Path) -> None:
    env = {"MCPTASK_READ_TIMEOUT": "2592000", "MCPTASK_CONNECT_TIMEOUT": "100000"}
    r = case(cli("get", "t-1", "--url", fault.url(), *P, "-o", "json", state=tmp_path, env=env))
    assert r.code == 0, r.stderr
    r = case(
        cli(
            "result",
            "t-1",
            "--url",
            fault.url(get=[task(status="completed")]),
            *P,
            "--timeout",
            "2592000",
            "-o",
            "json",
            state=tmp_path,
        )
    )
    assert r.code == 0, r.stderr


TTL_INF = '{"taskId": "t-1", "status": "working", "ttl": 1e999, "pollInterval": 250}'
POLL_NAN = '{"taskId": "t-1", "status": "working", "ttl": 60000, "pollInterval": NaN}'


@pytest.mark.parametrize("body", [TTL_INF, POLL_NAN], ids=["ttl-1e999", "pollInterval-NaN"])
@pytest.mark.parametrize("output", ["json", "ndjson", "pretty"])
def test_numbers_from_a_server_are_refused_or_strict(
    fault: FaultServer, tmp_path: Path, body: str, output: str
) -> None:
    url = fault.url(get=[raw_result(body)], list=[raw_result('{"tasks": [' + body + "]}")])
    for command in (["get", "t-1"], ["list"]):
        r = case(run_inprocess(*command, "--url", url, *P, "-o", output, state_dir=tmp_path))
        line = one_line(r, 4)
        assert "too large for a double" in line or "NaN is not JSON" in line
    # in a watch it is one failed poll among good ones; every line printed is strict JSON
    url = fault.url(get=[task(), raw_result(body), task(status="completed")])
    r = case(run_inprocess("watch", "t-1", "--url", url, *P, "-o", output, state_dir=tmp_path))
    assert r.code == 0, r.stderr
    if output == "ndjson":
        lines = [strict(x) for x in r.stdout.splitlines()]
        lost(lines[-1]["outcome"] == "completed")
    elif output == "json":
        strict(r.stdout)


@pytest.mark.parametrize(
    "argument",
    ["x:=1e999", "x:=-1e400", "x:=NaN", "x:=[Infinity]", "x:=" + nested(300), "n=1e999"],
)
def test_numbers_in_tool_arguments_are_refused_before_the_wire(
    fault: FaultServer, tmp_path: Path, argument: str
) -> None:
    tools = {
        "tools": [
            {
                "name": "slow",
                "inputSchema": {"type": "object", "properties": {"n": {"type": "number"}}},
                "execution": {"taskSupport": "optional"},
            }
        ]
    }
    url = fault.url(tools=[tools])
    r = case(run_inprocess("call", "slow", argument, "--url", url, *P, state_dir=tmp_path))
    one_line(r, 2)
    assert not fault.seen(url, "tools/call"), "a refused argument reached the wire"


# -- 10: listing limits said aloud -----------------------------------------------------------------


def test_a_list_whose_cursors_never_end_says_it_was_cut(fault: FaultServer, tmp_path: Path) -> None:
    url = fault.url(list=[endless_pages("tasks")])
    r = case(run_inprocess("list", "--url", url, *P, "-o", "json", state_dir=tmp_path))
    assert r.code == 0, r.stderr
    assert len(r.json()["tasks"]) == 1000
    assert "the list is cut short" in r.stderr and "1000 pages" in r.stderr


@pytest.mark.parametrize("output", ["json", "pretty"])
def test_a_list_whose_cursors_loop_says_it_was_cut(
    fault: FaultServer, tmp_path: Path, output: str
) -> None:
    url = fault.url(list=[endless_pages("tasks", loop=3)])
    r = case(run_inprocess("list", "--url", url, *P, "-o", output, state_dir=tmp_path))
    assert r.code == 0, r.stderr
    assert "cut short" in r.stderr and "cursors loop" in r.stderr
    assert len(fault.seen(url, "tasks/list")) == 4  # c0 c1 c2, then c0 again: stop


def test_tools_whose_cursors_never_end_say_they_were_cut(
    fault: FaultServer, tmp_path: Path
) -> None:
    def tool(n: int) -> Any:
        return {"name": f"tool-{n}", "inputSchema": {"type": "object"}}

    url = fault.url(tools=[endless_pages("tools", loop=2, item=tool)])
    r = case(run_inprocess("tools", "--url", url, *P, "-o", "json", state_dir=tmp_path))
    assert r.code == 0, r.stderr
    assert "cut short" in r.stderr and "tools/list" in r.stderr


# -- 11: a result is data -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "payload", "code"),
    [
        ("completed", {"error": "boom"}, 0),
        ("failed", {"error": "boom"}, 5),
        ("completed", {"error": {"code": 7, "message": "the server's own field"}}, 0),
        ("completed", {"error": None}, 0),
    ],
    ids=["error-string", "failed-error-string", "error-object-as-data", "error-null"],
)
@pytest.mark.parametrize("output", ["json", "pretty"])
def test_a_kept_result_is_the_servers_data(
    fault: FaultServer, tmp_path: Path, status: str, payload: Any, code: int, output: str
) -> None:
    from servers.fault_server import rpc_error

    gone = rpc_error(-32602, "Task not found")
    done = task(status=status)
    url = fault.url(get=[done, gone], result=[payload])
    first = case(run_inprocess("result", "t-1", "--url", url, *P, "-o", "json", state_dir=tmp_path))
    assert first.code == code, first.stderr
    assert first.json() == payload
    r = case(run_inprocess("result", "t-1", "--url", url, *P, "-o", output, state_dir=tmp_path))
    assert r.code == code, r.stderr
    assert "damaged" not in r.stderr
    if output == "json":
        lost(r.json() == payload)
    else:
        lost("boom" in r.stdout or "the server's own field" in r.stdout or "null" in r.stdout)


def test_a_result_kept_by_watch_is_the_servers_data(fault: FaultServer, tmp_path: Path) -> None:
    from servers.fault_server import rpc_error

    gone = rpc_error(-32602, "Task not found")
    url = fault.url(get=[task(status="completed"), gone], result=[{"error": "boom"}])
    w = case(run_inprocess("watch", "t-1", "--url", url, *P, "-o", "ndjson", state_dir=tmp_path))
    assert w.code == 0, w.stderr
    r = case(run_inprocess("result", "t-1", "--url", url, *P, "-o", "pretty", state_dir=tmp_path))
    assert r.code == 0, r.stderr
    lost("boom" in r.stdout)


def test_an_error_that_answered_a_result_is_kept_as_mcptasks_record(
    fault: FaultServer, tmp_path: Path
) -> None:
    from servers.fault_server import rpc_error

    gone = rpc_error(-32602, "Task not found")
    url = fault.url(
        get=[task(status="failed"), gone], result=[rpc_error(-32603, "the tool crashed")]
    )
    first = case(run_inprocess("result", "t-1", "--url", url, *P, "-o", "json", state_dir=tmp_path))
    assert first.code == 5, first.stderr
    r = case(run_inprocess("result", "t-1", "--url", url, *P, "-o", "pretty", state_dir=tmp_path))
    assert r.code == 5, r.stderr
    assert "the tool crashed" in r.stdout + r.stderr


# -- 6: state files that are not files ------------------------------------------------------------


@pytest.mark.parametrize("name", ["tasks.json", "tasks.db", "credentials.json", "auth.json"])
@pytest.mark.parametrize("kind", ["fifo", "chardev", "directory"])
def test_state_files_that_are_not_files_never_block(
    fault: FaultServer, tmp_path: Path, name: str, kind: str
) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    target = state / name
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "chardev":
        os.symlink("/dev/zero", target)
    else:
        target.mkdir()
    url = fault.url()
    for command in (
        ["get", "t-1", "--url", url, *P],
        ["list", "--local"],
        ["list", "--url", url, *P],
    ):
        r = case(cli(*command, "-o", "json", state=state, timeout=30))
        assert r.code == 0, r.stderr
    if name.startswith("tasks."):  # the database, or an older mcptask's book to import
        r = case(cli("get", "t-1", "--url", url, *P, "-o", "json", state=state, timeout=30))
        assert "not a regular file" in r.stderr or "Is a directory" in r.stderr, r.stderr


def test_a_config_file_swapped_for_a_fifo_never_blocks(tmp_path: Path) -> None:
    from mcptask.errors import UsageError
    from mcptask.session import config

    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    # as if a regular file had been there when it was looked at (the race `_read` closes)
    import stat as stat_mode

    with pytest.raises(UsageError, match="not a regular file"):
        config._read(fifo, stat_mode.S_IFREG | 0o600)


@pytest.mark.parametrize("problem", ["world-writable", "group-writable", "foreign-owned"])
def test_a_state_directory_others_control_is_refused(
    fault: FaultServer, tmp_path: Path, problem: str
) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    if problem == "world-writable":
        state.chmod(0o777)
        words = "writable by others"
    elif problem == "group-writable":
        state.chmod(0o770)
        words = "writable by others"
    elif os.geteuid() == 0:
        os.chown(state, 65534, 65534)
        words = "belongs to another user"
    else:
        state = Path("/usr")  # a directory root owns: another user's, for this one
        words = "belongs to another user"
    url = fault.url(get=[task(status="completed")])
    r = case(cli("result", "t-1", "--url", url, *P, "-o", "json", state=state, timeout=30))
    assert r.code == 0, r.stderr
    assert words in r.stderr
    assert not (state / "tasks.db").exists(), "nothing is kept in a directory others control"
    # credentials are never kept there either
    from mcptask.auth.store import CredentialStore
    from mcptask.errors import AuthError

    with pytest.raises(AuthError, match=words):
        CredentialStore(directory=state)._change(state / "credentials.json", lambda d: None)


# -- 8: no process outlives mcptask ----------------------------------------------------------------


def orphans(marker: str) -> None:
    """No process with `marker` in its arguments is left (waiting a little for the exits)."""
    from test_stdio_config_auth import procs_with

    deadline = time.monotonic() + 20  # returns as soon as they are gone (a loaded machine)
    while procs_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = procs_with(marker)
    TALLY["orphans"] += len(left)
    for pid in left:  # do not leave them to the next test
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"processes outlived mcptask: {left}"


@pytest.mark.parametrize(
    ("flags", "code"),
    [
        ("--daemon", 0),
        ("--daemon --die-on tasks/list", 4),
        ("--daemon --ignore-term --ignore-eof", 0),
    ],
    ids=["answers", "dies", "ignores-term"],
)
def test_a_daemon_the_stdio_server_started_is_ended(tmp_path: Path, flags: str, code: int) -> None:
    from test_stdio_config_auth import fake_cmd, new_marker

    marker = new_marker()
    r = case(cli("list", "--stdio", fake_cmd(*flags.split(), marker=marker), state=tmp_path))
    assert r.code == code, r.stderr
    orphans(marker)


def _sid(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def test_a_daemon_is_ended_when_mcptask_is_terminated(tmp_path: Path) -> None:
    from test_stdio_config_auth import fake_cmd, new_marker, procs_with, wait_for

    marker = new_marker()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcptask",
            "list",
            "--stdio",
            fake_cmd("--daemon", "--hang", marker=marker),
        ],
        env=base_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: len({_sid(pid) for pid in procs_with(marker)} - {None}) >= 2)
        # the server, and its daemon in a session of its own
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    TALLY["cases"] += 1
    orphans(marker)


def test_a_descendant_without_the_tag_is_not_touched(tmp_path: Path) -> None:
    """Only what carries this server's tag is ended: another process of the same user (one
    of a second mcptask, say) is left alone."""
    from mcptask.transports.stdio import TAG_ENV, tagged

    env = {**os.environ, TAG_ENV: "someone-else"}
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env)
    try:
        assert other.pid in tagged("someone-else")
        assert other.pid not in tagged("mine")
        r = case(cli("list", "--stdio", f"{sys.executable} {FAKE} --daemon", state=tmp_path))
        assert r.code == 0, r.stderr
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


# -- 9: silence on a push stream -----------------------------------------------------------------


def test_a_push_stream_that_never_mentions_the_task_leaves_the_servers_pace(
    fault: FaultServer, tmp_path: Path
) -> None:
    from mcptask.scheduler.watcher import RELAXED_MIN

    from servers.fault_server import keepalive_sse

    working = task(pollInterval=500)
    url = fault.url(
        tools=[TOOLS],
        call=[{"task": working}],
        get=[working] * 4 + [task(status="completed")],
        stream=[keepalive_sse(every=0.2)],
    )
    # a task made in a session (`call`): its session's GET stream is the push feed
    r = case(cli("call", "slow", "--watch", "--url", url, *P, "-o", "ndjson", state=tmp_path))
    assert r.code == 0, r.stderr
    lost(r.lines()[-1]["outcome"] == "completed")
    assert fault.seen(url, "GET"), "the push stream was not opened"
    polls = [q.at for q in fault.seen(url, "tasks/get")]
    gaps = [b - a for a, b in itertools.pairwise(polls)]
    # at the server's 0.5 s pace, not relaxed to RELAXED_MIN (10 s) by a stream that is silent
    assert len(polls) == 5 and max(gaps) < RELAXED_MIN / 2, gaps


# -- 12: big listings --------------------------------------------------------------------------


def test_a_pretty_table_of_100000_tools_is_bounded(fault: FaultServer, tmp_path: Path) -> None:
    tools = [
        {"name": f"tool-{i}", "description": f"tool number {i}", "inputSchema": {"type": "object"}}
        for i in range(100_000)
    ]
    url = fault.url(tools=[{"tools": tools}])
    r, rss = cli_rss("tools", "--url", url, *P, "-o", "pretty", state=tmp_path)
    case(r)
    assert r.code == 0, r.stderr
    assert "tool-999" in r.stdout and "tool-1000 " not in r.stdout
    assert "99,000 more tools not shown" in r.stdout and "lists them all" in r.stdout
    assert rss < 300 * MIB, f"peak RSS {rss // MIB} MiB"
    every = case(run_inprocess("tools", "--url", url, *P, "-o", "json", state_dir=tmp_path))
    lost(len(every.json()["tools"]) == 100_000)


def test_a_pretty_list_of_5000_tasks_is_bounded(fault: FaultServer, tmp_path: Path) -> None:
    tasks = [task(taskId=f"t-{i}") for i in range(5000)]
    url = fault.url(list=[{"tasks": tasks}])
    r = case(run_inprocess("list", "--url", url, *P, "-o", "pretty", state_dir=tmp_path))
    assert r.code == 0, r.stderr
    assert "4,000 more tasks not shown" in r.stdout
    local = case(
        run_inprocess("list", "--local", "--url", url, *P, "-o", "pretty", state_dir=tmp_path)
    )
    assert local.code == 0, local.stderr  # (the book keeps the newest of them)


# -- 7: --jq that does not end ---------------------------------------------------------------------


def _with_text(marker: str) -> list[int]:
    """Processes whose command line has `marker` anywhere in an argument (the jq program)."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError):
                if marker.encode() in (d / "cmdline").read_bytes():
                    found.append(int(d.name))
    return found


@pytest.mark.parametrize("to", ["process", "group"])
@pytest.mark.parametrize(
    "command",
    [
        "servers",
        "get t-1 --url {url} -p mcp-2025-11-25",
        "watch t-1 --url {url} -o ndjson -p mcp-2025-11-25",
    ],
    ids=["servers", "get", "watch"],
)
def test_ctrl_c_ends_jq_at_once(fault: FaultServer, tmp_path: Path, to: str, command: str) -> None:
    import uuid

    marker = f"m{uuid.uuid4().hex[:10]}"
    url = fault.url(get=[task()])
    argv = [*command.format(url=url).split(), "--jq", f'last(range(1e12)) | "{marker}"']
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcptask", *argv],
        env=base_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        # jq is busy once a worker (a second process with the program in its command line)
        # exists, or, without one, once the request was answered
        deadline = time.monotonic() + 30
        while len(_with_text(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_with_text(marker)) >= 2, "jq never started"
        if to == "group":  # as a terminal's Ctrl-C: the whole foreground group
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            TALLY["hangs"] += 1
            raise
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    run = case(Run(proc.returncode, out.decode(), err.decode()))
    assert run.code == 130, run.stderr
    TALLY["orphans"] += len(_with_text(marker))
    deadline = time.monotonic() + 5
    while _with_text(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _with_text(marker), "the jq worker outlived mcptask"


def test_jq_output_is_streamed_as_produced(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcptask", "servers", "--jq", "repeat(1)"],
        env=base_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        first = [proc.stdout.readline() for _ in range(1000)]  # before the program ends: never
        assert first == [b"1\n"] * 1000
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    TALLY["cases"] += 1
    assert proc.returncode == 130


def test_jq_into_a_reader_that_goes_away_ends_quietly(tmp_path: Path) -> None:
    shell = f"{sys.executable} -m mcptask servers --jq 'repeat(1)' | head -3"
    r = subprocess.run(
        ["bash", "-o", "pipefail", "-c", shell],
        env=base_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=30,
    )
    run = case(Run(r.returncode, r.stdout, r.stderr))
    assert run.stdout == "1\n1\n1\n"
    assert run.code == 0, run.stderr


@pytest.mark.parametrize(
    ("program", "code"), [('error("boom")', 2), (".servers | length", 0), ("empty", 0)]
)
def test_jq_errors_and_values_through_the_worker(tmp_path: Path, program: str, code: int) -> None:
    r = case(cli("servers", "--jq", program, state=tmp_path))
    assert r.code == code, r.stderr
    if code == 2:
        assert 'mcptask: error: --jq error("boom"): boom' in r.stderr


@pytest.mark.parametrize("depth", [300, 1500])
def test_a_deep_agent_card_is_refused_at_the_door(
    fault: FaultServer, tmp_path: Path, depth: int
) -> None:
    from servers.fault_server import raw

    # `-p auto`: the MCP probe gets -32601 at HTTP 200 (A2A's way), so the agent card is read
    url = fault.url(stream=[raw(200, nested(depth).encode())])
    r = case(run_inprocess("get", "t-1", "--url", url, "-p", "auto", state_dir=tmp_path))
    assert r.code == 0, r.stderr  # not a card: detection goes on to MCP, which answers
    assert fault.seen(url, "GET"), "the card was not read"
