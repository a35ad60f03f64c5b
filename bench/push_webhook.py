"""A2A push notifications by webhook versus polling: how late `mcptask send --watch` reports
each change of a task, side by side.

Starts the suite's a2a-sdk 1.3.0 test agent with push on and streaming off
(`tests/servers/a2a_server.py --push --no-streaming`, its venv built by
`tests/servers/a2a_envs.py` if needed) on 127.0.0.1, then for each round runs

    mcptask send TEXT --watch -o ndjson --trace --url <agent> --push-receiver   (webhook)
    mcptask send TEXT --watch -o ndjson --trace --url <agent>                   (poll)

timestamping every `status` line as it arrives. The agent stamps each status it sets
(`status.timestamp`, the task's `lastUpdatedAt`) on the same clock, so lateness = line arrival -
lastUpdatedAt. Also counts the `GetTask` requests each mode made (from `--trace`).

    python bench/push_webhook.py [--rounds 5] [--step-seconds 1] [--agent sdk|js]
                                 [--mcptask PATH] [--json]

`--agent js` runs the suite's @a2a-js/sdk 1.3.0 agent (`tests/servers/a2a_js_server.cjs`)
instead.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from servers.a2a_envs import (  # noqa: E402
    A2A_JS_SERVER_SCRIPT,
    A2A_SERVER_SCRIPT,
    a2a_js_modules,
    a2a_python,
)
from servers.common import free_port  # noqa: E402


def start_agent(step: float, agent: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    if agent == "js":
        cmd = ["node", str(A2A_JS_SERVER_SCRIPT), "--port", str(port), "--no-streaming"]
        cmd += ["--step-ms", str(int(step * 1000))]
        env = {**os.environ, "A2A_JS_MODULES": str(a2a_js_modules())}
        url = base + "/a2a/jsonrpc"
    else:
        cmd = [str(a2a_python()), str(A2A_SERVER_SCRIPT), "--port", str(port), "--push"]
        cmd += ["--no-streaming", "--step-seconds", str(step)]
        env = dict(os.environ)
        url = base + "/"
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=A2A_SERVER_SCRIPT.parent,
        env=env,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/.well-known/agent-card.json", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("the agent did not start")


def instant(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def one_round(mcptask: list[str], url: str, webhook: bool, state: str) -> dict[str, Any]:
    args = [*mcptask, "send", "bench push", "--watch", "-o", "ndjson", "--trace", "--url", url]
    if webhook:
        args.append("--push-receiver")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    env["MCPTASK_STATE_DIR"] = state
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )
    assert proc.stdout is not None
    late: list[float] = []
    end_late: float | None = None
    vias: dict[str, int] = {}
    last_stamp: float | None = None
    for line in proc.stdout:
        now = time.time()
        event = json.loads(line)
        if event.get("event") == "status":
            vias[event["via"]] = vias.get(event["via"], 0) + 1
            stamp = instant(event.get("lastUpdatedAt"))
            if stamp is not None and event["status"] != "submitted":
                late.append(now - stamp)
                last_stamp = stamp
        elif event.get("event") == "end" and last_stamp is not None:
            end_late = now - last_stamp
    err = proc.stderr.read() if proc.stderr else ""
    proc.wait()
    gets = sum(1 for ln in err.splitlines() if ln.startswith(">") and '"GetTask"' in ln)
    return {"late": late, "end": end_late, "gets": gets, "via": vias, "code": proc.returncode}


def summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    late = sorted(x for r in rounds for x in r["late"])
    ends = sorted(r["end"] for r in rounds if r["end"] is not None)
    via: dict[str, int] = {}
    for r in rounds:
        for k, n in r["via"].items():
            via[k] = via.get(k, 0) + n

    def q(xs: list[float], p: float) -> float:
        return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")

    return {
        "updates": len(late),
        "lateness_ms": {
            "p50": round(1000 * q(late, 0.5)),
            "p90": round(1000 * q(late, 0.9)),
            "max": round(1000 * (late[-1] if late else float("nan"))),
        },
        "end_line_ms_p50": round(1000 * statistics.median(ends)) if ends else None,
        "gets_per_task": round(sum(r["gets"] for r in rounds) / len(rounds), 1),
        "via": via,
        "exit_codes": sorted({r["code"] for r in rounds}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--step-seconds", type=float, default=1.0)
    parser.add_argument(
        "--mcptask", help="the console script to run (default: this interpreter -m mcptask)"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--agent", choices=("sdk", "js"), default="sdk", help="a2a-sdk 1.3.0 or @a2a-js/sdk 1.3.0"
    )
    args = parser.parse_args()
    mcptask = [args.mcptask] if args.mcptask else [sys.executable, "-m", "mcptask"]
    agent, url = start_agent(args.step_seconds, args.agent)
    results: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory() as state:
            runs: dict[str, list[dict[str, Any]]] = {"webhook": [], "poll": []}
            for _ in range(args.rounds):  # interleaved: the machine's noise hits both
                for mode in ("webhook", "poll"):
                    runs[mode].append(one_round(mcptask, url, mode == "webhook", state))
            results = {mode: summary(r) for mode, r in runs.items()}
    finally:
        agent.terminate()
        agent.wait(10)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        f"{'@a2a-js/sdk' if args.agent == 'js' else 'a2a-sdk'} 1.3.0 agent, push on, "
        f"streaming off; {args.rounds} rounds of a 3-step task "
        f"({args.step_seconds:g} s a step); lateness = line arrival - the agent's timestamp"
    )
    print(
        f"{'mode':8} {'updates':>7} {'p50 ms':>7} {'p90 ms':>7} {'max ms':>7} {'end ms':>7} "
        f"{'GetTask/task':>12}  via"
    )
    for mode, s in results.items():
        lat = s["lateness_ms"]
        print(
            f"{mode:8} {s['updates']:>7} {lat['p50']:>7} {lat['p90']:>7} {lat['max']:>7} "
            f"{s['end_line_ms_p50']!s:>7} {s['gets_per_task']:>12}  {s['via']}"
        )


if __name__ == "__main__":
    main()
