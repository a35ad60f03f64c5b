"""Numbers from the environment and from flags (pure text, so every room may read them), each
finite and inside documented bounds, or refused with one line (exit 2).
`MCPTASK_READ_TIMEOUT=1e10` or `--timeout nan` would otherwise turn a wait into none, into for
ever, or into an overflow deep in a socket call.

The bounds (README, "Environment"):

- seconds (`MCPTASK_READ_TIMEOUT`, `MCPTASK_CONNECT_TIMEOUT`, `MCPTASK_LOGIN_TIMEOUT`,
  `--timeout`, `--task-timeout`, `--seconds`): more than 0, at most MAX_SECONDS (30 days);
  `MCPTASK_KEYRING_TIMEOUT` at most 60;
- `--interval`: 0 to MAX_INTERVAL (an hour);
- bytes (`MCPTASK_MAX_BODY`): 1 to MAX_BYTES (1 GiB).
"""

from __future__ import annotations

import math
import os

from mcptask.errors import UsageError


class OutOfBounds(UsageError):
    """A number refused: `reason` says why without naming where it came from (a flag's parser
    names the flag itself)."""

    def __init__(self, what: str, reason: str) -> None:
        super().__init__(f"{what}: {reason}")
        self.reason = reason


#: the longest wait a number of seconds may ask for (30 days)
MAX_SECONDS = 30 * 86400.0
#: the slowest `--interval` (an hour)
MAX_INTERVAL = 3600.0
#: the largest size in bytes (`MCPTASK_MAX_BODY`)
MAX_BYTES = 1024 * 1024 * 1024

#: the defaults of `MCPTASK_CONNECT_TIMEOUT`, `MCPTASK_READ_TIMEOUT` (seconds) and
#: `MCPTASK_MAX_BODY` (bytes): the transports' own, and `session.env.Limits`'
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 60.0
DEFAULT_MAX_BODY = 32 * 1024 * 1024


def seconds(text: str, what: str, *, low: float = 0.0, high: float = MAX_SECONDS) -> float:
    """`text` as a number of seconds in (low, high] (`low` itself allowed when it is 0 and
    `what` is an interval: see `interval`); `UsageError` naming `what` otherwise."""
    try:
        value = float(text.strip().replace("_", ""))
    except ValueError:
        raise OutOfBounds(what, f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= low or value > high:
        raise OutOfBounds(
            what,
            f"{text!r} is out of range: give a number of seconds more than {_num(low)} "
            f"and at most {_num(high)}",
        )
    return value


def interval(text: str, what: str = "--interval") -> float:
    """A polling floor: 0 (none) up to MAX_INTERVAL seconds."""
    if text.strip() in ("0", "0.0"):
        return 0.0
    return seconds(text, what, high=MAX_INTERVAL)


def whole(text: str, what: str, *, low: int = 1, high: int = MAX_BYTES) -> int:
    """`text` as a whole number in [low, high] (`1e400`, `0.5` are not)."""
    raw = text.strip().replace("_", "")
    if not raw.lstrip("-").isdigit() or len(raw) > 30:
        raise OutOfBounds(what, f"{text!r} is not a whole number from {low} to {high}")
    value = int(raw)
    if not low <= value <= high:
        raise OutOfBounds(
            what, f"{text!r} is out of range: give a whole number from {low} to {high}"
        )
    return value


def env_seconds(name: str, default: float, *, high: float = MAX_SECONDS) -> float:
    """A number of seconds from the environment variable `name` (unset or empty: `default`)."""
    raw = os.environ.get(name, "")
    return seconds(raw, name, high=high) if raw.strip() else default


def env_bytes(name: str, default: int, *, high: int = MAX_BYTES) -> int:
    """A size in bytes from the environment variable `name` (unset or empty: `default`)."""
    raw = os.environ.get(name, "")
    return whole(raw, name, high=high) if raw.strip() else default


def _num(value: float) -> str:
    return f"{value:.0f}" if value == int(value) else f"{value:g}"
