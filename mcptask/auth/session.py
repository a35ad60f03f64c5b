"""Wiring OAuth into a command run: the provider for the target's HTTP transport, the login it
runs when the server asks, and the person's say in it (a terminal is asked; `--login` logs in
without asking)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcptask.auth.challenge import Challenge
from mcptask.auth.client import ClientOptions, check_metadata_url
from mcptask.auth.login import LoginIO, LoginOptions, login, open_browser
from mcptask.auth.provider import Confirm, Login, OAuthProvider
from mcptask.auth.store import Credentials, CredentialStore
from mcptask.auth.web import Tracer, Web
from mcptask.text.sanitize import clean

if TYPE_CHECKING:
    from mcptask.session.targets import OAuthSettings
    from mcptask.transports.net import Network


@dataclass
class AuthOptions:
    """What the command line and the config entry say about OAuth for the target."""

    #: `--login`: log in (also off a terminal) when the server asks and nothing usable is stored
    login: bool = False
    client: ClientOptions = field(default_factory=ClientOptions)
    scope: str | None = None
    no_browser: bool = False
    client_credentials: bool = False


@dataclass
class Io:
    note: Callable[[str], None]
    trace: Tracer | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    #: stdin and stderr are a terminal: ask before logging in, read a pasted redirect
    interactive: bool = False
    #: proxies and CAs (transports/net.py): the target's, else the environment's
    network: Network | None = None


def from_settings(settings: OAuthSettings, **extra: Any) -> AuthOptions:
    """The target's OAuth settings (flags over the config entry) as login options."""
    url = settings.client_metadata_url
    client = ClientOptions(
        client_id=settings.client_id,
        client_secret_file=settings.client_secret_file,
        client_key_file=settings.client_key_file,
        client_metadata_url=check_metadata_url(url) if url else None,
    )
    return AuthOptions(login=settings.login, client=client, **extra)


def login_options(opts: AuthOptions, io: Io) -> LoginOptions:
    """A pasted redirect is read from stdin only without a browser (`--no-browser`, or none
    to open): a browser's redirect reaches the listener, and stdin stays the command's own
    (a watch's forms read it)."""
    browserless = opts.no_browser or not _browser_available()
    return LoginOptions(
        client=opts.client,
        scope=opts.scope,
        client_credentials=opts.client_credentials,
        no_browser=browserless,
        paste=browserless and (opts.no_browser or io.interactive),
    )


def login_io(io: Io, opts: AuthOptions) -> LoginIO:
    return LoginIO(
        note=io.note,
        open_browser=None if opts.no_browser else open_browser,
        show_url=_show_url,
    )


def _browser_available() -> bool:
    import webbrowser

    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return True


def _show_url(url: str) -> None:
    # the whole address on a line of its own (a note would shorten it), control characters out
    sys.stderr.write(f"  {clean(url, multiline=False)}\n")
    sys.stderr.flush()


def web(io: Io, *, blocking: bool = False) -> Web:
    return Web(
        trace=io.trace,
        connect_timeout=io.connect_timeout,
        read_timeout=io.read_timeout,
        blocking=blocking,
        network=io.network,
    )


def runner(url: str, opts: AuthOptions, io: Io, store: CredentialStore) -> Login:
    """The login a provider runs when the server asks (on its own loop: see `run_apart`)."""

    async def run(challenge: Challenge | None, scope: str | None) -> Credentials:
        client = web(io)
        try:
            return await login(
                url,
                login_options(opts, io),
                login_io(io, opts),
                web=client,
                store=store,
                challenge=challenge,
                scope=scope,
            )
        finally:
            await client.aclose()

    return run


def provider(
    url: str, opts: AuthOptions, io: Io, *, blocking: bool, target_args: str | None = None
) -> OAuthProvider:
    store = CredentialStore(note=io.note)
    return OAuthProvider(
        url,
        store,
        web(io, blocking=blocking),
        login=runner(url, opts, io, store),
        always_login=opts.login,
        confirm=_confirm if io.interactive else None,
        target_args=target_args,
    )


def _confirm(reason: str) -> bool:
    sys.stderr.write(f"mcptask: {reason}; log in now? [Y/n] ")
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        return False
    return answer.strip().lower() in ("", "y", "yes")


__all__ = ["AuthOptions", "Confirm", "Io", "provider", "runner"]
