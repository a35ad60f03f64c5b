"""Which client mcptask is to the authorization server, and how it proves it at the token
endpoint.

The spec's order: a pre-registered client (`--client-id`, `--client-secret-file`,
`--client-key-file`, or the config entry), a client ID metadata document URL where the server
supports them (`--client-metadata-url`), dynamic client registration (RFC 7591). Token endpoint
authentication by what the server supports: `private_key_jwt` (with a key), `client_secret_basic`,
`client_secret_post`, `none`; client authentication itself is authlib's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mcptask.auth.discovery import ServerAuth
from mcptask.auth.web import Web, said
from mcptask.errors import AuthError, UsageError

CLIENT_NAME = "mcptask"
METHODS = ("client_secret_basic", "client_secret_post", "none", "private_key_jwt")


@dataclass
class Client:
    client_id: str
    client_secret: str | None = None
    #: the token endpoint authentication method
    auth_method: str = "none"
    #: a PEM private key file (private_key_jwt): its path is kept, never the key
    key_file: str | None = None
    #: "pre-registered", "metadata-document" or "registered" (dynamic registration)
    source: str = "registered"
    #: the redirect URI a dynamically registered client was registered with
    redirect_uri: str | None = None
    #: the scopes the registration granted (RFC 7591 `scope`), where it said
    scope: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_json(cls, data: Any) -> Client | None:
        if not isinstance(data, dict) or not isinstance(data.get("client_id"), str):
            return None
        fields = {k: data[k] for k in cls.__dataclass_fields__ if isinstance(data.get(k), str)}
        return cls(**fields)


@dataclass
class ClientOptions:
    """What the user said about the client (flags, or the config entry)."""

    client_id: str | None = None
    client_secret_file: str | None = None
    client_key_file: str | None = None
    client_metadata_url: str | None = None


def read_secret_file(path: str, what: str) -> str:
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise UsageError(f"{what} {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise UsageError(f"cannot read {what} {path}: {reason}") from None
    if not text:
        raise UsageError(f"{what} {path} is empty")
    return text


def check_metadata_url(url: str) -> str:
    from urllib.parse import urlsplit

    u = urlsplit(url)
    if u.scheme != "https" or not u.netloc or u.path in ("", "/"):
        raise UsageError(
            f"--client-metadata-url {url}: a client ID metadata document URL must be https "
            "with a path (https://example.com/client.json)"
        )
    return url


def choose_method(
    supported: list[str] | None, *, secret: bool, key: bool, registered: str | None = None
) -> str:
    """The token endpoint authentication method: what registration settled, else the best
    the server supports for what the client holds (RFC 8414's default: client_secret_basic)."""
    if registered in METHODS and (registered != "private_key_jwt" or key):
        return registered
    offered = supported if supported else ["client_secret_basic"]
    if key and "private_key_jwt" in offered:
        return "private_key_jwt"
    if secret:
        for method in ("client_secret_basic", "client_secret_post"):
            if method in offered:
                return method
    if key:
        return "private_key_jwt"
    if secret and "none" not in offered:
        return "client_secret_basic"
    return "none"


def pre_registered(opts: ClientOptions, auth: ServerAuth) -> Client | None:
    if not opts.client_id:
        return None
    secret = (
        read_secret_file(opts.client_secret_file, "--client-secret-file")
        if opts.client_secret_file
        else None
    )
    if opts.client_key_file:
        read_secret_file(opts.client_key_file, "--client-key-file")  # readable now, not later
    method = choose_method(
        auth.supported("token_endpoint_auth_methods_supported"),
        secret=secret is not None,
        key=opts.client_key_file is not None,
    )
    return Client(
        opts.client_id,
        secret,
        method,
        key_file=opts.client_key_file,
        source="pre-registered",
    )


def metadata_document(opts: ClientOptions, auth: ServerAuth) -> Client | None:
    supported = auth.metadata.get("client_id_metadata_document_supported") is True
    if not opts.client_metadata_url or not supported:
        return None
    method = "private_key_jwt" if opts.client_key_file else "none"
    return Client(
        opts.client_metadata_url,
        None,
        method,
        key_file=opts.client_key_file,
        source="metadata-document",
    )


async def register(
    web: Web, auth: ServerAuth, redirect_uri: str, scope: str | None = None
) -> Client:
    """Dynamic client registration (RFC 7591) as a native public client where the server
    allows it (`none`), else with a secret; with the scopes the login will ask for (a server
    that gives a client default scopes otherwise refuses any other later)."""
    endpoint = auth.endpoint("registration_endpoint")
    if endpoint is None:
        raise AuthError(
            f"the authorization server {auth.issuer} offers no dynamic client registration: "
            "give --client-id (and --client-secret-file) of a client registered there"
        )
    supported = auth.supported("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    # a public client where allowed; else the first secret method the server lists (its
    # preference: the MCP SDK lists the form first, and its revocation endpoint reads it)
    wanted = (
        "none"
        if "none" in supported
        else next(
            (m for m in supported if m in ("client_secret_basic", "client_secret_post")),
            "client_secret_basic",
        )
    )
    body = {
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": wanted,
        "application_type": "native",
    }
    if scope:
        body["scope"] = scope
    answer = await web.post_json(endpoint, body)
    doc = answer.json_object()
    if not answer.ok or doc is None or not isinstance(doc.get("client_id"), str):
        why = _oauth_error(doc, answer.text)
        if scope and "scope" in why.lower():
            why += f"; it was asked for {said(scope, 120)}: choose the scopes with --scope"
        raise AuthError(f"client registration at {endpoint} failed: HTTP {answer.status}{why}")
    secret = doc.get("client_secret") if isinstance(doc.get("client_secret"), str) else None
    registered = doc.get("token_endpoint_auth_method")
    method = choose_method(
        auth.supported("token_endpoint_auth_methods_supported"),
        secret=bool(secret),
        key=False,
        registered=registered if isinstance(registered, str) else None,
    )
    granted = doc.get("scope")
    return Client(
        doc["client_id"],
        secret or None,
        method,
        redirect_uri=redirect_uri,
        scope=granted if isinstance(granted, str) and granted.strip() else None,
    )


def _oauth_error(doc: dict[str, Any] | None, text: str) -> str:
    if doc is not None and isinstance(doc.get("error"), str):
        desc = doc.get("error_description")
        detail = f" ({said(str(desc), 160)})" if isinstance(desc, str) and desc else ""
        return f": {said(doc['error'], 60)}{detail}"
    snippet = said(text, 120)
    return f": {snippet}" if snippet else ""


# -- authenticating at the token endpoint ----------------------------------------------------


def authenticate(
    client: Client, audience: str, headers: dict[str, str], body: str
) -> tuple[dict[str, str], str]:
    """Headers and form body with the client's authentication added (authlib's encoders; a
    signed JWT assertion for private_key_jwt, its audience the issuer as RFC 7523bis asks)."""
    if client.auth_method == "private_key_jwt":
        from authlib.common.urls import add_params_to_qs
        from authlib.oauth2.rfc7523 import private_key_jwt_sign

        key, alg = _signing_key(client)
        assertion = private_key_jwt_sign(key, client.client_id, audience, alg=alg)
        body = add_params_to_qs(
            body,
            [
                ("client_id", client.client_id),
                ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
                ("client_assertion", assertion),
            ],
        )
        return headers, body
    from authlib.oauth2.auth import ClientAuth

    method = client.auth_method if client.auth_method in METHODS else "none"
    if method != "none" and not client.client_secret:
        method = "none"
    if method == "client_secret_basic":
        # client_id in the body as well: RFC 6749 §3.2.1 allows it, and the MCP Python SDK's
        # token endpoint (fastmcp) requires it even with HTTP Basic
        from authlib.common.urls import add_params_to_qs

        body = add_params_to_qs(body, [("client_id", client.client_id)])
    auth = ClientAuth(client.client_id, client.client_secret or "", method)
    _, new_headers, new_body = auth.prepare("POST", "", dict(headers), body)
    return dict(new_headers), new_body


def _signing_key(client: Client) -> tuple[Any, str]:
    if not client.key_file:
        raise AuthError("private_key_jwt needs a private key: give --client-key-file PEM")
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key
    from joserfc.jwk import import_key

    pem = read_secret_file(client.key_file, "--client-key-file").encode()
    bad = UsageError(
        f"--client-key-file {client.key_file}: not an RSA, EC or Ed25519 PEM private key"
    )
    try:
        private = load_pem_private_key(pem, password=None)
    except (ValueError, TypeError):
        raise bad from None
    if isinstance(private, rsa.RSAPrivateKey):
        return import_key(pem, "RSA"), "RS256"
    if isinstance(private, ec.EllipticCurvePrivateKey):
        alg = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}.get(
            private.curve.name, "ES256"
        )
        return import_key(pem, "EC"), alg
    if isinstance(private, ed25519.Ed25519PrivateKey):
        return import_key(pem, "OKP"), "EdDSA"
    raise bad
