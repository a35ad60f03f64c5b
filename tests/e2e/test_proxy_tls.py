"""Issue 36: proxies and custom CAs, end to end. A real forward proxy (Debian's tinyproxy,
started here) and a real MCP server over HTTPS (fastmcp 3 behind uvicorn) with a certificate
from a test CA made here by openssl. mcptask honours HTTPS_PROXY, NO_PROXY, SSL_CERT_FILE and
SSL_CERT_DIR as curl, pip and httpx do, and `--proxy`/`--cacert` beat them."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import RunCli, assert_one_line_error
from servers.common import ServerProcess, free_port, start_server
from servers.mcp_envs import start_fastmcp3_tls


@dataclass
class Ca:
    pem: Path
    server_cert: Path
    server_key: Path


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> Ca:
    """A test CA and a server certificate it signed, for localhost and 127.0.0.1."""
    d = tmp_path_factory.mktemp("ca")
    subj = ("-subj", "/CN=mcptask-test-ca")
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        *subj,
        cwd=d,
    )
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
        cwd=d,
    )
    (d / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    _openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "san.ext",
        cwd=d,
    )
    return Ca(d / "ca.pem", d / "server.pem", d / "server.key")


@pytest.fixture(scope="module")
def tls_server(ca: Ca) -> Iterator[ServerProcess]:
    server = start_fastmcp3_tls(ca.server_cert, ca.server_key)
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Proxy:
    url: str
    log: Path

    def connects(self) -> list[str]:
        """The `CONNECT host:port` lines tinyproxy logged so far."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        marker = "): CONNECT "  # "CONNECT ... Request (file descriptor N): CONNECT h:p HTTP/1.1"
        return [line.split(marker, 1)[1].split()[0] for line in text.splitlines() if marker in line]


def _tinyproxy() -> str:
    found = shutil.which("tinyproxy") or (
        "/usr/bin/tinyproxy" if Path("/usr/bin/tinyproxy").exists() else None
    )
    if found is None:
        raise RuntimeError("tinyproxy is not installed (scripts/test installs it with apt-get)")
    return found


@pytest.fixture(scope="module")
def proxy(tls_server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    """tinyproxy on 127.0.0.1, allowed to CONNECT to the HTTPS server's port only."""
    d = tmp_path_factory.mktemp("proxy")
    port = free_port()
    log = d / "tinyproxy.log"
    conf = d / "tinyproxy.conf"
    conf.write_text(
        f"Port {port}\nListen 127.0.0.1\nAllow 127.0.0.1\nConnectPort {tls_server.port}\n"
        f'LogLevel Connect\nLogFile "{log}"\nPidFile "{d / "pid"}"\nMaxClients 50\n'
    )
    server = start_server(
        [_tinyproxy(), "-d", "-c", str(conf)], port=port, url=f"http://127.0.0.1:{port}"
    )
    try:
        yield Proxy(server.url, log)
    finally:
        server.stop()


def _call(run_cli: RunCli, url: str, env: dict[str, str], *extra: str) -> dict[str, Any]:
    r = run_cli("call", "quick", "x=21", "--url", url, "-o", "json", *extra, env=env)
    assert r.code == 0, r.stderr
    task: dict[str, Any] = r.json()
    return task


def test_every_command_reaches_an_https_server_through_https_proxy(
    run_cli: RunCli, tls_server: ServerProcess, proxy: Proxy, ca: Ca
) -> None:
    url = tls_server.url
    env = {"HTTPS_PROXY": proxy.url, "SSL_CERT_FILE": str(ca.pem)}
    before = len(proxy.connects())
    tools = run_cli("tools", "--url", url, "-o", "json", env=env)
    assert tools.code == 0, tools.stderr
    task = _call(run_cli, url, env)
    tid = task["taskId"]
    for args in (("get",), ("watch", "-o", "ndjson"), ("result",), ("list",), ("log",)):
        output = () if "-o" in args else ("-o", "json")
        ids = () if args == ("list",) else ("--", tid)  # (fastmcp's ids may begin with -)
        r = run_cli(*args, "--url", url, *output, *ids, env=env)
        assert r.code == 0, (args, r.stderr)
    assert "42" in run_cli("result", "--url", url, "-o", "json", "--", tid, env=env).stdout
    seen = proxy.connects()[before:]
    # every command that spoke to the server went through the proxy (`log` reads the book)
    assert len(seen) >= 6 and set(seen) == {f"127.0.0.1:{tls_server.port}"}


def test_trace_names_the_proxy_a_request_went_through(
    run_cli: RunCli, tls_server: ServerProcess, proxy: Proxy, ca: Ca
) -> None:
    env = {"HTTPS_PROXY": proxy.url, "SSL_CERT_FILE": str(ca.pem)}
    r = run_cli("tools", "--url", tls_server.url, "--trace", env=env)
    assert r.code == 0, r.stderr
    assert f"* proxy {proxy.url} (from HTTPS_PROXY)" in r.stderr


def test_without_the_ca_the_tls_error_is_one_clear_line(
    run_cli: RunCli, tls_server: ServerProcess, proxy: Proxy
) -> None:
    for env in ({"HTTPS_PROXY": proxy.url}, {}):
        r = run_cli("tools", "--url", tls_server.url, env=env)
        assert r.code == 4, r.stderr
        assert_one_line_error(r)
        assert "certificate" in r.stderr and "SSL_CERT_FILE" in r.stderr, r.stderr


def test_cacert_flag_and_ssl_cert_dir_trust_the_test_ca(
    run_cli: RunCli, tls_server: ServerProcess, ca: Ca, tmp_path: Path
) -> None:
    r = run_cli("tools", "--url", tls_server.url, "--cacert", str(ca.pem))
    assert r.code == 0, r.stderr
    hashed = tmp_path / "certs"
    hashed.mkdir()
    shutil.copy(ca.pem, hashed / "ca.pem")
    subprocess.run(["openssl", "rehash", str(hashed)], check=True, capture_output=True)
    # SSL_CERT_FILE, when set (this machine sets it), wins over SSL_CERT_DIR: emptied here
    only_dir = {"SSL_CERT_DIR": str(hashed), "SSL_CERT_FILE": ""}
    r = run_cli("tools", "--url", tls_server.url, env=only_dir)
    assert r.code == 0, r.stderr
    missing = run_cli("tools", "--url", tls_server.url, "--cacert", str(tmp_path / "nope.pem"))
    assert missing.code == 2
    assert_one_line_error(missing)
    assert "--cacert" in missing.stderr


def test_no_proxy_is_honoured(
    run_cli: RunCli, tls_server: ServerProcess, proxy: Proxy, ca: Ca
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    env = {"HTTPS_PROXY": dead, "SSL_CERT_FILE": str(ca.pem)}
    # through a proxy that is not there: a one-line error naming nothing secret
    r = run_cli("tools", "--url", tls_server.url, env=env)
    assert r.code == 4
    assert_one_line_error(r)
    # NO_PROXY names the host: straight to the server, the proxy never asked
    before = len(proxy.connects())
    for no_proxy in ("127.0.0.1", "localhost,127.0.0.0/8", "*"):
        env = {"HTTPS_PROXY": proxy.url, "NO_PROXY": no_proxy, "SSL_CERT_FILE": str(ca.pem)}
        r = run_cli("tools", "--url", tls_server.url, "--trace", env=env)
        assert r.code == 0, r.stderr
        assert "* no proxy for 127.0.0.1 (NO_PROXY)" in r.stderr
    assert proxy.connects()[before:] == []


def test_the_proxy_flag_beats_the_environment(
    run_cli: RunCli, tls_server: ServerProcess, proxy: Proxy, ca: Ca
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    env = {"HTTPS_PROXY": dead, "SSL_CERT_FILE": str(ca.pem)}
    before = len(proxy.connects())
    r = run_cli("tools", "--url", tls_server.url, "--proxy", proxy.url, env=env)
    assert r.code == 0, r.stderr
    assert len(proxy.connects()) > before
    bad = run_cli("tools", "--url", tls_server.url, "--proxy", "ftp://x", env=env)
    assert bad.code == 2
    assert_one_line_error(bad)
