"""Shared helpers for the test suite's real servers.

Every server runs in its own cached environment (a virtualenv or an npm folder under
``.cache/servers``, which git ignores), built once and reused by later runs. Builds are guarded
by file locks so parallel pytest processes (e.g. xdist workers) do not race.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO: Path = Path(__file__).resolve().parents[2]
CACHE: Path = REPO / ".cache" / "servers"

_MARKER = ".mcptask-ready"
_TAIL = 60


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    CACHE.mkdir(parents=True, exist_ok=True)
    lock_path = CACHE / f"{name}.lock"
    with open(lock_path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _tail(text: str, n: int = _TAIL) -> str:
    return "\n".join(text.splitlines()[-n:])


def _run(cmd: list[str], *, cwd: Path | None = None, what: str) -> None:
    res = subprocess.run(
        cmd,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        check=False,
    )
    if res.returncode != 0:
        raise RuntimeError(
            f"{what} failed (exit {res.returncode}): {' '.join(cmd)}\n{_tail(res.stdout)}"
        )


def _base_python() -> str:
    """The interpreter used to create server venvs: this one (so versions match), else python3."""
    return sys.executable or shutil.which("python3") or "python3"


def venv_python(name: str, requirements: list[str]) -> Path:
    """Build (once) a virtualenv holding ``requirements`` and return its python.

    The folder name includes a hash of the requirements, so changing a pin builds a new venv.
    A marker file is written only after a successful install; a half-built venv is rebuilt.
    """
    digest = hashlib.sha256("\n".join(requirements).encode()).hexdigest()[:10]
    folder = CACHE / f"venv-{name}-{digest}"
    python = folder / "bin" / "python"
    marker = folder / _MARKER
    if marker.exists() and python.exists():
        return python
    with _locked(folder.name):
        if marker.exists() and python.exists():
            return python
        if folder.exists():
            shutil.rmtree(folder)
        try:
            _run([_base_python(), "-m", "venv", str(folder)], what=f"creating venv {folder.name}")
            _run(
                [str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"],
                what=f"upgrading pip in {folder.name}",
            )
            if requirements:
                _run(
                    [str(python), "-m", "pip", "install", *requirements],
                    what=f"pip install {' '.join(requirements)} into {folder.name}",
                )
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        marker.write_text("\n".join(requirements) + "\n")
    return python


def _package_name(spec: str) -> str:
    """``@scope/name@1.2.3`` -> ``@scope/name``; ``name@1`` -> ``name``; ``name`` -> ``name``."""
    at = spec.rfind("@")
    return spec[:at] if at > 0 else spec


def npm_package(spec: str) -> Path:
    """npm-install ``spec`` (once) into its own cached folder; return node_modules/<name>."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_")
    return npm_folder(slug, [spec]) / "node_modules" / _package_name(spec)


def npm_folder(slug: str, specs: list[str]) -> Path:
    """npm-install ``specs`` (once) together into ``.cache/servers/npm-<slug>``; return the folder.

    Every package lands in ``<folder>/node_modules/<name>``; a marker file is written only after
    all of them installed, so a half-built folder is rebuilt.
    """
    folder = CACHE / f"npm-{slug}"
    pkgs = [folder / "node_modules" / _package_name(spec) for spec in specs]
    marker = folder / _MARKER

    def ready() -> bool:
        return marker.exists() and all(pkg.exists() for pkg in pkgs)

    if ready():
        return folder
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH: cannot install " + " ".join(specs))
    with _locked(folder.name):
        if ready():
            return folder
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        try:
            (folder / "package.json").write_text(
                '{"name": "mcptask-test-server", "private": true}\n'
            )
            _run(
                [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", *specs],
                cwd=folder,
                what=f"npm install {' '.join(specs)}",
            )
            missing = [str(pkg) for pkg in pkgs if not pkg.exists()]
            if missing:
                raise RuntimeError(f"npm install {' '.join(specs)} did not produce {missing}")
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        marker.write_text("\n".join(specs) + "\n")
    return folder


@dataclass
class ServerProcess:
    url: str
    port: int
    proc: subprocess.Popen[bytes]
    stderr_path: Path
    _stopped: bool = field(default=False, repr=False)
    #: `--record FILE` servers (`wire_recorder.py`): the file of what they received
    record: Path | None = None

    def records(self) -> list[dict[str, Any]]:
        """What a recording server has received so far, one dict per request, in order."""
        assert self.record is not None, "not a recording server"
        try:
            text = self.record.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def stderr_tail(self, n: int = 40) -> str:
        try:
            text = self.stderr_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-n:])

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)


def _listening_inodes(port: int) -> set[str] | None:
    """The socket inodes listening on 127.0.0.1/any address at `port` (Linux), else None."""
    found: set[str] = set()
    seen_table = False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        seen_table = True
        for line in lines:
            fields = line.split()
            if (
                len(fields) > 9
                and fields[3] == "0A"
                and int(fields[1].rsplit(":", 1)[1], 16) == port
            ):
                found.add(fields[9])
    return found if seen_table else None


def _family(root: int) -> set[int]:
    """`root` and every process descended from it (Linux)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    family = {root}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in family and pid not in family:
                family.add(pid)
                grew = True
    return family


def _ours(pid: int, port: int) -> bool:
    """Whether the process `pid` (or a child of it) is what listens on `port`: with pytest-xdist
    and other test runs on the machine, a port `free_port()` gave can be taken by another
    server meanwhile, and an open port alone would make its server pass for ours. True where
    /proc cannot tell."""
    inodes = _listening_inodes(port)
    if inodes is None:
        return True
    for member in _family(pid):
        try:
            fds = os.listdir(f"/proc/{member}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink(f"/proc/{member}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:[") and link[8:-1] in inodes:
                return True
    return False


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        try:
            s.connect(("127.0.0.1", port))
        except OSError:
            return False
        return True


#: how a server says the port it was given was taken meanwhile (free_port() races with every
#: other process on the machine): "address already in use" (most), "EADDRINUSE" (node),
#: "Port N is already in use" (server-everything)
_PORT_TAKEN = ("already in use", "eaddrinuse", "address in use")
#: tries of `start_on_free_port`, each on a new port
START_ATTEMPTS = 3


def port_taken(exc: BaseException) -> bool:
    """The server could not start because its port was taken (try another)."""
    text = str(exc).lower()
    return any(phrase in text for phrase in _PORT_TAKEN)


def start_on_free_port(
    make_cmd: Callable[[int], list[str]],
    *,
    path: str = "/mcp",
    env: Callable[[int], dict[str, str]] | None = None,
    cwd: Path | None = None,
    timeout: float = 90.0,
) -> ServerProcess:
    """`start_server` on a free port (``http://127.0.0.1:<port><path>``), on another one
    when the port was taken between the pick and the bind."""
    for attempt in range(1, START_ATTEMPTS + 1):
        port = free_port()
        try:
            return start_server(
                make_cmd(port),
                port=port,
                url=f"http://127.0.0.1:{port}{path}",
                env=env(port) if env else None,
                cwd=cwd,
                timeout=timeout,
            )
        except RuntimeError as exc:
            if attempt == START_ATTEMPTS or not port_taken(exc):
                raise
    raise AssertionError("unreachable")


def start_server(
    cmd: list[str],
    *,
    port: int,
    url: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 90.0,
) -> ServerProcess:
    """Start ``cmd`` and wait until 127.0.0.1:``port`` accepts TCP connections.

    stdout and stderr go to a temporary log file (``ServerProcess.stderr_path``). If the process
    exits or ``timeout`` passes first, it is stopped and RuntimeError carries the log's tail.
    """
    full_env = {**os.environ, **(env or {})}
    full_env["FASTMCP_CHECK_FOR_UPDATES"] = "off"
    full_env["PYTHONUNBUFFERED"] = "1"
    fd, log_name = tempfile.mkstemp(prefix="mcptask-server-", suffix=".log")
    log_path = Path(log_name)
    with os.fdopen(fd, "wb") as log:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=full_env,
            cwd=cwd,
        )
    server = ServerProcess(url=url, port=port, proc=proc, stderr_path=log_path)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            problem = f"server exited with code {proc.returncode} before listening on port {port}"
            break
        if _port_open(port) and _ours(proc.pid, port):
            return server
        if time.monotonic() > deadline:
            problem = f"server did not listen on port {port} within {timeout:g} s"
            break
        time.sleep(0.1)
    server.stop()
    tail = server.stderr_tail()
    with contextlib.suppress(OSError):
        log_path.unlink()
    raise RuntimeError(f"{problem}: {' '.join(cmd)}\n--- log tail ---\n{tail}")
