"""`--jq EXPR`: filter what a command prints as JSON through a jq program, as gh does.

The program runs on each JSON document mcptask would print (the one object of `-o json`, each
line of `-o ndjson`); each value it yields is printed on a line of its own, strings as plain
text (gh's convention, like `jq -r`), anything else as compact JSON. The filter is jq itself
(the `jq` package's bindings to libjq), imported only when `--jq` is given.

Values are printed as jq yields them (`repeat(1)` streams, it does not grow a list). libjq runs
without giving the interpreter a chance to see Ctrl-C (it holds the GIL for as long as a step
takes: `last(range(1e12))` would run on after SIGINT), so where the output is a real file the
program runs in a child process (forked once, fed one document at a time) that writes to it
directly: Ctrl-C ends the child with the rest of the terminal's process group, or mcptask ends
it, and mcptask exits 130 at once. Output that is not a file (a test's StringIO) is filtered
in this process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import IO, Any

from mcptask.errors import UsageError
from mcptask.text import jsonsafe


class JqFilter:
    def __init__(self, expression: str) -> None:
        import jq

        self.expression = expression
        try:
            self._program = jq.compile(expression)
        except ValueError as exc:
            raise UsageError(f"--jq: {_first_line(exc)}") from None
        self._worker: _Worker | None = None
        #: Ctrl-C ended a run: nothing more is filtered (a watch prints its last lines)
        self._interrupted = False

    def apply(self, data: Any) -> list[Any]:
        """Every value the program yields for `data`; a jq error is a usage error (exit 2)."""
        try:
            values: list[Any] = self._program.input_value(data).all()
        except ValueError as exc:
            raise UsageError(f"--jq {self.expression}: {_first_line(exc)}") from None
        return values

    def lines(self, data: Any) -> list[str]:
        """What is printed for `data`, one string per line (without the newline)."""
        return [_text(value) for value in self.apply(data)]

    def write(self, data: Any, stream: IO[str], terminal: bool) -> None:
        """Print what the program yields for `data` on `stream`, each value as it comes
        (strings that reach a terminal cleaned, as server text always is)."""
        if self._interrupted:
            return
        fd = _fileno(stream)
        if fd is None or not hasattr(os, "fork"):
            self._write_here(data, stream, terminal)
            return
        stream.flush()
        if self._worker is None or self._worker.fd != fd:
            if self._worker is not None:
                self._worker.close()
            self._worker = _Worker(self.expression, fd, terminal)
        try:
            self._worker.run(data, self.expression)
        except _Redelivered:
            self._interrupted = True  # the watch's own handler ends it
            self._worker = None
        except KeyboardInterrupt:
            self._interrupted = True
            self._worker = None
            raise

    def _write_here(self, data: Any, stream: IO[str], terminal: bool) -> None:
        from mcptask.text.sanitize import clean

        try:
            for value in self._program.input_value(data):
                text = _text(value)
                stream.write((clean(text) if terminal else text) + "\n")
        except ValueError as exc:
            raise UsageError(f"--jq {self.expression}: {_first_line(exc)}") from None

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else jsonsafe.dumps(value, ensure_ascii=False)


def _fileno(stream: IO[str]) -> int | None:
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return fd if isinstance(fd, int) and fd >= 0 else None


class _Redelivered(Exception):
    """Ctrl-C came while jq ran and was passed on to the handler that was there before."""


class _Worker:
    """A forked child that runs the program on each document it is sent (one JSON line on
    a pipe) and writes the values to `fd` itself; it answers each document on a second
    pipe: `K` (done), `E message` (a jq error), `P` (the output's reader went away)."""

    def __init__(self, expression: str, fd: int, terminal: bool) -> None:
        self.fd = fd
        docs_r, docs_w = os.pipe()
        acks_r, acks_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            try:
                os.close(docs_w)
                os.close(acks_r)
                _child(expression, docs_r, acks_w, fd, terminal)
            finally:
                os._exit(1)
        os.close(docs_r)
        os.close(acks_w)
        self.pid = pid
        self._docs = os.fdopen(docs_w, "wb")
        self._acks = os.fdopen(acks_r, "rb")
        import atexit

        atexit.register(self.close)

    def run(self, data: Any, expression: str) -> None:
        """Send one document and wait for the child to be done with it. Ctrl-C (SIGINT) meanwhile
        ends the child and raises KeyboardInterrupt here, at once, whoever else handles SIGINT
        (a watch's event loop would otherwise swallow it until jq is done)."""
        line = jsonsafe.dumps(data, ensure_ascii=False).encode() + b"\n"
        main = sys.modules.get("threading")
        in_main = main is None or main.current_thread() is main.main_thread()
        before = signal.signal(signal.SIGINT, signal.default_int_handler) if in_main else None
        try:
            try:
                self._docs.write(line)
                self._docs.flush()
                ack = self._acks.readline()
            except BrokenPipeError:
                ack = b""
        except KeyboardInterrupt:
            self.close(kill=True)
            if _ours(before):
                raise
            # someone else handles Ctrl-C (a watch's event loop): it gets the signal again,
            # and this document's output ends here
            signal.signal(signal.SIGINT, before)
            before = None
            signal.raise_signal(signal.SIGINT)
            raise _Redelivered from None
        finally:
            if before is not None:
                signal.signal(signal.SIGINT, before)
        if ack.startswith(b"K"):
            return
        if ack.startswith(b"E"):
            message = ack[1:].decode("utf-8", "replace").strip()
            raise UsageError(f"--jq {expression}: {message}")
        if ack.startswith(b"P"):
            self.close()
            raise BrokenPipeError(32, "the output's reader went away")
        status = self.close()
        if status is not None and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT:
            # the terminal's Ctrl-C reached the worker (the whole group gets it): so it reaches
            # this process too, whose own handler acts on it (a watch's event loop: raised
            # here, in one of its tasks, it would only end that task, noisily)
            if _ours(before):
                raise KeyboardInterrupt
            raise _Redelivered
        raise UsageError(f"--jq {expression}: jq stopped ({_how(status)})")

    def close(self, kill: bool = False) -> int | None:
        """End the child (closing its input ends it; `kill`: at once) and reap it."""
        if self.pid <= 0:
            return None
        pid, self.pid = self.pid, 0
        for f in (self._docs, self._acks):
            with contextlib.suppress(OSError):
                f.close()
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return None
        return status


def _ours(before: Any) -> bool:
    """Whether Ctrl-C is this code's to raise (exit 130), not another handler's to be given
    again: no handler was replaced, Python's own was, or SIGINT was ignored (inherited so, by
    a script's background job: given again, it would vanish and mcptask end 0 with nothing)."""
    return before is None or before is signal.default_int_handler or before == signal.SIG_IGN


def _child(expression: str, docs_fd: int, acks_fd: int, out_fd: int, terminal: bool) -> None:
    """The worker's loop (in the forked child): Ctrl-C and a closed output end it as they end
    any command-line filter."""
    import json

    import jq

    from mcptask.text.sanitize import clean

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # nothing of the parent's stays open here (a stdio server's stdin would never see EOF)
    low = 3
    for keep in sorted({docs_fd, acks_fd, out_fd}):
        if keep >= low:
            os.closerange(low, keep)
            low = keep + 1
    os.closerange(low, 1 << 20)
    program = jq.compile(expression)
    out = os.fdopen(os.dup(out_fd), "w", encoding="utf-8", errors="replace")
    with os.fdopen(docs_fd, "rb") as docs:
        for line in docs:
            try:
                for value in program.input_value(json.loads(line)):
                    text = _text(value)
                    out.write((clean(text) if terminal else text) + "\n")
                    out.flush()
                answer = b"K\n"
            except ValueError as exc:
                answer = b"E" + _first_line(exc).replace("\n", " ").encode() + b"\n"
            except BrokenPipeError:
                os.write(acks_fd, b"P\n")
                os._exit(0)
            os.write(acks_fd, answer)
    os._exit(0)


def _how(status: int | None) -> str:
    if status is None:
        return "gone"
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def _first_line(exc: Exception) -> str:
    """libjq's message without its `jq: error:` prefix and the caret lines under it."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else "invalid program"
    return first.removeprefix("jq: error: ").removeprefix("jq: ").rstrip(":")
