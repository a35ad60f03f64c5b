"""README's first section takes a new user from the demo to a real server (issue 28, item 12):
its commands run as printed (the reference server from npm is the suite's own copy of the same
package, on a free port instead of 3001; `mcptask` is this checkout's), and `demo --serve`
answers the commands shown against it."""

from __future__ import annotations

import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import RunCli, clean_env, rest_of
from servers.mcp_envs import EVERYTHING_SPEC

ROOT = Path(__file__).resolve().parents[2]
README_URL = "http://127.0.0.1:3001/mcp"


def first_section_blocks() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Try it", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```\n(.*?)```", section, flags=re.S)
    return [[ln for ln in b.splitlines() if ln.strip()] for b in blocks]


def words(line: str) -> list[str]:
    return shlex.split(line.split("  #", 1)[0])


def test_the_three_commands(run_cli: RunCli, everything_server: object) -> None:
    install, server, call = first_section_blocks()[0]
    # 1: install into .venv, activate it (mcptask on PATH), the demo
    assert install.startswith("python3 -m venv .venv && .venv/bin/pip install . && ")
    assert ". .venv/bin/activate" in install
    demo = words(install.rsplit("&&", 1)[1])
    assert demo[0] == "mcptask"
    r = run_cli(*demo[1:], "--seconds", "1")
    assert r.code == 0, r.stderr
    assert "completed" in r.stdout
    # 2: the reference server, the version the suite runs, on 3001 (its default port)
    assert words(server) == ["npx", "-y", EVERYTHING_SPEC, "streamableHttp", "&"]
    # 3: a task there, watched to its end
    call_words = words(call)
    assert call_words[0] == "mcptask" and README_URL in call_words
    url = everything_server.url  # type: ignore[attr-defined]
    r = run_cli(*[url if w == README_URL else w for w in call_words[1:]])
    assert r.code == 0, r.stderr
    assert '"outcome": "completed"' in r.stdout


@pytest.mark.timeout(120)
def test_the_demo_server_stays_up_for_the_commands_shown(state_dir: Path, run_cli: RunCli) -> None:
    serve, call, watch = first_section_blocks()[1]
    assert words(serve) == ["mcptask", "demo", "--serve", "&"]
    env = clean_env(state_dir, {"PYTHONPATH": str(ROOT)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcptask", "demo", "--serve", "--port", "0", "--seconds", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()  # its URL: the one line on stdout
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url), url
        r = run_cli(*[url if w == README_URL else w for w in words(call)[1:]], "-o", "json")
        assert r.code == 0, r.stderr
        task_id = r.json()["taskId"]
        first, second = (words(part) for part in watch.split("&&"))
        for step in (first, second):
            r = run_cli(*[task_id if w == "TASK_ID" else w for w in step[1:]])
            assert r.code == 0, r.stderr
        assert "Report on tides" in r.stdout
        proc.send_signal(signal.SIGINT)  # Ctrl-C stops it: exit 0, no error
        _, err = rest_of(proc, 30)
        assert proc.returncode == 0, err
        assert "error" not in err and "Try:" in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_on_a_taken_port_says_what_to_do(run_cli: RunCli, everything_server: object) -> None:
    port = str(everything_server.port)  # type: ignore[attr-defined]
    r = run_cli("demo", "--serve", "--port", port)
    assert r.code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in r.stderr and "--port 0" in r.stderr


def test_serve_prints_text_not_json(run_cli: RunCli) -> None:
    r = run_cli("demo", "--serve", "-o", "json")
    assert r.code == 2
    assert "--serve prints the server's URL as one line of text" in r.stderr
