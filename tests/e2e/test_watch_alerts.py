"""`watch --bell` and `--notify` (issue 28, item 13): the person who went away hears the bell
(a real terminal, tmux) or sees a desktop notification (a notify-send on PATH that records what
it was asked), when the watch ends. A task on the embedded demo server, over real HTTP."""

from __future__ import annotations

import io
import os
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcptask.demo.server import DemoServer
from mcptask.output import alerts

from conftest import RunCli, clean_env

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def demo() -> Iterator[DemoServer]:
    with DemoServer(task_seconds=1.0, poll_interval_ms=250) as server:
        yield server


def start_task(run_cli: RunCli, url: str) -> str:
    r = run_cli("call", "build-report", "topic=x", "--url", url, "-o", "json")
    assert r.code == 0, r.stderr
    return str(r.json()["taskId"])


def fake_notifier(tmp_path: Path) -> tuple[Path, Path]:
    bin_dir, log = tmp_path / "bin", tmp_path / "notified"
    bin_dir.mkdir()
    script = bin_dir / "notify-send"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {log}\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return bin_dir, log


def test_notify_tells_the_desktop_how_the_watch_ended(
    run_cli: RunCli, demo: DemoServer, tmp_path: Path
) -> None:
    tid = start_task(run_cli, demo.url)
    bin_dir, log = fake_notifier(tmp_path)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    r = run_cli(
        "watch", "--notify", "--url", demo.url, "-o", "ndjson", "--", tid, env={"PATH": path}
    )
    assert r.code == 0, r.stderr
    args = log.read_text().splitlines()
    assert args[-2:] == ["mcptask watch ended", f"{tid} completed"]
    assert "\a" not in r.stderr  # no bell without --bell (and never into a pipe)


def test_notify_without_a_notifier_says_so(
    run_cli: RunCli, demo: DemoServer, tmp_path: Path
) -> None:
    tid = start_task(run_cli, demo.url)
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"PATH": str(empty)}
    r = run_cli(
        "watch", "--notify", "--bell", "--url", demo.url, "-o", "ndjson", "--", tid, env=env
    )
    assert r.code == 0, r.stderr  # the watch's outcome decides the exit status
    assert "--notify: no desktop notifier found" in r.stderr
    assert "\a" not in r.stderr  # stderr is a pipe here: no bell


@pytest.mark.timeout(120)
def test_bell_rings_on_a_real_terminal(
    run_cli: RunCli, demo: DemoServer, state_dir: Path, tmp_path: Path
) -> None:
    from test_live_view_layout import Tmux, wait_screen

    tid = start_task(run_cli, demo.url)
    raw = tmp_path / "raw"
    tmux = Tmux(80)
    try:
        env = clean_env(state_dir, {"PYTHONPATH": str(ROOT)})
        go = tmp_path / "go"
        # the command waits until the pane's output is recorded
        wait = f'while [ ! -e {go} ]; do sleep 0.1; done; exec "$0" "$@"'
        command = [sys.executable, "-m", "mcptask", "watch", "--bell", "--url", demo.url, "--", tid]
        tmux.start(["sh", "-c", wait, *command], env)
        tmux.run("pipe-pane", "-o", "-t", "t", f"cat >> {raw}")
        go.touch()
        wait_screen(tmux, lambda s: any(ln.startswith("__END__") for ln in s), "ended")
        assert "__END__ 0" in "\n".join(tmux.screen())
        deadline = time.monotonic() + 10
        while "\a" not in raw.read_text(errors="replace") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "\a" in raw.read_text(errors="replace")
    finally:
        tmux.stop()


def test_bell_only_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Tty(), io.StringIO()
    assert alerts.bell(tty) and tty.getvalue() == "\a"
    assert not alerts.bell(pipe) and pipe.getvalue() == ""
    assert alerts.summary([("t1", "completed")]) == "t1 completed"
    assert alerts.summary([("a", "completed"), ("b", "failed"), ("c", "completed")]) == (
        "3 tasks: 2 completed, 1 failed"
    )
