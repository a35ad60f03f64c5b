"""Issue 26: OAuth against a scripted hostile authorization server (tests/servers/hostile_auth.py)
over the real wire, the real CLI in a subprocess, `$BROWSER` = tests/servers/browser.sh: refusals
that echo the request (item 2), tokens no header can carry (3), a 401 from where a redirect led
(4), numbers no clock can hold and a server that refuses every renewed token (10)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from conftest import CliResult, RunCli, assert_one_line_error, rest_of
from servers.conformance import BROWSER
from servers.hostile_auth import HostileAuth

pytestmark = pytest.mark.timeout(120)

ENV = {"BROWSER": str(BROWSER), "MCPTASK_KEYRING": "off", "MCPTASK_LOGIN_TIMEOUT": "30"}


@pytest.fixture
def hostile() -> Iterator[HostileAuth]:
    with HostileAuth() as server:
        yield server


def everything(r: CliResult) -> str:
    return r.stdout + r.stderr


def no_traceback(r: CliResult) -> None:
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr


def ends_in_one_error(r: CliResult) -> None:
    """A login's notes (where to authorize), then one error line."""
    no_traceback(r)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert lines and lines[-1].startswith("mcptask: error: "), r.stderr
    assert len([ln for ln in lines if "error" in ln]) == 1, r.stderr


def sent_secrets(server: HostileAuth) -> list[str]:
    """Every secret mcptask sent to the token endpoint: the form's secret fields and what the
    Basic header encodes (and prefixes of them, as a truncated echo would show)."""
    out: list[str] = []
    for seen in server.requests_to("/token"):
        for key, value in parse_qsl(seen.body):
            if key in (
                "client_secret",
                "code",
                "code_verifier",
                "client_assertion",
                "refresh_token",
            ):
                out.append(value)
        auth = seen.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            out.append(auth[6:])
            out.append(base64.b64decode(auth[6:]).decode().partition(":")[2])
    return [s for s in out if s]


def assert_nothing_leaked(server: HostileAuth, *results: CliResult) -> None:
    secrets = sent_secrets(server)
    assert secrets, "the token endpoint was asked"
    for r in results:
        text = everything(r)
        for secret in secrets:
            assert secret not in text and secret[:12] not in text, (secret, text)


def test_a_refusal_echoing_the_client_secret_shows_none_of_it(
    run_cli: RunCli, hostile: HostileAuth, tmp_path: Path
) -> None:
    hostile.quirks.echo = True
    secret_file = tmp_path / "secret"
    secret_file.write_text("s3cr3t+/=value-9d1c\n")
    args = ["--client-id", "cid", "--client-secret-file", str(secret_file), "--url", hostile.url]
    for extra in ([], ["--trace"]):
        r = run_cli("auth", "login", "--client-credentials", *args, *extra, env=ENV)
        assert r.code == 3, r.stderr
        no_traceback(r)
        if not extra:
            assert_one_line_error(r)
        assert "invalid_client" in r.stderr
        assert_nothing_leaked(hostile, r)
        assert "s3cr3t" not in everything(r)


def test_a_refusal_echoing_the_jwt_assertion_shows_none_of_it(
    run_cli: RunCli, hostile: HostileAuth, tmp_path: Path
) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    pem = tmp_path / "key.pem"
    pem.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    hostile.quirks.echo = True
    args = ["--client-id", "cid", "--client-key-file", str(pem), "--url", hostile.url]
    r = run_cli("auth", "login", "--client-credentials", *args, env=ENV)
    assert r.code == 3, r.stderr
    assert_one_line_error(r)
    assert_nothing_leaked(hostile, r)
    (sent,) = hostile.requests_to("/token")
    assert "client_assertion=" in sent.body


def test_a_refusal_echoing_the_code_and_verifier_shows_none_of_them(
    run_cli: RunCli, hostile: HostileAuth
) -> None:
    hostile.quirks.echo = True
    for extra in ([], ["--trace"]):
        r = run_cli("auth", "login", "--url", hostile.url, *extra, env=ENV)
        assert r.code == 3, r.stderr
        no_traceback(r)
        assert "refused the authorization code: invalid_client" in r.stderr
        assert_nothing_leaked(hostile, r)
        # the client secret the registration gave is held too
        registered = [c["secret"] for c in hostile.state.clients.values()]
        assert not [s for s in registered if s in everything(r)]


def test_an_access_token_with_cr_lf_is_refused_unshown(
    run_cli: RunCli, hostile: HostileAuth, state_dir: Path
) -> None:
    hostile.quirks.token = "tok-evil\r\nX-Injected: yes"
    r = run_cli("auth", "login", "--url", hostile.url, env=ENV)
    assert r.code == 3, r.stderr
    ends_in_one_error(r)
    assert "access token that has a space, a control or a non-ASCII character" in r.stderr
    assert "tok-evil" not in r.stderr and "X-Injected" not in r.stderr
    r = run_cli("tools", "--url", hostile.url, "--login", env=ENV)
    assert r.code == 3, r.stderr
    no_traceback(r)
    assert "tok-evil" not in everything(r) and "X-Injected" not in everything(r)
    assert not [s for s in hostile.seen if "X-Injected" in s.headers]
    assert not (state_dir / "credentials.json").exists()


def test_a_stored_token_no_header_can_carry_is_never_sent_nor_printed(
    run_cli: RunCli, hostile: HostileAuth, state_dir: Path
) -> None:
    r = run_cli("auth", "login", "--url", hostile.url, env=ENV)
    assert r.code == 0, r.stderr
    path = state_dir / "credentials.json"
    data = json.loads(path.read_text())
    (entry,) = data["servers"].values()
    entry["accessToken"] = "tok\x1b]0;pwned\x07\r\nX-Injected: 1"
    path.write_text(json.dumps(data))
    r = run_cli("auth", "token", "--url", hostile.url, env=ENV)
    assert r.code == 3, r.stderr
    assert_one_line_error(r)
    assert "\x1b" not in everything(r) and "X-Injected" not in everything(r)
    assert not [s for s in hostile.seen if "X-Injected" in s.headers]


def test_a_401_from_where_a_redirect_led_never_logs_in_there(
    run_cli: RunCli, hostile: HostileAuth, state_dir: Path
) -> None:
    with HostileAuth() as b:
        hostile.quirks.redirect_to = b.base
        b.quirks.resource = hostile.url  # B's metadata claims to speak for A
        r = run_cli("tools", "--url", hostile.url, "--login", env=ENV)
        assert r.code == 3, r.stderr
        assert_one_line_error(r)
        assert f"where {hostile.base} redirected" in r.stderr
        r2 = run_cli("auth", "login", "--url", hostile.url, env=ENV)
        assert r2.code == 3, r2.stderr
        assert_one_line_error(r2)
        assert "never follows a redirect to another origin" in r2.stderr
        for path in ("/register", "/authorize", "/token"):
            assert not b.requests_to(path), path
        assert not (state_dir / "credentials.json").exists()


@pytest.mark.parametrize("expires_in", ["1e999", "NaN", "-Infinity", '"soon"', "1" + "0" * 400])
def test_numbers_no_clock_can_hold_mean_no_expiry(
    run_cli: RunCli, hostile: HostileAuth, expires_in: str
) -> None:
    hostile.quirks.expires_in = expires_in
    r = run_cli("auth", "login", "--url", hostile.url, "-o", "json", env=ENV)
    assert r.code == 0, r.stderr
    assert r.json()["expiresAt"] is None
    status = run_cli("auth", "status", "-o", "json", env=ENV)
    assert status.code == 0, status.stderr
    json.loads(status.stdout, parse_constant=lambda c: pytest.fail(f"non-strict JSON: {c}"))
    tools = run_cli("tools", "--url", hostile.url, "-o", "json", env=ENV)
    assert tools.code == 0, tools.stderr


def test_a_server_refusing_every_renewed_token_ends_in_exit_3_with_its_reason(
    run_cli: RunCli, hostile: HostileAuth
) -> None:
    r = run_cli("auth", "login", "--url", hostile.url, env=ENV)
    assert r.code == 0, r.stderr
    hostile.quirks.refuse_tokens = True
    r = run_cli("tools", "--url", hostile.url, "-o", "json", env=ENV)
    assert r.code == 3, r.stderr
    assert_one_line_error(r)
    assert "invalid_token" in r.stderr and "StreamClosed" not in r.stderr


def test_logout_revokes_with_the_listed_method_then_the_other(
    run_cli: RunCli, hostile: HostileAuth
) -> None:
    """The server lists `client_secret_basic` (and the token endpoint settled on it) but its
    revocation endpoint reads the secret from the form only: the second try revokes."""
    hostile.quirks.registered_method = "client_secret_basic"
    hostile.quirks.revocation_methods = ["client_secret_basic", "client_secret_post"]
    r = run_cli("auth", "login", "--url", hostile.url, env=ENV)
    assert r.code == 0, r.stderr
    (refresh,) = hostile.state.refresh
    out = run_cli("auth", "logout", "--url", hostile.url, env=ENV)
    assert out.code == 0, out.stderr
    assert "the authorization server revoked them" in out.stderr
    assert hostile.state.revoked == [refresh]
    tries = hostile.requests_to("/revoke")
    assert [t.headers.get("Authorization", "")[:6] for t in tries] == ["Basic ", ""]


def test_processes_renewing_at_once_take_turns_and_share_the_result(
    run_cli: RunCli, hostile: HostileAuth, state_dir: Path
) -> None:
    """A rotating server (a refresh token dies with its first use) that takes a while to
    renew, and four processes with the expired token at once: one renews, the others wait
    for it and use its token (none is told to log in again)."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    hostile.quirks.expires_in = "1"
    hostile.quirks.refresh_delay = 1.0
    r = run_cli("auth", "login", "--url", hostile.url, env=ENV)
    assert r.code == 0, r.stderr
    (entry,) = json.loads((state_dir / "credentials.json").read_text())["servers"].values()
    while time.time() < entry["expiresAt"] + 0.2:  # the condition: the token has expired
        time.sleep(0.1)

    def tools(_: int) -> CliResult:
        return run_cli("tools", "--url", hostile.url, "-o", "json", env=ENV)

    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(tools, range(4)))
    assert [x.code for x in runs] == [0, 0, 0, 0], [x.stderr for x in runs]
    assert hostile.state.refreshes == 1


def test_a_login_that_cannot_keep_its_tokens_says_what_where_and_how_to_retry(
    run_cli: RunCli, hostile: HostileAuth, state_dir: Path, tmp_path: Path
) -> None:
    (state_dir / "credentials.json.lock").mkdir()  # a directory where the lock goes
    r = run_cli("auth", "login", "--url", hostile.url, env=ENV)
    assert r.code == 2, r.stderr
    ends_in_one_error(r)
    last = r.stderr.splitlines()[-1]
    assert "the login to" in last and "credentials.json.lock (it is a directory)" in last
    assert "log in again" in last and "cannot write the output" not in r.stderr
    assert_no_token_shown(hostile, r)

    blocked = tmp_path / "a-file"
    blocked.write_text("")
    env = {**ENV, "MCPTASK_STATE_DIR": str(blocked / "state")}  # under a file: cannot exist
    r = run_cli("auth", "login", "--url", hostile.url, env=env)
    assert r.code == 2, r.stderr
    ends_in_one_error(r)
    assert f"cannot write {blocked}" in r.stderr and "MCPTASK_STATE_DIR" in r.stderr
    assert_no_token_shown(hostile, r)


def assert_no_token_shown(server: HostileAuth, r: CliResult) -> None:
    issued = [*server.state.tokens, *server.state.refresh]
    assert issued and not [t for t in issued if t in everything(r)]


@pytest.mark.parametrize("kind", ["fifo", "symlink", "damaged", "deep", "directory"])
def test_odd_credential_files_never_block_nor_crash(
    run_cli: RunCli, hostile: HostileAuth, state_dir: Path, tmp_path: Path, kind: str
) -> None:
    import os

    path = state_dir / "credentials.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        (tmp_path / "elsewhere.json").write_text('{"servers": {}}')
        path.symlink_to(tmp_path / "elsewhere.json")
    elif kind == "damaged":
        path.write_text('{"servers": {"x": ')
    elif kind == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000)
    else:
        path.mkdir()
    for args in (["auth", "status", "-o", "json"], ["tools", "--url", hostile.url]):
        r = run_cli(*args, env=ENV, timeout=30)
        no_traceback(r)
        assert r.code in (0, 3), r.stderr
    if kind in ("damaged", "deep"):
        assert not path.exists() and list(state_dir.glob("credentials.json.damaged-*"))
        r = run_cli("auth", "login", "--url", hostile.url, env=ENV)
        assert r.code == 0, r.stderr


def test_a_keyring_that_never_answers_has_a_deadline(
    run_cli: RunCli, hostile: HostileAuth, state_dir: Path
) -> None:
    from servers.common import REPO

    env = {
        **ENV,
        "MCPTASK_KEYRING": "",
        "PYTHON_KEYRING_BACKEND": "blocking_keyring.BlockingKeyring",
        "PYTHONPATH": str(REPO / "tests" / "servers"),
        "MCPTASK_KEYRING_TIMEOUT": "0.5",
    }
    r = run_cli("auth", "login", "--url", hostile.url, env=env, timeout=60)
    assert r.code == 0, r.stderr
    assert "the OS keyring did not answer within 0.5 s" in r.stderr
    assert (state_dir / "credentials.json").exists()
    r = run_cli("tools", "--url", hostile.url, "-o", "json", env=env, timeout=60)
    assert r.code == 0, r.stderr
    assert "noop" in r.stdout


@pytest.mark.parametrize("value", ["nan", "1e999", "0", "-1", "61", "soon"])
def test_a_keyring_deadline_out_of_bounds_is_refused_in_one_line(
    run_cli: RunCli, hostile: HostileAuth, value: str
) -> None:
    """`MCPTASK_KEYRING_TIMEOUT` is a number of seconds like the others: more than 0, at
    most 60, else a usage error (exit 2) naming it, before the login begins."""
    from servers.common import REPO

    env = {
        **ENV,
        "MCPTASK_KEYRING": "",
        "PYTHON_KEYRING_BACKEND": "blocking_keyring.BlockingKeyring",
        "PYTHONPATH": str(REPO / "tests" / "servers"),
        "MCPTASK_KEYRING_TIMEOUT": value,
    }
    r = run_cli("auth", "login", "--url", hostile.url, env=env, timeout=60)
    assert r.code == 2, r.stderr
    ends_in_one_error(r)
    assert "MCPTASK_KEYRING_TIMEOUT" in r.stderr and "Traceback" not in r.stderr
    assert not hostile.state.codes  # no authorization was asked for


def test_forged_requests_to_the_loopback_get_400_and_the_login_goes_on(
    hostile: HostileAuth, state_dir: Path
) -> None:
    import re
    import socket
    import subprocess
    import sys
    import urllib.request
    from urllib.parse import parse_qs, urlsplit

    from conftest import clean_env

    proc = subprocess.Popen(
        [sys.executable, "-m", "mcptask", "auth", "login", "--url", hostile.url, "--no-browser"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=clean_env(state_dir, {"MCPTASK_KEYRING": "off"}),
        text=True,
    )
    assert proc.stderr is not None
    authorize = ""
    for line in proc.stderr:
        if line.strip().startswith("http"):
            authorize = line.strip()
            break
    redirect = parse_qs(urlsplit(authorize).query)["redirect_uri"][0]
    port = urlsplit(redirect).port
    assert port is not None

    def raw(request: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(request)
            s.shutdown(socket.SHUT_WR)
            return s.recv(200)

    assert raw(b"GET /callback?" + b"a" * 200_000 + b" HTTP/1.1\r\n\r\n").startswith(
        b"HTTP/1.1 400"
    )
    assert raw(b"GET /callback HTTP/1.1\r\n" + b"X: y\r\n" * 500 + b"\r\n").startswith(
        b"HTTP/1.1 400"
    )
    assert raw(b"\xff\xfe garbage\r\n\r\n").startswith(b"HTTP/1.1 400")
    forged = b"GET /callback?code=forged&state=not-this-one HTTP/1.1\r\n\r\n"
    assert raw(forged).startswith(b"HTTP/1.1 400")
    # the real redirect: the authorization server sends the browser back to the listener
    with urllib.request.urlopen(authorize, timeout=10) as answer:
        assert answer.status == 200
    _, err = rest_of(proc, 60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "logged in" in err
    assert not re.search(r"code=forged", err)


def test_stored_numbers_no_clock_can_hold_are_read_as_none(
    run_cli: RunCli, hostile: HostileAuth, state_dir: Path
) -> None:
    r = run_cli("auth", "login", "--url", hostile.url, env=ENV)
    assert r.code == 0, r.stderr
    path = state_dir / "credentials.json"
    text = path.read_text()
    data = json.loads(text)
    (key,) = data["servers"]
    entry = data["servers"][key]
    entry["expiresAt"], entry["obtainedAt"] = "@EXPIRES@", "@OBTAINED@"
    text = json.dumps(data).replace('"@EXPIRES@"', "1" + "0" * 400)
    path.write_text(text.replace('"@OBTAINED@"', "NaN"))
    for args in (["auth", "status", "-o", "json"], ["auth", "status", "--url", hostile.url]):
        r = run_cli(*args, env=ENV)
        assert r.code == 0, r.stderr
        no_traceback(r)
    r = run_cli("auth", "status", "-o", "json", env=ENV)
    (summary,) = json.loads(r.stdout, parse_constant=lambda c: pytest.fail(c))["servers"]
    assert summary["expiresAt"] is None
    assert run_cli("tools", "--url", hostile.url, env=ENV).code == 0


@pytest.mark.parametrize("value", ["nan", "1e999", "0", "-1", "soon"])
def test_a_login_deadline_out_of_bounds_is_refused_before_any_request(
    run_cli: RunCli, hostile: HostileAuth, value: str
) -> None:
    """`MCPTASK_LOGIN_TIMEOUT` is refused before the server is even asked (no client is
    registered at an authorization server for a login that cannot wait for its answer)."""
    r = run_cli("auth", "login", "--url", hostile.url, env={**ENV, "MCPTASK_LOGIN_TIMEOUT": value})
    assert r.code == 2, r.stderr
    ends_in_one_error(r)
    assert "MCPTASK_LOGIN_TIMEOUT" in r.stderr
    assert not hostile.seen  # not one request
