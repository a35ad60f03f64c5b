"""Numbers read from the environment, in one place: each finite and inside its bounds, or a
usage error naming the variable."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from mcptask.errors import UsageError


def env_float(name: str, default: float) -> float:
    """A number of seconds from the environment: finite and positive (`nan` and `inf` would
    turn every wait into none or for ever)."""
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{name}={raw!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"{name}={raw!r}: give a finite, positive number of seconds")
    return value


def env_int(name: str, default: int) -> int:
    """A size in bytes from the environment: a positive whole number (`1e400`, `0.5` are
    not)."""
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise UsageError(f"{name}={raw!r}: give a positive whole number of bytes")
    return value


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
        cls, *, connect: float = 10.0, read: float = 60.0, max_body: int = 32 * 1024 * 1024
    ) -> Limits:
        return cls(
            connect_timeout=env_float("MCPTASK_CONNECT_TIMEOUT", connect),
            read_timeout=env_float("MCPTASK_READ_TIMEOUT", read),
            max_body=env_int("MCPTASK_MAX_BODY", max_body),
        )
