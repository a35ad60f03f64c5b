"""`cli.leave`: a command exits without the interpreter's teardown when nothing is left to do
at exit, with its output whole and its exit status; otherwise the usual way."""

from __future__ import annotations

import os
import subprocess
import sys

#: block-buffered output, as a command's is in a pipe (this machine sets PYTHONUNBUFFERED)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def _run(code: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, check=False, env=ENV)


def test_the_output_is_whole_and_the_status_kept() -> None:
    r = _run(
        "import sys, logging\n"
        "from mcptask.cli import leave\n"
        "sys.stdout.write('x' * 200000)\n"
        "sys.stderr.write('said')\n"
        "leave(3)\n"
    )
    assert r.returncode == 3
    assert r.stdout == b"x" * 200000
    assert r.stderr == b"said"


def test_a_thread_still_running_is_waited_for_the_usual_way() -> None:
    r = _run(
        "import sys, threading\n"
        "from mcptask.cli import leave\n"
        "go = threading.Event()\n"
        "def late():\n"
        "    go.wait()\n"
        "    print('the thread finished', flush=True)\n"
        "threading.Thread(target=late).start()\n"
        "go.set()\n"
        "leave(5)\n"
    )
    assert r.returncode == 5
    assert r.stdout == b"the thread finished\n"


def test_an_exit_handler_still_runs() -> None:
    r = _run(
        "import atexit\n"
        "from mcptask.cli import leave\n"
        "atexit.register(print, 'the handler ran')\n"
        "leave(0)\n"
    )
    assert r.returncode == 0
    assert r.stdout == b"the handler ran\n"


def test_a_reader_gone_before_the_last_flush_is_no_error() -> None:
    """`mcptask ... | head -c 1`: the reader went away before the last of the output was
    flushed: the status the command chose, and nothing on stderr (the usual exit printed
    "Exception ignored ... BrokenPipeError")."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from mcptask.cli import leave\n"
            "sys.stdout.write('y' * 1000)\n"  # held in the buffer
            "sys.stdin.readline()\n"
            "leave(0)\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert proc.stdout is not None and proc.stdin is not None
    proc.stdout.close()
    proc.stdin.write(b"go\n")
    proc.stdin.close()
    assert proc.wait() == 0
    assert proc.stderr is not None
    assert proc.stderr.read() == b""


def test_the_books_are_closed_before_leaving(tmp_path: object) -> None:
    """A book left open at `os._exit` leaves its WAL for the next run to replay: `leave`
    closes every book first, as the teardown would (the WAL is checkpointed away)."""
    r = _run(
        "import sys\n"
        "from pathlib import Path\n"
        "from mcptask.cli import leave\n"
        "from mcptask.state.taskbook import TaskBook\n"
        f"book = TaskBook(Path({str(tmp_path)!r}) / 'tasks.db')\n"
        "book.record_many('http://x/mcp', {'t1': {'status': 'working'}})\n"
        "leave(0)\n"
    )
    assert r.returncode == 0, r.stderr
    from pathlib import Path

    wal = Path(str(tmp_path)) / "tasks.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0
