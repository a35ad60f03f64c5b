"""Issue 26 against fastmcp's real OAuth provider (the MCP SDK's authorization server):
registration with default scopes (item 5), revocation (item 6), three processes renewing one
expired token on a rotating server (item 7). `$BROWSER` is tests/servers/browser.sh."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import RunCli
from servers.common import ServerProcess
from servers.conformance import BROWSER
from servers.mcp_envs import start_fastmcp3_oauth

pytestmark = pytest.mark.timeout(180)

ENV = {"BROWSER": str(BROWSER), "MCPTASK_KEYRING": "off"}


@pytest.fixture(scope="module")
def scoped_server() -> Iterator[ServerProcess]:
    """Registration gives `read` to a client that asks for no scope; `read write` are valid
    and listed."""
    server = start_fastmcp3_oauth(valid_scopes="read write", default_scopes="read")
    try:
        yield server
    finally:
        server.stop()


def test_login_registers_with_the_scopes_it_asks_for(
    run_cli: RunCli, scoped_server: ServerProcess, state_dir: Path
) -> None:
    url = scoped_server.url
    r = run_cli("auth", "login", "--url", url, "-o", "json", env=ENV)
    assert r.code == 0, r.stderr
    assert set((r.json()["scope"] or "").split()) == {"read", "write"}
    listed = run_cli("tools", "--url", url, "-o", "json", env=ENV)
    assert listed.code == 0, listed.stderr
    # a scope the server does not know: the error names --scope
    bad = run_cli("auth", "login", "--url", url, "--scope", "admin", env=ENV)
    assert bad.code == 3, bad.stderr
    assert "--scope" in bad.stderr.splitlines()[-1]
    assert "Traceback" not in bad.stderr


def test_processes_renewing_one_expired_token_all_succeed(
    run_cli: RunCli, fastmcp3_oauth_server: ServerProcess, state_dir: Path
) -> None:
    """fastmcp rotates refresh tokens (the old one dies with its first use): four `tools` at
    once with an expired access token; one renews, the others wait and use its token."""
    import time

    url = fastmcp3_oauth_server.url
    r = run_cli("auth", "login", "--url", url, env=ENV)
    assert r.code == 0, r.stderr
    for _round in range(2):
        path = state_dir / "credentials.json"
        (entry,) = json.loads(path.read_text())["servers"].values()
        while time.time() < entry["expiresAt"] + 0.5:  # the condition: the token has expired
            time.sleep(0.2)
        with ThreadPoolExecutor(4) as pool:
            runs = list(
                pool.map(lambda _: run_cli("tools", "--url", url, "-o", "json", env=ENV), range(4))
            )
        assert [x.code for x in runs] == [0, 0, 0, 0], [x.stderr for x in runs]
        status = run_cli("auth", "status", "--url", url, "-o", "json", env=ENV)
        assert status.code == 0 and status.json()["refreshable"] is True
