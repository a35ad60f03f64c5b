"""How fast mcptask may poll: a server's `pollInterval` hint is taken within one documented
range, so a zero, negative or absurd hint can neither make mcptask hammer a server nor stall it.
The only place a hint is clamped."""

from __future__ import annotations

import math
from typing import Any

#: the fastest mcptask polls one task, whatever the server says (seconds)
MIN_POLL_INTERVAL = 0.25
#: the slowest: a hint above this is taken as this (seconds)
MAX_POLL_INTERVAL = 300.0


def poll_seconds(hint_ms: Any, default: float) -> float:
    """A server's hint in milliseconds, as seconds within [MIN_POLL_INTERVAL,
    MAX_POLL_INTERVAL]; `default` (seconds, also clamped) when there is no usable hint."""
    seconds = default
    usable = isinstance(hint_ms, int) or (isinstance(hint_ms, float) and not math.isnan(hint_ms))
    if usable and not isinstance(hint_ms, bool):
        # clamp before dividing: a huge integer must not overflow the float division
        seconds = min(max(hint_ms, 0), MAX_POLL_INTERVAL * 1000) / 1000.0
    return min(max(seconds, MIN_POLL_INTERVAL), MAX_POLL_INTERVAL)
