"""Stored credentials, one entry per MCP endpoint (keyed by its URL as the task book keys it).

In the OS keyring (the `keyring` package: macOS Keychain, Secret Service, KWallet...) under the
service "mcptask", with a list of the endpoints (no secret) in `auth.json` in the state
directory so that `auth status` can name them. Where no keyring backend works (headless Linux,
CI) or `MCPTASK_KEYRING=off`: `credentials.json` in the state directory, mode 0600, with a
one-line note the first time. Either way, nothing else mcptask writes holds a token or secret.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcptask.auth.client import Client
from mcptask.errors import AuthError, UsageError
from mcptask.state.endpoints import endpoint_key
from mcptask.state.files import (
    UnsafeFile,
    check_dir,
    locked,
    state_dir,
    write_private,
)

SERVICE = "mcptask"
ENV_KEYRING = "MCPTASK_KEYRING"
#: a token this close to its expiry is refreshed before use (at most a tenth of its lifetime)
LEEWAY = 30.0
#: ... and at least this close (a token of a few seconds' life)
SHORT_LEEWAY = 1.5


@dataclass
class Credentials:
    server: str
    issuer: str
    token_endpoint: str
    resource: str
    client: Client
    access_token: str
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = None
    scope: str | None = None
    #: "authorization_code" or "client_credentials" (renewed by asking again)
    grant: str = "authorization_code"
    obtained_at: float = field(default_factory=time.time)
    #: the authorization server's token revocation endpoint (RFC 7009), for `auth logout`
    revocation_endpoint: str | None = None
    #: how the revocation endpoint authenticates clients (its metadata's
    #: `revocation_endpoint_auth_methods_supported`), where it said
    revocation_methods: list[str] | None = None

    def expired(self, now: float | None = None) -> bool:
        if self.expires_at is None:
            return False
        lifetime = max(0.0, self.expires_at - self.obtained_at)
        # a tenth of its lifetime, but not under SHORT_LEEWAY (at most half the lifetime):
        # servers that keep expiry times in whole seconds end a token up to a second early,
        # and one (fastmcp's in-memory provider) revokes the refresh token of an expired
        # access token presented to it
        leeway = min(LEEWAY, max(lifetime / 10, min(SHORT_LEEWAY, lifetime / 2)))
        return (now if now is not None else time.time()) >= self.expires_at - leeway

    @property
    def renewable(self) -> bool:
        return bool(self.refresh_token) or self.grant == "client_credentials"

    def scopes(self) -> list[str]:
        return (self.scope or "").split()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "server": self.server,
            "issuer": self.issuer,
            "tokenEndpoint": self.token_endpoint,
            "resource": self.resource,
            "client": self.client.to_json(),
            "accessToken": self.access_token,
            "tokenType": self.token_type,
            "grant": self.grant,
            "obtainedAt": self.obtained_at,
        }
        for key, value in (
            ("expiresAt", self.expires_at),
            ("refreshToken", self.refresh_token),
            ("scope", self.scope),
            ("revocationEndpoint", self.revocation_endpoint),
            ("revocationMethods", self.revocation_methods),
        ):
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_json(cls, data: Any) -> Credentials | None:
        if not isinstance(data, dict):
            return None
        client = Client.from_json(data.get("client"))
        names = ("server", "issuer", "tokenEndpoint", "resource", "accessToken")
        text = {k: data.get(k) for k in names}
        if client is None or not all(isinstance(v, str) for v in text.values()):
            return None
        if not all("!" <= c <= "~" for c in data["accessToken"]) or not data["accessToken"]:
            return None  # a token no header can carry (a hand-edited or damaged entry)
        expires = _stamp(data.get("expiresAt"))
        obtained = _stamp(data.get("obtainedAt"))
        return cls(
            server=data["server"],
            issuer=data["issuer"],
            token_endpoint=data["tokenEndpoint"],
            resource=data["resource"],
            client=client,
            access_token=data["accessToken"],
            token_type=_str(data.get("tokenType")) or "Bearer",
            expires_at=expires,
            refresh_token=_str(data.get("refreshToken")),
            scope=_str(data.get("scope")),
            grant=_str(data.get("grant")) or "authorization_code",
            obtained_at=obtained if obtained is not None else time.time(),
            revocation_endpoint=_str(data.get("revocationEndpoint")),
            revocation_methods=_strs(data.get("revocationMethods")),
        )

    def summary(self) -> dict[str, Any]:
        """What `auth status` shows: never a token or secret."""
        return {
            "server": self.server,
            "issuer": self.issuer,
            "resource": self.resource,
            "client": {"clientId": self.client.client_id, "source": self.client.source},
            "grant": self.grant,
            "scope": self.scope,
            "expiresAt": _iso(self.expires_at) if self.expires_at is not None else None,
            "expired": self.expired(),
            "refreshable": self.renewable,
            "obtainedAt": _iso(self.obtained_at),
        }


#: the latest time a stored stamp may name (year 9999): `_iso` can write it
MAX_STAMP = 253402300799.0


def _stamp(value: Any) -> float | None:
    """A stored time (seconds since 1970): finite and within years 1970-9999, else None."""
    import math

    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and not 0 <= value <= MAX_STAMP:
        return None
    stamp = float(value)
    return stamp if math.isfinite(stamp) and 0 <= stamp <= MAX_STAMP else None


def _strs(value: Any) -> list[str] | None:
    if not isinstance(value, list):
        return None
    return [v for v in value if isinstance(v, str)][:20]


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _iso(stamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


# -- the store -----------------------------------------------------------------------------------


def _keyring_wanted() -> bool:
    return os.environ.get(ENV_KEYRING, "").strip().lower() not in ("off", "0", "no", "false")


class CredentialStore:
    def __init__(
        self, directory: Path | None = None, note: Callable[[str], None] | None = None
    ) -> None:
        self.directory = directory or state_dir()
        self._note = note or (lambda _msg: None)
        self._keyring: Any = None
        self._backend: str | None = None
        if _keyring_wanted():
            keyring_timeout()  # a bad value is refused now, not after a login in the browser

    def note(self, message: str) -> None:
        self._note(message)

    @property
    def file(self) -> Path:
        return self.directory / "credentials.json"

    @property
    def index(self) -> Path:
        return self.directory / "auth.json"

    @property
    def backend(self) -> str:
        """ "keyring" or "file"."""
        if self._backend is None:
            self._backend = "file"
            if _keyring_wanted():
                try:
                    self._keyring = keyring_call(_usable_keyring)
                except KeyringTimeout as exc:
                    self._fall_back(exc)
                if self._keyring is not None:
                    self._backend = "keyring"
        return self._backend

    # -- reading ------------------------------------------------------------------------------

    def load(self, server: str) -> Credentials | None:
        key = endpoint_key(server)
        # the keyring is asked only for an endpoint the index says it holds: credentials in
        # the file (or none) never import it (keyring, its backends and their D-Bus and crypto
        # libraries: about 100 modules, a third more CPU for a `get`; bench/startup.py)
        if key in self._read(self.index) and self.backend == "keyring":
            raw = self._keyring_get(key)
            if raw is not None:
                try:
                    return Credentials.from_json(json.loads(raw))
                except ValueError:
                    return None
        entry = self._read(self.file).get(key)
        return Credentials.from_json(entry)

    def servers(self) -> list[str]:
        names = set(self._read(self.file))
        names.update(self._read(self.index))
        return sorted(names)

    # -- writing ------------------------------------------------------------------------------

    def save(self, creds: Credentials) -> None:
        """Keep the credentials: in the keyring (and the endpoint in the index), else in the
        0600 file. `CannotKeep` when neither can hold them."""
        key = endpoint_key(creds.server)
        if self.backend == "keyring" and self._keyring_set(key, json.dumps(creds.to_json())):
            try:
                self._change(
                    self.index, lambda data: data.__setitem__(key, {"issuer": creds.issuer})
                )
            except CannotKeep as exc:
                self._note(
                    f"the credentials are in the OS keyring, but {exc.where} cannot be "
                    f"written ({exc.why}): each run finds them only after the server asks"
                )
            return
        first = not self.file.exists()
        self._change(self.file, lambda data: data.__setitem__(key, creds.to_json()))
        if first:
            self._note(f"no OS keyring to keep credentials in: they are in {self.file} (mode 0600)")

    def delete(self, server: str) -> bool:
        key = endpoint_key(server)
        found = False
        if self.backend == "keyring":
            found = self._keyring_delete(key)
        for path in (self.index, self.file):
            if key in self._read(path):
                found = True
                self._change(path, lambda data: data.pop(key, None))
        return found

    # -- keyring ------------------------------------------------------------------------------

    def _keyring_get(self, key: str) -> str | None:
        try:
            value = keyring_call(self._keyring.get_password, SERVICE, key)
        except Exception as exc:  # any backend failure (D-Bus gone, locked): the file instead
            self._fall_back(exc)
            return None
        return value if isinstance(value, str) else None

    def _keyring_set(self, key: str, value: str) -> bool:
        try:
            keyring_call(self._keyring.set_password, SERVICE, key, value)
        except Exception as exc:
            self._fall_back(exc)
            return False
        return True

    def _keyring_delete(self, key: str) -> bool:
        try:
            if keyring_call(self._keyring.get_password, SERVICE, key) is None:
                return False
            keyring_call(self._keyring.delete_password, SERVICE, key)
        except Exception as exc:
            self._fall_back(exc)
            return False
        return True

    def _fall_back(self, exc: Exception | None = None) -> None:
        self._backend = "file"
        if isinstance(exc, KeyringTimeout):
            self._note(f"{exc}; using the credentials file in {self.directory} instead")

    # -- files ---------------------------------------------------------------------------------

    def _read(self, path: Path) -> dict[str, Any]:
        from mcptask.auth.files import read_servers

        try:
            check_dir(path.parent)  # never from a directory others may write to
        except OSError:
            return {}
        return read_servers(path, self._note)

    def _change(self, path: Path, change: Callable[[dict[str, Any]], Any]) -> None:
        """Change a store file under its lock; `CannotKeep` (saying what and where) when it
        cannot be written."""
        try:
            with locked(path):
                servers = self._read(path)
                change(servers)
                write_private(path, json.dumps({"version": 1, "servers": servers}))
        except UnsafeFile as exc:
            raise AuthError(f"cannot keep the credentials: {exc.strerror}") from None
        except OSError as exc:
            raise CannotKeep(path, exc) from None


class CannotKeep(UsageError):
    """A store file cannot be written (a read-only or full state directory, a directory where
    the file or its lock should be): says what and where."""

    def __init__(self, path: Path, exc: OSError) -> None:
        self.where = str(exc.filename or path)
        if isinstance(exc, IsADirectoryError):
            self.why = "it is a directory"
        else:
            self.why = exc.strerror or type(exc).__name__
        super().__init__(f"cannot write {self.where}: {self.why}")

    @classmethod
    def after_login(cls, exc: CannotKeep, server: str, directory: Path) -> UsageError:
        """The error of a login whose credentials could not be kept: what, where, and how to
        try again (the tokens are not kept anywhere, nor shown)."""
        return UsageError(
            f"the login to {server} succeeded, but its credentials cannot be kept: cannot "
            f"write {exc.where} ({exc.why}); make {directory} writable (or set "
            "MCPTASK_STATE_DIR to a writable directory, or use an OS keyring) and log in again"
        )


# -- one renewal at a time, across processes -----------------------------------------------------

#: seconds a renewal waits for another process's renewal of the same credentials
RENEW_WAIT = 30.0


class RenewalLock:
    """`async with RenewalLock(store, server):` one renewal of a server's credentials at a
    time across mcptask processes (an exclusive lock on a file beside the credentials, one per
    endpoint). The waiter then finds the other's fresh token in the store. Waiting is bounded
    (RENEW_WAIT); a lock that cannot be made (a read-only state directory, a directory in its
    place) is no lock at all rather than an error: the renewal still runs."""

    def __init__(self, store: CredentialStore, server: str) -> None:
        import hashlib

        digest = hashlib.sha256(endpoint_key(server).encode()).hexdigest()[:16]
        self.path = store.directory / f"credentials-{digest}.renew.lock"
        self._fd: int | None = None

    async def __aenter__(self) -> None:
        import fcntl

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError:
            return
        deadline = time.monotonic() + RENEW_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() < deadline:
                    await _pause(0.05)
                    continue
            except OSError:
                pass
            else:
                self._fd = fd
                return
            os.close(fd)  # waited long enough (or no locking here): renew unlocked
            return

    async def __aexit__(self, *exc: object) -> None:
        if self._fd is not None:
            import fcntl

            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


async def _pause(seconds: float) -> None:
    """Sleep without holding up an event loop's other work, or plainly where the command runs
    without one."""
    import sys

    if "asyncio" in sys.modules:
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            await asyncio.sleep(seconds)
            return
    time.sleep(seconds)


# -- the keyring's deadline --------------------------------------------------------------------

#: seconds a keyring call may take (`MCPTASK_KEYRING_TIMEOUT`) before the file is used
KEYRING_TIMEOUT = 5.0
#: ... at most (a prompt nobody answers must not hold a command longer)
MAX_KEYRING_TIMEOUT = 60.0


class KeyringTimeout(Exception):
    pass


def keyring_timeout() -> float:
    """`MCPTASK_KEYRING_TIMEOUT`: seconds, more than 0 and at most 60 (else a usage error,
    as for every number from the environment)."""
    from mcptask.text.numbers import env_seconds

    return env_seconds("MCPTASK_KEYRING_TIMEOUT", KEYRING_TIMEOUT, high=MAX_KEYRING_TIMEOUT)


def keyring_call(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` (a keyring call) with a deadline: a backend that blocks (a locked or hung
    Secret Service, a prompt nobody answers) raises `KeyringTimeout` after `keyring_timeout()`
    seconds; the call goes on in a daemon thread that dies with the process."""
    import threading

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True, name="mcptask-keyring")
    thread.start()
    seconds = keyring_timeout()
    thread.join(seconds)
    if thread.is_alive():
        raise KeyringTimeout(f"the OS keyring did not answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _usable_keyring() -> Any:
    """The keyring backend when one really works here, else None."""
    try:
        import keyring
        from keyring.backends import fail

        backend = keyring.get_keyring()
        if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 0) < 1:
            return None
        return backend
    except Exception:
        return None
