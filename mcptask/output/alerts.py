"""`watch --bell` and `--notify`: tell the person who went away that the watch ended."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence
from typing import IO

from mcptask.text.sanitize import one_line

#: the terminal bell
BEL = "\a"


def bell(stream: IO[str]) -> bool:
    """Ring the terminal's bell (stderr, or whichever stream is given) if it is a terminal."""
    try:
        if not stream.isatty():
            return False
        stream.write(BEL)
        stream.flush()
    except (OSError, ValueError):
        return False
    return True


def notifier() -> list[str] | None:
    """The desktop notifier's command line before the title and body: `notify-send` (Linux,
    BSD), `osascript` (macOS); None when there is none."""
    if shutil.which("notify-send"):
        return ["notify-send", "--app-name=mcptask"]
    if sys.platform == "darwin" and shutil.which("osascript"):
        return ["osascript"]
    return None


def notify(title: str, body: str) -> str | None:
    """A desktop notification; returns why it could not be shown (None: it was)."""
    command = notifier()
    if command is None:
        return "--notify: no desktop notifier found (notify-send on Linux, osascript on macOS)"
    title, body = one_line(title, 100), one_line(body, 300)
    if command[0] == "osascript":
        quoted = [s.replace("\\", "\\\\").replace('"', '\\"') for s in (body, title)]
        args = [*command, "-e", f'display notification "{quoted[0]}" with title "{quoted[1]}"']
    else:
        args = [*command, "--", title, body]
    try:
        done = subprocess.run(args, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"--notify: {command[0]} failed: {exc}"
    if done.returncode != 0:
        return f"--notify: {command[0]} exited {done.returncode}"
    return None


def summary(outcomes: Sequence[tuple[str, str | None]]) -> str:
    """`t1 completed` for one task, else `3 tasks: 2 completed, 1 failed`."""
    if len(outcomes) == 1:
        task_id, outcome = outcomes[0]
        return f"{task_id} {outcome or 'unknown'}"
    counts: dict[str, int] = {}
    for _, outcome in outcomes:
        counts[outcome or "unknown"] = counts.get(outcome or "unknown", 0) + 1
    parts = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    return f"{len(outcomes)} tasks: {parts}"
