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

from servers.common import (
    ServerProcess,
    npm_folder,
    npm_package,
    start_on_free_port,
    venv_python,
)

HERE = Path(__file__).resolve().parent

EVERYTHING_SPEC = "@modelcontextprotocol/server-everything@2026.8.31"
FASTMCP3_REQUIREMENTS = ["fastmcp[tasks]==3.4.11"]
FASTMCP4_REQUIREMENTS = ["fastmcp==4.1.4", "fastmcp-tasks==4.1.4"]
#: the official Python SDK at releases whose newest MCP is 2025-06-18 and 2025-03-26
MCP0618_REQUIREMENTS = ["mcp==1.22.0", "uvicorn"]
MCP0326_REQUIREMENTS = ["mcp==1.9.4", "pydantic==2.10.6", "uvicorn"]

FASTMCP3_SCRIPT = HERE / "fastmcp3_server.py"
FASTMCP4_SCRIPT = HERE / "fastmcp4_server.py"
FASTMCP3_OAUTH_SCRIPT = HERE / "fastmcp3_oauth_server.py"
MCPSDK_SCRIPT = HERE / "mcpsdk_server.py"


def everything_package() -> Path:
    """The installed server-everything package folder (node_modules/@modelcontextprotocol/...)."""
    return npm_package(EVERYTHING_SPEC)


def everything_entry() -> Path:
    return everything_package() / "dist" / "index.js"


def fastmcp3_python() -> Path:
    return venv_python("fastmcp3", FASTMCP3_REQUIREMENTS)


def fastmcp4_python() -> Path:
    return venv_python("fastmcp4", FASTMCP4_REQUIREMENTS)


def mcp0618_python() -> Path:
    return venv_python("mcp0618", MCP0618_REQUIREMENTS)


def mcp0326_python() -> Path:
    return venv_python("mcp0326", MCP0326_REQUIREMENTS)


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH: cannot run server-everything")
    return node


def everything_stdio_command() -> list[str]:
    """Command that runs server-everything over stdio (the caller must terminate it)."""
    return [_node(), str(everything_entry()), "stdio"]


def start_everything(timeout: float = 90.0) -> ServerProcess:
    """server-everything over Streamable HTTP; endpoint ``http://127.0.0.1:<port>/mcp``."""
    entry = everything_entry()
    node = _node()
    return start_on_free_port(
        lambda port: [node, str(entry), "streamableHttp"],
        env=lambda port: {"PORT": str(port)},
        timeout=timeout,
    )


def start_everything_sse(timeout: float = 90.0) -> ServerProcess:
    """server-everything over the deprecated HTTP+SSE transport (2024-11-05): GET ``/sse``
    (``.url``), messages POSTed to the ``/message?sessionId=...`` its stream names."""
    entry = everything_entry()
    node = _node()
    return start_on_free_port(
        lambda port: [node, str(entry), "sse"],
        path="/sse",
        env=lambda port: {"PORT": str(port)},
        timeout=timeout,
    )


def start_fastmcp3(timeout: float = 90.0, *, record: Path | None = None) -> ServerProcess:
    """The fastmcp3 task server; `record`: it writes each request it receives there
    (`wire_recorder.py`; `ServerProcess.records()`)."""
    python = fastmcp3_python()
    extra = ["--record", str(record)] if record is not None else []
    server = start_on_free_port(
        lambda port: [str(python), str(FASTMCP3_SCRIPT), "--port", str(port), *extra],
        timeout=timeout,
    )
    server.record = record
    return server


MCP_PROGRESS_SCRIPT = HERE / "mcp_progress_server.py"


def start_mcp_progress(timeout: float = 90.0) -> ServerProcess:
    """``mcp_progress_server.py`` on the fastmcp3 venv's ``mcp`` 1.30: a task's progress on the
    session's GET stream with the client's token and no ``related-task`` ``_meta``."""
    python = fastmcp3_python()
    return start_on_free_port(
        lambda port: [str(python), str(MCP_PROGRESS_SCRIPT), "--port", str(port)], timeout=timeout
    )


def start_fastmcp3_tls(certfile: Path, keyfile: Path, timeout: float = 90.0) -> ServerProcess:
    """The fastmcp3 task server over HTTPS (uvicorn) with the given certificate; `.url` names
    it `https://127.0.0.1:P/mcp` (the certificate is for localhost and 127.0.0.1)."""
    python = fastmcp3_python()
    server = start_on_free_port(
        lambda port: [
            *(str(python), str(FASTMCP3_SCRIPT), "--port", str(port)),
            *("--certfile", str(certfile), "--keyfile", str(keyfile)),
        ],
        timeout=timeout,
    )
    server.url = f"https://127.0.0.1:{server.port}/mcp"
    return server


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
    return start_on_free_port(
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


def start_fastmcp4(timeout: float = 90.0, *, record: Path | None = None) -> ServerProcess:
    """The fastmcp4 task server; `record`: as `start_fastmcp3`'s."""
    python = fastmcp4_python()
    extra = ["--record", str(record)] if record is not None else []
    server = start_on_free_port(
        lambda port: [str(python), str(FASTMCP4_SCRIPT), "--port", str(port), *extra],
        timeout=timeout,
    )
    server.record = record
    return server


TS2_SPECS = ["@modelcontextprotocol/server@2.4.0", "zod@4.4.3"]
TS2_SCRIPT = HERE / "ts2_server.mjs"


def ts2_folder() -> Path:
    """The TypeScript SDK v2 server package (with zod), npm-installed once."""
    return npm_folder("mcp-ts-server-2.4.0_zod-4.4.3", TS2_SPECS)


def start_ts2(timeout: float = 90.0) -> ServerProcess:
    """An MCP server on the TypeScript SDK v2: 2026-07-28 without the tasks extension (multi
    round-trip answers), a stateless 2025 leg beside it; endpoint ``/mcp``. The script is
    copied next to its node_modules (ESM resolves packages from the script's folder)."""
    folder = ts2_folder()
    script = folder / TS2_SCRIPT.name
    shutil.copyfile(TS2_SCRIPT, script)
    node = _node()
    return start_on_free_port(lambda port: [node, str(script), str(port)], timeout=timeout)


def _mcpsdk_python(version: str) -> Path:
    return {"2025-06-18": mcp0618_python, "2025-03-26": mcp0326_python}[version]()


def start_mcpsdk(
    version: str, *, sse: bool = False, ping_first: bool = False, timeout: float = 90.0
) -> ServerProcess:
    """The official Python SDK at a release whose newest MCP is ``version`` (2025-06-18 or
    2025-03-26), over Streamable HTTP (``/mcp``) or, with ``sse``, the legacy HTTP+SSE
    transport (``/sse``); ``ping_first``: its ``tools/list`` pings the client first, on the
    request's own stream."""
    python = _mcpsdk_python(version)
    mode = (["--sse"] if sse else []) + (["--ping-first"] if ping_first else [])
    return start_on_free_port(
        lambda port: [str(python), str(MCPSDK_SCRIPT), "--port", str(port), *mode],
        path="/sse" if sse else "/mcp",
        timeout=timeout,
    )


def mcpsdk_stdio_command(version: str, *, ping_first: bool = False) -> list[str]:
    """The same server over stdio."""
    extra = ["--ping-first"] if ping_first else []
    return [str(_mcpsdk_python(version)), str(MCPSDK_SCRIPT), "--stdio", *extra]


ENVIRONMENTS: dict[str, Callable[[], Path]] = {
    "everything": everything_package,
    "fastmcp3": fastmcp3_python,
    "fastmcp4": fastmcp4_python,
    "mcp0618": mcp0618_python,
    "mcp0326": mcp0326_python,
    "ts2": ts2_folder,
}
