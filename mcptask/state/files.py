"""Private files in the state directory, shared by the task book and the OAuth credential store:
where the directory is, an exclusive lock beside a file, an atomic 0600 write; and the safe way
to read a state or config file (`read_regular`): opened without blocking, checked for type and
size, so that a FIFO or a device in its place can neither hold mcptask nor fill its memory.

The state directory holds sessions, results and credentials: one that another user owns, or
that others may write to, is refused (`check_dir`): its files are not mcptask's to trust."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

#: the largest state file read (the task book keeps results of up to 1 MiB each)
MAX_STATE_BYTES = 64 * 1024 * 1024


class UnsafeFile(OSError):
    """A state or config file (or the state directory) that mcptask will not use; `strerror`
    says why in a few words."""


def _kind(mode: int) -> str:
    for test, word in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return word
    return "not a regular file"


def not_regular(path: Path | str, mode: int) -> UnsafeFile:
    return UnsafeFile(errno.EINVAL, f"{path} is not a regular file ({_kind(mode)})")


def read_regular(path: Path | str, limit: int = MAX_STATE_BYTES, *, follow: bool = True) -> bytes:
    """The bytes of the regular file `path`, read no further than `limit`: opened without
    blocking (a FIFO's open never waits for a writer), then checked for type and size on
    the open file itself (no race with a file swapped in between). `UnsafeFile` when it is
    not a regular file or is over `limit`; other OSErrors (FileNotFoundError; ELOOP for a link
    with `follow=False`) as they come."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(path, st.st_mode)
        if st.st_size > limit:
            raise UnsafeFile(errno.EFBIG, f"{path} is over the {_size(limit)} limit")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1024 * 1024, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew while being read
            raise UnsafeFile(errno.EFBIG, f"{path} is over the {_size(limit)} limit")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _size(limit: int) -> str:
    mib = 1024 * 1024
    return f"{limit // mib} MiB" if limit >= mib and limit % mib == 0 else f"{limit} byte"


def check_dir(path: Path) -> None:
    """The state directory is ours alone: a directory, owned by this user, that neither its
    group nor others may write to (they could plant sessions, results or credentials there,
    or swap a file for a FIFO). `UnsafeFile` says what is wrong and how to put it right."""
    st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeFile(errno.ENOTDIR, f"{path} is not a directory (MCPTASK_STATE_DIR?)")
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise UnsafeFile(
            errno.EPERM,
            f"the state directory {path} belongs to another user (uid {st.st_uid}), "
            "not to you: set MCPTASK_STATE_DIR to a directory of your own",
        )
    if st.st_mode & 0o022:
        mode = stat.S_IMODE(st.st_mode)
        raise UnsafeFile(
            errno.EPERM,
            f"the state directory {path} is writable by others (mode {mode:04o}): "
            f"`chmod go-w {path}`, or set MCPTASK_STATE_DIR",
        )


def state_dir() -> Path:
    env = os.environ.get("MCPTASK_STATE_DIR")
    if env:
        return Path(env)
    from platformdirs import user_state_dir

    return Path(user_state_dir("mcptask", appauthor=False))


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (a side `.lock` file), its folder made 0700 if need be.
    The folder must be ours alone (`check_dir`), and `path`, when it exists, a regular file
    (`UnsafeFile` otherwise: a FIFO in its place would block whoever reads it)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    check_dir(path.parent)
    with contextlib.suppress(FileNotFoundError):
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(path, mode)
    lock = path.with_name(path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(lock, mode)
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def write_private(path: Path, text: str) -> None:
    """Replace `path` with `text` atomically, mode 0600 from the start (the task book, the
    OAuth credentials file)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
