"""OAuth against a real task server: fastmcp 3.4.11 behind its own OAuth (in-memory
authorization server: dynamic registration, PKCE, refresh-token rotation; access tokens live
3 s). `$BROWSER` is tests/servers/browser.sh, which follows the authorization redirects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import RunCli, assert_one_line_error, rest_of
from servers.common import ServerProcess
from servers.conformance import BROWSER
from servers.plugin import OAUTH_TOKEN_SECONDS

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def env() -> dict[str, str]:
    return {"BROWSER": str(BROWSER), "MCPTASK_KEYRING": "off"}


def _secrets(state_dir: Path) -> list[str]:
    """Every token and secret the credentials file holds."""
    data = json.loads((state_dir / "credentials.json").read_text())
    out = []
    for creds in data["servers"].values():
        out += [creds["accessToken"], creds.get("refreshToken", "")]
        out.append(creds["client"].get("client_secret", ""))
    return [s for s in out if s]


def test_login_then_call_watch_result_with_refresh(
    run_cli: RunCli,
    fastmcp3_oauth_server: ServerProcess,
    state_dir: Path,
    env: dict[str, str],
) -> None:
    url = fastmcp3_oauth_server.url
    refused = run_cli("call", "quick", "x=2", "--url", url, "-o", "json", env=env)
    assert refused.code == 3
    assert_one_line_error(refused)
    assert f"mcptask auth login --url {url}" in refused.stderr
    assert "resource metadata:" in refused.stderr

    login = run_cli("auth", "login", "--url", url, "-o", "json", env=env)
    assert login.code == 0, login.stderr
    assert login.json()["refreshable"] is True
    assert login.json()["client"]["source"] == "registered"
    first = set(_secrets(state_dir))

    seconds = OAUTH_TOKEN_SECONDS * 2 + 1  # the watch outlives at least two access tokens
    started = run_cli(
        "call", "slow_echo", "text=hi", f"seconds={seconds}", "--url", url, "-o", "json", env=env
    )
    assert started.code == 0, started.stderr
    task_id = started.json()["taskId"]

    watched = run_cli("watch", "--url", url, "-o", "ndjson", "--trace", "--", task_id, env=env)
    assert watched.code == 0, watched.stderr
    events = watched.lines()
    assert events[-1]["event"] == "end" and events[-1]["outcome"] == "completed"
    assert not [e for e in events if e.get("event") not in ("status", "end")]  # no hiccup
    assert "/token" in watched.stderr and "grant_type=refresh_token" in watched.stderr

    result = run_cli("result", "-o", "json", "--", task_id, env=env)  # the task book knows where
    assert result.code == 0, result.stderr
    assert result.json()["structuredContent"] == {"result": "echo: hi"}

    # the refresh token rotated, and no token or secret is anywhere but the credentials file
    now = set(_secrets(state_dir))
    assert now != first
    seen = first | now
    for path in state_dir.iterdir():
        if path.name != "credentials.json" and path.is_file():
            text = path.read_bytes().decode("utf-8", "replace")
            assert not [s for s in seen if s in text], path.name
    assert not [s for s in seen if s in watched.stderr + watched.stdout]
    names = {p.name for p in state_dir.iterdir() if not p.name.endswith(".lock")}
    # SQLite removes the -wal and -shm files when the last connection closes
    assert (
        {"credentials.json", "tasks.db"}
        <= names
        <= {
            "credentials.json",
            "tasks.db",
            "tasks.db-shm",
            "tasks.db-wal",
        }
    )


def test_login_on_demand_status_token_logout(
    run_cli: RunCli,
    fastmcp3_oauth_server: ServerProcess,
    state_dir: Path,
    env: dict[str, str],
) -> None:
    url = fastmcp3_oauth_server.url
    listed = run_cli("list", "--url", url, "--login", "-o", "json", env=env)
    assert listed.code == 0, listed.stderr
    assert "opening the browser" in listed.stderr
    assert "tasks" in listed.json()

    status = run_cli("auth", "status", "-o", "json", env=env)
    assert status.code == 0, status.stderr
    (entry,) = status.json()["servers"]
    assert entry["server"] == url and entry["issuer"].startswith(url.removesuffix("/mcp"))
    assert not [s for s in _secrets(state_dir) if s in status.stdout]

    token = run_cli("auth", "token", "--url", url, env=env)
    assert token.code == 0, token.stderr
    assert token.stdout.strip() in _secrets(state_dir)

    out = run_cli("auth", "logout", "--url", url, env=env)
    assert out.code == 0 and "logged out" in out.stderr
    # registered with the method fastmcp lists first (the form), which its revocation
    # endpoint reads (issue 26, item 6)
    assert "the authorization server revoked them" in out.stderr
    gone = run_cli("auth", "token", "--url", url, env=env)
    assert gone.code == 3
    assert_one_line_error(gone)
    assert "not logged in" in gone.stderr


def test_an_explicit_token_wins_over_stored_credentials(
    run_cli: RunCli, fastmcp3_oauth_server: ServerProcess, env: dict[str, str]
) -> None:
    url = fastmcp3_oauth_server.url
    assert run_cli("auth", "login", "--url", url, env=env).code == 0
    wrong = run_cli("list", "--url", url, "-o", "json", env={**env, "MCPTASK_TOKEN": "wrong-one"})
    assert wrong.code == 3
    assert_one_line_error(wrong)
    assert "auth login" not in wrong.stderr and "wrong-one" not in wrong.stderr


def test_auth_commands_refuse_stdio_and_say_so(run_cli: RunCli, env: dict[str, str]) -> None:
    r = run_cli("auth", "login", "--stdio", "true", env=env)
    assert r.code == 2
    assert_one_line_error(r)
    assert "HTTP servers" in r.stderr
    empty = run_cli("auth", "status", "-o", "json", env=env)
    assert empty.code == 0 and empty.json()["servers"] == []


def _pty_answering(
    args: list[str], env: dict[str, str], prompt: bytes, answer: bytes, timeout: float = 60
) -> tuple[int, str]:
    """mcptask on a pseudo-terminal (stdin, stdout, stderr); `answer` is typed when `prompt`
    shows. Returns the exit status and what the terminal showed."""
    import os
    import pty
    import select
    import subprocess
    import sys
    import time

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcptask", *args], stdin=slave, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    seen, answered = b"", False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            seen += data
            if not answered and prompt in seen:
                os.write(master, answer)
                answered = True
        elif proc.poll() is not None:
            break
    code = proc.wait(timeout=10)
    os.close(master)
    return code, seen.decode("utf-8", "replace")


def test_a_terminal_is_offered_to_log_in(
    fastmcp3_oauth_server: ServerProcess, state_dir: Path, env: dict[str, str]
) -> None:
    from conftest import clean_env

    url = fastmcp3_oauth_server.url
    full = clean_env(state_dir, env)
    code, shown = _pty_answering(["list", "--url", url], full, b"log in now? [Y/n]", b"y\r")
    assert code == 0, shown
    assert "asks for authorization" in shown and "opening the browser" in shown
    code, shown = _pty_answering(["list", "--url", url], full, b"never asked", b"")
    assert code == 0, shown  # logged in now: no question


def test_no_browser_takes_the_pasted_redirect(
    fastmcp3_oauth_server: ServerProcess, state_dir: Path, env: dict[str, str]
) -> None:
    """`--no-browser`: the URL is printed; the address the browser ended on, pasted on stdin,
    completes the login (the redirect never reaches the listener here)."""
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    from conftest import clean_env

    url = fastmcp3_oauth_server.url
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcptask", "auth", "login", "--url", url, "--no-browser"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=clean_env(state_dir, {"MCPTASK_KEYRING": "off"}),
        text=True,
    )
    assert proc.stderr is not None and proc.stdin is not None
    authorize = ""
    for line in proc.stderr:
        if line.strip().startswith("http"):
            authorize = line.strip()
            break
    assert "/authorize?" in authorize

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open(authorize, timeout=10)
        raise AssertionError("the authorization server did not redirect")
    except urllib.error.HTTPError as exc:  # the 302 itself
        landed = exc.headers["Location"]
    assert "code=" in landed
    _, err = rest_of(proc, 60, landed + "\n")
    assert proc.returncode == 0, err
    assert "logged in" in err


def test_login_to_a_server_that_asks_for_nothing(
    run_cli: RunCli, fastmcp3_server: ServerProcess, env: dict[str, str]
) -> None:
    r = run_cli("auth", "login", "--url", fastmcp3_server.url, env=env)
    assert r.code == 3
    assert_one_line_error(r)
    assert "did not ask for authorization" in r.stderr


def test_login_trace_shows_no_secret(
    run_cli: RunCli,
    fastmcp3_oauth_server: ServerProcess,
    state_dir: Path,
    env: dict[str, str],
) -> None:
    r = run_cli("auth", "login", "--url", fastmcp3_oauth_server.url, "--trace", env=env)
    assert r.code == 0, r.stderr
    assert "POST" in r.stderr and "/token" in r.stderr and "/register" in r.stderr
    leaked = [s for s in _secrets(state_dir) if s in r.stderr + r.stdout]
    assert not leaked
    assert "code=[redacted]" in r.stderr and "code_verifier=[redacted]" in r.stderr
