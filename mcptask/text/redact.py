"""Secrets never leave mcptask: headers and fields named like credentials are redacted in
traces, errors and anything written to disk, and every secret value mcptask holds (the token,
`-H` values, a URL's password and its Basic-auth forms, secret query values) is scrubbed from
whatever it prints or stores, wherever a server echoes it."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from mcptask.text import jsonsafe

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(
    r"(authorization|cookie|token|secret|passw(or)?d|api[-_]?key|(^|[-_])key$|credential|session[-_]?key)",
    re.IGNORECASE,
)
#: a password in a URL's user info, whatever its length (`scheme://user:PASSWORD@`)
_URL_PASSWORD = re.compile(r"(://[^/\s:@\[\]]*:)[^/\s@]+@")
#: secrets this short are redacted only as whole words (a one-letter password must not eat
#: every "a" of a result); longer ones wherever they appear
_SHORT = 4


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
    """Remove known secret values from free text (error messages, traces), and any URL
    password."""
    return _redacted(message, _longest_first(secrets))


def _without(message: str, ordered: list[str]) -> str:
    for s in ordered:
        if s not in message:
            continue
        if len(s) >= _SHORT:
            message = message.replace(s, REDACTED)
        else:
            message = re.sub(rf"(?<![\w]){re.escape(s)}(?![\w])", REDACTED, message)
    return message


def _longest_first(secrets: Iterable[str]) -> list[str]:
    # longest first: a secret that contains another is replaced whole
    return sorted({s for s in secrets if s}, key=len, reverse=True)


def _redacted(message: str, ordered: list[str]) -> str:
    message = _without(message, ordered)
    if "@" in message:
        message = _URL_PASSWORD.sub(rf"\1{REDACTED}@", message)
    return message


def url_secrets(url: str) -> list[str]:
    """The secrets a URL carries: its password (as written and decoded; redacting it
    redacts the `user:password` pair too, keeping the user), the Basic-auth credentials made
    of it (base64), secret-looking query values."""
    try:
        u = urlsplit(url)
        password = u.password
        user = u.username or ""
    except ValueError:
        return []
    out: list[str] = []
    if password:
        plain_user, plain_password = unquote(user), unquote(password)
        pair = f"{plain_user}:{plain_password}"
        out += [password, plain_password]
        out.append(base64.b64encode(pair.encode()).decode())
    for k, _, v in (p.partition("=") for p in u.query.split("&")):
        if v and is_secret_name(k):
            out += [v, unquote(v)]
    return out


# -- every secret this process holds ------------------------------------------------------------

#: values scrubbed from everything mcptask prints or stores (see `hold`), and the same longest
#: first (what `scrub_text` goes through, for every string printed)
_HELD: set[str] = set()
_HELD_ORDER: list[str] = []


#: every held secret is ASCII without `"`, `\\`, DEL or a control character, so JSON text shows it
#: as it is (`may_hold`); [False] sends every value the long way
_HELD_AS_IS = [True]


def hold(secrets: Iterable[str]) -> None:
    """Remember secret values for `scrub`: a transport calls this with the token, its header
    values and its URL's secrets when it is made."""
    new = [s for s in secrets if s]
    if not all(_as_is(s) for s in new):
        _HELD_AS_IS[0] = False  # first: another thread's check never meets such a secret
    _HELD.update(new)
    _HELD_ORDER[:] = _longest_first(_HELD)


def _as_is(secret: str) -> bool:
    return secret.isascii() and not any(c in '"\\\x7f' or c < " " for c in secret)


def held_show_in_json() -> bool:
    """Whether every held secret shows as it is in JSON text written without ASCII escapes
    (`ensure_ascii=False`), so that scrubbing that text removes them."""
    return _HELD_AS_IS[0]


def may_hold(text: str) -> bool:
    """Whether JSON text (of data encoded by `json`) may hold what `scrub` would change in
    that data: a held secret or a URL password. False means surely not, without walking the
    data (a string holding a secret shows it in the text, as every held secret is ASCII with
    nothing JSON escapes; a URL password needs an `@`)."""
    if not _HELD:
        return False
    if not _HELD_AS_IS[0] or "@" in text:
        return True
    return any(s in text for s in _HELD_ORDER)


def held() -> frozenset[str]:
    return frozenset(_HELD)


def release_all() -> None:
    """Forget every held secret (tests that run several commands in one process)."""
    _HELD.clear()
    _HELD_ORDER.clear()
    _HELD_AS_IS[0] = True


def scrub_text(message: str) -> str:
    """`message` without any held secret (and without a URL password)."""
    return _redacted(message, _HELD_ORDER)


def scrub_held(message: str) -> str:
    """`message` without any held secret (and nothing else changed): what `sanitize.clean`
    applies to every server text bound for a terminal."""
    return _without(message, _HELD_ORDER) if _HELD_ORDER else message


def scrub(value: Any, redactor: Callable[[str], str] | None = None) -> Any:
    """A copy of JSON data with every held secret (or what `redactor` removes) scrubbed from
    its strings, keys included; the value itself when there is nothing to scrub."""
    if redactor is None:
        if not _HELD or _surely_clean(value):
            return value
        redactor = scrub_text
    return _scrub(value, redactor)


#: JSON text as it is (no ASCII escapes): what `may_hold` looks into
_TEXT = jsonsafe.encoder(ensure_ascii=False)


def _surely_clean(value: Any) -> bool:
    """Whether `value` holds nothing `scrub` would change, found by one pass of the C encoder
    and substring searches instead of a walk of every string in Python (`list -o ndjson` of
    100,000 tasks with a token held: 3.6 s). False when it cannot tell."""
    if not _HELD_AS_IS[0]:
        return False
    if isinstance(value, str):
        return not may_hold(value)
    if not isinstance(value, dict | list):
        return False
    try:
        text = _TEXT(value)
    except (TypeError, ValueError, RecursionError):
        return False
    return not may_hold(text)


def _scrub(value: Any, redactor: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, Mapping):
        return {
            (redactor(k) if isinstance(k, str) else k): _scrub(v, redactor)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_scrub(v, redactor) for v in value]
    return value
