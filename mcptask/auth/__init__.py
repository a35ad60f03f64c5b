"""OAuth for MCP servers (MCP authorization spec 2025-11-25, with the 2025-03-26 fallbacks).

Nothing here is imported at start-up: a command reaches this package only when a server asks
for authorization or credentials are stored for its target.

- `challenge`: the `WWW-Authenticate` header of a 401/403.
- `discovery`: protected-resource metadata (RFC 9728), authorization-server metadata (RFC 8414,
  OpenID discovery), their validation, the legacy fallbacks.
- `client`: which client identity to use (pre-registered, client ID metadata document, dynamic
  registration RFC 7591) and how it authenticates at the token endpoint.
- `flows`: the authorization code grant with PKCE, the client-credentials grant, refresh.
- `loopback`: the redirect listener on 127.0.0.1 and the pasted redirect.
- `store`: credentials in the OS keyring, else a 0600 file in the state directory.
- `provider`: what the HTTP transport calls (the bearer for a request; what to do on 401/403).
- `login`: the whole login, as `auth login` and `--login` run it.
"""
