"""The task book at scale: the same operations with 10, 10,000 and 100,000 tasks in the book.

For each size a private state directory is filled (tasks spread over 20 endpoints, three events
each, a few results), then measured:

- `get`'s book work: the look-up of an id with no target (`find`), its reference
  (`lookup_many`), the record of what was seen (`record_many`, one transaction) and the history
  `get` shows (`events`), in-process, median CPU of 200 rounds;
- prefix look-up: `find` of an 8-character prefix, in-process;
- completion: a TAB after `mcptask get ab` as bash asks it (`_MCPTASK_COMPLETE=complete_bash`),
  the whole process's CPU (median of 7), and `TaskBook.complete` in-process;
- `log ID -o json` as a whole process (no server involved), CPU;
- a 1,000-task watch's writes: what `watch` hands the book per flush when all 1,000 tasks
  changed (one transaction with 1,000 tasks and their events), and when none did;
- the start of a watch of 1,000 ids from the book (`find` for each, `lookup_many` once),
  the issue 30 goal being <= 0.5 s of CPU before the first poll.

Then, as whole processes against the load server (`bench/load_server.py`) holding `--list-tasks`
tasks (100,000 by default; issue 41's goal <= 3.5 s of CPU and 200 MiB): `list -o ndjson` with an
empty book, and again with every task already in the book; and `log ID` (pretty, to a pipe) of a
task with 5,000 events (issue 41's goal <= 0.3 s for the rendering), five runs each (median).

The host's floor is measured in the same minutes: `bench/floor_get.py` (a Typer app, one httpx
request, one pydantic model; what `startup.py` compares `get` with) against the same load server,
its runs interleaved with the `log` runs. Every process figure is also given as a multiple of it:
these shared hosts change speed from hour to hour (the floor took 0.18 s of CPU on 2026-11-30,
0.31-0.59 s on 2026-12-03), so a figure is only comparable with another at the same floor.

    python bench/book_scale.py [--sizes 10,10000,100000] [--list-tasks 100000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mcptask.state.taskbook import TaskBook  # noqa: E402

ENDPOINTS = 20


def cpu() -> float:
    return time.process_time()


def median_cpu(fn: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = cpu()
        fn()
        times.append(cpu() - start)
    return statistics.median(times)


def child_cpu(cmd: list[str], env: dict[str, str], rounds: int = 7) -> float:
    times = []
    for _ in range(rounds):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, env=env, capture_output=True, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return statistics.median(times)


def url(i: int) -> str:
    return f"http://127.0.0.1:{9000 + i % ENDPOINTS}/mcp"


def task_id(i: int) -> str:
    return f"{i:08x}-{(i * 2654435761) % 2**32:08x}-task"


def fill(book: TaskBook, n: int) -> None:
    """n tasks over ENDPOINTS endpoints (a third unfinished; a result kept for some)."""
    by_endpoint: dict[str, list[int]] = {}
    for i in range(n):
        by_endpoint.setdefault(url(i), []).append(i)
    for endpoint, ids in by_endpoint.items():
        for chunk in range(0, len(ids), 2000):
            part = ids[chunk : chunk + 2000]
            book.record_many(
                endpoint,
                {
                    task_id(i): {
                        "status": "completed" if i % 3 else "working",
                        "statusMessage": "done" if i % 3 else "half way",
                        "protocol": "mcp-2025-11-25",
                        "session": f"s-{i % 7}",
                        "pollInterval": 1000,
                        **({"result": {"n": i}} if i % 30 == 1 else {}),
                    }
                    for i in part
                },
            )


def measure(n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        state = Path(d)
        book = TaskBook(state / "tasks.db")
        started = time.monotonic()
        fill(book, n)
        filled = time.monotonic() - started
        middle = n // 2
        tid, _endpoint = task_id(middle), url(middle)
        prefix = tid[:8]

        def get_work() -> None:
            [(ep, full, _)] = book.find(tid)
            book.lookup_many(ep, [full])
            book.record_many(
                ep, {full: {"status": "completed", "statusMessage": "done", "pollInterval": 1000}}
            )
            book.events(ep, full)
            book.lookup(ep, full)

        out: dict[str, Any] = {
            "tasks": n,
            "fill_seconds": round(filled, 2),
            "db_mib": round((state / "tasks.db").stat().st_size / 2**20, 1),
            "get_book_ms": round(median_cpu(get_work, 200) * 1000, 3),
            "prefix_lookup_ms": round(median_cpu(lambda: book.find(prefix), 200) * 1000, 3),
            "complete_inprocess_ms": round(
                median_cpu(lambda: book.complete(tid[:2]), 200) * 1000, 3
            ),
            "complete_all_inprocess_ms": round(
                median_cpu(lambda: book.complete(""), 200) * 1000, 3
            ),
        }
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
        env["MCPTASK_STATE_DIR"] = str(state)
        env["MCPTASK_CONFIG"] = str(state / "none.toml")
        py = [sys.executable, "-m", "mcptask"]
        tab = {
            **env,
            "_MCPTASK_COMPLETE": "complete_bash",
            "COMP_WORDS": f"mcptask get {tid[:2]}",
            "COMP_CWORD": "2",
        }
        out["tab_process_cpu_s"] = round(child_cpu(py, tab), 3)
        out["log_process_cpu_s"] = round(child_cpu([*py, "log", tid, "-o", "json"], env), 3)
        # a 1,000-task watch's flush: every task changed / none did
        watch_ids = [task_id(i) for i in range(min(n, 1000 * ENDPOINTS)) if url(i) == url(0)][:1000]
        changed = {
            t: {
                "status": "working",
                "statusMessage": f"tick {k}",
                "_via": "poll",
                "pollInterval": 1000,
            }
            for k, t in enumerate(watch_ids)
        }
        same = {t: {**f} for t, f in changed.items()}
        start = cpu()
        book.record_many(url(0), changed, command="watch")
        out["watch_flush_changed_s"] = round(cpu() - start, 3)
        start = cpu()
        book.record_many(url(0), same, command="watch")
        out["watch_flush_unchanged_s"] = round(cpu() - start, 3)
        out["watch_flush_tasks"] = len(watch_ids)
        # the start of a watch of 1,000 ids named on the command line (no target)
        start = cpu()
        for t in watch_ids:
            book.find(t)
        book.lookup_many(url(0), watch_ids)
        out["watch_start_1000_ids_s"] = round(cpu() - start, 3)
        book.close()
        return out


def process(cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    """A whole process: its CPU seconds (user + system), peak RSS and exit code."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    return {
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "exit": os.waitstatus_to_exitcode(status),
        **({"stderr": err[-300:]} if err.strip() else {}),
    }


def measure_processes(n: int) -> dict[str, Any]:
    """`list -o ndjson` of n tasks, book empty then full; a 5,000-event pretty `log`."""
    from load_server import LoadServer

    from mcptask.model.events import EventKind, event

    out: dict[str, Any] = {"list_tasks": n}
    with tempfile.TemporaryDirectory() as d, LoadServer(duration=3600) as server:
        state = Path(d)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["MCPTASK_STATE_DIR"] = str(state)
        env["MCPTASK_CONFIG"] = str(state / "none.toml")
        py = [sys.executable, "-m", "mcptask"]
        if n:
            made = server.create(n, 3600, 1000)
            cmd = [*py, "list", "-o", "ndjson", "--url", server.url, "--session", made["session"]]
            out["list_empty_book"] = process(cmd, env)
            out["list_full_book"] = process(cmd, env)
        book = TaskBook(state / "tasks.db")
        tid = task_id(1)
        book.record_many(url(1), {tid: {"status": "working", "protocol": "mcp-2025-11-25"}})
        events = [
            event(
                tid,
                EventKind.STATUS,
                at=1.7e9 + k,
                via="poll",
                status="working",
                message=f"step {k}",
            )
            for k in range(5000)
        ]
        for chunk in range(0, len(events), 1000):
            book.add_events(url(1), events[chunk : chunk + 1000], command="watch")
        book.close()
        one = server.create(1, 3600, 1000)
        runs: dict[str, list[dict[str, Any]]] = {
            "host_floor": [],
            "log_5000_pretty": [],
            "log_5000_json": [],
        }
        cmds = {
            "host_floor": [
                sys.executable,
                str(ROOT / "bench" / "floor_get.py"),
                one["ids"][0],
                "--url",
                server.url,
                "--session",
                one["session"],
            ],
            "log_5000_pretty": [*py, "log", tid, "-o", "pretty"],
            "log_5000_json": [*py, "log", tid, "-o", "json"],
        }
        for _ in range(5):  # interleaved: drift hits each alike
            for name, cmd in cmds.items():
                runs[name].append(process(cmd, env))
        for name, got in runs.items():
            out[name] = median_run(got)
    floor = out.get("host_floor", {}).get("cpu_s")
    for v in out.values():
        if isinstance(v, dict) and floor:
            v["x_floor"] = round(v["cpu_s"] / floor, 2)
    return out


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median CPU (its RSS and exit with it); a failed run is reported instead."""
    failed = [r for r in runs if r["exit"] != 0]
    if failed:
        return failed[0]
    return sorted(runs, key=lambda r: r["cpu_s"])[len(runs) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10,10000,100000")
    parser.add_argument("--list-tasks", type=int, default=100_000, help="0: no `list` figure")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(int(s)) for s in args.sizes.split(",") if s.strip()]
    procs = measure_processes(args.list_tasks)
    if args.json:
        print(json.dumps({"book": rows, "processes": procs}, indent=2))
        return
    if rows:
        keys = [k for k in rows[0] if k != "tasks"]
        print(f"{'tasks':>28}" + "".join(f"{r['tasks']:>12,}" for r in rows))
        for k in keys:
            print(f"{k:>28}" + "".join(f"{r[k]:>12}" for r in rows))
    for k, v in procs.items():
        if isinstance(v, dict):
            extra = f"  {v['stderr']!r}" if "stderr" in v else ""
            times = f" ({v['x_floor']}x the floor)" if "x_floor" in v else ""
            print(
                f"{k:>28}  CPU {v['cpu_s']:.3f} s{times}, peak RSS {v['peak_rss_mib']} MiB, "
                f"exit {v['exit']}{extra}"
            )
        else:
            print(f"{k:>28}  {v:,}")


if __name__ == "__main__":
    main()
