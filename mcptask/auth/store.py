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
from mcptask.errors import AuthError
from mcptask.state.endpoints import endpoint_key
from mcptask.state.files import (
    UnsafeFile,
    check_dir,
    locked,
    read_regular,
    state_dir,
    write_private,
)

SERVICE = "mcptask"
ENV_KEYRING = "MCPTASK_KEYRING"
#: a token this close to its expiry is refreshed before use (at most a tenth of its lifetime)
LEEWAY = 30.0
#: the largest credentials file read (a few KiB per server)
MAX_FILE_BYTES = 4 * 1024 * 1024


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

    def expired(self, now: float | None = None) -> bool:
        if self.expires_at is None:
            return False
        leeway = min(LEEWAY, max(0.0, (self.expires_at - self.obtained_at) / 10))
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
        expires = data.get("expiresAt")
        obtained = data.get("obtainedAt")
        return cls(
            server=data["server"],
            issuer=data["issuer"],
            token_endpoint=data["tokenEndpoint"],
            resource=data["resource"],
            client=client,
            access_token=data["accessToken"],
            token_type=_str(data.get("tokenType")) or "Bearer",
            expires_at=float(expires) if isinstance(expires, int | float) else None,
            refresh_token=_str(data.get("refreshToken")),
            scope=_str(data.get("scope")),
            grant=_str(data.get("grant")) or "authorization_code",
            obtained_at=float(obtained) if isinstance(obtained, int | float) else time.time(),
            revocation_endpoint=_str(data.get("revocationEndpoint")),
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


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _iso(stamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


# -- the store -----------------------------------------------------------------------------------


class CredentialStore:
    def __init__(
        self, directory: Path | None = None, note: Callable[[str], None] | None = None
    ) -> None:
        self.directory = directory or state_dir()
        self._note = note or (lambda _msg: None)
        self._keyring: Any = None
        self._backend: str | None = None

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
            if os.environ.get(ENV_KEYRING, "").strip().lower() not in ("off", "0", "no", "false"):
                self._keyring = _usable_keyring()
                if self._keyring is not None:
                    self._backend = "keyring"
        return self._backend

    # -- reading ------------------------------------------------------------------------------

    def load(self, server: str) -> Credentials | None:
        key = endpoint_key(server)
        if self.backend == "keyring":
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
        key = endpoint_key(creds.server)
        if self.backend == "keyring" and self._keyring_set(key, json.dumps(creds.to_json())):
            self._change(self.index, lambda data: data.__setitem__(key, {"issuer": creds.issuer}))
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
            value = self._keyring.get_password(SERVICE, key)
        except Exception:  # any backend failure (D-Bus gone, locked): the file instead
            self._fall_back()
            return None
        return value if isinstance(value, str) else None

    def _keyring_set(self, key: str, value: str) -> bool:
        try:
            self._keyring.set_password(SERVICE, key, value)
        except Exception:
            self._fall_back()
            return False
        return True

    def _keyring_delete(self, key: str) -> bool:
        try:
            if self._keyring.get_password(SERVICE, key) is None:
                return False
            self._keyring.delete_password(SERVICE, key)
        except Exception:
            return False
        return True

    def _fall_back(self) -> None:
        self._backend = "file"

    # -- files ---------------------------------------------------------------------------------

    def _read(self, path: Path) -> dict[str, Any]:
        try:
            # never from a directory others may write to, never a FIFO or a device
            check_dir(path.parent)
            data = json.loads(read_regular(path, MAX_FILE_BYTES).decode("utf-8"))
        except (OSError, ValueError):
            return {}
        servers = data.get("servers") if isinstance(data, dict) else None
        return servers if isinstance(servers, dict) else {}

    def _change(self, path: Path, change: Callable[[dict[str, Any]], Any]) -> None:
        try:
            with locked(path):
                servers = self._read(path)
                change(servers)
                write_private(path, json.dumps({"version": 1, "servers": servers}))
        except UnsafeFile as exc:
            raise AuthError(f"cannot keep the credentials: {exc.strerror}") from None


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
