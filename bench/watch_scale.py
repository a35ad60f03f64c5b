"""`mcptask watch` at scale: pacing, lateness, CPU and memory while following N tasks.

For each variant (by default 1, 200 and 1,000 tasks) it starts the load server
(`bench/load_server.py`) in a subprocess, creates N tasks in one session (each runs `--duration`
seconds, the ends spread over `--stagger` seconds, `pollInterval` `--poll-interval-ms`), runs

    mcptask watch <ids...> -o ndjson --url <url> --session <sid>

as a subprocess with a private `MCPTASK_STATE_DIR`, timestamps every ndjson line as it arrives,
and compares with what the server recorded (every `tasks/get` arrival, every terminal time).

Figures (targets from issue #8 in brackets):
- polls / ideal [<= 1.05]: ideal per task is a perfect poller's count from its first poll:
  ceil((terminal - first poll) / interval) + 1;
- minimum gap between two polls of one task / its pollInterval [>= 1.0, never below];
- gap excess: how much later than `pollInterval` each poll came (p50/p99/max);
- lateness, end line on stdout minus the server's terminal time (p50/p99/max; about half an
  interval on average is inherent to polling);
- lateness after the observing poll, end line minus the arrival of the poll that first saw the
  terminal status [p99 <= 50 ms];
- CPU of the mcptask process (user + system, from wait4) per 1,000 polls, after start-up
  [<= 1 s, i.e. 1 ms a poll] and in all;
- peak RSS (ru_maxrss) [< 120 MiB].

With `--pretty`, the watch shows its live view (`-o pretty`) on a pseudo-terminal of 120 x 50
instead of ndjson: pacing, CPU and memory are measured, end-line lateness is not.

With `--two-writes`, the server answers in two writes (headers, then body, Nagle on: Python's
`http.server` habit that meets the client's delayed ACK); with `--limit-rps R`, it answers HTTP 429
(`Retry-After: 1`) past R requests a second. Either way the table adds the connections the watch
opened (in all, most at once) and the 429s it got.

With `--warm-book`, `mcptask list` runs first in the same state directory, so every task is in
the task book (as after `mcptask call`): this shows what reading and writing a large book costs
(its wall and CPU are reported too).

    python bench/watch_scale.py [--tasks 1,200,1000] [--duration 10] [--poll-interval-ms 1000]
                                [--protocol mcp-2025-11-25|mcp-2026-07-28]
                                [--two-writes] [--limit-rps R]
                                [--warm-book] [--pretty] [--mcptask PATH] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import itertools
import json
import math
import os
import pty
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_server import LoadServer, proc_cpu

Json = dict[str, Any]


def default_mcptask() -> str:
    """The console script users run: the one beside this interpreter, else on PATH."""
    here = Path(sys.executable).parent / "mcptask"
    return str(here) if here.exists() else "mcptask"


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile; nan for no values."""
    if not values:
        return math.nan
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))
    return s[k]


def proc_rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Sampler(threading.Thread):
    """Samples the client's CPU and RSS every `every` seconds while it runs."""

    def __init__(self, pid: int, every: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.samples: list[tuple[float, float, int]] = []  # (monotonic, cpu s, rss KiB)
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                cpu = proc_cpu(self.pid)
            except (OSError, IndexError):
                return
            self.samples.append((time.monotonic(), cpu, proc_rss_kib(self.pid)))
            self.stop.wait(self.every)

    def cpu_at(self, t: float) -> float:
        before = [cpu for (ts, cpu, _) in self.samples if ts <= t]
        return before[-1] if before else 0.0


def timed(cmd: list[str], env: dict[str, str]) -> Json:
    """Run a command to the end: wall and CPU seconds, exit code."""
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    return {
        "command": " ".join(cmd[1:2]),
        "exitCode": proc.returncode,
        "wallS": round(time.monotonic() - started, 3),
        "cpuS": round(usage.ru_utime + usage.ru_stime, 3),
        "stderrTail": err[-300:],
    }


def run_variant(server: LoadServer, n: int, args: argparse.Namespace) -> Json:
    server.reset()
    poll_s = args.poll_interval_ms / 1000
    stagger = args.stagger if args.stagger is not None else poll_s
    made = server.create(n, args.duration, args.poll_interval_ms, stagger)
    state = tempfile.mkdtemp(prefix="mcptask-bench-state-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["MCPTASK_STATE_DIR"] = state
    env["MCPTASK_CONFIG"] = os.path.join(state, "no-config.toml")
    book: Json = {}
    if args.warm_book:
        # as after `mcptask call` / `list`: every task is in the task book before the watch
        book = timed(
            [args.mcptask, "list", "-o", "json", "--url", server.url, "--session", made["session"]],
            env,
        )
        server.restart(made["session"])  # the tasks' clocks start with the watch
    cmd = [args.mcptask, "watch", *made["ids"], "-o", "pretty" if args.pretty else "ndjson"]
    if args.protocol == "mcp-2026-07-28":
        cmd += ["--url", server.url, "-p", args.protocol, *args.extra]  # no sessions there
    else:
        cmd += ["--url", server.url, "--session", made["session"], "-p", args.protocol]
        cmd += args.extra
    stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed below)
    server_cpu0 = server.cpu_seconds()
    started = time.monotonic()
    lines: list[tuple[float, bytes]] = []
    if args.pretty:
        # the live view on a terminal (a pty of 120 x 50): only the server's side is measured
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))
        env = {**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "50"}
        proc = subprocess.Popen(cmd, stdout=slave, stderr=stderr, env=env)
        os.close(slave)
    else:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr, env=env)
    sampler = Sampler(proc.pid)
    sampler.start()

    def read() -> None:
        if args.pretty:
            with contextlib.suppress(OSError):
                while os.read(master, 65536):
                    pass
            os.close(master)
            return
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append((time.monotonic(), line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    limit = args.duration + stagger + 120
    timer = threading.Timer(limit, lambda: proc.send_signal(signal.SIGTERM))
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    ended = time.monotonic()
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    sampler.stop.set()
    reader.join(10)
    server_cpu = server.cpu_seconds() - server_cpu0
    stats = server.stats()
    stderr.seek(0)
    err_text = stderr.read().decode("utf-8", "replace")
    stderr.close()

    # -- the server's side: polls and gaps ------------------------------------------------------
    tasks = stats["tasks"]
    polls = ideal = 0
    gaps_ratio: list[float] = []
    excess_ms: list[float] = []
    below = 0
    first_poll = math.inf
    for t in tasks.values():
        gets = t["gets"]
        interval = t["pollInterval"] / 1000
        polls += len(gets)
        if not gets:
            continue
        first_poll = min(first_poll, gets[0])
        window = t["terminalAt"] - gets[0]
        ideal += math.ceil(window / interval) + 1 if window > 0 else 1
        for a, b in itertools.pairwise(gets):
            gaps_ratio.append((b - a) / interval)
            excess_ms.append((b - a - interval) * 1000)
            below += (b - a) < interval

    # -- the client's side: end lines -----------------------------------------------------------
    late_ms: list[float] = []
    late_obs_ms: list[float] = []
    outcomes: dict[str, int] = {}
    for ts, raw in lines:
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if rec.get("event") != "end":
            continue
        outcomes[rec.get("outcome")] = outcomes.get(rec.get("outcome"), 0) + 1
        t = tasks.get(rec.get("taskId"))
        if t is None:
            continue
        late_ms.append((ts - t["terminalAt"]) * 1000)
        if t["observedAt"] is not None:
            late_obs_ms.append((ts - t["observedAt"]) * 1000)

    cpu_total = usage.ru_utime + usage.ru_stime
    cpu_startup = sampler.cpu_at(first_poll) if first_poll < math.inf else math.nan
    cpu_watch = cpu_total - cpu_startup
    peak_rss = max((rss for (_, _, rss) in sampler.samples), default=0)
    return {
        "tasks": n,
        "durationS": args.duration,
        "pollIntervalMs": args.poll_interval_ms,
        "staggerS": stagger,
        "exitCode": proc.returncode,
        "outcomes": outcomes,
        "wallS": round(ended - started, 3),
        "polls": polls,
        "idealPolls": ideal,
        "pollsOverIdeal": round(polls / ideal, 4) if ideal else None,
        "minGapOverInterval": round(min(gaps_ratio), 4) if gaps_ratio else None,
        "gapsBelowInterval": below,
        "gapExcessMs": {
            "p50": round(pct(excess_ms, 50), 1),
            "p99": round(pct(excess_ms, 99), 1),
            "max": round(max(excess_ms, default=math.nan), 1),
        },
        "latenessMs": {
            "p50": round(pct(late_ms, 50), 1),
            "p99": round(pct(late_ms, 99), 1),
            "max": round(max(late_ms, default=math.nan), 1),
        },
        "latenessAfterPollMs": {
            "p50": round(pct(late_obs_ms, 50), 1),
            "p99": round(pct(late_obs_ms, 99), 1),
            "max": round(max(late_obs_ms, default=math.nan), 1),
        },
        "cpuTotalS": round(cpu_total, 3),
        "cpuStartupS": round(cpu_startup, 3),
        # too few polls (the 1-task run) and these are start-up and exit, not polling
        "cpuPer1000PollsS": round(cpu_watch / polls * 1000, 3) if polls >= 100 else None,
        "cpuPer1000PollsInAllS": round(cpu_total / polls * 1000, 3) if polls >= 100 else None,
        "peakRssMiB": round(usage.ru_maxrss / 1024, 1),
        "sampledPeakRssMiB": round(peak_rss / 1024, 1),
        "serverCpuS": round(server_cpu, 3),
        "serverRequests": stats["requests"],
        "connections": stats.get("connections", 0),
        "peakConnections": stats.get("peakConnections", 0),
        "refused429": stats.get("refused429", 0),
        "serverCpuMicrosPerRequest": (
            round(server_cpu / stats["requests"] * 1e6, 1) if stats["requests"] else None
        ),
        "warmBook": book,
        "stderrTail": err_text[-600:] if (proc.returncode or err_text.strip()) else "",
    }


ROWS: list[tuple[str, str, str]] = [
    ("exit code / outcomes", "exit", ""),
    ("polls (ideal)", "polls", ""),
    ("polls / ideal", "pollsOverIdeal", "<= 1.05"),
    ("min gap / pollInterval", "minGapOverInterval", ">= 1.0"),
    ("gaps below pollInterval", "gapsBelowInterval", "0"),
    ("gap excess ms p50/p99/max", "gapExcessMs", ""),
    ("lateness ms p50/p99/max", "latenessMs", ""),
    ("after the poll ms p50/p99/max", "latenessAfterPollMs", "p99 <= 50"),
    ("CPU s / 1000 polls (watching)", "cpuPer1000PollsS", "<= 1.0"),
    ("CPU s / 1000 polls (in all)", "cpuPer1000PollsInAllS", ""),
    ("CPU s: start-up / total", "cpu", ""),
    ("warm book: `list` wall/CPU s", "book", ""),
    ("peak RSS MiB", "peakRssMiB", "< 120"),
    ("connections: in all / at once", "conns", ""),
    ("HTTP 429 answers", "refused429", ""),
    ("wall s", "wallS", ""),
    ("server CPU us / request", "serverCpuMicrosPerRequest", ""),
]


def cell(r: Json, key: str) -> str:
    if key == "exit":
        outs = ",".join(f"{k}:{v}" for k, v in sorted(r["outcomes"].items()))
        return f"{r['exitCode']} {outs}"
    if key == "polls":
        return f"{r['polls']} ({r['idealPolls']})"
    if key == "book":
        b = r["warmBook"]
        return f"{b['wallS']:.2f} / {b['cpuS']:.2f}" if b else "-"
    if key == "conns":
        return f"{r['connections']} / {r['peakConnections']}"
    if key == "cpu":
        return f"{r['cpuStartupS']:.2f} / {r['cpuTotalS']:.2f}"
    v = r[key]
    if v is None:
        return "-"
    if isinstance(v, dict):
        return "/".join(f"{x:g}" for x in v.values())
    return str(v)


def table(results: list[Json], args: argparse.Namespace) -> str:
    head = ["", *(f"{r['tasks']} tasks" for r in results), "target"]
    rows = [head] + [
        [label, *(cell(r, key) for r in results), target] for label, key, target in ROWS
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    out = [
        f"mcptask watch{' (live view)' if getattr(args, 'pretty', False) else ''}, "
        f"{getattr(args, 'protocol', 'mcp-2025-11-25')}: "
        f"{args.duration:g} s tasks, pollInterval {args.poll_interval_ms} ms, "
        f"ends spread over {results[0]['staggerS']:g} s ({os.cpu_count()} cores)"
        + (", server answers in two writes" if getattr(args, "two_writes", False) else "")
        + (
            f", server refuses past {args.limit_rps:g} req/s (429)"
            if getattr(args, "limit_rps", 0)
            else ""
        )
    ]
    for row in rows:
        out.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    for r in results:
        if r["stderrTail"]:
            out.append(f"-- stderr of the {r['tasks']}-task run (tail):\n{r['stderrTail']}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--tasks", default="1,200,1000", help="comma-separated task counts")
    p.add_argument("--duration", type=float, default=10.0, help="seconds each task runs")
    p.add_argument("--poll-interval-ms", type=int, default=1000)
    p.add_argument("--stagger", type=float, default=None, help="spread ends (default 1 interval)")
    p.add_argument("--mcptask", default=default_mcptask(), help="the mcptask console script")
    p.add_argument(
        "--protocol",
        choices=["mcp-2025-11-25", "mcp-2026-07-28"],
        default="mcp-2025-11-25",
        help="the MCP version the watch speaks to the load server (2026: `-p`, no session)",
    )
    p.add_argument(
        "--warm-book",
        action="store_true",
        help="first `mcptask list` the session, so every task is in the task book",
    )
    p.add_argument(
        "--pretty",
        action="store_true",
        help="watch with the live view on a pty (no end-line lateness then)",
    )
    p.add_argument(
        "--two-writes",
        action="store_true",
        help="the server answers in two writes, headers then body (Nagle on, as http.server)",
    )
    p.add_argument(
        "--limit-rps",
        type=float,
        default=0.0,
        help="the server answers 429 (Retry-After: 1) past this many requests a second",
    )
    p.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="more watch arguments")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = p.parse_args(argv)
    if args.warm_book and args.protocol == "mcp-2026-07-28":
        p.error("--warm-book lists the tasks: MCP 2026-07-28 has no tasks/list")
    counts = [int(x) for x in args.tasks.split(",") if x.strip()]
    results = []
    with LoadServer(
        duration=args.duration,
        poll_ms=args.poll_interval_ms,
        two_writes=args.two_writes,
        limit_rps=args.limit_rps,
    ) as server:
        for n in counts:
            results.append(run_variant(server, n, args))
            if not args.json:
                print(f"... {n} tasks done", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({"cores": os.cpu_count(), "results": results}, indent=2))
    else:
        print(table(results, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
