"""pytest fixtures that start real MCP servers (session scope, one process per server).

Register with ``pytest_plugins = ["servers.plugin"]`` in the root ``tests/conftest.py`` (``tests/``
is on ``sys.path``), or import the fixtures by name into a test module. A server that cannot be
built or started makes the fixture raise, so the tests using it ERROR: they are never skipped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest

from servers.common import ServerProcess
from servers.mcp_envs import (
    everything_stdio_command,
    start_everything,
    start_everything_sse,
    start_fastmcp3,
    start_fastmcp3_oauth,
    start_fastmcp4,
    start_mcp_progress,
    start_mcpsdk,
    start_ts2,
)


def _serve(start: Callable[[], ServerProcess]) -> Iterator[ServerProcess]:
    server = start()
    try:
        yield server
    finally:
        server.stop()
        with contextlib.suppress(OSError):
            server.stderr_path.unlink()


@pytest.fixture(scope="session")
def everything_server() -> Iterator[ServerProcess]:
    """server-everything 2026.8.31 over Streamable HTTP (MCP 2025-11-25); ``.url`` ends in /mcp."""
    yield from _serve(start_everything)


@pytest.fixture(scope="session")
def everything_stdio_cmd() -> list[str]:
    """``[node, .../dist/index.js, "stdio"]``: spawn it yourself and terminate it afterwards."""
    return everything_stdio_command()


@pytest.fixture(scope="session")
def fastmcp3_server() -> Iterator[ServerProcess]:
    """fastmcp 3.4.11 task server (MCP 2025-11-25): slow_echo, fail_tool, quick."""
    yield from _serve(start_fastmcp3)


@pytest.fixture(scope="session")
def mcp_progress_server() -> Iterator[ServerProcess]:
    """`mcp_progress_server.py` (official Python SDK, mcp 1.30, MCP 2025-11-25 tasks): tool
    `count(steps)` reports its task's progress on the GET stream without `related-task`."""
    yield from _serve(start_mcp_progress)


#: access-token lifetime of `fastmcp3_oauth_server`: a watch of a few seconds outlives one
OAUTH_TOKEN_SECONDS = 3


@pytest.fixture(scope="session")
def fastmcp3_oauth_server() -> Iterator[ServerProcess]:
    """The fastmcp3 task server behind fastmcp's in-memory OAuth (dynamic registration, PKCE,
    refresh rotation, every authorization approved at once); access tokens live
    ``OAUTH_TOKEN_SECONDS``."""
    yield from _serve(lambda: start_fastmcp3_oauth(OAUTH_TOKEN_SECONDS))


@pytest.fixture(scope="session")
def fastmcp4_server() -> Iterator[ServerProcess]:
    """fastmcp 4.1.4 + tasks extension (MCP 2026-07-28).

    Tools: slow_echo, rpc_error, tool_error, ask_name.
    """
    yield from _serve(start_fastmcp4)


@pytest.fixture(scope="session")
def fastmcp3_recording_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The fastmcp3 task server started with `--record`: `.records()` is every request it
    received (`wire_recorder.py`: headers and JSON body), in order."""
    record = tmp_path_factory.mktemp("fastmcp3-record") / "requests.jsonl"
    yield from _serve(lambda: start_fastmcp3(record=record))


@pytest.fixture(scope="session")
def fastmcp4_recording_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The fastmcp4 task server started with `--record` (as `fastmcp3_recording_server`)."""
    record = tmp_path_factory.mktemp("fastmcp4-record") / "requests.jsonl"
    yield from _serve(lambda: start_fastmcp4(record=record))


@pytest.fixture(scope="session")
def mcpsdk0618_server() -> Iterator[ServerProcess]:
    """The official Python SDK 1.22.0 (newest MCP 2025-06-18) over Streamable HTTP: slow_echo
    (progress), quick, ask_name (elicitation)."""
    yield from _serve(lambda: start_mcpsdk("2025-06-18"))


@pytest.fixture(scope="session")
def mcpsdk0326_server() -> Iterator[ServerProcess]:
    """The official Python SDK 1.9.4 (newest MCP 2025-03-26) over Streamable HTTP: slow_echo
    (progress), quick."""
    yield from _serve(lambda: start_mcpsdk("2025-03-26"))


@pytest.fixture(scope="session")
def everything_sse_server() -> Iterator[ServerProcess]:
    """server-everything 2026.8.31 over the deprecated HTTP+SSE transport; ``.url`` ends in
    /sse."""
    yield from _serve(start_everything_sse)


@pytest.fixture(scope="session")
def mcpsdk_sse_server() -> Iterator[ServerProcess]:
    """The Python SDK 1.22.0 server over the deprecated HTTP+SSE transport; ``.url`` ends in
    /sse."""
    yield from _serve(lambda: start_mcpsdk("2025-06-18", sse=True))


@pytest.fixture(scope="session")
def ts2_server() -> Iterator[ServerProcess]:
    """`@modelcontextprotocol/server` 2.4.0 (TypeScript SDK v2): MCP 2026-07-28 without the
    tasks extension, a stateless 2025 leg beside it; slow_echo, ask_name, ask_size."""
    yield from _serve(start_ts2)
