"""A minimal OAuth client for checking ``browser.sh`` against the conformance suite's auth servers.

    python redirect_client.py MCP_URL

It does what an MCP client does up to the authorization code: POST to MCP_URL (401), read the
protected-resource metadata named by WWW-Authenticate, the authorization server's metadata,
register dynamically with a loopback ``redirect_uri``, open the authorization URL with
``$BROWSER`` and wait (10 s) for the redirect on its loopback listener. It prints
``code=<code> state=<state>`` and exits 0 when the code arrived, 1 otherwise. No token request.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, ClassVar

CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"  # S256 of RFC 7636's sample verifier


def _json(url: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def _resource_metadata_url(mcp_url: str) -> str:
    try:
        _json(mcp_url, {})
    except urllib.error.HTTPError as exc:
        header = exc.headers.get("www-authenticate", "")
        return header.split('resource_metadata="', 1)[1].split('"', 1)[0]
    raise SystemExit("the server did not answer 401")


class _Callback(http.server.BaseHTTPRequestHandler):
    query: ClassVar[dict[str, list[str]]] = {}

    def do_GET(self) -> None:
        _Callback.query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"done")

    def log_message(self, format: str, *args: Any) -> None:
        pass


def main(mcp_url: str) -> int:
    prm = _json(_resource_metadata_url(mcp_url))
    issuer = prm["authorization_servers"][0].rstrip("/")
    meta = _json(issuer + "/.well-known/oauth-authorization-server")
    listener = http.server.HTTPServer(("127.0.0.1", 0), _Callback)
    listener.timeout = 10
    redirect_uri = f"http://127.0.0.1:{listener.server_port}/callback"
    client = _json(meta["registration_endpoint"], {"redirect_uris": [redirect_uri]})
    query = urllib.parse.urlencode(
        {
            "response_type": "code",
            "client_id": client["client_id"],
            "redirect_uri": redirect_uri,
            "state": "xyz",
            "code_challenge": CHALLENGE,
            "code_challenge_method": "S256",
        }
    )
    subprocess.run([os.environ["BROWSER"], f"{meta['authorization_endpoint']}?{query}"], check=True)
    listener.handle_request()
    code, state = _Callback.query.get("code"), _Callback.query.get("state")
    print(f"code={code[0] if code else None} state={state[0] if state else None}")
    return 0 if code else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
