"""An endpoint's identity in the state directory: the key a URL is filed under (no credentials,
default port or trailing slash) and the place two spellings of one endpoint share."""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit, urlunsplit

from mcptask.text.urls import redact_query


def endpoint_key(url: str) -> str:
    """Endpoints are namespaced by URL without credentials (user info, secret-looking query
    values), fragment, default port or trailing slash; scheme and host in lower case."""
    try:
        u = urlsplit(url.strip())
    except ValueError:  # e.g. an unclosed `[` of an IPv6 host
        return _unparsable_key(url.strip())
    host = u.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    scheme = u.scheme.lower()
    port = _port(u)
    if port == DEFAULT_PORTS.get(scheme):
        port = None
    netloc = host + (f":{port}" if port else "")
    path = u.path.rstrip("/")
    return urlunsplit((scheme, netloc.lower(), path, redact_query(u.query), ""))


#: the ports a URL need not spell
DEFAULT_PORTS = {"http": 80, "https": 443}
#: host names of this machine's loopback interface: one endpoint for book look-ups
LOOPBACK = frozenset(("localhost", "127.0.0.1", "[::1]"))


def same_place(url: str) -> str:
    """What two URLs of one endpoint share: the endpoint key with every loopback host name
    spelled alike (a task made via 127.0.0.1 is found via localhost)."""
    key = endpoint_key(url)
    try:
        u = urlsplit(key)
    except ValueError:
        return key
    host = u.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if host in LOOPBACK:
        port = _port(u)
        return urlunsplit(u._replace(netloc="loopback" + (f":{port}" if port else "")))
    return key


def _port(u: SplitResult) -> int | str | None:
    """A URL's port; one that is not a port number as written (a key is still a key)."""
    try:
        return u.port
    except ValueError:
        return u.netloc.rpartition("@")[2].rpartition(":")[2]


def _unparsable_key(url: str) -> str:
    """A key for what `urlsplit` refuses: as written, less user info, query and fragment."""
    url = re.split(r"[?#]", url, maxsplit=1)[0]
    return re.sub(r"^([^:/?#]*://)[^/]*@", r"\1", url).rstrip("/")
