"""Time and peak memory of mcptask against the hostile answers of issue 27 (measured, not
asserted): a triple-gzip answer that decodes to 1 GiB, and `tools -o pretty` / `-o json` with
100,000 tools. Starts the scripted fault server (tests/servers/fault_server.py) on 127.0.0.1.

    .venv/bin/python bench/fault_bounds.py [--tools 100000] [--json]
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from servers.fault_server import FaultServer, base_env, encoded, gzip_bomb  # noqa: E402

MIB = 1024 * 1024


def measure(args: list[str], state: str) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (bytes) and exit status of one mcptask run."""
    started = time.monotonic()
    with open(os.devnull, "w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcptask", *args],
            env=base_env(state),
            stdout=sink,
            stderr=sink,
            stdin=subprocess.DEVNULL,
            cwd=REPO,
        )
        _, status, usage = os.wait4(proc.pid, 0)
    return time.monotonic() - started, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    p = ("-p", "mcp-2025-11-25")
    rows: list[dict[str, object]] = []
    with FaultServer() as fs, tempfile.TemporaryDirectory() as state:
        bomb = fs.url(get=[encoded(body=gzip_bomb(), layers=3)])
        tools = [
            {"name": f"tool-{i}", "description": f"tool {i}", "inputSchema": {"type": "object"}}
            for i in range(opts.tools)
        ]
        many = fs.url(tools=[{"tools": tools}])
        for what, args in (
            ("get: 236-byte gzip x3 answer (1 GiB decoded)", ["get", "t-1", "--url", bomb, *p]),
            (
                f"tools -o pretty ({opts.tools:,} tools)",
                ["tools", "--url", many, *p, "-o", "pretty"],
            ),
            (f"tools -o json ({opts.tools:,} tools)", ["tools", "--url", many, *p, "-o", "json"]),
        ):
            seconds, rss, code = measure(args, state)
            rows.append(
                {"what": what, "seconds": round(seconds, 2), "peakMiB": rss // MIB, "exit": code}
            )
    if opts.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(
                f"{row['what']:<48} {row['seconds']:>7} s {row['peakMiB']:>6} MiB"
                f"  exit {row['exit']}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
