"""Issue 26, item 1: credentials go to the target they were given for. Two real
server-everything processes, each behind a recording proxy that keeps the `Authorization` and
`X-...` headers it was sent; tasks on both; then runs without a target (the task book finds each
id's endpoint) with a token or `-H` header given on the command line or in the environment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import RunCli
from servers.common import ServerProcess
from servers.mcp_envs import start_everything
from servers.recording_proxy import RecordingProxy

TOOL = "simulate-research-query"
SECRET = "tokA-5f1e9c"
HEADER_SECRET = "key-77ad31"


@pytest.fixture(scope="module")
def second_server() -> Iterator[ServerProcess]:
    server = start_everything()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def proxies(
    everything_server: ServerProcess, second_server: ServerProcess
) -> Iterator[tuple[RecordingProxy, RecordingProxy]]:
    with RecordingProxy(everything_server.url) as a, RecordingProxy(second_server.url) as b:
        yield a, b


def create(run_cli: RunCli, url: str, env: dict[str, str] | None = None) -> str:
    r = run_cli("call", TOOL, "topic=tides", "--url", url, "-o", "json", env=env)
    assert r.code == 0, r.stderr
    task_id: str = r.json()["taskId"]
    return task_id


def secrets_in(proxy: RecordingProxy) -> list[str]:
    return [
        f"{k}: {v}" for h in proxy.seen for k, v in h.items() if SECRET in v or HEADER_SECRET in v
    ]


def test_book_found_endpoints_never_get_the_command_lines_credentials(
    run_cli: RunCli, proxies: tuple[RecordingProxy, RecordingProxy], tmp_path: Path
) -> None:
    a, b = proxies
    ia = create(run_cli, a.url, {"MCPTASK_TOKEN": SECRET})
    assert a.received("Authorization") and set(a.received("Authorization")) == {f"Bearer {SECRET}"}
    ib = create(run_cli, b.url)
    assert not b.received("Authorization")
    a.clear()
    token_file = tmp_path / "token"
    token_file.write_text(SECRET + "\n")
    runs: list[tuple[list[str], dict[str, str]]] = [
        (["watch", "-o", "json", "--", ia, ib], {"MCPTASK_TOKEN": SECRET}),
        (["watch", "--all", "-o", "json"], {"MCPTASK_TOKEN": SECRET}),
        (["get", "-o", "json", "--", ib], {"MCPTASK_TOKEN": SECRET}),
        (["get", "--token-file", str(token_file), "-o", "json", "--", ib], {}),
        (["get", "-H", f"X-Api-Key: {HEADER_SECRET}", "-o", "json", "--", ib], {}),
        (["result", "-H", f"X-Api-Key: {HEADER_SECRET}", "-o", "json", "--", ib], {}),
    ]
    for args, env in runs:
        r = run_cli(*args, env=env)
        assert r.code == 0, (args, r.stderr)
        assert "go only to the target given with --url or -s" in r.stderr, r.stderr
        assert SECRET not in r.stderr + r.stdout and HEADER_SECRET not in r.stderr + r.stdout
    assert b.seen, "B was asked"
    assert secrets_in(b) == [], "B received a credential given for another target"
    assert secrets_in(a) == [], "A received a credential given with no target"

    # with a target, the credentials go to it (and only to it)
    r = run_cli("get", "--url", b.url, "-H", f"X-Api-Key: {HEADER_SECRET}", "-o", "json", "--", ib)
    assert r.code == 0, r.stderr
    assert b.received("X-Api-Key") == [HEADER_SECRET]
    assert secrets_in(a) == []


def test_a_book_found_endpoint_gets_its_own_config_entry_credentials(
    run_cli: RunCli, proxies: tuple[RecordingProxy, RecordingProxy], tmp_path: Path
) -> None:
    a, b = proxies
    ia = create(run_cli, a.url)
    ib = create(run_cli, b.url)
    config = tmp_path / "config.toml"
    config.write_text(
        "[servers.bee]\n"
        f'url = "{b.url}"\n'
        'headers = { "X-Team" = "bee-team" }\n'
        'token_env = "BEE_TOKEN"\n'
    )
    a.clear()
    b.clear()
    env = {"MCPTASK_CONFIG": str(config), "BEE_TOKEN": "bee-own-token", "MCPTASK_TOKEN": SECRET}
    r = run_cli("watch", "-o", "json", "--", ia, ib, env=env)
    assert r.code == 0, r.stderr
    assert set(b.received("Authorization")) == {"Bearer bee-own-token"}
    assert set(b.received("X-Team")) == {"bee-team"}
    assert not a.received("Authorization") and not a.received("X-Team")
    assert secrets_in(a) == [] and secrets_in(b) == []
