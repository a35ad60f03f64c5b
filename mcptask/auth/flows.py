"""The grants: authorization code with PKCE (S256 only), client credentials, refresh.

PKCE, the authorization URL, the token request body and client authentication are authlib's;
the requests go through `web.Web`. Every token request carries the resource indicator (RFC 8707).
The authorization response is checked before its code is used: `state`, and `iss` as RFC 9207
§2.4 and the MCP 2026-07-28 table ask (compared when present; required when the server
advertises `authorization_response_iss_parameter_supported`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcptask.auth.client import Client, authenticate
from mcptask.auth.discovery import ServerAuth
from mcptask.auth.web import Web, said
from mcptask.errors import AuthError


@dataclass
class Tokens:
    access_token: str
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = None
    scope: str | None = None


OpenUrl = Callable[[str], Awaitable[None]]
#: waits for the authorization response carrying the given `state`
WaitResponse = Callable[[str], Awaitable[dict[str, str]]]


#: the longest lifetime believed of a token (`expires_in`): ten years
MAX_EXPIRES_IN = 10 * 365 * 86400.0


def _refusal(what: str, status: int, doc: dict[str, Any] | None, text: str) -> AuthError:
    detail = f"HTTP {status}"
    if doc is not None and isinstance(doc.get("error"), str):
        detail = said(doc["error"], 60)
        desc = doc.get("error_description")
        if isinstance(desc, str) and desc:
            detail += f" ({said(desc, 160)})"
        if doc["error"] == "invalid_scope":
            detail += "; choose the scopes with --scope"
    elif text.strip() and status >= 400:
        detail += f": {said(text, 120)}"
    elif text.strip():
        # a success status whose body is no answer mcptask can read: never shown, for it may
        # hold the very tokens it failed to read
        detail += " with an answer that is not a token response (not shown)"
    return AuthError(f"the authorization server refused the {what}: {detail}")


def visible_ascii(token: str) -> bool:
    """A token that can go in an HTTP header as it is (RFC 6750's b64token is a subset):
    visible ASCII, no space, no control character."""
    return bool(token) and all("!" <= c <= "~" for c in token)


def expires_at(value: Any, now: float) -> float | None:
    """`expires_in` as a time: a finite number of seconds (or digits in a string), bounded to
    0 .. ten years; anything else (NaN, infinity, 10**400, words) means no expiry given."""
    import math

    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 15:
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and abs(value) > 10**15:
        return None
    seconds = float(value)
    if not math.isfinite(seconds):
        return None
    return now + min(max(seconds, 0.0), MAX_EXPIRES_IN)


async def token_request(
    web: Web,
    token_endpoint: str,
    audience: str,
    client: Client,
    grant_type: str,
    what: str,
    **params: str | None,
) -> Tokens:
    """POST a token request; the answer as `Tokens` (a granted scope defaults to the asked)."""
    from authlib.oauth2.rfc6749.parameters import prepare_token_request

    body = prepare_token_request(grant_type, **{k: v for k, v in params.items() if v})
    headers, body = authenticate(client, audience, {}, body)
    answer = await web.post_form(token_endpoint, body, headers)
    doc = answer.json_object()
    if not answer.ok or doc is None:
        raise _refusal(what, answer.status, doc, answer.text if doc is None else "")
    token = doc.get("access_token")
    if not isinstance(token, str) or not token:
        raise AuthError(f"the authorization server answered the {what} without an access token")
    if not visible_ascii(token):
        raise AuthError(
            f"the authorization server answered the {what} with an access token that has a "
            "space, a control or a non-ASCII character (RFC 6750): refusing it (it is not shown)"
        )
    token_type = doc.get("token_type")
    if isinstance(token_type, str) and token_type.lower() not in ("bearer", ""):
        raise AuthError(
            f"the authorization server issued a {said(token_type, 30)!r} token; "
            "mcptask sends bearer tokens only"
        )
    refresh = doc.get("refresh_token")
    if isinstance(refresh, str) and refresh and not visible_ascii(refresh):
        raise AuthError(
            f"the authorization server answered the {what} with a refresh token that has a "
            "space, a control or a non-ASCII character: refusing it (it is not shown)"
        )
    scope = doc.get("scope")
    return Tokens(
        access_token=token,
        expires_at=expires_at(doc.get("expires_in"), time.time()),
        refresh_token=refresh if isinstance(refresh, str) and refresh else None,
        scope=scope if isinstance(scope, str) else params.get("scope"),
    )


# -- authorization code ------------------------------------------------------------------------


def check_response(params: dict[str, str], state: str, auth: ServerAuth) -> str:
    """The code from an authorization response, after the `iss` and `state` checks."""
    iss = params.get("iss")
    advertised = auth.metadata.get("authorization_response_iss_parameter_supported") is True
    if iss is not None and iss != auth.metadata.get("issuer", auth.issuer):
        raise AuthError(
            "the authorization response came from another issuer "
            f"({said(iss, 120)}, expected {auth.metadata.get('issuer', auth.issuer)}): "
            "refusing it"
        )
    if iss is None and advertised:
        raise AuthError(
            "the authorization response has no `iss` although the authorization server "
            "advertises it: refusing it"
        )
    if params.get("state") != state:
        raise AuthError("the authorization response does not carry this login's state: refusing it")
    if "error" in params:
        desc = params.get("error_description")
        detail = f" ({said(desc, 160)})" if desc else ""
        if params["error"] == "invalid_scope":
            detail += "; choose the scopes with --scope"
        raise AuthError(f"authorization refused: {said(params['error'], 60)}{detail}")
    code = params.get("code")
    if not code:
        raise AuthError("the authorization response carries no code")
    return code


async def authorization_code(
    web: Web,
    auth: ServerAuth,
    client: Client,
    *,
    redirect_uri: str,
    scope: str | None,
    open_url: OpenUrl,
    wait: WaitResponse,
) -> Tokens:
    from authlib.common.security import generate_token
    from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
    from authlib.oauth2.rfc7636 import create_s256_code_challenge

    auth.require_pkce()
    endpoint = auth.endpoint("authorization_endpoint")
    if endpoint is None:
        raise AuthError(f"the authorization server {auth.issuer} names no authorization endpoint")
    verifier = generate_token(64)
    state = generate_token(32)
    url = prepare_grant_uri(
        endpoint,
        client.client_id,
        "code",
        redirect_uri,
        scope,
        state,
        code_challenge=create_s256_code_challenge(verifier),
        code_challenge_method="S256",
        resource=auth.resource,
    )
    await open_url(url)
    code = check_response(await wait(state), state, auth)
    return await token_request(
        web,
        auth.token_endpoint,
        auth.issuer,
        client,
        "authorization_code",
        "authorization code",
        code=code,
        redirect_uri=redirect_uri,
        code_verifier=verifier,
        resource=auth.resource,
        scope=None,
    )


async def client_credentials(
    web: Web, token_endpoint: str, issuer: str, client: Client, resource: str, scope: str | None
) -> Tokens:
    return await token_request(
        web,
        token_endpoint,
        issuer,
        client,
        "client_credentials",
        "client credentials",
        scope=scope,
        resource=resource,
    )


def revocation_methods(client: Client, listed: list[str] | None) -> list[str]:
    """How to authenticate at the revocation endpoint, in order: the methods its metadata
    lists (`revocation_endpoint_auth_methods_supported`) that this client can use, the
    client's token-endpoint method first among them; without a list, the token endpoint's
    method. Then, for a client with a secret, the other of Basic and form as a second try."""
    can = ["none"]
    if client.client_secret:
        can = ["client_secret_basic", "client_secret_post"]
    if client.key_file:
        can = ["private_key_jwt", *can]
    ours = client.auth_method if client.auth_method in can else can[0]
    if listed:
        usable = [m for m in listed if m in can]
        order = ([ours] if ours in usable else []) + [m for m in usable if m != ours]
    else:
        order = [ours]
    if client.client_secret:
        order += [m for m in ("client_secret_basic", "client_secret_post") if m not in order]
    return order[:3] or [ours]


async def revoke(
    web: Web,
    endpoint: str,
    issuer: str,
    client: Client,
    token: str,
    hint: str,
    listed: list[str] | None = None,
) -> bool:
    """Ask the authorization server to revoke a token (RFC 7009); True when it says done.
    Refused with 400/401 (a server that lists one method and reads another), it is asked
    again with the next method."""
    from dataclasses import replace

    from authlib.common.urls import add_params_to_qs

    for method in revocation_methods(client, listed):
        body = add_params_to_qs("", [("token", token), ("token_type_hint", hint)])
        headers, body = authenticate(replace(client, auth_method=method), issuer, {}, body)
        answer = await web.post_form(endpoint, body, headers)
        if answer.ok:
            return True
        if answer.status not in (400, 401):
            return False
    return False


async def refresh(
    web: Web, token_endpoint: str, issuer: str, client: Client, resource: str, refresh_token: str
) -> Tokens:
    """A refresh (the new refresh token, where the server rotates it, replaces the old)."""
    tokens = await token_request(
        web,
        token_endpoint,
        issuer,
        client,
        "refresh_token",
        "refresh",
        refresh_token=refresh_token,
        resource=resource,
    )
    if tokens.refresh_token is None:
        tokens.refresh_token = refresh_token
    return tokens
