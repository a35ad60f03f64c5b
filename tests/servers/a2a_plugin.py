"""Session-scoped pytest fixtures that start the real A2A servers (see ``A2A_README.md``).

Use them from a test module with::

    from servers.a2a_plugin import a2a_server, agno_server, agno_secure_server  # noqa: F401

Every fixture yields a ``ServerProcess`` subclass (so ``.url``, ``.port``, ``.proc``,
``.stderr_tail()``, ``.stop()`` work as usual) with a few extra URL attributes:

* ``a2a_server``         -> ``A2AServerProcess``: ``.url`` is the JSON-RPC endpoint
  (``http://127.0.0.1:P/``, 1.0 and 0.3), ``.rest_url`` the HTTP+JSON base
  (``http://127.0.0.1:P/rest``), ``.card_url`` the agent card, ``.base_url`` the server root.
* ``agno_server``        -> ``AgnoServerProcess``: ``.url`` is the agent base URL
  (``http://127.0.0.1:P/a2a/agents/echo``), ``.card_url``, ``.base_url``, ``.agent_id``,
  ``.security_key`` (None) and ``.headers`` (``{}``).
* ``agno_secure_server`` -> same, started with ``OS_SECURITY_KEY``: ``.security_key`` is
  ``"test-key-123"`` and ``.headers`` is ``{"Authorization": "Bearer test-key-123"}``.
* ``a2a_push_server``    -> ``A2AServerProcess`` like ``a2a_server``, with push notifications on
  and streaming off (``a2a_server.py --push --no-streaming``).
* ``a2a_rest_push_server`` -> ``A2AServerProcess`` like ``a2a_rest_server`` (HTTP+JSON only),
  with push notifications on and streaming off.
* ``a2a_grpc_server``    -> ``A2AServerProcess``: the a2a-sdk 1.3.0 agent whose card offers only
  the gRPC binding (``a2a_server.py --push --grpc-port G --grpc-only``): ``.url`` is the server
  root (the card), ``.grpc_target`` ``127.0.0.1:G``.
* ``a2a_js_server``      -> ``A2AServerProcess``: the @a2a-js/sdk 1.3.0 agent
  (``a2a_js_server.cjs --no-streaming``); ``.url`` is ``http://127.0.0.1:P/a2a/jsonrpc``.

A server that cannot be built or started fails the test (never skips) with its log's tail.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from servers.a2a_envs import (
    A2A_JS_SERVER_SCRIPT,
    A2A_SERVER_SCRIPT,
    AGNO_SERVER_SCRIPT,
    ENVIRONMENTS,
)
from servers.common import ServerProcess, free_port, start_on_free_port

AGNO_AGENT_ID = "echo"
AGNO_SECURITY_KEY = "test-key-123"


@dataclass
class A2AServerProcess(ServerProcess):
    """The a2a-sdk 1.3.0 server; ``url`` is its JSON-RPC endpoint."""

    base_url: str = ""
    rest_url: str = ""
    card_url: str = ""
    grpc_target: str = ""


@dataclass
class AgnoServerProcess(ServerProcess):
    """An Agno AgentOS; ``url`` is the A2A base URL of agent ``echo``."""

    base_url: str = ""
    card_url: str = ""
    agent_id: str = AGNO_AGENT_ID
    security_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


def _upgrade(proc: ServerProcess, cls: type, **extra: object):  # -> cls instance
    values = {f.name: getattr(proc, f.name) for f in dataclasses.fields(proc)}
    return cls(**values, **extra)


def _wait_http(
    server: ServerProcess, url: str, headers: dict[str, str], timeout: float = 30.0
) -> None:
    """Wait until ``url`` answers 200 (the port may open before the app is ready)."""
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            break
        try:
            r = httpx.get(url, headers=headers, timeout=5)
            if r.status_code == 200:
                return
            last = f"HTTP {r.status_code}: {r.text[:200]}"
        except httpx.HTTPError as e:
            last = repr(e)
        time.sleep(0.2)
    server.stop()
    pytest.fail(
        f"server on port {server.port} did not answer {url} ({last})\n--- log tail ---\n"
        f"{server.stderr_tail()}",
        pytrace=False,
    )


def _start(
    make_cmd: Callable[[int], list[str]], *, path: str = "/", env: dict[str, str] | None = None
) -> ServerProcess:
    """The server `make_cmd(port)` starts, on a free port (another if it was taken)."""
    try:
        return start_on_free_port(
            make_cmd, path=path, env=lambda _: env or {}, cwd=A2A_SERVER_SCRIPT.parent
        )
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)


def _python(env_name: str) -> str:
    try:
        return str(ENVIRONMENTS[env_name]())
    except Exception as e:  # a failed venv build must fail the tests, not skip them
        pytest.fail(f"cannot build the {env_name!r} server venv: {e}", pytrace=False)


def _a2a_sdk(
    *flags: str, grpc: bool = False, record: Path | None = None
) -> Iterator[A2AServerProcess]:
    """The a2a-sdk 1.3.0 test agent (`a2a_server.py`) with `flags`, on a free port (`grpc`:
    the gRPC binding alone, on a second free port; `record`: what it receives, written
    there)."""
    python = _python("a2a")
    extra = ["--record", str(record)] if record is not None else []
    grpc_target = ""
    if grpc:
        grpc_port = free_port()
        grpc_target = f"127.0.0.1:{grpc_port}"
        extra += ["--grpc-port", str(grpc_port), "--grpc-only"]
    proc = _start(
        lambda port: [python, str(A2A_SERVER_SCRIPT), "--port", str(port), *flags, *extra]
    )
    base = f"http://127.0.0.1:{proc.port}"
    server: A2AServerProcess = _upgrade(
        proc,
        A2AServerProcess,
        base_url=base,
        rest_url=base + "/rest",
        card_url=base + "/.well-known/agent-card.json",
        grpc_target=grpc_target,
    )
    server.record = record
    try:
        _wait_http(server, server.card_url, {})
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def a2a_grpc_server() -> Iterator[A2AServerProcess]:
    """The a2a-sdk 1.3.0 agent serving A2A 1.0 over gRPC only, push notification configs on:
    its card (at ``.url``, the HTTP server's root) lists one interface, GRPC 1.0 at
    ``.grpc_target``."""
    yield from _a2a_sdk("--push", grpc=True)


@pytest.fixture(scope="session")
def a2a_server() -> Iterator[A2AServerProcess]:
    """a2a-sdk 1.3.0 server (JSON-RPC 1.0 + 0.3 compat, HTTP+JSON, agent card)."""
    yield from _a2a_sdk()


@pytest.fixture(scope="session")
def a2a_recording_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[A2AServerProcess]:
    """`a2a_server` started with `--record`: `.records()` is every request it received (HTTP
    headers and bodies) and the metadata of each message its executor was given."""
    record = tmp_path_factory.mktemp("a2a-record") / "requests.jsonl"
    yield from _a2a_sdk(record=record)


@pytest.fixture(scope="session")
def a2a_grpc_recording_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[A2AServerProcess]:
    """`a2a_grpc_server` started with `--record`: its gRPC calls' metadata and the metadata of
    each message its executor was given."""
    record = tmp_path_factory.mktemp("a2a-grpc-record") / "requests.jsonl"
    yield from _a2a_sdk("--push", grpc=True, record=record)


@pytest.fixture(scope="session")
def a2a_push_server() -> Iterator[A2AServerProcess]:
    """a2a-sdk 1.3.0 server with push notifications on (in-memory config store and sender,
    `pushNotifications: true`) and streaming off (`streaming: false`: updates reach a client
    only by webhook or by polling); it refuses push URLs on private addresses other than
    127.0.0.1 (`http://10.1.2.3/...`: -32602)."""
    yield from _a2a_sdk("--push", "--no-streaming")


@pytest.fixture(scope="session")
def a2a_rest_server() -> Iterator[A2AServerProcess]:
    """The same a2a-sdk 1.3.0 agent serving only HTTP+JSON (``--rest-only``): ``.url`` is the
    server root (whose card lists one interface, HTTP+JSON 1.0 at ``.rest_url``)."""
    yield from _a2a_sdk("--rest-only")


@pytest.fixture(scope="session")
def a2a_rest_push_server() -> Iterator[A2AServerProcess]:
    """The a2a-sdk 1.3.0 agent serving only HTTP+JSON with push notifications on and streaming
    off (``--rest-only --push --no-streaming``): ``.url`` is the server root, ``.rest_url`` the
    binding's base; push URLs are screened as by ``a2a_push_server``."""
    yield from _a2a_sdk("--rest-only", "--push", "--no-streaming")


@pytest.fixture(scope="session")
def a2a_js_server() -> Iterator[A2AServerProcess]:
    """@a2a-js/sdk 1.3.0 agent (`a2a_js_server.cjs`): JSON-RPC at `/a2a/jsonrpc`, A2A 1.0 and
    0.3 (compat layer), push notifications on (in-memory store, the SDK's sender), streaming
    off; 3 steps of 1 s, `slow...` 20."""
    modules = _python("a2a-js")  # builds the npm folder
    proc = _start(
        lambda port: ["node", str(A2A_JS_SERVER_SCRIPT), "--port", str(port), "--no-streaming"],
        path="/a2a/jsonrpc",
        env={"A2A_JS_MODULES": modules},
    )
    base = f"http://127.0.0.1:{proc.port}"
    server: A2AServerProcess = _upgrade(
        proc,
        A2AServerProcess,
        base_url=base,
        rest_url="",
        card_url=base + "/.well-known/agent-card.json",
    )
    try:
        _wait_http(server, server.card_url, {})
        yield server
    finally:
        server.stop()


def _agno(security_key: str | None) -> Iterator[AgnoServerProcess]:
    python = _python("agno")
    key = ["--secure-key", security_key] if security_key else []
    # never let a key from the outer environment leak into the open server
    env = {"OS_SECURITY_KEY": "", "AGNO_TELEMETRY": "false"}
    proc = _start(
        lambda port: [python, str(AGNO_SERVER_SCRIPT), "--port", str(port), *key],
        path=f"/a2a/agents/{AGNO_AGENT_ID}",
        env=env,
    )
    base = f"http://127.0.0.1:{proc.port}"
    agent_url = f"{base}/a2a/agents/{AGNO_AGENT_ID}"
    headers = {"Authorization": f"Bearer {security_key}"} if security_key else {}
    server: AgnoServerProcess = _upgrade(
        proc,
        AgnoServerProcess,
        base_url=base,
        card_url=agent_url + "/.well-known/agent-card.json",
        agent_id=AGNO_AGENT_ID,
        security_key=security_key,
        headers=headers,
    )
    try:
        _wait_http(server, server.card_url, headers)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def agno_server() -> Iterator[AgnoServerProcess]:
    """Agno AgentOS 3.1.10, A2A interface, agent ``echo`` (2 s, ``echo: <text>``), no auth."""
    yield from _agno(None)


@pytest.fixture(scope="session")
def agno_secure_server() -> Iterator[AgnoServerProcess]:
    """Like ``agno_server`` but with ``OS_SECURITY_KEY=test-key-123`` (bearer auth)."""
    yield from _agno(AGNO_SECURITY_KEY)


FIELD_SERVER_SCRIPT = A2A_SERVER_SCRIPT.parent / "a2a_field_server.py"


class FieldAgents:
    """`a2a_field_server.py` agents (a2a-sdk 1.3.0 with habits met in the field), one per set
    of flags, started when first asked and stopped with the session."""

    def __init__(self) -> None:
        self._running: dict[tuple[str, ...], A2AServerProcess] = {}

    def __call__(self, *flags: str) -> A2AServerProcess:
        key = tuple(sorted(flags))
        if key not in self._running:
            python = _python("a2a")
            step = ["--step-seconds", "0.2", *flags]
            proc = _start(
                lambda port: [python, str(FIELD_SERVER_SCRIPT), "--port", str(port), *step]
            )
            base = f"http://127.0.0.1:{proc.port}"
            card = "/.well-known/agent-card.json"
            if "--card-path" in flags:
                card = flags[flags.index("--card-path") + 1]
            server: A2AServerProcess = _upgrade(
                proc, A2AServerProcess, base_url=base, card_url=base + card
            )
            if "--no-card" not in flags:
                _wait_http(server, server.card_url, {})
            self._running[key] = server
        return self._running[key]

    def stop(self) -> None:
        for server in self._running.values():
            server.stop()


@pytest.fixture(scope="session")
def a2a_field() -> Iterator[FieldAgents]:
    """`a2a_field(*flags)`: an `a2a_field_server.py` agent with those flags (`--discover-400`,
    `--card-path PATH`, `--no-card`, `--drop-artifacts`, `--ask-in-artifact`,
    `--internal-errors`, `--http500`); `.url` is its JSON-RPC endpoint (the root)."""
    agents = FieldAgents()
    try:
        yield agents
    finally:
        agents.stop()
