"""Reading the credential store's two small JSON files (`credentials.json`, `auth.json`)
without ever blocking or following a link: a FIFO, a device, a directory, a symbolic link or a
file over `MAX_FILE` is not read (a one-line note says why), and a damaged file is set aside
(`.damaged-<time>`) so the next login starts a fresh one. Cheap to import: the lazy OAuth
stand-in reads the index through it on every run."""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: the largest credentials file read (thousands of endpoints' worth)
MAX_FILE = 4 * 1024 * 1024

Note = Callable[[str], None]


def read_servers(path: Path, note: Note | None = None) -> dict[str, Any]:
    """The `servers` object of a store file; {} when there is none to read (notes say why)."""
    raw = read_bytes(path, note)
    if raw is None:
        return {}
    try:
        data = json.loads(raw)
        servers = data.get("servers") if isinstance(data, dict) else None
        if not isinstance(servers, dict):
            raise ValueError("no servers object")
    except (ValueError, UnicodeDecodeError, RecursionError):
        aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
        try:
            os.replace(path, aside)
        except OSError:
            aside = path
        if note is not None:
            kept = f"; set aside as {aside.name}" if aside != path else ""
            note(f"the credentials file {path} is damaged{kept}: log in again")
        return {}
    return servers


def read_bytes(path: Path, note: Note | None = None) -> bytes | None:
    """The file's bytes when it is a regular file (not a link) of at most MAX_FILE, else
    None (a note says why, when given): `state.files.read_regular`, never following a link."""
    from mcptask.state.files import UnsafeFile, read_regular

    try:
        return read_regular(path, MAX_FILE, follow=False)
    except FileNotFoundError:
        return None
    except UnsafeFile as exc:
        if note is not None:
            big = exc.errno == errno.EFBIG
            why = f"is over {MAX_FILE >> 20} MiB" if big else "is not a regular file"
            note(f"the credentials file {path} {why}: not read")
        return None
    except OSError as exc:
        if note is not None:
            why = "a symbolic link" if os.path.islink(path) else (exc.strerror or str(exc))
            note(f"cannot read the credentials file {path}: {why}")
        return None
