"""Issue 36: `--jq`'s worker is a process started with `subprocess` (never a fork of this
threaded process), and while an event loop runs, documents reach it from a thread: the loop
never waits for jq."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import pytest

from mcptask.errors import UsageError
from mcptask.output.jq import JqFilter


def _cmdline(pid: int) -> list[str]:
    raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    return [part.decode() for part in raw.split(b"\0") if part]


def test_the_worker_is_a_fresh_process_with_the_program_in_its_command_line() -> None:
    read_end, write_end = os.pipe()
    jq = JqFilter(".a")
    try:
        with os.fdopen(write_end, "w") as out:
            jq.write({"a": "x"}, out, terminal=False)
            worker = jq._worker
            assert worker is not None and worker.pid > 0
            argv = _cmdline(worker.pid)
            # exec'd anew (a fork would carry this process's own command line)
            assert "from mcptask.output.jq import _child_main; _child_main()" in argv
            assert ".a" in argv
            jq.write({"a": "y"}, out, terminal=False)
            jq.close()
        assert os.read(read_end, 100) == b"x\ny\n"
    finally:
        jq.close(kill=True)
        with contextlib.suppress(OSError):
            os.close(read_end)


def test_the_event_loop_never_waits_for_jq() -> None:
    """A program that never ends: `write` returns at once while the loop runs, the loop goes on,
    and Ctrl-C's path (`close(kill=True)`) ends the worker."""
    read_end, write_end = os.pipe()
    jq = JqFilter('last(range(1e12)) | "never"')

    async def main() -> int:
        ticks = 0
        with os.fdopen(write_end, "w") as out:
            jq.write({"a": 1}, out, terminal=False)  # would block here for ever, on the loop
            jq.write({"a": 2}, out, terminal=False)
            for _ in range(3):
                await asyncio.sleep(0)
                ticks += 1
            jq.close(kill=True)
        return ticks

    try:
        assert asyncio.run(main()) == 3
    finally:
        jq.close(kill=True)
        os.close(read_end)


def test_a_jq_error_met_off_the_loop_is_raised_at_the_next_document_or_at_finish() -> None:
    read_end, write_end = os.pipe()
    jq = JqFilter('if .n == 1 then error("boom") else .n end')

    async def main() -> None:
        with os.fdopen(write_end, "w") as out:
            jq.write({"n": 1}, out, terminal=False)

    try:
        asyncio.run(main())
        with pytest.raises(UsageError, match="boom"):
            jq.finish()
    finally:
        jq.close(kill=True)
        os.close(read_end)
