"""The terminal mcptask runs in, read in one place (httpie's `Environment`): whether stdin and
stdout are terminals, the width, whether colour is wanted. Tests build their own."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import IO


@dataclass(frozen=True)
class Environment:
    stdin_tty: bool = False
    stdout_tty: bool = False
    stderr_tty: bool = False
    #: columns of the terminal (80 when unknown)
    width: int = 80
    #: colour is wanted: a terminal, and neither NO_COLOR nor TERM=dumb
    color: bool = False

    @property
    def interactive(self) -> bool:
        """A run is interactive only when stdin and stdout are terminals (forms, prompts)."""
        return self.stdin_tty and self.stdout_tty

    @classmethod
    def current(cls) -> Environment:
        stdout_tty = _isatty(sys.stdout)
        try:
            width = os.get_terminal_size(sys.stdout.fileno()).columns if stdout_tty else 80
        except (OSError, ValueError):
            width = 80
        color = (
            stdout_tty and not os.environ.get("NO_COLOR") and os.environ.get("TERM", "") != "dumb"
        )
        return cls(
            stdin_tty=_isatty(sys.stdin),
            stdout_tty=stdout_tty,
            stderr_tty=_isatty(sys.stderr),
            width=width,
            color=bool(color),
        )


def _isatty(stream: IO[str] | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):  # a closed stream
        return False


def current() -> Environment:
    """The process's terminal environment, read when asked (streams can be replaced by tests)."""
    return Environment.current()
