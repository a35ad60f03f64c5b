"""The connection's limits, read from the environment once per run (the numbers' bounds are
`text/numbers.py`'s), and the trace a run names for its tasks (`TraceGiven`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcptask.text.numbers import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_BODY,
    DEFAULT_READ_TIMEOUT,
    env_bytes,
    env_seconds,
)

if TYPE_CHECKING:
    from mcptask.text.traceparent import Traceparent


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


@dataclass(frozen=True)
class TraceGiven:
    """The W3C trace a run names for its tasks (`call`, `send` and `watch`): `--traceparent`,
    else `TRACEPARENT` from the environment, with `TRACESTATE` (sent only within that trace:
    not with a flag that names another trace than `TRACEPARENT`; dropped when it is not one
    the spec lets a vendor pass on). Nothing named: `parent` None."""

    parent: Traceparent | None = None
    state: str | None = None

    @classmethod
    def read(cls, flag: str | None) -> TraceGiven:
        """The flag over the environment; a malformed value is a usage error naming where it
        came from."""
        import os

        from mcptask.errors import UsageError
        from mcptask.text.traceparent import BadTraceparent, clean_tracestate, parse

        where, value = "--traceparent", flag
        if value is None:
            where, value = "TRACEPARENT", os.environ.get("TRACEPARENT")
            if value is not None and not value.strip():
                value = None  # set but empty: no trace named
        if value is None:
            return cls()
        try:
            parent = parse(value)
        except BadTraceparent as exc:
            raise UsageError(f"{where} {_shown(value)}: {exc}") from None
        state = clean_tracestate(os.environ.get("TRACESTATE"))
        if flag is not None and state is not None and not _same_trace(parent, "TRACEPARENT"):
            state = None  # the environment's TRACESTATE is its TRACEPARENT's, not the flag's
        return cls(parent, state)


def _same_trace(parent: Traceparent, variable: str) -> bool:
    """Whether the environment's traceparent (`variable`), when set, names `parent`'s trace."""
    import os

    from mcptask.text.traceparent import BadTraceparent, parse

    value = os.environ.get(variable)
    if value is None or not value.strip():
        return True
    try:
        return parse(value).trace_id == parent.trace_id
    except BadTraceparent:
        return False


def _shown(value: str) -> str:
    """A value given for a trace, short and on one line, as an error quotes it."""
    text = value if value.isprintable() else value.encode("unicode_escape").decode("ascii")
    return repr(text if len(text) <= 80 else text[:77] + "...")
