"""A standard output the shell closed (`mcptask ... >&-`): every write fails with EBADF."""

from __future__ import annotations

import errno
import io


class ClosedStream(io.TextIOBase):
    """Stands in for `sys.stdout` when Python found no descriptor 1 (it makes it None):
    writing raises `OSError(EBADF)`, which the runner reports as output it cannot write;
    flushing does nothing (the interpreter flushes it on exit). It has no descriptor
    (`fileno` raises `io.UnsupportedOperation`): nothing, `--jq`'s worker included, writes
    past it to the /dev/null that holds descriptor 1's place (`cli._standard_streams`)."""

    def __init__(self, why: str) -> None:
        super().__init__()
        self._why = why

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, self._why)
