"""The connection's limits, read from the environment once per run (the numbers' bounds are
`text/numbers.py`'s)."""

from __future__ import annotations

from dataclasses import dataclass

from mcptask.text.numbers import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_BODY,
    DEFAULT_READ_TIMEOUT,
    env_bytes,
    env_seconds,
)


@dataclass(frozen=True)
class Limits:
    """The connection's bounds: `MCPTASK_CONNECT_TIMEOUT`, `MCPTASK_READ_TIMEOUT` (seconds) and
    `MCPTASK_MAX_BODY` (bytes), read once per run; every transport and the OAuth client use
    them."""

    connect_timeout: float
    read_timeout: float
    max_body: int

    @classmethod
    def from_environment(
        cls,
        *,
        connect: float = DEFAULT_CONNECT_TIMEOUT,
        read: float = DEFAULT_READ_TIMEOUT,
        max_body: int = DEFAULT_MAX_BODY,
    ) -> Limits:
        return cls(
            connect_timeout=env_seconds("MCPTASK_CONNECT_TIMEOUT", connect),
            read_timeout=env_seconds("MCPTASK_READ_TIMEOUT", read),
            max_body=env_bytes("MCPTASK_MAX_BODY", max_body),
        )
