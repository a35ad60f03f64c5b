"""Times as mcptask reads and writes them: a server's ISO 8601 stamps in one format, seconds
since the epoch, milliseconds bounded. Pure (no pydantic), like `model.status`."""

from __future__ import annotations

import math
from datetime import UTC

#: the longest span in milliseconds taken from a server as it is (about 31,700 years): beyond it
#: an integer (JSON allows 400 digits) is no float, and no clock reaches it anyway
MAX_MS = 10**15


def ms_seconds(ms: int) -> float:
    """A server's milliseconds (a ttl) as seconds, within [0, MAX_MS / 1000]."""
    return min(max(ms, 0), MAX_MS) / 1000


def epoch(stamp: object, *, naive_utc: bool = False) -> float | None:
    """An ISO 8601 time as seconds since the epoch; None when it is none, not a time, out of
    range, or has no zone (`naive_utc`: then it is read as UTC, as the task book writes)."""
    if not isinstance(stamp, str) or not stamp:
        return None
    from datetime import datetime

    try:
        then = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
        if then.tzinfo is None:
            if not naive_utc:
                return None
            then = then.replace(tzinfo=UTC)
        value = then.timestamp()
    except (ValueError, OverflowError, OSError):
        return None
    return value if math.isfinite(value) else None


#: the latest instant shown as a date (a server's ttl of 1e999 ms lands past any calendar)
LAST_DATE = 253402300799.0  # 9999-12-31T23:59:59Z


def iso(at: float) -> str:
    """Seconds since the epoch as ISO 8601 UTC with milliseconds (within year 1 to 9999)."""
    from datetime import datetime

    at = min(max(at, -62135596800.0), LAST_DATE) if at == at else LAST_DATE
    stamp = datetime.fromtimestamp(at, tz=UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


#: times already put in one format (`utc_stamp`): a watch sees the same few again and again
_STAMPS: dict[str, str] = {}


def utc_stamp(value: str | None) -> str | None:
    """A server's ISO 8601 time in one format, UTC with `Z` (`2026-12-01T14:57:56.075Z`;
    fractions of a second kept to the millisecond), whatever offset or spelling it came with;
    text that is no ISO 8601 time with a zone is kept as it came (`raw` has the original)."""
    if not value or len(value) > 64:
        return value
    known = _STAMPS.get(value)
    if known is None:
        if len(_STAMPS) >= 4096:
            _STAMPS.clear()
        known = _STAMPS[value] = _utc_stamp(value)
    return known


def _utc_stamp(value: str) -> str:
    from datetime import datetime

    try:
        then = datetime.fromisoformat(value.strip().replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        return value
    if then.tzinfo is None:
        return value
    try:
        then = then.astimezone(UTC)
    except (OverflowError, ValueError):
        return value
    stamp = then.strftime("%Y-%m-%dT%H:%M:%S")
    if then.microsecond:
        stamp += f".{then.microsecond // 1000:03d}"
    return stamp + "Z"
