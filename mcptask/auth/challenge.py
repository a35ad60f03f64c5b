"""The `WWW-Authenticate` header of a 401 or 403 (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"?', re.DOTALL)
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


@dataclass(frozen=True)
class Challenge:
    """The Bearer challenge's parameters that matter to a client."""

    resource_metadata: str | None = None
    scope: str | None = None
    error: str | None = None
    error_description: str | None = None

    @property
    def insufficient_scope(self) -> bool:
        return self.error == "insufficient_scope"


def challenges(header: str) -> list[tuple[str, dict[str, str]]]:
    """Every challenge in a `WWW-Authenticate` value (which may hold several: `Basic
    realm="x", Bearer scope="y"`), as (lower-case scheme, parameters with lower-case names).
    Commas inside quoted values do not split; quoted-pair escapes are undone."""
    out: list[tuple[str, dict[str, str]]] = []
    pos, n = 0, len(header)
    while pos < n:
        if header[pos] in " \t,":
            pos += 1
            continue
        m = _TOKEN.match(header, pos)
        if m is None:
            pos += 1  # a stray character: skip it
            continue
        name, pos = m.group(0), m.end()
        rest = header[pos:].lstrip(" \t")
        if rest.startswith("=") and out:
            pos = n - len(rest) + 1
            value, pos = _value(header, pos)
            out[-1][1].setdefault(name.lower(), value)
        else:
            out.append((name.lower(), {}))
            t68 = _TOKEN68.match(rest)
            if t68 and _only_commas_after(rest, t68.end()):
                pos = n - len(rest) + t68.end()  # a token68 (Basic's credentials): skip
    return out


def _only_commas_after(text: str, pos: int) -> bool:
    tail = text[pos:].lstrip(" \t")
    return not tail or tail.startswith(",")


def _value(header: str, pos: int) -> tuple[str, int]:
    while pos < len(header) and header[pos] in " \t":
        pos += 1
    if pos < len(header) and header[pos] == '"':
        m = _QUOTED.match(header, pos)
        assert m is not None
        return re.sub(r"\\(.)", r"\1", m.group(1)), m.end()
    m = _TOKEN.match(header, pos)
    if m is None:
        return "", pos
    return m.group(0), m.end()


def bearer_params(header: str) -> dict[str, str]:
    """The parameters of the Bearer challenge in one `WWW-Authenticate` value."""
    for scheme, params in challenges(header):
        if scheme == "bearer":
            return params
    return {}


def parse(headers: list[str]) -> Challenge:
    """The Bearer challenge from every `WWW-Authenticate` header of a response."""
    params: dict[str, str] = {}
    for header in headers:
        for k, v in bearer_params(header).items():
            params.setdefault(k, v)
    return Challenge(
        resource_metadata=params.get("resource_metadata") or None,
        scope=params.get("scope") or None,
        error=params.get("error") or None,
        error_description=params.get("error_description") or None,
    )
