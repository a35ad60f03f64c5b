"""`mcptask auth login|logout|status|token`: OAuth credentials for MCP servers (mcptask/auth).

`login` runs the authorization code flow (or `--client-credentials`) and stores what it got;
`status` shows the stored credentials (never a secret); `logout` forgets them; `token` prints
the access token, refreshed first if it has expired (for scripts, as `gh auth token` does).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.errors import AuthError, ExitCode, UsageError

if TYPE_CHECKING:
    from mcptask.auth.session import AuthOptions, Io
    from mcptask.auth.store import Credentials, CredentialStore
    from mcptask.session.context import Context
    from mcptask.session.targets import OAuthSettings


@dataclass
class LoginOptions:
    scope: str | None = None
    no_browser: bool = False
    client_credentials: bool = False


@dataclass
class LogoutOptions:
    pass


@dataclass
class StatusOptions:
    pass


@dataclass
class TokenOptions:
    pass


def _http_target(ctx: Context, command: str) -> tuple[str, OAuthSettings]:
    target = ctx.target
    if target.url is None:
        raise UsageError(
            f"auth {command} is for HTTP servers; a stdio server takes its credentials from its "
            "environment (the config entry's `env`)"
        )
    from mcptask.session.targets import oauth_settings

    settings = target.oauth or oauth_settings(ctx.options, None, target.url)
    return target.url, settings


def _io(ctx: Context) -> Io:
    from mcptask.auth.session import Io
    from mcptask.session.env import Limits

    limits = Limits.from_environment()  # MCPTASK_CONNECT_TIMEOUT / _READ_TIMEOUT, as every command
    return Io(
        note=ctx.out.note,
        trace=ctx.endpoint.trace if ctx.options.trace else None,
        connect_timeout=limits.connect_timeout,
        read_timeout=limits.read_timeout,
        interactive=ctx.env.stdin_tty and ctx.env.stderr_tty,
        network=ctx.target.network,
    )


def _store(ctx: Context) -> CredentialStore:
    from mcptask.auth.store import CredentialStore

    return CredentialStore(note=ctx.out.note)


def _when(stamp: float | None) -> str:
    if stamp is None:
        return "no expiry given"
    left = stamp - time.time()
    if left <= 0:
        return "expired"
    if left < 120:
        return f"expires in {left:.0f} s"
    if left < 7200:
        return f"expires in {left / 60:.0f} min"
    return f"expires in {left / 3600:.0f} h"


def _show(ctx: Context, creds: Credentials, verb: str) -> None:
    if not ctx.out.pretty:
        ctx.out.line(creds.summary())
        return
    scope = creds.scope or "no scope"
    ctx.out.console.print(
        _safe(
            f"{verb} {creds.server}: issuer {creds.issuer}, {scope}, "
            f"{_when(creds.expires_at)} (client {creds.client.client_id}, {creds.client.source})"
        )
    )


def _safe(text: str) -> Any:
    from mcptask.output.console import safe

    return safe(text)


async def run_login(opts: LoginOptions, ctx: Context) -> int:
    from mcptask.auth import session
    from mcptask.auth.login import login

    url, settings = _http_target(ctx, "login")
    auth: AuthOptions = session.from_settings(
        settings,
        scope=opts.scope,
        no_browser=opts.no_browser,
        client_credentials=opts.client_credentials,
    )
    io = _io(ctx)
    web = session.web(io)
    try:
        creds = await login(
            url,
            session.login_options(auth, io),
            session.login_io(io, auth),
            web=web,
            store=_store(ctx),
        )
    finally:
        await web.aclose()
    ctx.out.note(f"logged in to {creds.server}")
    _show(ctx, creds, "credentials for")
    return ExitCode.OK


async def run_logout(opts: LogoutOptions, ctx: Context) -> int:
    url, _ = _http_target(ctx, "logout")
    from mcptask.text.urls import shown_url

    store = _store(ctx)
    creds = store.load(url)
    if creds is None and not store.delete(url):
        ctx.out.note(f"no credentials were stored for {shown_url(url)}")
        return ExitCode.OK
    revoked = await _revoke(ctx, creds) if creds is not None else False
    store.delete(url)
    done = (
        "; the authorization server revoked them"
        if revoked
        else ""
        if creds is None or creds.revocation_endpoint is None
        else "; the authorization server did not confirm revoking them"
    )
    ctx.out.note(f"logged out of {shown_url(url)}: its stored credentials are gone{done}")
    return ExitCode.OK


async def _revoke(ctx: Context, creds: Credentials) -> bool:
    """Revoke the refresh token (else the access token) where the server offers revocation;
    a failure to reach it does not keep the credentials."""
    from mcptask.auth import session
    from mcptask.auth.flows import revoke
    from mcptask.errors import McptaskError

    if creds.revocation_endpoint is None:
        return False
    token, hint = (
        (creds.refresh_token, "refresh_token")
        if creds.refresh_token
        else (creds.access_token, "access_token")
    )
    web = session.web(_io(ctx))
    try:
        return await revoke(
            web,
            creds.revocation_endpoint,
            creds.issuer,
            creds.client,
            token,
            hint,
            creds.revocation_methods,
        )
    except McptaskError as exc:
        ctx.out.note(f"could not revoke the tokens: {exc.message}")
        return False
    finally:
        await web.aclose()


def _named_target(ctx: Context) -> bool:
    """Whether the command line, the environment or the config's default names a target."""
    from mcptask.session.targets import NoTarget

    try:
        ctx.target  # noqa: B018 (resolving is the question)
    except NoTarget:
        return False
    return True


async def run_status(opts: StatusOptions, ctx: Context) -> int:
    store = _store(ctx)
    if _named_target(ctx):
        url, settings = _http_target(ctx, "status")
        creds = store.load(url)
        if creds is None:
            from mcptask.auth.provider import login_command
            from mcptask.text.urls import shown_url

            raise AuthError(
                f"not logged in to {shown_url(url)}: run `{login_command(settings.target_args)}`"
            )
        _show(ctx, creds, "logged in to")
        return ExitCode.OK
    found = [c for c in (store.load(s) for s in store.servers()) if c is not None]
    if not ctx.out.pretty:
        ctx.out.line({"servers": [c.summary() for c in found], "store": store.backend})
        return ExitCode.OK
    if not found:
        ctx.out.console.print("no stored credentials")
    for creds in found:
        _show(ctx, creds, "logged in to")
    return ExitCode.OK


async def run_token(opts: TokenOptions, ctx: Context) -> int:
    from mcptask.auth import session
    from mcptask.auth.provider import login_command
    from mcptask.text.urls import shown_url

    url, settings = _http_target(ctx, "token")
    provider = session.provider(
        url,
        session.from_settings(settings),
        _io(ctx),
        blocking=False,
        target_args=settings.target_args,
    )
    try:
        token = await provider.bearer()
        creds = provider.current()
    finally:
        await provider.web.aclose()
    if token is None or creds is None:
        raise AuthError(
            f"not logged in to {shown_url(url)}: run `{login_command(settings.target_args)}`"
        )
    if creds.expired():
        raise AuthError(
            f"the access token for {shown_url(url)} has expired and could not be renewed: "
            f"run `{login_command(settings.target_args)}`"
        )
    if not all("!" <= c <= "~" for c in token):
        # server text: on a terminal an escape could act; in a header it would inject
        raise AuthError(
            f"the access token for {shown_url(url)} has a space, a control or a non-ASCII "
            f"character (it is not shown): run `{login_command(settings.target_args)}`"
        )
    ctx.out.stdout.write(token + "\n")
    ctx.out.stdout.flush()
    return ExitCode.OK
