"""The fastmcp 3.4.11 task server (``fastmcp3_server.py``'s tools) behind fastmcp's own OAuth:
its in-memory authorization server (dynamic client registration, PKCE, refresh-token rotation;
it approves every authorization request at once, so a ``$BROWSER`` that follows redirects logs
in) and bearer-token checks on ``/mcp``.

``python fastmcp3_oauth_server.py --port P [--token-seconds S] [--valid-scopes "read write"
--default-scopes read]``: access tokens live S seconds (default 3600), so a test can outlive one;
with scopes, dynamic registration gives a client that asks for none the default scopes (the
MCP SDK's `ClientRegistrationOptions`), and the metadata lists the valid ones. Endpoint
``http://127.0.0.1:P/mcp``; protected-resource metadata at
``/.well-known/oauth-protected-resource/mcp``, the authorization server at the root.
"""

from __future__ import annotations

import argparse

from fastmcp.server.auth.providers import in_memory
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider
from fastmcp3_server import mcp
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token-seconds", type=int, default=3600)
    parser.add_argument("--valid-scopes", default="", help="scopes a client may register")
    parser.add_argument("--default-scopes", default="", help="given a client that asks none")
    args = parser.parse_args()
    # the in-memory provider reads its lifetimes from module constants
    in_memory.DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS = args.token_seconds  # type: ignore[attr-defined]
    mcp.auth = InMemoryOAuthProvider(
        base_url=f"http://127.0.0.1:{args.port}",
        client_registration_options=ClientRegistrationOptions(
            enabled=True,
            valid_scopes=args.valid_scopes.split() or None,
            default_scopes=args.default_scopes.split() or None,
        ),
        revocation_options=RevocationOptions(enabled=True),
    )
    mcp.run(transport="http", host="127.0.0.1", port=args.port, show_banner=False)


if __name__ == "__main__":
    main()
