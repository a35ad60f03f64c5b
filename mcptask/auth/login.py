"""A whole login, as `mcptask auth login` and `--login` run it: find the authorization server,
choose the client, pick the scopes, run the grant, store the credentials."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from mcptask.auth import challenge as challenges
from mcptask.auth import client as clients
from mcptask.auth import discovery, flows
from mcptask.auth.challenge import Challenge
from mcptask.auth.client import Client, ClientOptions
from mcptask.auth.discovery import ServerAuth
from mcptask.auth.store import CannotKeep, Credentials, CredentialStore
from mcptask.auth.web import Web
from mcptask.errors import AuthError, UsageError

OFFLINE = "offline_access"
PROTOCOL_VERSION = "2025-11-25"


@dataclass
class LoginOptions:
    client: ClientOptions = field(default_factory=ClientOptions)
    #: `--scope`: replaces the scopes mcptask would choose
    scope: str | None = None
    client_credentials: bool = False
    no_browser: bool = False
    #: stdin is a terminal: a pasted redirect is read there too
    paste: bool = False


@dataclass
class LoginIO:
    """How a login talks to the person: one line on stderr; opening the browser."""

    note: Callable[[str], None]
    open_browser: Callable[[str], bool] | None = None
    #: shows the authorization URL in full (a note may shorten it)
    show_url: Callable[[str], None] | None = None


def select_scope(
    wanted: str | None, challenge: Challenge | None, auth: ServerAuth, *, offline: bool
) -> str | None:
    """The spec's order: the challenge's `scope`, else the resource's `scopes_supported`, else
    none; `offline_access` added (for a refresh token) only where the authorization server
    lists it."""
    if wanted:
        return wanted
    scopes: list[str] = []
    if challenge is not None and challenge.scope:
        scopes = challenge.scope.split()
    elif auth.resource_scopes:
        scopes = list(auth.resource_scopes)
    if offline and OFFLINE in (auth.supported("scopes_supported") or []) and OFFLINE not in scopes:
        scopes.append(OFFLINE)
    return " ".join(dict.fromkeys(scopes)) or None


async def probe(web: Web, server_url: str) -> tuple[Challenge | None, bool]:
    """Ask the endpoint without a token: its challenge, and whether it refused (401/403)."""
    answer = await web.post_json(
        server_url,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcptask", "version": _version()},
            },
        },
    )
    if answer.status in (401, 403):
        header = answer.headers.get("www-authenticate", "")
        return challenges.parse([header] if header else []), True
    location = answer.headers.get("location")
    if answer.status in (301, 302, 303, 307, 308) and location:
        from urllib.parse import urljoin

        from mcptask.auth.web import where

        target = urljoin(server_url, location)
        if where(target).lower() != where(server_url).lower():
            raise AuthError(
                f"{where(server_url)} redirects to {where(target)}: a login never follows a "
                "redirect to another origin; log in with that server's address as the target"
            )
    return None, False


def _version() -> str:
    from mcptask import __version__

    return __version__


async def login(
    server_url: str,
    opts: LoginOptions,
    io: LoginIO,
    *,
    web: Web,
    store: CredentialStore,
    challenge: Challenge | None = None,
    scope: str | None = None,
) -> Credentials:
    """Log in to `server_url`; `challenge` is the refusal that asked for it (else the endpoint
    is asked once without a token); `scope` a step-up's scopes."""
    if not opts.client_credentials:
        from mcptask.auth.loopback import login_timeout

        login_timeout()  # a bad MCPTASK_LOGIN_TIMEOUT is refused before any request
    refused = challenge is not None
    if challenge is None:
        challenge, refused = await probe(web, server_url)
    auth = await discovery.discover(web, server_url, challenge)
    if auth.legacy and not refused and auth.metadata.get("_fallback"):
        raise AuthError(
            f"{server_url} did not ask for authorization and publishes no OAuth metadata: "
            "there is nothing to log in to"
        )
    run = _Run(server_url, opts, auth, challenge, scope or opts.scope, web, store)
    if opts.client_credentials:
        return await _client_credentials(run)
    return await _authorization_code(run, io)


@dataclass
class _Run:
    """One login's particulars, once the authorization server is known."""

    server_url: str
    opts: LoginOptions
    auth: ServerAuth
    challenge: Challenge | None
    #: scopes asked for (`--scope` or a step-up's), else chosen by `select_scope`
    wanted: str | None
    web: Web
    store: CredentialStore

    def finish(
        self, client: Client, tokens: flows.Tokens, scope: str | None, grant: str
    ) -> Credentials:
        """Store what the grant gave and return it."""
        creds = _credentials(self.server_url, self.auth, client, tokens, scope, grant)
        try:
            self.store.save(creds)
        except CannotKeep as exc:
            raise CannotKeep.after_login(exc, creds.server, self.store.directory) from None
        return creds


async def _client_credentials(run: _Run) -> Credentials:
    opts, auth = run.opts, run.auth
    client = clients.pre_registered(opts.client, auth)
    if client is None or not (client.client_secret or client.key_file):
        raise UsageError(
            "--client-credentials needs --client-id and --client-secret-file or --client-key-file"
        )
    if client.auth_method == "none":  # a confidential client authenticates whatever is listed
        client.auth_method = "client_secret_basic" if client.client_secret else "private_key_jwt"
    scope = select_scope(run.wanted, run.challenge, auth, offline=False)
    tokens = await flows.client_credentials(
        run.web, auth.token_endpoint, auth.issuer, client, auth.resource, scope
    )
    return run.finish(client, tokens, scope, "client_credentials")


async def _authorization_code(run: _Run, io: LoginIO) -> Credentials:
    from mcptask.auth.loopback import Loopback, login_timeout  # asyncio: only for a login

    opts, auth, web = run.opts, run.auth, run.web
    auth.require_pkce()
    previous = run.store.load(run.server_url)
    reuse = _stored_registration(previous, auth)
    port = urlsplit(reuse.redirect_uri or "").port if reuse is not None else None
    async with Loopback(port or 0, paste=opts.paste) as lb:
        client = clients.pre_registered(opts.client, auth) or clients.metadata_document(
            opts.client, auth
        )
        scope = select_scope(run.wanted, run.challenge, auth, offline=True)
        if client is None:
            if (
                reuse is not None
                and reuse.redirect_uri == lb.redirect_uri
                and _covers(reuse.scope, scope)
            ):
                client = reuse
            else:
                client = await clients.register(web, auth, lb.redirect_uri, scope)
            if run.wanted is None:
                scope = _within(scope, client.scope)

        async def open_url(url: str) -> None:
            _offer(url, lb.redirect_uri, opts, io)

        tokens = await flows.authorization_code(
            web,
            auth,
            client,
            redirect_uri=lb.redirect_uri,
            scope=scope,
            open_url=open_url,
            wait=lambda state: lb.wait(login_timeout(), state),
        )
    return run.finish(client, tokens, scope, "authorization_code")


def _covers(registered: str | None, scope: str | None) -> bool:
    """A client registered for `registered` may ask for `scope` (unknown: assume so)."""
    if registered is None or not scope:
        return True
    return set(scope.split()) <= set(registered.split())


def _within(scope: str | None, registered: str | None) -> str | None:
    """The scopes to ask for, within what the registration granted (where it said): those
    of `scope` it covers, else the granted ones."""
    if registered is None or _covers(registered, scope):
        return scope
    assert scope is not None
    kept = [s for s in scope.split() if s in registered.split()]
    return " ".join(kept) if kept else registered


def _stored_registration(previous: Credentials | None, auth: ServerAuth) -> Client | None:
    """A client this machine registered with the same authorization server before."""
    if previous is None or previous.issuer != auth.issuer:
        return None
    if previous.client.source != "registered" or not previous.client.redirect_uri:
        return None
    return previous.client


def _offer(url: str, redirect_uri: str, opts: LoginOptions, io: LoginIO) -> None:
    """Open the browser at the authorization URL (in a thread: a `$BROWSER` command may wait
    for the redirect it follows), and say where to go if it does not open."""
    import threading

    show = io.show_url or (lambda u: io.note(f"  {u}"))
    if opts.no_browser or io.open_browser is None:
        io.note("open this address in a browser to authorize mcptask:")
        show(url)
        how = "; or paste the address the browser ends on here" if opts.paste else ""
        io.note(f"waiting for the redirect to {redirect_uri}{how}")
        return
    io.note("opening the browser to authorize mcptask; if it does not open, visit:")
    show(url)
    threading.Thread(target=io.open_browser, args=(url,), daemon=True).start()


def _credentials(
    server_url: str,
    auth: ServerAuth,
    client: Client,
    tokens: flows.Tokens,
    scope: str | None,
    grant: str,
) -> Credentials:
    return Credentials(
        server=discovery.canonical(server_url),
        issuer=auth.issuer,
        token_endpoint=auth.token_endpoint,
        resource=auth.resource,
        client=client,
        access_token=tokens.access_token,
        token_type=tokens.token_type,
        expires_at=tokens.expires_at,
        refresh_token=tokens.refresh_token,
        scope=tokens.scope if tokens.scope is not None else scope,
        grant=grant,
        revocation_endpoint=auth.endpoint("revocation_endpoint"),
        revocation_methods=auth.supported("revocation_endpoint_auth_methods_supported"),
    )


def open_browser(url: str) -> bool:
    import webbrowser

    try:
        return webbrowser.open(url)
    except Exception:
        return False
