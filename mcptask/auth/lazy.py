"""A stand-in for the OAuth provider that costs nothing at start-up: it reads the credentials
index (two small JSON files in the state directory) and imports the OAuth machinery only when
the target has stored credentials or the server refuses a request."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcptask.state.endpoints import endpoint_key
from mcptask.state.files import read_regular, state_dir

#: the files `store.CredentialStore` keeps (the 0600 credentials, the keyring index)
STORE_FILES = ("credentials.json", "auth.json")


def stored(server: str, directory: Path | None = None) -> bool:
    """Credentials are stored for `server` (without reading any secret)."""
    key = endpoint_key(server)
    folder = directory or state_dir()
    for name in STORE_FILES:
        try:
            data = json.loads(read_regular(folder / name, 4 * 1024 * 1024).decode("utf-8"))
        except (OSError, ValueError):
            continue
        servers = data.get("servers") if isinstance(data, dict) else None
        if isinstance(servers, dict) and key in servers:
            return True
    return False


class LazyOAuth:
    def __init__(self, server: str, make: Callable[[], Any]) -> None:
        self.server = server
        self._make = make
        self._real: Any = None
        #: the store was looked at once and held nothing for the server: no need to look again
        #: on every request (a refusal makes the real provider, which reads it itself)
        self._none_stored = False

    @property
    def provider(self) -> Any:
        """The real provider (`provider.OAuthProvider`), made on first use."""
        if self._real is None:
            self._real = self._make()
        return self._real

    @property
    def active(self) -> bool:
        return self._real is not None

    @property
    def secrets(self) -> list[str]:
        return self._real.secrets if self._real is not None else []

    async def bearer(self) -> str | None:
        if self._real is None and (self._none_stored or not stored(self.server)):
            self._none_stored = True
            return None
        token: str | None = await self.provider.bearer()
        return token

    async def refused(self, status: int, headers: list[str], sent: str | None) -> bool:
        retry: bool = await self.provider.refused(status, headers, sent)
        return retry

    async def aclose(self) -> None:
        if self._real is not None:
            await self._real.web.aclose()
