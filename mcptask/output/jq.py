"""`--jq EXPR`: filter what a command prints as JSON through a jq program, as gh does.

The program runs on each JSON document mcptask would print (the one object of `-o json`, each
line of `-o ndjson`); each value it yields is printed on a line of its own, strings as plain
text (gh's convention, like `jq -r`), anything else as compact JSON. The filter is jq itself
(the `jq` package's bindings to libjq), imported only when `--jq` is given.

Values are printed as jq yields them (`repeat(1)` streams, it does not grow a list). libjq runs
without giving the interpreter a chance to see Ctrl-C (it holds the GIL for as long as a step
takes: `last(range(1e12))` would run on after SIGINT), so where the output is a real file the
program runs in a worker process (started once with `subprocess`, never forked from this
threaded process; fed one document at a time) that writes to it directly: Ctrl-C ends the worker
with the rest of the terminal's process group, or mcptask ends it, and mcptask exits 130 at
once. While an event loop runs (a watch, a call), documents go to the worker from a thread of
their own and its answers are read there: the loop never waits for jq; what went wrong is raised
at the next document or at `finish()`. Output that is not a file (a test's StringIO) is
filtered in this process.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import sys
import threading
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
        line = jsonsafe.dumps(data, ensure_ascii=False).encode() + b"\n"
        if _loop_running():
            self._worker.feed(line)  # off the loop: raises what an earlier document met
            return
        try:
            self._worker.run(line, self.expression)
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

    def finish(self) -> None:
        """Wait until the worker printed every document handed to it (Ctrl-C meanwhile ends it
        at once); raise what went wrong (a jq error, the output's reader gone)."""
        worker = self._worker
        if worker is None or self._interrupted:
            return
        try:
            worker.drain()
        except _Redelivered:
            self._interrupted = True
        except BaseException:
            self._interrupted = True
            self._worker = None
            worker.close(kill=True)
            raise

    def close(self, kill: bool = False) -> None:
        if self._worker is not None:
            self._worker.close(kill=kill)
            self._worker = None


def _loop_running() -> bool:
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


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
    """A worker process that runs the program on each document it is sent (one JSON line on
    its stdin) and writes the values to `fd` (its stdout) itself; it answers each document on a
    second pipe: `K` (done), `E message` (a jq error), `P` (the output's reader went away),
    `W errno why` (the output cannot be written).
    Started with `subprocess` (fork and exec in C: no Python runs in a forked copy of this
    threaded process); the program is in its command line, as with any filter."""

    def __init__(self, expression: str, fd: int, terminal: bool) -> None:
        import subprocess
        from pathlib import Path

        import mcptask

        self.fd = fd
        self.expression = expression
        acks_r, acks_w = os.pipe()
        # the worker imports mcptask from where this process did (a checkout, a venv, a wheel)
        root = str(Path(mcptask.__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        # the worker starts with Ctrl-C blocked (a thread's signal mask is kept across fork
        # and exec), so that one arriving while its interpreter starts up waits instead of
        # making it print a fatal error; it unblocks it once it runs (`_child`), and then
        # dies of it as any filter does. Only this thread's mask changes, for this moment: a
        # Ctrl-C meanwhile still reaches mcptask (another thread, or once unblocked)
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    "from mcptask.output.jq import _child_main; _child_main()",
                    expression,
                    "1" if terminal else "0",
                    str(acks_w),
                ],
                stdin=subprocess.PIPE,
                stdout=fd,
                pass_fds=(acks_w,),
                close_fds=True,
                env=env,
            )
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.close(acks_w)
        assert self.proc.stdin is not None
        self._docs = self.proc.stdin
        self._acks = os.fdopen(acks_r, "rb")
        #: the feeding thread (`feed`), its queue and what it met
        self._queue: queue.SimpleQueue[bytes | None] | None = None
        self._failure: BaseException | None = None
        self._idle = threading.Event()
        self._idle.set()
        self._pending = 0
        self._lock = threading.Lock()
        import atexit

        atexit.register(self.close, kill=True)

    @property
    def pid(self) -> int:
        return self.proc.pid if self.proc is not None else 0

    def _exchange(self, line: bytes) -> bytes:
        try:
            self._docs.write(line)
            self._docs.flush()
            return self._acks.readline()
        except (BrokenPipeError, ValueError):  # ValueError: closed meanwhile
            return b""

    def run(self, line: bytes, expression: str) -> None:
        """Send one document and wait for the worker to be done with it. Ctrl-C (SIGINT)
        meanwhile ends the worker and raises KeyboardInterrupt here, at once, whoever else
        handles SIGINT."""
        in_main = threading.current_thread() is threading.main_thread()
        before = signal.signal(signal.SIGINT, signal.default_int_handler) if in_main else None
        try:
            ack = self._exchange(line)
        except KeyboardInterrupt:
            self.close(kill=True)
            if _ours(before):
                raise
            # someone else handles Ctrl-C: it gets the signal again, and this document's
            # output ends here
            signal.signal(signal.SIGINT, before)
            before = None
            signal.raise_signal(signal.SIGINT)
            raise _Redelivered from None
        finally:
            if before is not None:
                signal.signal(signal.SIGINT, before)
        others = not _ours(before)  # SIGINT ignored (inherited so) is ours to raise too
        self._judge(ack, expression, others_handle_sigint=others)

    def _judge(self, ack: bytes, expression: str, *, others_handle_sigint: bool) -> None:
        if ack.startswith(b"K"):
            return
        if ack.startswith(b"E"):
            message = ack[1:].decode("utf-8", "replace").strip()
            raise UsageError(f"--jq {expression}: {message}")
        if ack.startswith(b"P"):
            self.close()
            raise BrokenPipeError(32, "the output's reader went away")
        if ack.startswith(b"W"):  # what the worker met writing the output, as if met here
            self.close()
            number, _, why = ack[1:].decode("utf-8", "replace").strip().partition(" ")
            raise OSError(int(number) if number.isdigit() else 0, why)
        status = self.close()
        if status is not None and status == -signal.SIGINT:
            # the terminal's Ctrl-C reached the worker (the whole group gets it): so it reaches
            # this process too, whose own handler acts on it
            if not others_handle_sigint:
                raise KeyboardInterrupt
            raise _Redelivered
        raise UsageError(f"--jq {expression}: jq stopped ({_how(status)})")

    # -- fed from a thread, while an event loop runs ----------------------------------------

    def feed(self, line: bytes) -> None:
        """Hand one document to the feeding thread; raise what an earlier one met."""
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
        if self._queue is None:
            self._queue = queue.SimpleQueue()
            threading.Thread(target=self._feeding, args=(self._queue,), daemon=True).start()
        with self._lock:
            self._pending += 1
            self._idle.clear()
        self._queue.put(line)

    def _feeding(self, todo: queue.SimpleQueue[bytes | None]) -> None:
        while True:
            line = todo.get()
            if line is None:
                return
            try:
                if self._failure is None:
                    ack = self._exchange(line)
                    # a signal the loop's handler acts on: this thread only reports it
                    self._judge(ack, self.expression, others_handle_sigint=True)
            except BaseException as exc:  # raised where the loop next prints, or at `drain`
                self._failure = exc
            finally:
                with self._lock:
                    self._pending -= 1
                    if self._pending == 0:
                        self._idle.set()

    def drain(self) -> None:
        """Wait (Ctrl-C still heard) until every fed document was printed; raise a failure."""
        while not self._idle.wait(0.1):
            pass
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def close(self, kill: bool = False) -> int | None:
        """End the worker (closing its input ends it; `kill`: at once) and reap it: its
        return code (negative: the signal that ended it)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if self._queue is not None:
            self._queue.put(None)
        if kill:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        for f in (self._docs, self._acks):
            with contextlib.suppress(OSError):
                f.close()
        try:
            return proc.wait()
        except ChildProcessError:
            return None


def _child_main() -> None:
    """The worker process's entry point: `python -c ... EXPRESSION TERMINAL ACKS_FD`."""
    expression, terminal, acks = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
    _child(expression, 0, acks, 1, terminal)


def _ours(before: Any) -> bool:
    """Whether Ctrl-C is this code's to raise (exit 130), not another handler's to be given
    again: no handler was replaced, Python's own was, or SIGINT was ignored (inherited so, by
    a script's background job: given again, it would vanish and mcptask end 0 with nothing)."""
    return before is None or before is signal.default_int_handler or before == signal.SIG_IGN


def _child(expression: str, docs_fd: int, acks_fd: int, out_fd: int, terminal: bool) -> None:
    """The worker's loop: Ctrl-C and a closed output end it as they end any command-line
    filter."""
    import json

    import jq

    from mcptask.text.sanitize import clean

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # a Ctrl-C that came while this process started (blocked then: `_Worker`) ends it now
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
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
            except OSError as exc:  # the output cannot be written (a full disk, a read-only fd)
                why = (exc.strerror or type(exc).__name__).replace("\n", " ")
                os.write(acks_fd, f"W{exc.errno or 0} {why}\n".encode())
                os._exit(0)
            os.write(acks_fd, answer)
    os._exit(0)


def _how(status: int | None) -> str:
    if status is None:
        return "gone"
    if status < 0:
        return f"killed by signal {-status}"
    return f"exit status {status}"


def _first_line(exc: Exception) -> str:
    """libjq's message without its `jq: error:` prefix and the caret lines under it."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else "invalid program"
    return first.removeprefix("jq: error: ").removeprefix("jq: ").rstrip(":")
