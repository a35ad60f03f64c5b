"""A standard output the shell closed (`mcptask ... >&-`): every write fails with EBADF."""

from __future__ import annotations

import errno
import io


class ClosedStream(io.TextIOBase):
    """Stands in for `sys.stdout` when Python found no descriptor 1 (it makes it None):
    writing raises `OSError(EBADF)`, which the runner reports as output it cannot write;
    flushing does nothing (the interpreter flushes it on exit). `fd`: the descriptor kept
    open on /dev/null in its place (`cli._standard_streams`)."""

    def __init__(self, fd: int, why: str) -> None:
        super().__init__()
        self._fd, self._why = fd, why

    def fileno(self) -> int:
        return self._fd

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, self._why)
