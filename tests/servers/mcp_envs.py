"""Environments and launchers for the MCP servers the tests run against.

Each server lives in its own cached environment (they cannot share one):

- ``everything``: ``@modelcontextprotocol/server-everything`` (npm), MCP 2025-11-25 reference server
- ``fastmcp3``: ``fastmcp[tasks]==3.4.11`` venv running ``fastmcp3_server.py``
  (MCP 2025-11-25 tasks)
- ``fastmcp4``: ``fastmcp==4.1.4`` + ``fastmcp-tasks==4.1.4`` venv running ``fastmcp4_server.py``
  (MCP 2026-07-28 + tasks extension)

``ENVIRONMENTS`` maps a name to a zero-argument callable that builds (or reuses) the environment
and returns its path; ``setup.py`` runs them. The ``start_*`` functions start a server on a free
port and return a running ``ServerProcess`` (the caller must ``stop()`` it).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from servers.common import ServerProcess, free_port, npm_package, start_server, venv_python

HERE = Path(__file__).resolve().parent

EVERYTHING_SPEC = "@modelcontextprotocol/server-everything@2026.8.31"
FASTMCP3_REQUIREMENTS = ["fastmcp[tasks]==3.4.11"]
FASTMCP4_REQUIREMENTS = ["fastmcp==4.1.4", "fastmcp-tasks==4.1.4"]

FASTMCP3_SCRIPT = HERE / "fastmcp3_server.py"
FASTMCP4_SCRIPT = HERE / "fastmcp4_server.py"
FASTMCP3_OAUTH_SCRIPT = HERE / "fastmcp3_oauth_server.py"

_START_ATTEMPTS = 3  # free_port() can race with another process grabbing the port


def everything_package() -> Path:
    """The installed server-everything package folder (node_modules/@modelcontextprotocol/...)."""
    return npm_package(EVERYTHING_SPEC)


def everything_entry() -> Path:
    return everything_package() / "dist" / "index.js"


def fastmcp3_python() -> Path:
    return venv_python("fastmcp3", FASTMCP3_REQUIREMENTS)


def fastmcp4_python() -> Path:
    return venv_python("fastmcp4", FASTMCP4_REQUIREMENTS)


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH: cannot run server-everything")
    return node


def everything_stdio_command() -> list[str]:
    """Command that runs server-everything over stdio (the caller must terminate it)."""
    return [_node(), str(everything_entry()), "stdio"]


def _start_on_free_port(
    make_cmd: Callable[[int], list[str]],
    *,
    env: Callable[[int], dict[str, str]] | None = None,
    timeout: float = 90.0,
) -> ServerProcess:
    last: RuntimeError | None = None
    for _ in range(_START_ATTEMPTS):
        port = free_port()
        try:
            return start_server(
                make_cmd(port),
                port=port,
                url=f"http://127.0.0.1:{port}/mcp",
                env=env(port) if env else None,
                timeout=timeout,
            )
        except RuntimeError as exc:
            last = exc
            text = str(exc).lower()
            if "address already in use" not in text and "eaddrinuse" not in text:
                raise
    assert last is not None
    raise last


def start_everything(timeout: float = 90.0) -> ServerProcess:
    """server-everything over Streamable HTTP; endpoint ``http://127.0.0.1:<port>/mcp``."""
    entry = everything_entry()
    node = _node()
    return _start_on_free_port(
        lambda port: [node, str(entry), "streamableHttp"],
        env=lambda port: {"PORT": str(port)},
        timeout=timeout,
    )


def start_fastmcp3(timeout: float = 90.0) -> ServerProcess:
    python = fastmcp3_python()
    return _start_on_free_port(
        lambda port: [str(python), str(FASTMCP3_SCRIPT), "--port", str(port)], timeout=timeout
    )


def start_fastmcp3_oauth(
    token_seconds: int = 3600,
    timeout: float = 90.0,
    *,
    valid_scopes: str = "",
    default_scopes: str = "",
) -> ServerProcess:
    """The fastmcp3 task server behind fastmcp's in-memory OAuth (access tokens live
    ``token_seconds``; with `valid_scopes`/`default_scopes`, registration's scope rules)."""
    python = fastmcp3_python()
    scopes = []
    if valid_scopes:
        scopes += ["--valid-scopes", valid_scopes]
    if default_scopes:
        scopes += ["--default-scopes", default_scopes]
    return _start_on_free_port(
        lambda port: [
            str(python),
            str(FASTMCP3_OAUTH_SCRIPT),
            "--port",
            str(port),
            "--token-seconds",
            str(token_seconds),
            *scopes,
        ],
        timeout=timeout,
    )


def start_fastmcp4(timeout: float = 90.0) -> ServerProcess:
    python = fastmcp4_python()
    return _start_on_free_port(
        lambda port: [str(python), str(FASTMCP4_SCRIPT), "--port", str(port)], timeout=timeout
    )


ENVIRONMENTS: dict[str, Callable[[], Path]] = {
    "everything": everything_package,
    "fastmcp3": fastmcp3_python,
    "fastmcp4": fastmcp4_python,
}
