"""A keyring backend that never answers (a hung Secret Service, a prompt nobody sees), for
`PYTHON_KEYRING_BACKEND=blocking_keyring.BlockingKeyring` with this folder on `PYTHONPATH`."""

from __future__ import annotations

import threading

from keyring.backend import KeyringBackend


class BlockingKeyring(KeyringBackend):
    priority = 10  # type: ignore[assignment]

    def get_password(self, service: str, username: str) -> str | None:
        threading.Event().wait()
        return None

    def set_password(self, service: str, username: str, password: str) -> None:
        threading.Event().wait()

    def delete_password(self, service: str, username: str) -> None:
        threading.Event().wait()
