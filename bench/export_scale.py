"""`mcptask export --all` of a large task book (issue 35): N finished tasks of 12 events each in a
private book, exported as one process each way:

- `--to FILE` (OTLP JSON lines);
- to an OTLP/HTTP receiver on 127.0.0.1 (a stdlib server in its own process that takes each
  protobuf batch and answers 200: the SDK's exporter, batching and the wire, not a backend);

each with wall time, tasks per second, CPU and peak RSS. Peak RSS that does not grow with N is
what "streams in batches with bounded memory" means.

    python bench/export_scale.py [--tasks 1000,10000]
"""

from __future__ import annotations

import argparse
import json
import os
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

RECEIVER = r"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass

s = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


def stamp(at: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def fill(state: Path, n: int) -> None:
    book = TaskBook(state / "tasks.db")
    book.record(URL, "seed", status="completed", protocol="mcp-2025-11-25")
    book.close()
    conn = sqlite3.connect(state / "tasks.db")
    (eid,) = conn.execute("SELECT id FROM endpoints").fetchone()
    t0 = time.time() - 3600
    tasks, events = [], []
    for i in range(n):
        tid = f"{i:032x}"
        start = t0 + i * 0.1
        fields = {
            "protocol": "mcp-2025-11-25",
            "protocolVersion": "2025-11-25",
            "createdAt": stamp(start),
            "lastUpdatedAt": stamp(start + 10),
            "tool": "build-report",
            "pollInterval": 1000,
        }
        tasks.append(
            (
                eid,
                tid,
                "completed",
                "done",
                stamp(start),
                stamp(start + 10),
                start + 10,
                json.dumps(fields),
            )
        )
        events.append(
            (eid, tid, start + 0.1, "created", None, "working", "queued", "call", None, start)
        )
        for k in range(1, 9):
            events.append(
                (
                    eid,
                    tid,
                    start + k + 0.1,
                    "message",
                    "poll",
                    "working",
                    f"step {k}",
                    "watch",
                    None,
                    start + k,
                )
            )
        events.append(
            (
                eid,
                tid,
                start + 10.1,
                "status",
                "poll",
                "completed",
                "done",
                "watch",
                None,
                start + 10,
            )
        )
        events.append(
            (
                eid,
                tid,
                start + 10.2,
                "result",
                None,
                "completed",
                None,
                "watch",
                '{"bytes": 230}',
                None,
            )
        )
        events.append(
            (
                eid,
                tid,
                start + 10.3,
                "end",
                None,
                "completed",
                None,
                "watch",
                '{"outcome": "completed", "exitCode": 0}',
                None,
            )
        )
    conn.executemany(
        "INSERT INTO tasks (endpoint, id, status, message, first_seen, last_seen, seen, fields)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        tasks,
    )
    conn.executemany(
        "INSERT INTO events (endpoint, task, at, kind, via, status, message, command, data,"
        " server_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        events,
    )
    conn.commit()
    conn.close()


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one child, measured by a fresh
    process of its own (RUSAGE_CHILDREN's peak is the largest child's so far)."""
    probe = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.monotonic()\n"
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
        "w = time.monotonic() - t\n"
        "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(json.dumps([w, r.ru_utime + r.ru_stime, r.ru_maxrss / 1024]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, *cmd], env=env, capture_output=True, text=True, check=True
    )
    wall, cpu, rss = json.loads(out.stdout)
    return wall, cpu, rss


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default="1000,10000")
    args = ap.parse_args()
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE, text=True)
    assert receiver.stdout is not None
    port = int(receiver.stdout.readline())
    try:
        print(
            f"{'tasks':>7} {'target':>6} {'wall s':>7} {'tasks/s':>8} {'CPU s':>6} {'RSS MiB':>8}"
        )
        for n in (int(x) for x in args.tasks.split(",")):
            with tempfile.TemporaryDirectory() as tmp:
                state = Path(tmp)
                fill(state, n)
                env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
                env["MCPTASK_STATE_DIR"] = str(state)
                env["MCPTASK_CONFIG"] = str(state / "none.toml")
                base = [sys.executable, "-m", "mcptask", "export", "--all", "--again", "-o", "json"]
                for target, extra in (
                    ("file", ["--to", str(state / "out.jsonl")]),
                    ("http", ["--endpoint", f"http://127.0.0.1:{port}"]),
                ):
                    wall, cpu, rss = run([*base, *extra], env)
                    print(
                        f"{n:>7} {target:>6} {wall:>7.2f} {n / wall:>8.0f} {cpu:>6.2f} {rss:>8.1f}"
                    )
    finally:
        receiver.kill()


if __name__ == "__main__":
    main()
