"""`mcptask log` of a long history: one task with N events in a private task book (5,000 is the
book's cap per task; a larger N is written past the cap, as a book edited by hand or by an older
mcptask may hold), then, each as a whole process (no server involved):

- `log ID -o pretty` (a terminal's view, written to /dev/null), CPU and peak RSS;
- `log ID -o ndjson`, CPU and peak RSS;
- `log ID -o ndjson | head -1`: seconds until the first line arrives (streaming).

    python bench/log_scale.py [--events 5000,200000]
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcptask.state.taskbook import TaskBook  # noqa: E402

URL = "http://127.0.0.1:9/mcp"
TASK = "7b6c8adcbe6143e4b43b0c63cbf44855"


def fill(state: Path, n: int) -> None:
    book = TaskBook(state / "tasks.db")
    book.record(URL, TASK, status="working", statusMessage="start", pollInterval=1000)
    book.close()
    conn = sqlite3.connect(state / "tasks.db")
    (eid,) = conn.execute("SELECT id FROM endpoints").fetchone()
    t0 = time.time() - n
    rows = []
    for i in range(n):
        kind = ("message", "progress", "retry")[i % 3]
        data = f'{{"progress": {i}, "total": {n}}}' if kind == "progress" else None
        rows.append(
            (
                eid,
                TASK,
                t0 + i,
                kind,
                "poll",
                "working",
                f"step {i} of the work",
                "watch",
                data,
                t0 + i - 0.2 if kind == "message" else None,
            )
        )
    conn.executemany(
        "INSERT INTO events (endpoint, task, at, kind, via, status, message, command, data, "
        "server_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.commit()
    conn.close()


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """CPU seconds and peak RSS (MiB) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, after.ru_maxrss / 1024


def first_line(cmd: list[str], env: dict[str, str]) -> float:
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.readline()
    took = time.monotonic() - start
    proc.kill()
    proc.wait()
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", default="5000,200000")
    sizes = [int(x) for x in parser.parse_args().events.split(",")]
    py = [sys.executable, "-m", "mcptask"]
    print(
        f"{'events':>8} {'pretty cpu':>11} {'pretty MiB':>11} {'ndjson cpu':>11} "
        f"{'ndjson MiB':>11} {'first line':>11}"
    )
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            state = Path(tmp)
            fill(state, n)
            env = {**os.environ, "MCPTASK_STATE_DIR": str(state), "COLUMNS": "120"}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            pretty = run([*py, "log", TASK, "-o", "pretty"], env)
            nd = run([*py, "log", TASK, "-o", "ndjson"], env)
            first = first_line([*py, "log", TASK, "-o", "ndjson"], env)
            print(
                f"{n:>8} {pretty[0]:>10.2f}s {pretty[1]:>10.0f}M {nd[0]:>10.2f}s "
                f"{nd[1]:>10.0f}M {first:>10.2f}s"
            )


if __name__ == "__main__":
    main()
