"""Shared fixtures. Real servers come from `servers/` (started on 127.0.0.1, free ports);
`run_cli` runs the real mcptask CLI in a subprocess with a private state directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = [
    "servers.plugin",
    "servers.a2a_plugin",
    "servers.conformance_plugin",
    "servers.phoenix_plugin",
]


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def lines(self) -> list[Any]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


RunCli = Callable[..., CliResult]


@pytest.fixture(autouse=True)
def _no_held_secrets() -> Any:
    """Secrets a test's transports held (`redact.hold`) are scrubbed from everything printed
    in the process: forget them after each test, so that they never alter another's text."""
    yield
    from mcptask.text import redact

    redact.release_all()


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    d = tmp_path / "state"
    d.mkdir()
    return d


#: a proxy of the machine's is not the tests' (tests/e2e/test_proxy_tls.py sets its own): every
#: server the suite starts is on 127.0.0.1
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
for _name in PROXY_VARIABLES:
    os.environ.pop(_name, None)
    os.environ.pop(_name.upper(), None)


def clean_env(state_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    # nor a trace or an OTLP backend of the machine's (a CI job's): each test names its own
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MCPTASK_", "OTEL_")) and k not in ("TRACEPARENT", "TRACESTATE")
    }
    env["MCPTASK_STATE_DIR"] = str(state_dir)
    env["MCPTASK_CONFIG"] = str(state_dir / "no-config.toml")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(extra or {})
    return env


@pytest.fixture
def run_cli(state_dir: Path) -> RunCli:
    def run(
        *args: str,
        env: dict[str, str] | None = None,
        timeout: float = 90,
        input: str | None = None,
    ) -> CliResult:
        proc = subprocess.run(
            [sys.executable, "-m", "mcptask", *args],
            env=clean_env(state_dir, env),
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
        return CliResult(proc.returncode, proc.stdout, proc.stderr)

    return run


def ok(r: CliResult, *codes: int) -> CliResult:
    """`r`, which ended with one of `codes` (default 0) and no traceback."""
    assert r.code in (codes or (0,)), (r.code, r.stdout[-2000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr, r.stderr
    return r


def rest_of(
    proc: subprocess.Popen[Any], timeout: float, input: str | bytes | None = None
) -> tuple[Any, Any]:
    """What a process still writes to its piped stdout and stderr, up to its end (like
    `communicate(timeout=...)`, which reads the pipes' file descriptors directly and so loses
    whatever an earlier `readline()` already took into the pipe's buffer: lines written in
    the same chunk as the one read). `input`: written to its stdin, which is then closed.
    Past `timeout` the process is killed, and a pipe still held open then (by a process it
    started) fails the wait too: `TimeoutExpired` either way. The pipes are closed after."""
    import threading
    import time

    deadline = time.monotonic() + timeout
    got: dict[str, Any] = {}
    pipes = {"out": proc.stdout, "err": proc.stderr}

    def read(name: str) -> None:
        got[name] = pipes[name].read()  # type: ignore[union-attr]

    readers = [
        threading.Thread(target=read, args=(name,), daemon=True)
        for name, pipe in pipes.items()
        if pipe is not None
    ]
    for reader in readers:
        reader.start()
    if input is not None and proc.stdin is not None:
        try:
            proc.stdin.write(input)
            proc.stdin.close()
        except BrokenPipeError:
            pass  # it ended before reading: its output says why
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    for reader in readers:
        reader.join(max(deadline - time.monotonic(), 1.0))
    if any(reader.is_alive() for reader in readers):
        raise subprocess.TimeoutExpired(proc.args, timeout)
    for pipe in pipes.values():
        if pipe is not None:
            pipe.close()
    return got.get("out"), got.get("err")


def assert_one_line_error(result: CliResult) -> None:
    """Bad input ends in one clear line on stderr: no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("mcptask: error: "), result.stderr


class VirtualTime:
    """A clock that moves only when the command sleeps: a watch's back-off (1 + 2 + 4 + 8 s
    before it gives up) takes no real time. Requests still run on the real clock."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        import asyncio

        self.slept.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


def watch_in_virtual_time(
    task_ids: list[str], url: str, protocol: str, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, Any, VirtualTime]:
    """`mcptask watch IDS --url URL -p PROTOCOL -o json` in this process on a `VirtualTime`:
    returns the exit status, the JSON printed and the clock (its `slept` are the waits)."""
    import asyncio
    import io

    from mcptask.commands.watch import WatchOptions, run_watch
    from mcptask.output.console import Output
    from mcptask.session.context import Context
    from mcptask.session.targets import GlobalOptions
    from mcptask.session.terminal import Environment

    for name in [k for k in os.environ if k.startswith("MCPTASK_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("MCPTASK_STATE_DIR", str(state_dir))
    monkeypatch.setenv("MCPTASK_CONFIG", str(state_dir / "no-config.toml"))
    time = VirtualTime()
    stdout, stderr = io.StringIO(), io.StringIO()
    out = Output(mode="json", stdout=stdout, stderr=stderr)
    g = GlobalOptions(url=url, protocol=protocol, output="json")
    ctx = Context(g, out, clock=time.clock, sleep=time.sleep, env=Environment())

    async def main() -> int:
        try:
            return await run_watch(WatchOptions(list(task_ids)), ctx)
        finally:
            await ctx.aclose()

    code = asyncio.run(main())
    return code, json.loads(stdout.getvalue()), time
