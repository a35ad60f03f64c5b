"""OAuth (mcptask/auth) against a scripted authorization server and MCP endpoint in an
`httpx.MockTransport`: discovery order, client identity, token endpoint authentication, PKCE,
`state`/`iss` checks, scope selection, refresh and rotation, step-up bounds, storage, and the
HTTP transport's hook. The conformance suite and a real server are in test_auth_servers.py."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import stat
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import pytest

from mcptask.auth import challenge, discovery, flows
from mcptask.auth import login as logins
from mcptask.auth.client import Client, ClientOptions, authenticate, choose_method
from mcptask.auth.provider import MAX_STEP_UPS, OAuthProvider
from mcptask.auth.store import Credentials, CredentialStore
from mcptask.auth.web import Web
from mcptask.errors import AuthError
from mcptask.session import config
from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.rpc import RpcClient

MCP = "http://mcp.test/mcp"
AS = "http://as.test"


# -- a scripted authorization server + MCP endpoint -----------------------------------------------


@dataclass
class Scripted:
    """The PRM at the path-inserted well-known URL, AS metadata at the root of as.test, DCR,
    an authorization endpoint reached by the fake browser, a token endpoint that rotates refresh
    tokens, and an MCP endpoint that wants `Bearer <current token>`."""

    prm_in_header: bool = True
    prm: dict[str, Any] = field(
        default_factory=lambda: {"resource": MCP, "authorization_servers": [AS]}
    )
    metadata: dict[str, Any] = field(
        default_factory=lambda: {
            "issuer": AS,
            "authorization_endpoint": f"{AS}/authorize",
            "token_endpoint": f"{AS}/token",
            "registration_endpoint": f"{AS}/register",
            "revocation_endpoint": f"{AS}/revoke",
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": ["mcp", "offline_access"],
        }
    )
    challenge_scope: str | None = "mcp"
    expires_in: int = 3600
    #: scopes tools/call needs (403 insufficient_scope without them)
    call_needs: str | None = None
    issue_iss: str | None = None
    tokens: list[str] = field(default_factory=list)
    refresh_tokens: list[str] = field(default_factory=list)
    granted: dict[str, str] = field(default_factory=dict)
    requests: list[httpx.Request] = field(default_factory=list)
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    refuse_refresh: bool = False
    expiry: dict[str, float] = field(default_factory=dict)
    revoked: list[str] = field(default_factory=list)
    #: seconds the server's clock runs ahead (tokens expire without waiting for them)
    later: float = 0.0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        url = str(request.url).split("?")[0]
        if url == "http://mcp.test/.well-known/oauth-protected-resource/mcp":
            return httpx.Response(200, json=self.prm)
        if url == f"{AS}/.well-known/oauth-authorization-server":
            return httpx.Response(200, json=self.metadata)
        if url == f"{AS}/register":
            body = json.loads(request.content)
            return httpx.Response(201, json={"client_id": "dyn-client", **body})
        if url == f"{AS}/token":
            return self._token(request)
        if url == f"{AS}/revoke":
            self.revoked.append(dict(parse_qsl(request.content.decode()))["token"])
            return httpx.Response(200)
        if url == MCP:
            return self._mcp(request)
        return httpx.Response(404)

    def authorize(self, url: str) -> str:
        """What the browser does: the redirect back to the client, with a code."""
        q = dict(parse_qsl(urlsplit(url).query))
        code = f"code-{len(self.codes)}"
        self.codes[code] = q
        back = {"code": code, "state": q["state"]}
        if self.issue_iss:
            back["iss"] = self.issue_iss
        return f"{q['redirect_uri']}?{urlencode(back)}"

    def _issue(self, scope: str) -> httpx.Response:
        token = f"tok-{len(self.tokens)}"
        refresh = f"ref-{len(self.refresh_tokens)}"
        self.tokens.append(token)
        self.refresh_tokens.append(refresh)
        self.granted[token] = scope
        self.expiry[token] = time.time() + self.later + self.expires_in
        return httpx.Response(
            200,
            json={
                "access_token": token,
                "token_type": "Bearer",
                "expires_in": self.expires_in,
                "refresh_token": refresh,
                "scope": scope,
            },
        )

    def _token(self, request: httpx.Request) -> httpx.Response:
        form = dict(parse_qsl(request.content.decode()))
        if form["grant_type"] == "authorization_code":
            asked = self.codes[form["code"]]
            digest = hashlib.sha256(form["code_verifier"].encode()).digest()
            challenge_ = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            assert asked["code_challenge"] == challenge_
            assert form["resource"] == asked["resource"]
            return self._issue(asked.get("scope", ""))
        if form["grant_type"] == "refresh_token":
            if self.refuse_refresh or form["refresh_token"] != self.refresh_tokens[-1]:
                return httpx.Response(400, json={"error": "invalid_grant"})
            return self._issue(self.granted[self.tokens[-1]])
        if form["grant_type"] == "client_credentials":
            return self._issue(form.get("scope", ""))
        return httpx.Response(400, json={"error": "unsupported_grant_type"})

    def _mcp(self, request: httpx.Request) -> httpx.Response:
        auth = request.headers.get("authorization", "")
        token = auth.removeprefix("Bearer ")
        header = (
            'Bearer resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp"'
        )
        if not self.prm_in_header:
            header = "Bearer"
        if self.challenge_scope:
            header += f', scope="{self.challenge_scope}"'
        fresh = self.expiry.get(token, float("inf")) > time.time() + self.later
        if not self.tokens or token != self.tokens[-1] or not fresh:
            return httpx.Response(401, headers={"WWW-Authenticate": header})
        message = json.loads(request.content)
        if message.get("method") == "tools/call" and self.call_needs:
            have = set(self.granted[token].split())
            if not set(self.call_needs.split()) <= have:
                return httpx.Response(
                    403,
                    headers={
                        "WWW-Authenticate": f'Bearer error="insufficient_scope", '
                        f'scope="{self.call_needs}"'
                    },
                )
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": message["id"], "result": {}})


def web_for(script: Scripted, trace: Callable[[str], None] | None = None) -> Web:
    return Web(transport=httpx.MockTransport(script), trace=trace)


class FakeBrowser:
    """Follows the authorization URL the way a browser would: to the authorization server
    (scripted), then to mcptask's loopback listener (a real socket)."""

    def __init__(self, script: Scripted) -> None:
        self.script = script
        self.urls: list[str] = []

    def __call__(self, url: str) -> bool:
        self.urls.append(url)
        with urllib.request.urlopen(self.script.authorize(url), timeout=10) as answer:
            answer.read()
        return True


def login_with(
    script: Scripted,
    store: CredentialStore,
    *,
    opts: logins.LoginOptions | None = None,
    ch: challenge.Challenge | None = None,
    scope: str | None = None,
    notes: list[str] | None = None,
) -> Credentials:
    return asyncio.run(log_in(script, store, opts, ch, scope, notes))


async def log_in(
    script: Scripted,
    store: CredentialStore,
    opts: logins.LoginOptions | None = None,
    ch: challenge.Challenge | None = None,
    scope: str | None = None,
    notes: list[str] | None = None,
) -> Credentials:
    """A whole login against the scripted servers, the fake browser following the redirect."""
    web = web_for(script)
    try:
        return await logins.login(
            MCP,
            opts or logins.LoginOptions(),
            logins.LoginIO(
                note=(notes if notes is not None else []).append,
                open_browser=FakeBrowser(script),
            ),
            web=web,
            store=store,
            challenge=ch,
            scope=scope,
        )
    finally:
        await web.aclose()


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CredentialStore:
    monkeypatch.setenv("MCPTASK_KEYRING", "off")
    return CredentialStore(tmp_path / "state")


# -- the WWW-Authenticate header ------------------------------------------------------------------


def test_challenge_parses_quoted_commas_several_schemes_and_escapes() -> None:
    got = challenge.parse(
        [
            'Basic realm="a, b", Bearer error="insufficient_scope", scope="files:read '
            'files:write", resource_metadata="https://x/.well-known/oauth-protected-resource", '
            'error_description="needs \\"write\\", really"'
        ]
    )
    assert got.insufficient_scope
    assert got.scope == "files:read files:write"
    assert got.resource_metadata == "https://x/.well-known/oauth-protected-resource"
    assert got.error_description == 'needs "write", really'
    assert challenge.parse(["Basic realm=x"]) == challenge.Challenge()
    assert challenge.parse(["Bearer"]) == challenge.Challenge()
    assert challenge.parse(["Basic dXNlcjpwYXNz, Bearer scope=a"]).scope == "a"


# -- discovery ------------------------------------------------------------------------------------


def test_discovery_urls_follow_the_spec_order() -> None:
    ch = challenge.Challenge(resource_metadata="https://m.test/custom.json")
    assert discovery.prm_urls("https://m.test/public/mcp", ch) == [
        "https://m.test/custom.json",
        "https://m.test/.well-known/oauth-protected-resource/public/mcp",
        "https://m.test/.well-known/oauth-protected-resource",
    ]
    assert discovery.prm_urls("https://m.test/", None) == [
        "https://m.test/.well-known/oauth-protected-resource"
    ]
    assert discovery.metadata_urls("https://a.test/tenant1") == [
        "https://a.test/.well-known/oauth-authorization-server/tenant1",
        "https://a.test/.well-known/openid-configuration/tenant1",
        "https://a.test/tenant1/.well-known/openid-configuration",
    ]
    assert discovery.metadata_urls("https://a.test/") == [
        "https://a.test/.well-known/oauth-authorization-server",
        "https://a.test/.well-known/openid-configuration",
    ]


def test_resource_must_cover_the_endpoint() -> None:
    assert discovery.resource_allowed("https://m.test", "https://m.test/mcp")
    assert discovery.resource_allowed("https://M.test/mcp/", "https://m.test/mcp")
    assert not discovery.resource_allowed("https://evil.test/mcp", "https://m.test/mcp")
    assert not discovery.resource_allowed("https://m.test/other", "https://m.test/mcp")
    assert not discovery.resource_allowed("https://m.test/mc", "https://m.test/mcp")


def discover(script: Scripted, ch: challenge.Challenge | None = None) -> discovery.ServerAuth:
    async def run() -> discovery.ServerAuth:
        web = web_for(script)
        try:
            return await discovery.discover(web, MCP, ch)
        finally:
            await web.aclose()

    return asyncio.run(run())


def test_discovery_rejects_another_resource_and_another_issuer() -> None:
    script = Scripted(prm={"resource": "https://evil.test/mcp", "authorization_servers": [AS]})
    with pytest.raises(AuthError, match="names another resource"):
        discover(script)
    script = Scripted()
    script.metadata["issuer"] = "http://attacker.test"
    with pytest.raises(AuthError, match="names another issuer"):
        discover(script)


def test_pkce_is_required_where_metadata_exists() -> None:
    script = Scripted()
    del script.metadata["code_challenge_methods_supported"]
    with pytest.raises(AuthError, match="PKCE"):
        discover(script).require_pkce()
    script.metadata["code_challenge_methods_supported"] = ["plain"]
    with pytest.raises(AuthError, match="S256"):
        discover(script).require_pkce()


def test_legacy_fallback_uses_the_origin_endpoints() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404)

    async def run() -> discovery.ServerAuth:
        web = Web(transport=httpx.MockTransport(handler))
        try:
            return await discovery.discover(web, MCP, None)
        finally:
            await web.aclose()

    auth = asyncio.run(run())
    assert auth.legacy
    assert auth.endpoint("authorization_endpoint") == "http://mcp.test/authorize"
    assert auth.token_endpoint == "http://mcp.test/token"
    assert auth.endpoint("registration_endpoint") == "http://mcp.test/register"
    auth.require_pkce()  # nothing to ask: S256 is used anyway


def test_scope_selection_order() -> None:
    auth = discover(Scripted())
    auth.resource_metadata = {"scopes_supported": ["a", "b"]}
    ch = challenge.Challenge(scope="x y")
    assert logins.select_scope(None, ch, auth, offline=False) == "x y"
    assert logins.select_scope(None, None, auth, offline=False) == "a b"
    assert logins.select_scope(None, None, auth, offline=True) == "a b offline_access"
    assert logins.select_scope("only", ch, auth, offline=True) == "only"
    auth.resource_metadata = {}
    auth.metadata["scopes_supported"] = ["mcp"]
    assert logins.select_scope(None, None, auth, offline=True) is None


# -- client identity and authentication -----------------------------------------------------------


def test_token_endpoint_method_choice() -> None:
    assert choose_method(["none"], secret=True, key=False) == "none"
    assert choose_method(["client_secret_post"], secret=True, key=False) == "client_secret_post"
    assert choose_method(None, secret=True, key=False) == "client_secret_basic"
    assert choose_method(["private_key_jwt"], secret=False, key=True) == "private_key_jwt"
    assert choose_method(["none"], secret=False, key=False, registered="client_secret_post") == (
        "client_secret_post"
    )


def test_client_authentication_encodings(tmp_path: Path) -> None:
    headers, body = authenticate(Client("id", "s3cret", "client_secret_basic"), AS, {}, "a=1")
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"id:s3cret").decode()
    assert dict(parse_qsl(body)) == {"a": "1", "client_id": "id"}
    _, body = authenticate(Client("id", "s3cret", "client_secret_post"), AS, {}, "a=1")
    assert dict(parse_qsl(body))["client_secret"] == "s3cret"
    headers, body = authenticate(Client("id", None, "none"), AS, {}, "a=1")
    assert "Authorization" not in headers and dict(parse_qsl(body))["client_id"] == "id"


def test_private_key_jwt_assertion_is_signed_for_the_issuer(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from joserfc import jwt
    from joserfc.jwk import ECKey

    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    key_file = tmp_path / "key.pem"
    key_file.write_bytes(pem)
    client = Client("cc-client", None, "private_key_jwt", key_file=str(key_file))
    _, body = authenticate(client, AS, {}, "grant_type=client_credentials")
    form = dict(parse_qsl(body))
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    token = jwt.decode(form["client_assertion"], ECKey.import_key(pem), algorithms=["ES256"])
    assert token.claims["iss"] == token.claims["sub"] == "cc-client"
    assert token.claims["aud"] == AS
    assert token.claims["exp"] > time.time()


def test_authorization_response_checks() -> None:
    auth = discover(Scripted())
    ok = {"code": "c", "state": "s"}
    assert flows.check_response(ok, "s", auth) == "c"
    with pytest.raises(AuthError, match="state"):
        flows.check_response({**ok, "state": "other"}, "s", auth)
    with pytest.raises(AuthError, match="another issuer"):
        flows.check_response({**ok, "iss": "http://evil.test"}, "s", auth)
    assert flows.check_response({**ok, "iss": AS}, "s", auth) == "c"
    auth.metadata["authorization_response_iss_parameter_supported"] = True
    with pytest.raises(AuthError, match="no `iss`"):
        flows.check_response(ok, "s", auth)
    with pytest.raises(AuthError, match="access_denied"):
        flows.check_response({"error": "access_denied", "state": "s", "iss": AS}, "s", auth)


# -- the whole login ------------------------------------------------------------------------------


def test_login_with_dynamic_registration_pkce_resource_and_offline_access(
    store: CredentialStore,
) -> None:
    script = Scripted()
    notes: list[str] = []
    ch = challenge.Challenge(scope="mcp")
    creds = login_with(script, store, ch=ch, notes=notes)
    assert creds.access_token == "tok-0" and creds.refresh_token == "ref-0"
    assert creds.client.client_id == "dyn-client" and creds.client.source == "registered"
    (asked,) = script.codes.values()
    assert asked["code_challenge_method"] == "S256"
    assert asked["resource"] == MCP
    assert asked["scope"] == "mcp offline_access"
    assert store.load(MCP) == creds
    assert any("opening the browser" in n for n in notes)
    assert stat.S_IMODE(store.file.stat().st_mode) == 0o600


def test_login_reuses_a_registered_client_on_the_same_port(store: CredentialStore) -> None:
    script = Scripted()
    first = login_with(script, store)
    second = login_with(script, store)
    registrations = [r for r in script.requests if str(r.url).endswith("/register")]
    if second.client.redirect_uri == first.client.redirect_uri:
        assert len(registrations) == 1
    else:  # the port was taken meanwhile: a new registration
        assert len(registrations) == 2


def test_login_with_a_pre_registered_client_and_secret(
    store: CredentialStore, tmp_path: Path
) -> None:
    script = Scripted()
    script.metadata["token_endpoint_auth_methods_supported"] = ["client_secret_basic"]
    secret = tmp_path / "secret"
    secret.write_text("pre-secret\n")
    opts = logins.LoginOptions(
        client=ClientOptions(client_id="pre", client_secret_file=str(secret))
    )
    creds = login_with(script, store, opts=opts)
    assert creds.client.source == "pre-registered"
    token_request = [r for r in script.requests if str(r.url).endswith("/token")][-1]
    assert token_request.headers["authorization"] == (
        "Basic " + base64.b64encode(b"pre:pre-secret").decode()
    )
    assert not [r for r in script.requests if str(r.url).endswith("/register")]


def test_client_metadata_document_where_supported(store: CredentialStore) -> None:
    script = Scripted()
    script.metadata["client_id_metadata_document_supported"] = True
    url = "https://client.test/mcptask.json"
    opts = logins.LoginOptions(client=ClientOptions(client_metadata_url=url))
    creds = login_with(script, store, opts=opts)
    assert creds.client.client_id == url
    assert next(iter(script.codes.values()))["client_id"] == url


def test_client_credentials_grant(store: CredentialStore, tmp_path: Path) -> None:
    script = Scripted()
    secret = tmp_path / "secret"
    secret.write_text("cc-secret")
    opts = logins.LoginOptions(
        client=ClientOptions(client_id="machine", client_secret_file=str(secret)),
        client_credentials=True,
    )
    creds = login_with(script, store, opts=opts)
    assert creds.grant == "client_credentials" and creds.renewable
    assert not script.codes  # no browser


# -- the provider and the transport hook ----------------------------------------------------------


def transport_for(
    script: Scripted, provider: OAuthProvider, trace: list[str] | None = None
) -> HttpTransport:
    client = httpx.AsyncClient(transport=httpx.MockTransport(script))
    transport = HttpTransport(
        HttpOptions(url=MCP, auth=provider, trace=trace.append if trace is not None else None),
        client=client,
    )
    client.event_hooks["request"] = [transport._credentials]
    return transport


def call(transport: HttpTransport, method: str = "tools/list") -> Any:
    async def run() -> Any:
        try:
            return await RpcClient(transport).request(method, {})
        finally:
            await transport.client.aclose()

    return asyncio.run(run())


def provider_for(
    script: Scripted, store: CredentialStore, *, can_login: bool = True, later: float = 0.0
) -> OAuthProvider:
    """`later`: the provider's clock runs that many seconds ahead (a token that expires in
    one second has expired, without waiting for it)."""

    async def login(ch: challenge.Challenge | None, scope: str | None) -> Credentials:
        return await log_in(script, store, ch=ch, scope=scope)

    return OAuthProvider(
        MCP,
        store,
        web_for(script),
        login=login,
        always_login=can_login,
        clock=lambda: time.time() + later,
    )


def test_without_credentials_the_error_names_the_login_command(store: CredentialStore) -> None:
    script = Scripted()
    provider = OAuthProvider(MCP, store, web_for(script))
    with pytest.raises(AuthError, match=r"run `mcptask auth login --url http://mcp.test/mcp`"):
        call(transport_for(script, provider))


def test_login_on_401_then_retry_and_tokens_redacted_in_trace(store: CredentialStore) -> None:
    script = Scripted()
    trace: list[str] = []
    provider = provider_for(script, store)
    assert call(transport_for(script, provider, trace)) == {}
    assert provider.logins == 1
    assert not any("tok-0" in line or "ref-0" in line for line in trace)


def test_expired_token_is_refreshed_before_use_and_rotation_is_stored(
    store: CredentialStore,
) -> None:
    script = Scripted(expires_in=1)
    login_with(script, store)
    script.later = 2.0  # a second later: the token has expired
    before = len(script.requests)
    provider = provider_for(script, store, can_login=False, later=2.0)
    assert call(transport_for(script, provider)) == {}
    stored = store.load(MCP)
    assert stored is not None
    assert stored.access_token == "tok-1" and stored.refresh_token == "ref-1"
    sent = [r for r in script.requests[before:] if str(r.url) == MCP]
    assert len(sent) == 1  # refreshed before the request: no 401 first


def test_a_401_with_a_stored_token_refreshes_it(store: CredentialStore) -> None:
    script = Scripted()
    login_with(script, store)
    script.tokens.append("revoked-elsewhere")  # the server no longer takes tok-0
    script.refresh_tokens.append("ref-0")  # ...but its refresh token still works
    script.granted["revoked-elsewhere"] = "mcp"
    provider = provider_for(script, store, can_login=False)
    assert call(transport_for(script, provider)) == {}
    assert provider.logins == 0


def test_refused_refresh_without_login_names_the_command(store: CredentialStore) -> None:
    script = Scripted(expires_in=1)
    login_with(script, store)
    script.later = 2.0  # a second later: the token has expired
    script.refuse_refresh = True
    provider = provider_for(script, store, can_login=False, later=2.0)
    with pytest.raises(AuthError, match="mcptask auth login --url"):
        call(transport_for(script, provider))


def test_step_up_on_insufficient_scope_is_bounded(store: CredentialStore) -> None:
    script = Scripted(call_needs="mcp write")
    provider = provider_for(script, store)
    assert call(transport_for(script, provider), "tools/call") == {}
    assert provider.step_ups == 1
    assert {"mcp", "write"} <= set(list(script.codes.values())[-1]["scope"].split())

    store.delete(MCP)
    never = Scripted(call_needs="admin")
    never.metadata["scopes_supported"] = []  # the server never grants "admin"
    provider = provider_for(never, store)
    original = never._issue
    never._issue = lambda scope: original(scope.replace("admin", ""))  # type: ignore[method-assign]
    with pytest.raises(AuthError, match="insufficient_scope"):
        call(transport_for(never, provider), "tools/call")
    assert provider.step_ups == MAX_STEP_UPS


def test_step_up_without_login_names_the_scopes(store: CredentialStore) -> None:
    script = Scripted(call_needs="mcp write")
    login_with(script, store)
    provider = provider_for(script, store, can_login=False)
    provider._login = None
    with pytest.raises(AuthError, match="--scope 'mcp offline_access write'"):
        call(transport_for(script, provider), "tools/call")


# -- storage --------------------------------------------------------------------------------------


def test_store_file_is_private_and_the_note_comes_once(store: CredentialStore) -> None:
    notes: list[str] = []
    store._note = notes.append
    client = Client("c", "client-secret-value")
    creds = Credentials(MCP, AS, f"{AS}/token", MCP, client, "access-value", refresh_token="r")
    store.save(creds)
    store.save(creds)
    assert len(notes) == 1
    assert stat.S_IMODE(store.file.stat().st_mode) == 0o600
    assert store.servers() == [MCP]
    summary = json.dumps(store.load(MCP).summary())  # type: ignore[union-attr]
    assert "access-value" not in summary and "client-secret-value" not in summary
    assert store.delete(MCP) and store.load(MCP) is None and not store.delete(MCP)


def test_keyring_backend_keeps_secrets_out_of_the_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import keyring
    from keyring.backend import KeyringBackend

    class Memory(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            super().__init__()
            self.items: dict[tuple[str, str], str] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.items.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.items[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            del self.items[(service, username)]

    backend = Memory()
    monkeypatch.delenv("MCPTASK_KEYRING", raising=False)
    monkeypatch.setattr(keyring, "get_keyring", lambda: backend)
    store = CredentialStore(tmp_path / "state")
    creds = Credentials(MCP, AS, f"{AS}/token", MCP, Client("c", "sec-ret"), "acc-ess")
    store.save(creds)
    assert store.backend == "keyring"
    assert store.load(MCP) == creds
    assert not store.file.exists()
    on_disk = "".join(p.read_text() for p in (tmp_path / "state").iterdir() if p.is_file())
    assert "acc-ess" not in on_disk and "sec-ret" not in on_disk
    assert store.servers() == [MCP]
    assert store.delete(MCP) and not backend.items


# -- config entries -------------------------------------------------------------------------------


def test_config_entry_names_the_oauth_client(tmp_path: Path) -> None:
    from mcptask.errors import UsageError

    path = tmp_path / "config.toml"
    text = (
        '[servers.corp]\nurl = "https://corp.test/mcp"\nclient_id = "cli"\n'
        'client_secret_file = "corp.secret"\nclient_metadata_url = "https://c.test/m.json"\n'
    )
    entry = config.expanded(config.parse(text, path).servers["corp"])
    assert entry.client_id == "cli"
    assert entry.client_secret_file == str(tmp_path / "corp.secret")
    assert entry.client_metadata_url == "https://c.test/m.json"
    with pytest.raises(UsageError, match="goes with `url`"):
        config.parse('[servers.x]\ncommand = "x"\nclient_id = "cli"\n', path)


def test_lazy_provider_imports_nothing_until_needed(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import asyncio, sys\n"
        "from mcptask.auth.lazy import LazyOAuth\n"
        "lazy = LazyOAuth('http://mcp.test/mcp', lambda: 1 / 0)\n"
        "assert asyncio.run(lazy.bearer()) is None\n"
        "heavy = [m for m in ('mcptask.auth.provider', 'authlib', 'keyring') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    repo = str(Path(__file__).resolve().parents[2])
    env = {"MCPTASK_STATE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": repo}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "[]"


def test_lazy_provider_sees_stored_credentials(store: CredentialStore) -> None:
    from mcptask.auth import lazy

    assert not lazy.stored(MCP, store.directory)
    store.save(Credentials(MCP, AS, f"{AS}/token", MCP, Client("c"), "a"))
    assert lazy.stored(MCP + "/", store.directory)


def test_oauth_applies_only_without_a_token_or_authorization_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcptask.session import targets
    from mcptask.session.targets import GlobalOptions

    monkeypatch.delenv("MCPTASK_TOKEN", raising=False)
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[servers.corp]\nurl = "https://corp.test/mcp"\nclient_id = "from-entry"\n'
        'client_secret_file = "s.txt"\n'
    )
    plain = targets.resolve(GlobalOptions(url=MCP, login=True, client_id="cli"))
    assert plain.oauth is not None and plain.oauth.login and plain.oauth.client_id == "cli"
    assert plain.oauth.target_args == f"--url {MCP}"
    header = targets.resolve(GlobalOptions(url=MCP, headers=["Authorization: Bearer x"]))
    assert header.oauth is None
    monkeypatch.setenv("MCPTASK_TOKEN", "given-token")
    assert targets.resolve(GlobalOptions(url=MCP)).oauth is None
    monkeypatch.delenv("MCPTASK_TOKEN")
    named = targets.resolve(GlobalOptions(server="corp", config=str(cfg), client_id="flag"))
    assert named.oauth is not None
    assert named.oauth.client_id == "flag"  # the flag beats the entry
    assert named.oauth.client_secret_file == str(tmp_path / "s.txt")
    assert named.oauth.target_args == "-s corp"
    shown = targets.describe(config.parse(cfg.read_text(), cfg).servers["corp"])
    assert shown["oauth"] == {"clientId": "from-entry", "clientSecretFile": "s.txt"}


def test_client_credentials_step_up_asks_again_without_a_person(
    store: CredentialStore, tmp_path: Path
) -> None:
    script = Scripted(call_needs="mcp write")
    secret = tmp_path / "secret"
    secret.write_text("cc-secret")
    opts = logins.LoginOptions(
        client=ClientOptions(client_id="machine", client_secret_file=str(secret)),
        client_credentials=True,
    )
    login_with(script, store, opts=opts)
    provider = OAuthProvider(MCP, store, web_for(script))  # no login possible
    assert call(transport_for(script, provider), "tools/call") == {}
    assert provider.step_ups == 1 and not script.codes
    stored = store.load(MCP)
    assert stored is not None and set(stored.scopes()) == {"mcp", "write"}


def test_concurrent_requests_refresh_once(store: CredentialStore) -> None:
    script = Scripted(expires_in=1)
    login_with(script, store)
    script.later = 2.0  # a second later: the token has expired
    provider = provider_for(script, store, can_login=False, later=2.0)
    transport = transport_for(script, provider)

    async def slowly(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.05)  # the token endpoint takes its time: requests pile up
        return script(request)

    provider.web = Web(transport=httpx.MockTransport(slowly))

    async def run() -> list[Any]:
        rpc = RpcClient(transport)
        try:
            return await asyncio.gather(*(rpc.request("tools/list", {}) for _ in range(8)))
        finally:
            await transport.client.aclose()

    assert asyncio.run(run()) == [{}] * 8
    refreshes = [r for r in script.requests if b"grant_type=refresh_token" in (r.content or b"")]
    assert len(refreshes) == 1


def test_logout_revokes_the_refresh_token(store: CredentialStore) -> None:
    script = Scripted()
    creds = login_with(script, store)
    assert creds.revocation_endpoint == f"{AS}/revoke"
    assert creds.refresh_token is not None

    async def run() -> bool:
        web = web_for(script)
        try:
            assert creds.revocation_endpoint is not None and creds.refresh_token is not None
            return await flows.revoke(
                web, creds.revocation_endpoint, AS, creds.client, creds.refresh_token, "r"
            )
        finally:
            await web.aclose()

    assert asyncio.run(run())
    assert script.revoked == [creds.refresh_token]


def test_the_bearer_never_follows_a_redirect_to_another_origin(store: CredentialStore) -> None:
    script = Scripted()
    login_with(script, store)
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "mcp.test":
            return httpx.Response(307, headers={"Location": "http://elsewhere.test/mcp"})
        body = json.loads(request.content)
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": {}})

    provider = OAuthProvider(MCP, store, web_for(script))
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler), follow_redirects=True)
    transport = HttpTransport(HttpOptions(url=MCP, auth=provider), client=client)
    client.event_hooks["request"] = [transport._credentials]
    assert call(transport) == {}
    assert seen[0].headers["authorization"] == "Bearer tok-0"
    assert "authorization" not in seen[1].headers


@pytest.mark.parametrize(
    "header",
    ["", ",,,", "Bearer ===", 'Bearer scope="unterminated', "Bearer a=b=c, , ,x", "\x00Bearer"],
)
def test_odd_challenges_parse_without_error(header: str) -> None:
    challenge.parse([header])


def test_challenge_parser_takes_any_text() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=300, deadline=None)
    @given(st.text(max_size=200))
    def check(text: str) -> None:
        got = challenge.parse([text, "Bearer " + text])
        assert got.scope is None or isinstance(got.scope, str)

    check()


def test_hostile_authorization_server_answers_are_one_line_errors(store: CredentialStore) -> None:
    from mcptask.errors import TransportError

    huge = Scripted()
    original = huge.__call__

    def big(request: httpx.Request) -> httpx.Response:
        if str(request.url).endswith("/oauth-authorization-server"):
            return httpx.Response(200, content=b"{" + b" " * (2 * 1024 * 1024) + b"}")
        return original(request)

    async def discover_with(handler: Callable[[httpx.Request], httpx.Response]) -> Any:
        web = Web(transport=httpx.MockTransport(handler))
        try:
            return await discovery.discover(web, MCP, None)
        finally:
            await web.aclose()

    with pytest.raises(TransportError, match="more than 1 MiB"):
        asyncio.run(discover_with(big))

    html = Scripted()

    def token_html(request: httpx.Request) -> httpx.Response:
        if str(request.url).endswith("/token"):
            return httpx.Response(502, html="<html><body>Bad gateway</body></html>")
        return html(request)

    html_web = Web(transport=httpx.MockTransport(token_html))

    async def run() -> Any:
        try:
            return await logins.login(
                MCP,
                logins.LoginOptions(),
                logins.LoginIO(note=lambda _m: None, open_browser=FakeBrowser(html)),
                web=html_web,
                store=store,
            )
        finally:
            await html_web.aclose()

    with pytest.raises(AuthError, match="refused the authorization code: HTTP 502"):
        asyncio.run(run())
    assert store.load(MCP) is None


# -- which store is asked --------------------------------------------------------------------------


def test_the_keyring_is_asked_only_for_endpoints_its_index_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Credentials in the file (or none at all) never load the keyring (about 100 modules);
    an endpoint the index lists is read from the keyring."""
    import json

    from mcptask.auth import store as store_mod
    from mcptask.auth.client import Client

    kept: dict[str, str] = {}
    probes: list[str] = []

    class FakeKeyring:
        def get_password(self, service: str, key: str) -> str | None:
            return kept.get(key)

        def set_password(self, service: str, key: str, value: str) -> None:
            kept[key] = value

    def usable() -> FakeKeyring:
        probes.append("probe")
        return FakeKeyring()

    monkeypatch.delenv("MCPTASK_KEYRING", raising=False)
    monkeypatch.setattr(store_mod, "_usable_keyring", usable)
    folder = tmp_path / "state"
    folder.mkdir()

    def creds(server: str, token: str) -> Credentials:
        return Credentials(
            server=server,
            issuer="https://as.example",
            token_endpoint="https://as.example/token",
            resource=server,
            client=Client("c"),
            access_token=token,
        )

    in_file = "http://127.0.0.1:1/mcp"
    data = {"version": 1, "servers": {in_file: creds(in_file, "file-token").to_json()}}
    (folder / "credentials.json").write_text(json.dumps(data))
    loaded = CredentialStore(folder).load(in_file)
    assert loaded is not None and loaded.access_token == "file-token"
    assert CredentialStore(folder).load("http://127.0.0.1:2/mcp") is None
    assert probes == []  # neither looked for a keyring

    in_keyring = "http://127.0.0.1:3/mcp"
    CredentialStore(folder).save(creds(in_keyring, "keyring-token"))  # the index names it now
    assert in_keyring in json.loads((folder / "auth.json").read_text())["servers"]
    probes.clear()
    loaded = CredentialStore(folder).load(in_keyring)
    assert loaded is not None and loaded.access_token == "keyring-token"
    assert probes == ["probe"]


@pytest.mark.parametrize(
    ("lifetime", "renewed_at"),
    [(3.0, 1.5), (10.0, 8.5), (60.0, 54.0), (3600.0, 3570.0)],
)
def test_a_token_is_renewed_before_its_server_can_have_ended_it(
    lifetime: float, renewed_at: float
) -> None:
    """A tenth of its life early, at most 30 s, but at least 1.5 s (at most half its life):
    servers that keep expiry in whole seconds end a token up to a second early."""
    creds = Credentials(
        MCP, AS, f"{AS}/token", MCP, Client("c"), "a", expires_at=lifetime, obtained_at=0.0
    )
    assert not creds.expired(renewed_at - 0.01)
    assert creds.expired(renewed_at)
