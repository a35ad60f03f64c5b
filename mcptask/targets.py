"""Choosing the target: `--url`, `--stdio` or a named server (`-s`) from a config file.
Flags beat environment, which beats the config file."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from .errors import UsageError

if TYPE_CHECKING:
    from .app import GlobalOptions, Target


def resolve(options: GlobalOptions) -> Target:
    from .app import Target, parse_headers, read_token

    given = [n for n, v in (("--url", options.url), ("--stdio", options.stdio)) if v]
    if options.server:
        given.append("-s")
    if len(given) > 1:
        raise UsageError(f"give exactly one target, not {' and '.join(given)}")
    if options.server:
        raise UsageError("named servers (-s) are not supported yet")
    if options.stdio:
        try:
            command = shlex.split(options.stdio)
        except ValueError as exc:
            raise UsageError(f"--stdio: {exc}") from None
        if not command:
            raise UsageError("--stdio needs a command")
        return Target(command=command, protocol=options.protocol)
    if not options.url:
        raise UsageError("no target: give --url URL (or set MCPTASK_URL)")
    url = options.url.strip()
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--url {url!r} must start with http:// or https://")
    return Target(
        url=url,
        protocol=options.protocol,
        headers=parse_headers(options.headers),
        token=read_token(options),
    )
