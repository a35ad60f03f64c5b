"""Signals and closed pipes: Ctrl-C and SIGTERM end a watch cleanly (its `end` line, exit 130 /
143); a reader that goes away (`| head -1`) ends mcptask quietly."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import rest_of
from servers.common import ServerProcess
from servers.fault_server import FaultServer, base_env, hang, task

pytestmark = pytest.mark.timeout(60)
P = ("-p", "mcp-2025-11-25")


@pytest.fixture(scope="module")
def fault() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs


def start(tmp_path: Path, *args: str, stderr: int = subprocess.PIPE) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "mcptask", *args],
        env=base_env(tmp_path / "state"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("moment", ["between-polls", "mid-request"])
def test_a_signal_ends_a_watch_with_its_end_line(
    fault: FaultServer, tmp_path: Path, sig: signal.Signals, code: int, moment: str
) -> None:
    answers = [task(pollInterval=5000)] if moment == "between-polls" else [task(), hang()]
    url = fault.url(get=answers)
    p = start(tmp_path, "watch", "t-1", "--url", url, *P, "-o", "ndjson")
    assert p.stdout is not None
    first = json.loads(p.stdout.readline())
    assert first["event"] == "status"
    time.sleep(0.5)  # a poll is in flight (mid-request) or not
    p.send_signal(sig)
    out, err = rest_of(p, 10)
    assert p.returncode == code, err
    last = json.loads(out.splitlines()[-1])
    assert last == {"event": "end", "taskId": "t-1", "outcome": "interrupted", "exitCode": code}
    assert "Traceback" not in err and "Exception" not in err, err


def test_ctrl_c_during_a_one_shot_command(fault: FaultServer, tmp_path: Path) -> None:
    url = fault.url(get=[hang()])
    p = start(tmp_path, "get", "t-1", "--url", url, *P)
    deadline = time.monotonic() + 10
    while not fault.seen(url, "tasks/get") and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=10)
    assert p.returncode == 130
    assert out == ""
    assert err == "mcptask: error: interrupted\n"


def changing(n: int) -> list[object]:
    return [task(statusMessage=f"step {i}") for i in range(n)] + [task(status="completed")]


@pytest.mark.parametrize("mode", ["ndjson", "json", "pretty"])
def test_a_reader_that_goes_away_ends_mcptask_quietly(
    fault: FaultServer, tmp_path: Path, mode: str
) -> None:
    url = fault.url(get=changing(6))
    p = start(tmp_path, "watch", "t-1", "--url", url, *P, "-o", mode)
    assert p.stdout is not None
    if mode == "ndjson":
        p.stdout.readline()  # read one line, like `head -1`
    p.stdout.close()  # the reader goes away
    assert p.wait(timeout=20) == 0
    assert p.stderr is not None
    err = p.stderr.read()
    p.stderr.close()
    assert err == "", err


def test_pipe_to_head(fault: FaultServer, tmp_path: Path) -> None:
    """The shell form, stderr included: `mcptask watch ... 2>&1 | head -1`."""
    url = fault.url(get=changing(6))
    cmd = (
        f"{sys.executable} -m mcptask watch t-1 --url {url} -p mcp-2025-11-25 -o ndjson 2>&1"
        " | head -1; echo status=${PIPESTATUS[0]}"
    )
    r = subprocess.run(
        ["bash", "-c", cmd], env=base_env(tmp_path), capture_output=True, text=True, timeout=30
    )
    first, status = r.stdout.splitlines()
    assert json.loads(first)["statusMessage"] == "step 0"
    assert status == "status=0"
    assert r.stderr == ""


def test_ctrl_c_during_a_plain_call_says_whether_the_server_was_told(
    everything_server: ServerProcess, fault: FaultServer, state_dir: Path
) -> None:
    """Ctrl-C while a plain call connects (its `initialize` hangs) or while it runs (its
    progress comes): exit 130, no traceback nor asyncio dump, and a line that says what
    became of the call (not sent; or whether `notifications/cancelled` went out)."""
    from conftest import clean_env

    args = ["call", "trigger-long-running-operation", "duration=20", "steps=40", "-o", "ndjson"]
    hung = fault.url(init=[hang()])
    for n in range(8):
        connecting = n < 3
        url = hung if connecting else everything_server.url
        extra = ["-p", "mcp-2025-11-25"] if connecting else []
        before = len(fault.seen(hung, "initialize"))
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcptask", *args, "--url", url, *extra],
            env=clean_env(state_dir, None),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        if connecting:  # an event, not a delay: the server holds the initialize
            fault.wait_seen(hung, "initialize", before + 1)
        else:  # the call is out: its first progress came
            assert proc.stdout is not None
            proc.stdout.readline()
            time.sleep(0.05 * n)
        proc.send_signal(signal.SIGINT)
        _, err = rest_of(proc, 30)
        stderr = err.decode()
        assert proc.returncode == 130, stderr
        assert "Traceback" not in stderr and "never retrieved" not in stderr, stderr
        if connecting:
            assert "before the call was sent" in stderr, stderr
        else:
            assert "notifications/cancelled" in stderr or "may still run it" in stderr, stderr


def test_ctrl_c_at_start_up_is_130_without_a_traceback(tmp_path: Path) -> None:
    """SIGINT while Python imports mcptask and Typer (`timeout -s INT 0.2 mcptask watch ID`):
    exit 130, never a traceback through mcptask's (or Typer's) code. The first milliseconds
    belong to Python itself, whose own start-up no program can guard: a run interrupted
    there ends by the signal (-2), and is not counted."""
    ours = 0
    for n in range(12):
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcptask", "watch", "some-task"],
            env=base_env(tmp_path),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        time.sleep(0.03 + 0.04 * n)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        stderr = err.decode()
        if "Traceback" in stderr or proc.returncode == -signal.SIGINT:
            # only Python's own start-up (runpy, site, the stdlib) may be seen interrupted
            assert "/mcptask/" not in stderr and "/typer/" not in stderr, stderr
            continue
        ours += 1
        assert proc.returncode in (130, 2), stderr  # 2: it ran (no such task in the book)


def test_ctrl_c_once_mcptask_is_importing_exits_130() -> None:
    """The handler from mcptask's first line: SIGINT right after `import mcptask` (as the
    program) is exit 130, silent, deterministic."""
    code = (
        "import sys; sys.argv[0] = 'mcptask'\n"
        "import os, signal, mcptask\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "signal.pause()\n"  # waits for the signal itself, no clock
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 130 and proc.stderr == "", proc.stderr


def test_ctrl_c_while_typer_starts_is_caught_by_main(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcptask.cli.app as app

    def interrupted(_args: list[str]) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(app, "_app_for", interrupted)
    from mcptask.cli import main

    assert main(["watch", "some-task"]) == 130
