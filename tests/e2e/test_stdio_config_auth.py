"""Reaching servers the way users have them configured: stdio, config files, named servers,
and the auth plumbing (token only to the target's origin, secrets never printed)."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcptask.demo.server import DemoServer, _Handler, _HTTPServer
from mcptask.errors import UsageError
from mcptask.session.targets import GlobalOptions

from conftest import CliResult, RunCli, assert_one_line_error, clean_env, rest_of
from servers.common import ServerProcess

FAKE = Path(__file__).parents[1] / "fake_stdio_server.py"
TOKEN = "s3cret-token"
API_KEY = "k3y-secret-value"


# -- helpers ------------------------------------------------------------------------------------


def new_marker() -> str:
    return f"mcptask-test-{uuid.uuid4().hex[:12]}"


def procs_with(marker: str) -> list[int]:
    """Live processes having `marker` as one of their arguments (mcptask itself only has it
    inside its --stdio argument, so it does not count)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            args = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in args:
            found.append(int(d.name))
    return found


def assert_no_child(marker: str) -> None:
    assert procs_with(marker) == [], f"a server outlived mcptask ({marker})"


def fake_cmd(*args: str, marker: str) -> str:
    return shlex.join([sys.executable, str(FAKE), *args, marker])


def everything(cmd: list[str], marker: str) -> str:
    return shlex.join([*cmd, marker])  # server-everything ignores arguments after "stdio"


#: mcptask with SIGINT at its default, as a command typed at a terminal has it, whatever this
#: run inherited: a suite started in the background of a script (`./scripts/test &`) has
#: SIGINT ignored and passes that on, and mcptask then keeps ignoring it (as it should)
DEFAULT_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, '-m', 'mcptask', *sys.argv[1:]])"
)


def spawn_cli(
    state_dir: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", DEFAULT_SIGINT, *args],
        env=clean_env(state_dir, env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def no_secret(result: CliResult, *secrets: str) -> None:
    for s in secrets:
        assert s not in result.stdout, result.stdout
        assert s not in result.stderr, result.stderr


# -- stdio ----------------------------------------------------------------------------------------


def test_stdio_call_watch_completes_and_leaves_no_child(
    run_cli: RunCli, everything_stdio_cmd: list[str]
) -> None:
    marker = new_marker()
    cmd = everything(everything_stdio_cmd, marker)
    r = run_cli(
        "call", "simulate-research-query", "topic=x", "--watch", "-o", "ndjson", "--stdio", cmd
    )
    assert r.code == 0, r.stderr
    lines = r.lines()
    assert lines[-1]["event"] == "end" and lines[-1]["outcome"] == "completed"
    assert any(line.get("status") == "working" for line in lines[:-1])
    assert_no_child(marker)
    # stdio tasks are kept in the task book (under the command line), ended
    local = run_cli("list", "--local", "-o", "json", "--stdio", cmd)
    assert local.code == 0
    assert [t["status"] for t in local.json()["tasks"]] == ["completed"]
    assert local.json()["tasks"][0]["server"] == "stdio:" + cmd


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_stdio_interrupted_watch_ends_cleanly(
    state_dir: Path, everything_stdio_cmd: list[str], sig: int, code: int
) -> None:
    marker = new_marker()
    cmd = everything(everything_stdio_cmd, marker)
    # no --watch: over stdio, call implies it
    proc = spawn_cli(
        state_dir, "call", "simulate-research-query", "topic=x", "-o", "ndjson", "--stdio", cmd
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert json.loads(first)["event"] == "status", first
    assert procs_with(marker), "the server should be running while the task is watched"
    # at once: watch installs its signal handlers before the first line (issue 23, defect 2)
    proc.send_signal(sig)
    rest, err = rest_of(proc, 30)
    lines = [json.loads(x) for x in (first + rest).splitlines() if x.strip()]
    assert proc.returncode == code, err
    assert lines[-1]["event"] == "end" and lines[-1]["outcome"] == "interrupted", (lines[-1], err)
    assert lines[-1]["exitCode"] == code
    assert_no_child(marker)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_stdio_interrupted_request_stops_the_server(state_dir: Path, sig: int) -> None:
    """Outside watch (a request that never gets an answer), Ctrl-C and SIGTERM still stop the
    server, even one that ignores its stdin closing and SIGTERM."""
    marker = new_marker()
    hung = state_dir / "hung"
    cmd = fake_cmd("--hang", "--hung", str(hung), "--ignore-eof", "--ignore-term", marker=marker)
    # a mcptask that does not exit says where it stands (faulthandler, on SIGABRT)
    proc = spawn_cli(
        state_dir, "list", "-o", "json", "--stdio", cmd, env={"PYTHONFAULTHANDLER": "1"}
    )
    wait_for(hung.exists)  # the server has tasks/list (and will never answer it)
    proc.send_signal(sig)
    try:
        _out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        # how the signal stood: the process's blocked, ignored, caught and pending sets, and
        # what it inherited from this test's thread
        with open(f"/proc/{proc.pid}/status") as f:
            sigs = [line.strip() for line in f if line.startswith(("Sig", "ShdPnd"))]
        here = (signal.getsignal(sig), sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
        proc.send_signal(signal.SIGABRT)
        _out, err = proc.communicate(timeout=30)
        raise AssertionError(
            f"mcptask did not exit on {sig!r} ({sigs}; the test's handler and mask: {here}):\n"
            f"{err[-6000:]}"
        ) from None
    if sig == signal.SIGINT:
        assert proc.returncode == 130, err
        assert err.strip().splitlines()[-1] == "mcptask: error: interrupted"
    else:
        assert proc.returncode in (-signal.SIGTERM, 143), err
    assert "Traceback" not in err
    assert_no_child(marker)


def test_stdio_server_that_ignores_eof_and_sigterm_is_killed(run_cli: RunCli) -> None:
    marker = new_marker()
    started = time.monotonic()
    r = run_cli(
        "list", "-o", "json", "--stdio", fake_cmd("--ignore-eof", "--ignore-term", marker=marker)
    )
    assert r.code == 0, r.stderr
    assert r.json() == {"tasks": []}
    assert time.monotonic() - started < 40  # bounded (slack for a loaded machine)
    assert_no_child(marker)


def test_stdio_bad_command_is_one_line_exit_4(run_cli: RunCli) -> None:
    r = run_cli("list", "--stdio", "mcptask-no-such-command --flag")
    assert r.code == 4
    assert_one_line_error(r)
    assert "command not found: mcptask-no-such-command" in r.stderr


def test_stdio_server_that_dies_shows_its_last_stderr_lines(run_cli: RunCli) -> None:
    marker = new_marker()
    r = run_cli("list", "--stdio", fake_cmd("--die-on", "tasks/list", marker=marker))
    assert r.code == 4
    assert_one_line_error(r)
    assert "exited with status 3" in r.stderr
    assert "fatal 1: cannot handle tasks/list | fatal 2" in r.stderr
    assert "fatal 3" in r.stderr
    assert_no_child(marker)


def test_stdio_trace_shows_messages_and_stderr(run_cli: RunCli) -> None:
    marker = new_marker()
    r = run_cli(
        "list", "-o", "json", "--trace", "--stdio", fake_cmd("--banner", "--ping", marker=marker)
    )
    assert r.code == 0, r.stderr
    assert r.json() == {"tasks": []}
    assert '"method": "initialize"' in r.stderr
    assert "! stderr: fake server starting" in r.stderr
    assert "(not JSON, ignored) Welcome to the fake server!" in r.stderr
    # the server's ping during tasks/list was answered (else the fake server exits 5)
    assert '"id": "srv-1", "result": {}' in r.stderr


def test_stdio_child_gets_a_minimal_environment(run_cli: RunCli, tmp_path: Path) -> None:
    dump = tmp_path / "env.json"
    marker = new_marker()
    r = run_cli(
        "list",
        "-o",
        "json",
        "-H",
        "X-Api-Key: nothing",
        "--stdio",
        fake_cmd("--dump", str(dump), marker=marker),
        env={"MCPTASK_TOKEN": TOKEN, "SOME_SECRET": "x", "MCPTASK_OUTPUT": "json"},
    )
    assert r.code == 0, r.stderr
    warnings = [ln for ln in r.stderr.splitlines() if "warning" in ln]
    assert len(warnings) == 1
    assert "-H headers and the token in MCPTASK_TOKEN mean nothing over stdio" in warnings[0]
    env = json.loads(dump.read_text())["env"]
    # and mcptask's mark, which finds the server's descendants when it stops (transports/stdio)
    assert set(env) <= {
        "HOME",
        "LOGNAME",
        "PATH",
        "SHELL",
        "TERM",
        "USER",
        "LC_CTYPE",
        "MCPTASK_STDIO_TAG",
    }
    assert TOKEN not in json.dumps(env)


@pytest.mark.parametrize("command", ["get", "watch", "result", "cancel"])
def test_stdio_task_commands_explain_why_not(run_cli: RunCli, tmp_path: Path, command: str) -> None:
    dump = tmp_path / "started.json"
    r = run_cli(command, "abc123", "--stdio", fake_cmd("--dump", str(dump), marker=new_marker()))
    assert r.code == 2
    assert_one_line_error(r)
    assert "tasks die with its process" in r.stderr
    assert not dump.exists(), "nothing should be spawned for a command that cannot work"


# -- config files ---------------------------------------------------------------------------------


def test_mcpservers_json_url_and_command_entries(
    run_cli: RunCli,
    tmp_path: Path,
    everything_server: ServerProcess,
    everything_stdio_cmd: list[str],
) -> None:
    marker = new_marker()
    cfg = tmp_path / "claude_desktop_config.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "web": {"url": everything_server.url, "headers": {"X-Team": "blue"}},
                    "local": {
                        "command": everything_stdio_cmd[0],
                        "args": [*everything_stdio_cmd[1:], marker],
                        "env": {"DEBUG": "0"},
                    },
                }
            }
        )
    )
    web = run_cli("list", "-s", "web", "-o", "json", "--config", str(cfg))
    assert web.code == 0, web.stderr
    assert isinstance(web.json()["tasks"], list)
    local = run_cli("list", "-s", "local", "-o", "json", env={"MCPTASK_CONFIG": str(cfg)})
    assert local.code == 0, local.stderr
    assert local.json() == {"tasks": []}
    assert_no_child(marker)
    # MCPTASK_SERVER picks one too
    by_env = run_cli(
        "list", "-o", "json", env={"MCPTASK_CONFIG": str(cfg), "MCPTASK_SERVER": "web"}
    )
    assert by_env.code == 0, by_env.stderr


def test_vscode_servers_format(run_cli: RunCli, tmp_path: Path) -> None:
    vscode = tmp_path / "proj" / ".vscode"
    vscode.mkdir(parents=True)
    dump = tmp_path / "env.json"
    marker = new_marker()
    cfg = vscode / "mcp.json"
    cfg.write_text(
        "{\n"
        "  // VS Code writes JSON with comments\n"
        '  "inputs": [{"type": "promptString", "id": "api-key", "password": true}],\n'
        '  "servers": {\n'
        '    "fake": {\n'
        '      "type": "stdio",\n'
        f'      "command": {json.dumps(sys.executable)},\n'
        f'      "args": [{json.dumps(str(FAKE))}, "--dump", {json.dumps(str(dump))}, '
        f'"{marker}"],\n'
        '      "env": {"GREETING": "${env:MY_GREETING}", "PLAIN": "${MY_PLAIN:-fallback}"},\n'
        '      "cwd": "${workspaceFolder}/sub", /* relative to the workspace */\n'
        "    },\n"
        '    "asks": {"type": "http", "url": "http://127.0.0.1:1/mcp",\n'
        '             "headers": {"Authorization": "Bearer ${input:api-key}"}},\n'
        '    "old": {"type": "sse", "url": "http://127.0.0.1:1/sse"},\n'
        "  },\n"
        "}\n"
    )
    (tmp_path / "proj" / "sub").mkdir()
    r = run_cli(
        "list", "-s", "fake", "-o", "json", "--config", str(cfg), env={"MY_GREETING": "hello"}
    )
    assert r.code == 0, r.stderr
    seen = json.loads(dump.read_text())
    assert seen["env"]["GREETING"] == "hello"
    assert seen["env"]["PLAIN"] == "fallback"
    assert seen["cwd"] == str((tmp_path / "proj" / "sub").resolve())
    # an undefined variable is a clear usage error naming it
    r = run_cli("list", "-s", "fake", "--config", str(cfg))
    assert r.code == 2
    assert_one_line_error(r)
    assert "MY_GREETING is not set" in r.stderr
    r = run_cli("list", "-s", "asks", "--config", str(cfg))
    assert r.code == 2 and "${input:api-key}" in r.stderr
    assert_one_line_error(r)
    r = run_cli("list", "-s", "old", "--config", str(cfg))
    assert r.code == 2 and "legacy HTTP+SSE" in r.stderr
    assert_no_child(marker)


def test_toml_format_and_default(run_cli: RunCli, tmp_path: Path, tmp_path_factory: Any) -> None:
    dump = tmp_path / "env.json"
    marker = new_marker()
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        'default = "fake"\n'
        "[servers.fake]\n"
        f"command = [{json.dumps(sys.executable)}, {json.dumps(str(FAKE))}]\n"
        f'args = ["--dump", {json.dumps(str(dump))}, "{marker}"]\n'
        'env = { ANSWER = "42", HOME_AGAIN = "${HOME}" }\n'
        'cwd = "."\n'
    )
    r = run_cli("list", "-o", "json", "--config", str(cfg))  # no target: the default
    assert r.code == 0, r.stderr
    seen = json.loads(dump.read_text())
    assert seen["env"]["ANSWER"] == "42"
    assert seen["env"]["HOME_AGAIN"] == seen["env"]["HOME"]
    assert seen["cwd"] == str(tmp_path)
    assert_no_child(marker)


def test_default_config_path_and_missing_files(run_cli: RunCli, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "mcptask").mkdir(parents=True)
    (xdg / "mcptask" / "config.toml").write_text(
        '[servers.nowhere]\nurl = "http://127.0.0.1:9/mcp"\n'
    )
    env = {"XDG_CONFIG_HOME": str(xdg), "MCPTASK_CONFIG": ""}
    r = run_cli("servers", "-o", "json", env=env)
    assert r.code == 0, r.stderr
    assert [s["name"] for s in r.json()["servers"]] == ["nowhere"]
    # a missing file named by --config is an error; by the environment, it is ignored
    r = run_cli(
        "list", "--config", str(tmp_path / "missing.toml"), "--url", "http://127.0.0.1:9/mcp"
    )
    assert r.code == 2
    assert_one_line_error(r)
    assert "no such file" in r.stderr
    r = run_cli("servers", "-o", "json", env={"MCPTASK_CONFIG": str(tmp_path / "missing.toml")})
    assert r.code == 0 and r.json()["servers"] == []
    r = run_cli("get", "x", "-s", "web", env={"MCPTASK_CONFIG": str(tmp_path / "missing.toml")})
    assert r.code == 2
    assert_one_line_error(r)
    assert "no config file" in r.stderr


def test_unknown_server_lists_known_names(run_cli: RunCli, tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[servers.alpha]\nurl = "http://a/mcp"\n[servers.beta]\ncommand = "x"\n')
    r = run_cli("get", "t1", "-s", "gamma", "--config", str(cfg))
    assert r.code == 2
    assert_one_line_error(r)
    assert "known: alpha, beta" in r.stderr


def test_broken_config_files_are_usage_errors(run_cli: RunCli, tmp_path: Path) -> None:
    cases = {
        "typo.toml": ('[servers.a]\nurl = "http://a/mcp"\ntokn_env = "X"\n', "key 'tokn_env'"),
        "both.toml": ('[servers.a]\nurl = "http://a/mcp"\ncommand = "x"\n', "exactly one of"),
        "bad.toml": ("servers = [", "neither mcptask's TOML nor JSON"),
        "other.json": ('{"foo": {}}', "without `mcpServers` or `servers`"),
    }
    for name, (text, expected) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        r = run_cli("servers", "--config", str(path))
        assert r.code == 2, (name, r.stderr)
        assert_one_line_error(r)
        assert expected in r.stderr, (name, r.stderr)


def test_servers_lists_targets_and_never_a_secret(run_cli: RunCli, tmp_path: Path) -> None:
    cfg = tmp_path / "mcp.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "remote": {
                        "url": f"https://user:{TOKEN}@example.com/mcp?api_key={API_KEY}&x=1",
                        "headers": {"Authorization": f"Bearer {TOKEN}", "X-Api-Key": API_KEY},
                    },
                    "local": {
                        "command": "npx",
                        "args": ["-y", "pkg", "--api-key", API_KEY, f"--token={TOKEN}"],
                        "env": {"OPENAI_API_KEY": API_KEY, "DEBUG": "1"},
                    },
                }
            }
        )
    )
    r = run_cli("servers", "-o", "json", "--config", str(cfg), env={"MCPTASK_SERVER": "local"})
    assert r.code == 0, r.stderr
    data = r.json()
    assert data["config"] == str(cfg) and data["format"] == "mcpServers"
    rows = {s["name"]: s for s in data["servers"]}
    assert rows["remote"]["kind"] == "url"
    assert rows["remote"]["url"].startswith("https://user:[redacted]@example.com/mcp?")
    assert rows["remote"]["headers"] == ["Authorization", "X-Api-Key"]
    assert rows["local"]["kind"] == "stdio"
    assert rows["local"]["command"].startswith("npx -y pkg --api-key")
    assert rows["local"]["env"] == ["DEBUG", "OPENAI_API_KEY"]
    assert rows["local"]["default"] is True and rows["remote"]["default"] is False
    no_secret(r, TOKEN, API_KEY)
    pretty = run_cli("servers", "-o", "pretty", "--config", str(cfg))
    assert pretty.code == 0, pretty.stderr
    assert "remote" in pretty.stdout and "OPENAI_API_KEY" in pretty.stdout
    no_secret(pretty, TOKEN, API_KEY)


# -- precedence -----------------------------------------------------------------------------------


@pytest.fixture
def precedence_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("MCPTASK_URL", "MCPTASK_SERVER", "MCPTASK_TOKEN", "MCPTASK_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "entry.token").write_text("from-entry-file\n")
    (tmp_path / "flag.token").write_text("from-flag-file\n")
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        "[servers.web]\n"
        'url = "http://127.0.0.1:1/mcp"\n'
        'protocol = "mcp-2026-07-28"\n'
        'headers = { "X-Team" = "blue", "X-Keep" = "kept" }\n'
        'token_env = "WEB_TOKEN"\n'
        "[servers.filed]\n"
        'url = "http://127.0.0.1:2/mcp"\n'
        'token_file = "entry.token"\n'
    )
    return cfg


def resolve(**kw: Any) -> Any:
    from mcptask.session import targets

    return targets.resolve(GlobalOptions(**kw))


def test_precedence_target_choice(precedence_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = str(precedence_config)
    monkeypatch.setenv("WEB_TOKEN", "t")
    # a target flag beats a target variable of the other kind
    monkeypatch.setenv("MCPTASK_SERVER", "web")
    assert resolve(url="http://flag/mcp", config=cfg).url == "http://flag/mcp"
    monkeypatch.delenv("MCPTASK_SERVER")
    monkeypatch.setenv("MCPTASK_URL", "http://env/mcp")
    assert resolve(server="web", config=cfg).url == "http://127.0.0.1:1/mcp"
    assert resolve(stdio="x y", config=cfg).command == ["x", "y"]
    assert resolve(config=cfg).url == "http://env/mcp"
    # two flags, or both variables without a flag: usage errors
    with pytest.raises(UsageError, match="--url and -s"):
        resolve(url="http://flag/mcp", server="web", config=cfg)
    with pytest.raises(UsageError, match="--url and --stdio"):
        resolve(url="http://flag/mcp", stdio="x", config=cfg)
    monkeypatch.setenv("MCPTASK_SERVER", "web")
    with pytest.raises(UsageError, match="both set"):
        resolve(config=cfg)


def test_precedence_protocol_headers_token(
    precedence_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = str(precedence_config)
    flag_file = str(precedence_config.parent / "flag.token")
    monkeypatch.setenv("WEB_TOKEN", "from-entry-env")
    t = resolve(server="web", config=cfg)
    assert t.protocol == "mcp-2026-07-28"  # the entry's
    assert t.headers == {"X-Team": "blue", "X-Keep": "kept"}
    assert t.token == "from-entry-env"
    # flags (and MCPTASK_PROTOCOL, which Typer puts in the same option) beat the entry
    t = resolve(server="web", config=cfg, protocol="mcp-2025-11-25", headers=["x-team: red"])
    assert t.protocol == "mcp-2025-11-25"
    assert t.headers == {"X-Keep": "kept", "x-team": "red"}
    # MCPTASK_TOKEN beats the entry's token_env; --token-file beats MCPTASK_TOKEN
    monkeypatch.setenv("MCPTASK_TOKEN", "from-env")
    assert resolve(server="web", config=cfg).token == "from-env"
    assert resolve(server="web", config=cfg, token_file=flag_file).token == "from-flag-file"
    monkeypatch.delenv("MCPTASK_TOKEN")
    # the entry's token_file, relative to the config file
    assert resolve(server="filed", config=cfg).token == "from-entry-file"
    # token_env unset (and nothing better): a clear error
    monkeypatch.delenv("WEB_TOKEN")
    with pytest.raises(UsageError, match=r"\$WEB_TOKEN, which is not set"):
        resolve(server="web", config=cfg)


def test_bad_header_and_token_errors_never_show_values(
    precedence_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UsageError) as exc:
        resolve(url="http://a/mcp", headers=[f"X-Api-Key={API_KEY}"])
    assert API_KEY not in str(exc.value)
    monkeypatch.setenv("MCPTASK_TOKEN", "abc\ndef-secret")
    with pytest.raises(UsageError) as exc:
        resolve(url="http://a/mcp")
    assert "def-secret" not in str(exc.value)


# -- auth -----------------------------------------------------------------------------------------


class _AuthHandler(_Handler):
    """Demands the bearer token; /redirect answers 307 to another origin; /leaky answers an
    error that echoes the Authorization header."""

    def do_POST(self) -> None:
        server = self.demo
        assert isinstance(server, AuthServer)
        server.seen.append(
            {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
        )
        if self.path.startswith("/redirect"):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(307)
            self.send_header("Location", server.redirect_to)
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            return
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.dumps({"error": "invalid_token"}).encode()
            self.send_response(401)
            challenge = 'Bearer realm="mcptask-test", error="invalid_token"'
            self.send_header("WWW-Authenticate", challenge)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
            return
        if self.path.startswith("/leaky"):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._send(
                500,
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": -32603,
                        "message": f"cannot use {self.headers['Authorization']}",
                    },
                },
            )
            return
        super().do_POST()


class AuthServer(DemoServer):
    def __init__(self, redirect_to: str = "", **kw: Any) -> None:
        super().__init__(**kw)
        self.redirect_to = redirect_to
        self.seen: list[dict[str, Any]] = []

    def start(self) -> AuthServer:
        httpd = _HTTPServer((self.host, self.port), _AuthHandler)
        httpd.demo = self
        self._httpd, self.port = httpd, int(httpd.server_address[1])
        self.url = f"http://{self.host}:{self.port}/mcp"
        self._thread = threading.Thread(
            target=lambda: httpd.serve_forever(poll_interval=0.05), daemon=True
        )
        self._thread.start()
        return self

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"


@pytest.fixture
def auth_servers() -> Iterator[tuple[AuthServer, DemoServer]]:
    with DemoServer() as other, AuthServer(redirect_to=other.url) as auth:
        yield auth, other


def test_no_token_is_exit_3_one_line(run_cli: RunCli, auth_servers: Any) -> None:
    auth, _ = auth_servers
    r = run_cli("list", "--url", auth.url, "-p", "mcp-2025-11-25")
    assert r.code == 3
    assert_one_line_error(r)
    assert "401" in r.stderr
    r = run_cli("list", "--url", auth.url, "-p", "mcp-2025-11-25", env={"MCPTASK_TOKEN": "wrong"})
    assert r.code == 3
    assert_one_line_error(r)


def test_token_file_and_env_token_work(
    run_cli: RunCli, auth_servers: Any, tmp_path: Path, state_dir: Path
) -> None:
    auth, _ = auth_servers
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    r = run_cli("list", "--url", auth.url, "-o", "json", "--token-file", str(token_file))
    assert r.code == 0, r.stderr
    assert r.json() == {"tasks": []}
    r = run_cli("list", "--url", auth.url, "-o", "json", env={"MCPTASK_TOKEN": TOKEN})
    assert r.code == 0, r.stderr
    no_secret(r, TOKEN)
    # a config entry's token_env
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[servers.auth]\nurl = "{auth.url}"\ntoken_env = "AUTH_TOKEN"\n')
    r = run_cli("list", "-s", "auth", "-o", "json", "--config", str(cfg), env={"AUTH_TOKEN": TOKEN})
    assert r.code == 0, r.stderr
    # the task book never holds the token
    for f in state_dir.rglob("*"):
        if f.is_file():
            assert TOKEN not in f.read_text(errors="replace"), f


def test_trace_shows_the_exchange_but_never_the_token(run_cli: RunCli, auth_servers: Any) -> None:
    auth, _ = auth_servers
    r = run_cli(
        "list",
        "--url",
        auth.url,
        "-o",
        "json",
        "--trace",
        "-H",
        f"X-Api-Key: {API_KEY}",
        env={"MCPTASK_TOKEN": TOKEN},
    )
    assert r.code == 0, r.stderr
    assert f"> POST {auth.url}" in r.stderr
    assert '"method": "tasks/list"' in r.stderr
    assert "< 200" in r.stderr
    lowered = r.stderr.lower()
    assert "> authorization: [redacted]" in lowered
    assert "> x-api-key: [redacted]" in lowered
    for line in lowered.splitlines():
        if line.startswith(("> authorization:", "> x-api-key:", "> cookie:", "< set-cookie:")):
            assert line.endswith(": [redacted]"), line
    no_secret(r, TOKEN, API_KEY)
    assert auth.seen and all(
        s["headers"].get("authorization") == f"Bearer {TOKEN}" for s in auth.seen
    )


def test_token_never_follows_a_redirect_to_another_origin(
    run_cli: RunCli, auth_servers: Any
) -> None:
    auth, other = auth_servers
    r = run_cli(
        "list",
        "--url",
        f"{auth.base}/redirect",
        "-o",
        "json",
        "-p",
        "mcp-2025-11-25",
        "-H",
        f"X-Api-Key: {API_KEY}",
        env={"MCPTASK_TOKEN": TOKEN},
    )
    # the session the other origin opens is not carried back there either (the transport
    # strips Mcp-Session-Id across origins), so the command ends in a one-line error
    assert r.code == 4, r.stderr
    assert_one_line_error(r)
    no_secret(r, TOKEN, API_KEY)
    redirected = [s for s in auth.seen if s["path"].startswith("/redirect")]
    assert redirected, "the first origin saw the requests"
    assert all(s["headers"]["authorization"] == f"Bearer {TOKEN}" for s in redirected)
    assert all(s["headers"]["x-api-key"] == API_KEY for s in redirected)
    assert other.requests, "the second origin was reached"
    assert other.requests[0]["message"]["method"] == "initialize"
    for req in other.requests:
        assert "authorization" not in req["headers"], req
        assert "x-api-key" not in req["headers"], req
        assert TOKEN not in json.dumps(req)


def test_token_is_scrubbed_from_error_text(run_cli: RunCli, auth_servers: Any) -> None:
    auth, _ = auth_servers
    r = run_cli(
        "list", "--url", f"{auth.base}/leaky", "-p", "mcp-2025-11-25", env={"MCPTASK_TOKEN": TOKEN}
    )
    assert r.code == 4
    assert_one_line_error(r)
    assert "cannot use Bearer [redacted]" in r.stderr
    no_secret(r, TOKEN)
