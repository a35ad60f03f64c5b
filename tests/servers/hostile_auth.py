"""A scripted hostile authorization server and the MCP endpoint it protects (standard library,
in a thread, on 127.0.0.1), for the behaviours no real server in the suite shows (issue 26):

- `/mcp`: answers `initialize`, notifications and `tools/list` to `Bearer <a token it issued>`
  (unless `refuse_tokens`), else 401 with a `resource_metadata` challenge;
- `/.well-known/oauth-protected-resource/mcp`, `/.well-known/oauth-authorization-server`;
- `/register` (dynamic registration: a confidential client with a secret, `registered_scope`);
- `/authorize`: redirects at once to the loopback `redirect_uri` with a code (so
  `tests/servers/browser.sh` logs in);
- `/token`: rotating tokens, or a quirk: `echo` (refuses with the request, body and
  `Authorization` header, echoed in `error_description`), `token` (the access token to issue,
  e.g. with CR/LF), `expires_in` (raw JSON text: `1e999`, `NaN`, `"soon"`, `1` followed by 400
  zeros), `refuse_refresh`, `invalid_scope_unless_registered`;
- `/revoke`: reads the client secret from the form only (`client_secret_basic` is listed but
  a Basic header alone gets 400);
- `/elsewhere/*`: a redirect target on this origin; `redirect_to` makes `/mcp` and the
  well-known URLs answer 307 to another server.

Every request is kept in `seen` (path, headers, body) for the test to inspect.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: str


@dataclass
class Quirks:
    echo: bool = False
    token: str | None = None
    expires_in: str | None = None
    refuse_refresh: bool = False
    refuse_tokens: bool = False
    #: the scope registration grants when the client asks for none (fastmcp's default scopes)
    registered_scope: str | None = None
    scopes_supported: list[str] | None = None
    revocation_methods: list[str] | None = None
    #: seconds the token endpoint takes to answer a refresh (processes renewing at once)
    refresh_delay: float = 0.0
    #: the token endpoint auth method registration settles
    registered_method: str = "client_secret_post"
    #: 307 from /mcp and the well-known URLs to this origin
    redirect_to: str | None = None
    #: the resource the protected-resource metadata claims (default: this server's /mcp)
    resource: str | None = None


@dataclass
class State:
    clients: dict[str, dict[str, Any]] = field(default_factory=dict)
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    #: access tokens it issued -> when each expires (a refresh spends the older ones)
    tokens: dict[str, float] = field(default_factory=dict)
    refresh: set[str] = field(default_factory=set)
    revoked: list[str] = field(default_factory=list)
    refreshes: int = 0


class HostileAuth:
    def __init__(self, **quirks: Any) -> None:
        self.quirks = Quirks(**quirks)
        self.state = State()
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def __enter__(self) -> HostileAuth:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def record(self, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)

    def requests_to(self, path: str) -> list[Seen]:
        with self._lock:
            return [s for s in self.seen if s.path.split("?")[0] == path]

    def metadata(self) -> dict[str, Any]:
        b = self.base
        return {
            "issuer": b,
            "authorization_endpoint": f"{b}/authorize",
            "token_endpoint": f"{b}/token",
            "registration_endpoint": f"{b}/register",
            "revocation_endpoint": f"{b}/revoke",
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "revocation_endpoint_auth_methods_supported": self.quirks.revocation_methods
            or ["client_secret_basic", "client_secret_post"],
            "scopes_supported": self.quirks.scopes_supported or ["read", "write"],
            "grant_types_supported": [
                "authorization_code",
                "refresh_token",
                "client_credentials",
            ],
        }

    def issue(self, refresh: bool = True) -> dict[str, Any]:
        q = self.quirks
        token = q.token or "at-" + secrets.token_urlsafe(12)
        try:
            lifetime = float(q.expires_in) if q.expires_in is not None else 3600.0
        except ValueError:
            lifetime = 3600.0
        if not 0 < lifetime < 10**9:
            lifetime = 3600.0
        self.state.tokens[token] = time.time() + lifetime
        body: dict[str, Any] = {"access_token": token, "token_type": "Bearer"}
        if refresh:
            rt = "rt-" + secrets.token_urlsafe(12)
            self.state.refresh.add(rt)
            body["refresh_token"] = rt
        return body


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: HostileAuth


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def owner(self) -> HostileAuth:
        return self.server.owner

    def _body(self) -> str:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length).decode("utf-8", "replace") if length else ""

    def _send(
        self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, obj: Any, status: int = 200, extra: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", extra)

    def _raw_json(self, text: str, status: int = 200) -> None:
        self._send(status, text.encode(), "application/json")

    def _handle(self) -> None:
        body = self._body() if self.command == "POST" else ""
        path = urlsplit(self.path).path
        self.owner.record(Seen(self.command, self.path, dict(self.headers.items()), body))
        q = self.owner.quirks
        if q.redirect_to and (path == "/mcp" or path.startswith("/.well-known/")):
            self.send_response(307)
            self.send_header("Location", q.redirect_to.rstrip("/") + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        route = {
            "/mcp": self._mcp,
            "/.well-known/oauth-protected-resource/mcp": self._prm,
            "/.well-known/oauth-protected-resource": self._prm,
            "/.well-known/oauth-authorization-server": self._as_metadata,
            "/register": self._register,
            "/authorize": self._authorize,
            "/token": self._token,
            "/revoke": self._revoke,
        }.get(path)
        if route is None:
            self._send(404, b"not found", "text/plain")
            return
        route(body)

    do_GET = _handle
    do_POST = _handle
    do_DELETE = _handle

    # -- the MCP endpoint ---------------------------------------------------------------------

    def _mcp(self, body: str) -> None:
        o = self.owner
        auth = self.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ")
        valid = o.state.tokens.get(token, 0.0) > time.time()
        if self.command != "POST" or o.quirks.refuse_tokens or not valid:
            if self.command != "POST":
                self._send(405, b"", "text/plain")
                return
            meta = f"{o.base}/.well-known/oauth-protected-resource/mcp"
            self._json(
                {"error": "invalid_token"},
                401,
                {"WWW-Authenticate": f'Bearer resource_metadata="{meta}"'},
            )
            return
        msg = json.loads(body or "{}")
        if "id" not in msg:
            self._send(202, b"", "text/plain")
            return
        method = msg.get("method")
        if method == "initialize":
            result: Any = {
                "protocolVersion": msg.get("params", {}).get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile-auth", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [{"name": "noop", "inputSchema": {"type": "object"}}]}
        else:
            self._json(
                {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}
            )
            return
        self._json({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def _prm(self, body: str) -> None:
        o = self.owner
        self._json(
            {
                "resource": o.quirks.resource or o.url,
                "authorization_servers": [o.base],
                "scopes_supported": o.quirks.scopes_supported or ["read", "write"],
            }
        )

    def _as_metadata(self, body: str) -> None:
        self._json(self.owner.metadata())

    def _register(self, body: str) -> None:
        o = self.owner
        doc = json.loads(body or "{}")
        cid = "client-" + secrets.token_hex(4)
        secret = "cs-" + secrets.token_urlsafe(16)
        scope = doc.get("scope") or o.quirks.registered_scope
        o.state.clients[cid] = {"secret": secret, "scope": scope}
        answer = {
            "client_id": cid,
            "client_secret": secret,
            "redirect_uris": doc.get("redirect_uris", []),
            "token_endpoint_auth_method": o.quirks.registered_method,
            "grant_types": ["authorization_code", "refresh_token"],
        }
        if scope:
            answer["scope"] = scope
        self._json(answer, 201)

    def _authorize(self, body: str) -> None:
        o = self.owner
        params = dict(parse_qsl(urlsplit(self.path).query))
        client = o.state.clients.get(params.get("client_id", ""), {})
        asked = set((params.get("scope") or "").split())
        allowed = set((client.get("scope") or "").split())
        redirect = params.get("redirect_uri", "")
        out: dict[str, str] = {"state": params.get("state", "")}
        if allowed and not asked <= allowed:
            out["error"] = "invalid_scope"
            extra = " ".join(sorted(asked - allowed))
            out["error_description"] = f"Client was not registered with scope {extra}"
        else:
            code = "code-" + secrets.token_urlsafe(12)
            o.state.codes[code] = params
            out["code"] = code
        self.send_response(302)
        self.send_header("Location", f"{redirect}?{urlencode(out)}")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _token(self, body: str) -> None:
        o = self.owner
        q = o.quirks
        form = dict(parse_qsl(body))
        if q.echo:
            echoed = f"bad request: {body} Authorization: {self.headers.get('Authorization', '')}"
            self._json({"error": "invalid_client", "error_description": echoed}, 400)
            return
        grant = form.get("grant_type")
        if grant == "refresh_token":
            if q.refuse_refresh or form.get("refresh_token") not in o.state.refresh:
                self._json({"error": "invalid_grant", "error_description": "refresh refused"}, 400)
                return
            o.state.refresh.discard(form["refresh_token"])  # rotation: the old one is spent
            o.state.tokens.clear()  # and the access tokens issued before
            o.state.refreshes += 1
            if q.refresh_delay:
                time.sleep(q.refresh_delay)
        answer = self.owner.issue(refresh=grant != "client_credentials")
        if q.expires_in is not None:
            text = json.dumps(answer)[:-1] + f', "expires_in": {q.expires_in}}}'
            self._raw_json(text)
            return
        answer["expires_in"] = 3600
        self._json(answer)

    def _revoke(self, body: str) -> None:
        o = self.owner
        form = dict(parse_qsl(body))
        if not form.get("client_secret"):
            basic = self.headers.get("Authorization", "")
            decoded = ""
            if basic.startswith("Basic "):
                decoded = base64.b64decode(basic[6:]).decode("utf-8", "replace")
            self._json({"error": "invalid_client", "had_basic": bool(decoded)}, 400)
            return
        o.state.revoked.append(form.get("token", ""))
        o.state.refresh.discard(form.get("token", ""))
        self._send(200, b"", "text/plain")
