"""The fastmcp 3.4.11 task server (``fastmcp3_server.py``'s tools) behind fastmcp's own OAuth:
its in-memory authorization server (dynamic client registration, PKCE, refresh-token rotation;
it approves every authorization request at once, so a ``$BROWSER`` that follows redirects logs
in) and bearer-token checks on ``/mcp``.

``python fastmcp3_oauth_server.py --port P [--token-seconds S]``: access tokens live S seconds
(default 3600), so a test can outlive one. Endpoint ``http://127.0.0.1:P/mcp``; protected-resource
metadata at ``/.well-known/oauth-protected-resource/mcp``, the authorization server at the root.
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
    args = parser.parse_args()
    # the in-memory provider reads its lifetimes from module constants
    in_memory.DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS = args.token_seconds  # type: ignore[attr-defined]
    mcp.auth = InMemoryOAuthProvider(
        base_url=f"http://127.0.0.1:{args.port}",
        client_registration_options=ClientRegistrationOptions(enabled=True),
        revocation_options=RevocationOptions(enabled=True),
    )
    mcp.run(transport="http", host="127.0.0.1", port=args.port, show_banner=False)


if __name__ == "__main__":
    main()
