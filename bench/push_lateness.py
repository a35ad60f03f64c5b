"""Push versus poll: how late `mcptask watch` reports a task's end, side by side.

Starts mcptask's embedded demo server (MCP 2025-11-25; it pushes `notifications/tasks/status` on
the session's GET stream) on 127.0.0.1, creates N tasks in one session whose ends are spread over
a few seconds, and runs

    mcptask watch <ids...> -o ndjson --url <url> --session <sid>            (push)
    mcptask watch <ids...> -o ndjson --url <url> --session <sid> --no-push  (poll)

timestamping every `end` line as it arrives. The demo server's tasks end at a known wall-clock
time (creation + duration), so lateness = end line arrival - terminal time. Also counts the
`tasks/get` requests each mode made (the demo server records every request).

    python bench/push_lateness.py [--tasks 20] [--duration 4] [--poll-interval-ms 1000]
                                  [--rounds 3] [--mcptask PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from mcptask.demo.server import DemoServer

HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def create(server: DemoServer, n: int, spread: float) -> tuple[str, dict[str, float]]:
    """One session, n tasks created `spread / n` seconds apart; returns the session and each
    task's terminal time (wall clock)."""
    with httpx.Client(timeout=10, headers=HEADERS) as http:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tasks": {}},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        }
        sid = http.post(server.url, json=init).headers["mcp-session-id"]
        http.headers["Mcp-Session-Id"] = sid
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        http.post(server.url, json=note)
        ends: dict[str, float] = {}
        for i in range(n):
            call = {
                "jsonrpc": "2.0",
                "id": i + 1,
                "method": "tools/call",
                "params": {"name": "build-report", "arguments": {}, "task": {}},
            }
            created = time.time()
            task = http.post(server.url, json=call).json()["result"]["task"]
            ends[task["taskId"]] = created + server.task_seconds
            time.sleep(spread / max(1, n))
    return sid, ends


def gets(server: DemoServer, ids: set[str]) -> int:
    return sum(
        1
        for r in server.requests
        if r["message"].get("method") == "tasks/get"
        and (r["message"].get("params") or {}).get("taskId") in ids
    )


def run(mcptask: str, server: DemoServer, n: int, push: bool, args: argparse.Namespace) -> Any:
    sid, ends = create(server, n, args.spread)
    before = gets(server, set(ends))
    with tempfile.TemporaryDirectory() as state:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
        env["MCPTASK_STATE_DIR"] = state
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cmd = [mcptask, "watch", *ends, "-o", "ndjson", "--url", server.url, "--session", sid]
        if not push:
            cmd.append("--no-push")
        late: list[float] = []
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
        assert proc.stdout is not None
        for line in proc.stdout:
            seen = time.time()
            event = json.loads(line)
            if event.get("event") == "end":
                late.append(seen - ends[event["taskId"]])
        proc.wait()
    return {"late": late, "gets": gets(server, set(ends)) - before, "exit": proc.returncode}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--tasks", type=int, default=20)
    p.add_argument("--duration", type=float, default=4.0)
    p.add_argument("--spread", type=float, default=2.0, help="seconds over which tasks start")
    p.add_argument("--poll-interval-ms", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--mcptask", default=str(Path(sys.executable).with_name("mcptask")))
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    results: dict[str, dict[str, Any]] = {
        "push": {"late": [], "gets": 0},
        "poll": {"late": [], "gets": 0},
    }
    with DemoServer(task_seconds=args.duration, poll_interval_ms=args.poll_interval_ms) as server:
        for _ in range(args.rounds):
            for mode in ("push", "poll"):  # interleaved
                r = run(args.mcptask, server, args.tasks, mode == "push", args)
                if r["exit"] != 0:
                    print(f"{mode}: mcptask exited {r['exit']}", file=sys.stderr)
                results[mode]["late"].extend(r["late"])
                results[mode]["gets"] += r["gets"]
    summary = {
        mode: {
            "ends": len(r["late"]),
            "late_p50_ms": round(pct(r["late"], 50) * 1000, 1),
            "late_p99_ms": round(pct(r["late"], 99) * 1000, 1),
            "late_max_ms": round(max(r["late"], default=float("nan")) * 1000, 1),
            "tasks_get_per_task": round(r["gets"] / max(1, len(r["late"])), 2),
        }
        for mode, r in results.items()
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(
        f"push vs poll: {args.tasks} tasks x {args.rounds} rounds, {args.duration} s each, "
        f"pollInterval {args.poll_interval_ms} ms (2 cores)"
    )
    head = ("mode", "ends", "late p50 ms", "late p99 ms", "max ms", "gets/task")
    print(f"{head[0]:6} {head[1]:>5} {head[2]:>12} {head[3]:>12} {head[4]:>8} {head[5]:>10}")
    for mode, s in summary.items():
        print(
            f"{mode:6} {s['ends']:>5} {s['late_p50_ms']:>12} {s['late_p99_ms']:>12} "
            f"{s['late_max_ms']:>8} {s['tasks_get_per_task']:>10}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
