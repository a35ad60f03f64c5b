"""Secrets never leave mcptask: headers and fields named like credentials are redacted in
traces, errors and anything written to disk."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(
    r"(authorization|cookie|token|secret|passw(or)?d|api[-_]?key|(^|[-_])key$|credential|session[-_]?key)",
    re.IGNORECASE,
)


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def headers(items: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, REDACTED if is_secret_name(k) else v) for k, v in items]


def data(value: Any) -> Any:
    """A copy of JSON data with secret-looking fields redacted."""
    if isinstance(value, Mapping):
        return {
            k: (REDACTED if isinstance(k, str) and is_secret_name(k) and v else data(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [data(v) for v in value]
    return value


def text(message: str, secrets: Iterable[str]) -> str:
    """Remove known secret values from free text (error messages, traces)."""
    for s in secrets:
        if s and len(s) >= 4:
            message = message.replace(s, REDACTED)
    return message
