"""Where to authorize: protected-resource metadata (RFC 9728), then the authorization server's
metadata (RFC 8414 or OpenID Connect Discovery), in the order the MCP authorization spec
(2025-11-25) gives, with the 2025-03-26 fallbacks for servers that publish no resource metadata:
the metadata at the MCP server's origin, else `/authorize`, `/token` and `/register` there."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcptask.auth.challenge import Challenge
from mcptask.auth.web import Answer, Web, where
from mcptask.errors import AuthError
from mcptask.text.sanitize import one_line

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
#: the 2025-03-26 spec asks for this header on the metadata request
LEGACY_VERSION = "2025-03-26"


@dataclass
class ServerAuth:
    """What discovery found for one MCP endpoint."""

    #: the MCP endpoint, canonical (the resource a token is for, when the metadata names none)
    server_url: str
    #: the resource indicator sent in authorization and token requests (RFC 8707)
    resource: str
    issuer: str
    metadata: dict[str, Any] = field(default_factory=dict)
    resource_metadata: dict[str, Any] | None = None
    #: found by the 2025-03-26 fallbacks (no protected-resource metadata)
    legacy: bool = False

    def endpoint(self, name: str) -> str | None:
        value = self.metadata.get(name)
        return value if isinstance(value, str) and value else None

    def supported(self, name: str) -> list[str] | None:
        value = self.metadata.get(name)
        if not isinstance(value, list):
            return None
        return [v for v in value if isinstance(v, str)]

    @property
    def token_endpoint(self) -> str:
        endpoint = self.endpoint("token_endpoint")
        if endpoint is None:
            raise AuthError(f"the authorization server {self.issuer} names no token endpoint")
        return endpoint

    @property
    def resource_scopes(self) -> list[str] | None:
        if self.resource_metadata is None:
            return None
        value = self.resource_metadata.get("scopes_supported")
        if not isinstance(value, list):
            return None
        return [v for v in value if isinstance(v, str)]

    def require_pkce(self) -> None:
        """PKCE S256 or nothing: an authorization server whose metadata does not advertise it
        is refused (the spec's MUST). The 2025-03-26 endpoint fallback has no metadata to ask."""
        if not self.metadata.get("_fallback") and "S256" not in (
            self.supported("code_challenge_methods_supported") or []
        ):
            raise AuthError(
                f"the authorization server {self.issuer} does not advertise PKCE with S256 "
                "(code_challenge_methods_supported): mcptask will not authorize without it"
            )


# -- URLs ---------------------------------------------------------------------------------------


def canonical(url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707 §2): lower-case scheme and host, no fragment,
    no trailing slash."""
    u = urlsplit(url.strip())
    netloc = u.netloc.rpartition("@")[2].lower()
    return urlunsplit((u.scheme.lower(), netloc, u.path.rstrip("/"), u.query, ""))


def _origin(url: str) -> str:
    u = urlsplit(url)
    return f"{u.scheme.lower()}://{u.netloc.rpartition('@')[2].lower()}"


def prm_urls(server_url: str, challenge: Challenge | None) -> list[str]:
    """Where to look for the protected-resource metadata, in order: the challenge's
    `resource_metadata`, then the path-inserted and the root well-known URLs."""
    urls: list[str] = []
    if challenge is not None and challenge.resource_metadata:
        named = urlsplit(challenge.resource_metadata)
        if named.scheme in ("http", "https") and named.netloc:
            urls.append(challenge.resource_metadata)
    path = urlsplit(server_url).path.rstrip("/")
    origin = _origin(server_url)
    if path:
        urls.append(f"{origin}{PRM_WELL_KNOWN}{path}")
    urls.append(f"{origin}{PRM_WELL_KNOWN}")
    return list(dict.fromkeys(urls))


def metadata_urls(issuer: str) -> list[str]:
    """Authorization-server metadata URLs for an issuer, in the spec's priority order."""
    u = urlsplit(issuer)
    origin = f"{u.scheme}://{u.netloc}"
    path = u.path.rstrip("/")
    if path:
        return [
            f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration",
        ]
    return [
        f"{origin}/.well-known/oauth-authorization-server",
        f"{origin}/.well-known/openid-configuration",
    ]


def resource_allowed(resource: str, server_url: str) -> bool:
    """The metadata's `resource` covers the endpoint: same origin, and the endpoint's path is
    the resource's path or below it."""
    r, s = urlsplit(canonical(resource)), urlsplit(canonical(server_url))
    if (r.scheme, r.netloc) != (s.scheme, s.netloc):
        return False
    base = r.path.rstrip("/")
    return s.path == base or s.path.startswith(base + "/") or not base


def _same_issuer(found: Any, expected: str) -> bool:
    return isinstance(found, str) and found.rstrip("/") == expected.rstrip("/")


# -- discovery -----------------------------------------------------------------------------------


async def discover(web: Web, server_url: str, challenge: Challenge | None) -> ServerAuth:
    """Resource metadata, then the authorization server's metadata; without resource metadata,
    the 2025-03-26 fallbacks."""
    server = canonical(server_url)
    prm = await _resource_metadata(web, server, challenge)
    if prm is None:
        return await _legacy(web, server)
    resource = prm.get("resource")
    if isinstance(resource, str) and resource:
        if not resource_allowed(resource, server):
            raise AuthError(
                f"the protected-resource metadata of {server} names another resource "
                f"({one_line(resource, 120)}): refusing to authorize for it"
            )
    else:
        resource = server
    servers = prm.get("authorization_servers")
    issuers = [s for s in servers if isinstance(s, str) and s] if isinstance(servers, list) else []
    if not issuers:
        raise AuthError(
            f"the protected-resource metadata of {server} names no authorization server"
        )
    issuer = issuers[0]
    metadata = await _server_metadata(web, issuer)
    return ServerAuth(server, resource, issuer, metadata, prm)


async def _resource_metadata(
    web: Web, server: str, challenge: Challenge | None
) -> dict[str, Any] | None:
    for url in prm_urls(server, challenge):
        answer = await web.get(url)
        doc = answer.json_object() if answer.ok else None
        if doc is not None and "authorization_servers" in doc:
            return doc
    return None


async def _server_metadata(web: Web, issuer: str) -> dict[str, Any]:
    mismatched = None
    for url in metadata_urls(issuer):
        doc = _metadata(await web.get(url))
        if doc is None:
            continue
        if not _same_issuer(doc.get("issuer"), issuer):
            mismatched = doc.get("issuer")
            continue  # RFC 8414 §3.3: metadata for another issuer must not be used
        return doc
    if mismatched is not None:
        raise AuthError(
            f"the authorization server metadata for {issuer} names another issuer "
            f"({one_line(str(mismatched), 120)}): refusing to use it"
        )
    raise AuthError(
        f"no authorization server metadata for {issuer} (tried {', '.join(metadata_urls(issuer))})"
    )


def _metadata(answer: Answer) -> dict[str, Any] | None:
    doc = answer.json_object() if answer.ok else None
    if doc is None or not isinstance(doc.get("issuer"), str):
        return None
    return doc


async def _legacy(web: Web, server: str) -> ServerAuth:
    """MCP 2025-03-26: the authorization base URL is the endpoint's origin; its metadata, else
    the default endpoints there."""
    origin = _origin(server)
    for url in metadata_urls(origin):
        doc = _metadata(await web.get(url, {"MCP-Protocol-Version": LEGACY_VERSION}))
        if doc is not None:
            issuer = doc["issuer"]
            return ServerAuth(server, server, issuer, doc, None, legacy=True)
    fallback = {
        "issuer": origin,
        "authorization_endpoint": f"{origin}/authorize",
        "token_endpoint": f"{origin}/token",
        "registration_endpoint": f"{origin}/register",
        "_fallback": True,
    }
    return ServerAuth(server, server, origin, fallback, None, legacy=True)


def describe(auth: ServerAuth) -> str:
    how = "2025-03-26 fallback" if auth.legacy else "protected-resource metadata"
    return f"authorization server {where(auth.issuer)} ({how})"
