"""What the HTTP transport asks of OAuth: the bearer token for a request, and what to do when
the server refuses one (401, or 403 `insufficient_scope`).

- Stored credentials are used as they are, refreshed first when they have expired (or are about
  to) and again when a 401 says so; a rotated refresh token replaces the old one in the store.
- No usable credentials: with `--login` (or a yes on a terminal) log in now and retry, else
  `AuthError` naming the exact command (`mcptask auth login --url U`).
- 403 `insufficient_scope`: re-authorize with the scopes the challenge names, at most
  `MAX_STEP_UPS` times in a run, then give up.

Refreshes are serialized (a watch has many requests in flight): a request that was refused
with a token someone else has already replaced is simply retried.
"""

from __future__ import annotations

import shlex
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcptask.auth import challenge as challenges
from mcptask.auth import flows
from mcptask.auth.challenge import Challenge
from mcptask.auth.store import CannotKeep, Credentials, CredentialStore, RenewalLock
from mcptask.auth.web import Web
from mcptask.errors import AuthError

MAX_STEP_UPS = 2
MAX_LOGINS = 1

#: runs a login: (challenge, step-up scopes or None) -> new credentials
Login = Callable[[Challenge | None, str | None], Awaitable[Credentials]]
#: asks the person whether to log in now (a terminal), with the reason
Confirm = Callable[[str], bool]


def login_command(target_args: str, *, scope: str | None = None) -> str:
    """The command that logs in: `target_args` names the target (`--url U` or `-s NAME`)."""
    cmd = f"mcptask auth login {target_args}"
    if scope:
        cmd += f" --scope {shlex.quote(scope)}"
    return cmd


class OAuthProvider:
    def __init__(
        self,
        server: str,
        store: CredentialStore,
        web: Web,
        *,
        login: Login | None = None,
        always_login: bool = False,
        confirm: Confirm | None = None,
        target_args: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.server = server
        #: wall-clock seconds, against which tokens expire (tests move it on)
        self.clock = clock
        self.store = store
        self.web = web
        self._login = login
        self._always_login = always_login
        self._confirm = confirm
        from mcptask.text.urls import shown_url

        self._hint = shown_url(server)
        self._args = target_args or f"--url {shlex.quote(self._hint)}"
        self._creds: Credentials | None = None
        self._loaded = False
        self._lock: Any = None
        self.step_ups = 0
        self.logins = 0
        #: every access token this run used or received (the transport redacts them)
        self.secrets: list[str] = []

    # -- the bearer -----------------------------------------------------------------------------

    def current(self) -> Credentials | None:
        if not self._loaded:
            self._loaded = True
            self._creds = self.store.load(self.server)
            self._remember(self._creds)
        return self._creds

    def _remember(self, creds: Credentials | None) -> None:
        if creds is None:
            return
        for secret in (creds.access_token, creds.refresh_token, creds.client.client_secret):
            if secret and secret not in self.secrets:
                self.secrets.append(secret)

    async def bearer(self) -> str | None:
        """The access token to send, refreshed first when it has expired."""
        creds = self.current()
        if creds is None:
            return None
        if creds.expired(self.clock()) and creds.renewable:
            old = creds.access_token  # before waiting: another request may renew it meanwhile
            async with _Serial(self):
                await self._renew(old)
            creds = self._creds
        return creds.access_token if creds is not None else None

    # -- refusals -------------------------------------------------------------------------------

    async def refused(self, status: int, headers: list[str], sent: str | None) -> bool:
        """A 401 or 403 to a request sent with `sent` (None: without a token). True: retry it
        (a new token is ready); False: not OAuth's to answer (a plain 403). One refusal is
        handled at a time: the others then find the token replaced and simply retry."""
        async with _Serial(self):
            return await self._refused(status, headers, sent)

    async def _refused(self, status: int, headers: list[str], sent: str | None) -> bool:
        challenge = challenges.parse(headers)
        if status == 403:
            if not challenge.insufficient_scope:
                return False
            return await self._step_up(challenge, sent)
        creds = self.current()
        if creds is not None and creds.access_token != sent:
            return True  # replaced meanwhile (another request refreshed it or logged in)
        if creds is not None and creds.renewable and sent is not None and await self._renew(sent):
            return True
        where = (
            f"; resource metadata: {challenge.resource_metadata}"
            if challenge.resource_metadata
            else ""
        )
        reason = f"{self._hint} asks for authorization (HTTP 401{where})"
        return await self._log_in(challenge, None, reason)

    async def _step_up(self, challenge: Challenge, sent: str | None) -> bool:
        creds = self.current()
        if creds is not None and creds.access_token != sent:
            return True  # stepped up meanwhile by another request
        granted = creds.scopes() if creds is not None else []
        wanted = " ".join(dict.fromkeys([*granted, *(challenge.scope or "").split()])) or None
        if self.step_ups >= MAX_STEP_UPS:
            raise AuthError(
                f"{self._hint} still refuses with insufficient_scope after {self.step_ups} "
                f"re-authorizations (needs: {challenge.scope or 'unnamed scopes'})"
            )
        self.step_ups += 1
        need = challenge.scope or "more scopes"
        if creds is not None and creds.grant == "client_credentials":
            # a machine's client asks again for the wider scopes: no person to involve
            return await self._renew(creds.access_token, scope=wanted)
        reason = f"{self._hint} needs scope {need} (HTTP 403 insufficient_scope)"
        return await self._log_in(challenge, wanted, reason, scope_hint=wanted, step_up=True)

    async def _log_in(
        self,
        challenge: Challenge,
        scope: str | None,
        reason: str,
        *,
        scope_hint: str | None = None,
        step_up: bool = False,
    ) -> bool:
        command = login_command(self._args, scope=scope_hint)
        token = "" if step_up else ", or give a token (--token-file, MCPTASK_TOKEN)"
        if self._login is None:
            raise AuthError(f"{reason}: run `{command}`{token}")
        if not step_up and self.logins >= MAX_LOGINS:
            raise AuthError(f"{reason} even after logging in: run `{command}` to try again")
        if not (self._always_login or (self._confirm is not None and self._confirm(reason))):
            raise AuthError(f"{reason}: run `{command}` (or add --login){token}")
        self.logins += 1
        creds = await run_apart(lambda: self._login(challenge, scope))  # type: ignore[misc]
        self._creds, self._loaded = creds, True
        self._remember(creds)
        return True

    async def _renew(self, sent: str, *, scope: str | None = None) -> bool:
        """Refresh (or, for client credentials, ask again, for `scope` if given). False when
        the server refuses: the credentials are then of no more use."""
        creds = self.current()
        if creds is None:
            return False
        if creds.access_token != sent:
            return True
        if scope is not None:
            creds.scope = scope
        async with RenewalLock(self.store, self.server):  # one renewal at a time, everywhere
            return await self._renew_locked(creds, sent, scope)

    async def _renew_locked(self, creds: Credentials, sent: str, scope: str | None) -> bool:
        # another mcptask process may have renewed (and rotated the refresh token) meanwhile
        stored = self.store.load(self.server)
        if stored is not None and stored.access_token != sent:
            if not stored.expired(self.clock()) and scope is None:
                self._creds = stored
                self._remember(stored)
                return True
            if stored.refresh_token and stored.obtained_at >= creds.obtained_at:
                creds.refresh_token = stored.refresh_token  # the newest, not the spent one
        try:
            tokens = await self._ask_again(creds)
        except AuthError:
            return False
        creds.access_token = tokens.access_token
        creds.expires_at = tokens.expires_at
        creds.obtained_at = self.clock()
        creds.refresh_token = tokens.refresh_token or creds.refresh_token
        if tokens.scope:
            creds.scope = tokens.scope
        self._remember(creds)
        try:
            self.store.save(creds)
        except CannotKeep as exc:  # this run goes on with the new token; later ones log in
            self.store.note(f"the renewed token cannot be kept ({exc.message})")
        return True

    async def _ask_again(self, creds: Credentials) -> flows.Tokens:
        if creds.grant == "client_credentials":
            return await flows.client_credentials(
                self.web,
                creds.token_endpoint,
                creds.issuer,
                creds.client,
                creds.resource,
                creds.scope,
            )
        assert creds.refresh_token is not None
        return await flows.refresh(
            self.web,
            creds.token_endpoint,
            creds.issuer,
            creds.client,
            creds.resource,
            creds.refresh_token,
        )


class _Serial:
    """The provider's lock while an event loop runs (a watch's requests in flight); nothing
    where the command runs without a loop (one request at a time, no asyncio imported)."""

    def __init__(self, provider: OAuthProvider) -> None:
        self.provider = provider
        self.lock: Any = None

    async def __aenter__(self) -> None:
        if "asyncio" not in sys.modules:
            return
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        if self.provider._lock is None:
            self.provider._lock = asyncio.Lock()
        self.lock = self.provider._lock
        await self.lock.acquire()

    async def __aexit__(self, *exc: object) -> None:
        if self.lock is not None:
            self.lock.release()


async def run_apart(make: Callable[[], Awaitable[Credentials]]) -> Credentials:
    """Run a login on its own event loop in a thread and wait for it: it needs a loop (the
    redirect listener) even where the command runs without one, and a fresh loop keeps its
    clients apart from the command's."""
    import asyncio

    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(_call(make))
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    await _joined(thread)
    if "error" in box:
        raise box["error"]
    result: Credentials = box["value"]
    return result


async def _joined(thread: threading.Thread) -> None:
    """Wait for the thread: inside an event loop without holding it up (a watch's other
    endpoints go on polling during a login), plainly where the command runs without one."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        thread.join()
        return
    while thread.is_alive():  # cancellable (Ctrl-C), unlike a join in an executor
        await asyncio.sleep(0.05)


async def _call(make: Callable[[], Awaitable[Credentials]]) -> Credentials:
    return await make()
