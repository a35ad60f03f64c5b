"""Reading the credential store's two small JSON files (`credentials.json`, `auth.json`)
without ever blocking or following a link: a FIFO, a device, a directory, a symbolic link or a
file over `MAX_FILE` is not read (a one-line note says why), and a damaged file is set aside
(`.damaged-<time>`) so the next login starts a fresh one. Cheap to import: the lazy OAuth
stand-in reads the index through it on every run."""

from __future__ import annotations

import json
import os
import stat
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
    None (a note says why, when given)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if note is not None:
            why = "a symbolic link" if os.path.islink(path) else (exc.strerror or str(exc))
            note(f"cannot read the credentials file {path}: {why}")
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            if note is not None:
                note(f"the credentials file {path} is not a regular file: not read")
            return None
        if info.st_size > MAX_FILE:
            if note is not None:
                note(f"the credentials file {path} is over {MAX_FILE >> 20} MiB: not read")
            return None
        chunks = []
        size = 0
        while chunk := os.read(fd, 65536):
            size += len(chunk)
            if size > MAX_FILE:
                return None
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        if note is not None:
            note(f"cannot read the credentials file {path}: {exc.strerror or exc}")
        return None
    finally:
        os.close(fd)
