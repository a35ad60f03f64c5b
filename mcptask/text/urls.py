"""URLs as mcptask shows and compares them: never a user, password or secret-looking query
value. The one place that strips credentials from a URL."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from mcptask.text import redact


def without_credentials(url: str) -> str:
    """The URL without its user info (`https://user:pw@host/p` -> `https://host/p`)."""
    try:
        u = urlsplit(url)
    except ValueError:
        return url
    if "@" not in u.netloc:
        return url
    return urlunsplit(u._replace(netloc=u.netloc.rpartition("@")[2]))


def origin(url: str) -> str:
    """`scheme://host[:port]` of a URL, without user info."""
    u = urlsplit(url)
    return f"{u.scheme}://{u.netloc.rpartition('@')[2]}"


def redact_query(query: str) -> str:
    """A query string with the values of secret-looking names redacted."""
    parts = []
    for part in query.split("&") if query else []:
        key, sep, _value = part.partition("=")
        parts.append(f"{key}={redact.REDACTED}" if sep and redact.is_secret_name(key) else part)
    return "&".join(parts)


def safe_url(url: str) -> str:
    """A URL with its password and secret-looking query values redacted (the user name stays,
    so a person can tell two accounts apart)."""
    try:
        u = urlsplit(url)
    except ValueError:
        return url
    netloc = u.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, sep, _password = userinfo.partition(":")
        netloc = f"{user}:{redact.REDACTED}@{hostport}" if sep else f"{user}@{hostport}"
    return urlunsplit((u.scheme, netloc, u.path, redact_query(u.query), u.fragment))


def shown_url(url: str) -> str:
    """What a task's `server` field and messages show: no user info at all, no secret query
    value."""
    return safe_url(without_credentials(url))
