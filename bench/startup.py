"""Start-up cost: `mcptask get`, `--version`, `--help` and TAB completion against the least
possible get.

The floor is `bench/floor_get.py` (a Typer app, one httpx request, one pydantic model, JSON out)
run by the same interpreter as the `mcptask` console script. Against the load server, with one
task and its session, each round runs these in a shuffled order (interleaved, so drift and noise
hit all of them alike):

    python bench/floor_get.py <id> --url <url> --session <sid>
    mcptask get <id> --url <url> --session <sid> -o json
    mcptask get ... with MCPTASK_TOKEN set                     (get-token)
    mcptask get ... with OAuth credentials stored in the file  (get-stored; compare: get-token)
    mcptask --version
    mcptask --help
    mcptask get --help                                         (help-get)
    TAB after `mcptask get ` with a task book of --book tasks  (complete)

mcptask runs with a private `MCPTASK_STATE_DIR` (warm-up runs first, so the endpoint's protocol
is remembered as for a returning user and byte-code is compiled; `PYTHONDONTWRITEBYTECODE` is
unset). Figures: median wall and CPU seconds, and ratios to the floor's median (targets from
issue #8: get <= 1.0x, --version and --help < 0.5x), the median of the per-round ratios, and
the ratio of CPU medians (steadier than wall time when other work shares the machine).

    python bench/startup.py [--rounds 30] [--mcptask PATH] [--python PATH] [--importtime] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_server import LoadServer

HERE = Path(__file__).resolve().parent
Json = dict[str, Any]
TARGETS = {
    "get": "<= 1.0",
    "get-stored": "<= 1.05 x get-token",
    "version": "< 0.5",
    "help": "<= 0.4",
    "help-get": "<= 0.4",
    "complete": "<= 0.3",
}


def default_mcptask() -> str:
    here = Path(sys.executable).parent / "mcptask"
    return str(here) if here.exists() else "mcptask"


def interpreter_of(script: str) -> str:
    """The Python a console script runs with (its shebang), else this one."""
    try:
        with open(script, "rb") as f:
            first = f.readline().decode("utf-8", "replace").strip()
    except OSError:
        return sys.executable
    if first.startswith("#!") and "python" in first:
        return first[2:].strip().split()[0]
    return sys.executable


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int, bytes]:
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.stdout.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode, out


def importtime(cmd: list[str], env: dict[str, str], top: int = 15) -> list[tuple[str, float]]:
    """The imports with the largest cumulative time (-X importtime) for one run of `cmd`."""
    env = {**env, "PYTHONPROFILEIMPORTTIME": "1"}
    err = subprocess.run(cmd, env=env, capture_output=True, check=False).stderr.decode()
    rows: list[tuple[int, str, float]] = []
    for line in err.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if not line.startswith("import time:") or len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        depth = len(parts[2]) - len(parts[2].lstrip())
        rows.append((depth, parts[2].strip(), int(parts[1]) / 1e6))
    if not rows:
        return []
    outer = min(d for d, _, _ in rows)
    return sorted(((n, s) for d, n, s in rows if d == outer), key=lambda r: -r[1])[:top]


def stored_credentials_env(env: dict[str, str], url: str) -> dict[str, str]:
    """A state directory whose file store holds OAuth credentials for `url` (a token that is
    not near its expiry): `get` sends it without asking anyone."""
    from mcptask.state.endpoints import endpoint_key

    state = tempfile.mkdtemp(prefix="mcptask-bench-stored-")
    now = time.time()
    creds = {
        "server": url,
        "issuer": "http://127.0.0.1:9/",
        "tokenEndpoint": "http://127.0.0.1:9/token",
        "resource": url,
        "client": {"client_id": "bench", "auth_method": "none", "source": "registered"},
        "accessToken": "bench-stored-token",
        "tokenType": "Bearer",
        "grant": "authorization_code",
        "obtainedAt": now,
        "expiresAt": now + 30 * 24 * 3600,
        "refreshToken": "bench-refresh",
    }
    path = Path(state) / "credentials.json"
    path.write_text(json.dumps({"version": 1, "servers": {endpoint_key(url): creds}}))
    path.chmod(0o600)
    return {**env, "MCPTASK_STATE_DIR": state}


def completion_env(env: dict[str, str], tasks: int) -> dict[str, str]:
    """TAB after `mcptask get ` (bash), with a task book of `tasks` tasks on one endpoint."""
    from mcptask.state.taskbook import TaskBook

    state = tempfile.mkdtemp(prefix="mcptask-bench-book-")
    book = TaskBook(Path(state) / "tasks.json")
    url = "http://127.0.0.1:9/mcp"
    book.record_many(url, {f"{i:032x}": {"status": "working"} for i in range(tasks)})
    return {
        **env,
        "MCPTASK_STATE_DIR": state,
        "_MCPTASK_COMPLETE": "complete_bash",
        "COMP_WORDS": "mcptask get ",
        "COMP_CWORD": "2",
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--mcptask", default=default_mcptask(), help="the mcptask console script")
    p.add_argument("--python", help="the interpreter for the floor (default: mcptask's)")
    p.add_argument("--importtime", action="store_true", help="also list the slowest imports")
    p.add_argument("--seed", type=int, default=8)
    p.add_argument("--book", type=int, default=100_000, help="tasks in the book for `complete`")
    p.add_argument("--only", help="comma-separated commands to run (the floor always runs)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    python = args.python or interpreter_of(args.mcptask)
    state = tempfile.mkdtemp(prefix="mcptask-bench-state-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["MCPTASK_STATE_DIR"] = state
    env["MCPTASK_CONFIG"] = os.path.join(state, "no-config.toml")
    rng = random.Random(args.seed)
    with LoadServer(duration=3600) as server:
        made = server.create(1, 3600, 1000)
        tid, sid = made["ids"][0], made["session"]
        target = ["--url", server.url, "--session", sid]
        get = [args.mcptask, "get", tid, *target, "-o", "json"]
        commands = {
            "floor": [python, str(HERE / "floor_get.py"), tid, *target],
            "get": get,
            "get-token": get,
            "get-stored": get,
            "version": [args.mcptask, "--version"],
            "help": [args.mcptask, "--help"],
            "help-get": [args.mcptask, "get", "--help"],
            "complete": [args.mcptask],
        }
        if args.only:
            wanted = {"floor", *args.only.split(",")}
            commands = {k: v for k, v in commands.items() if k in wanted}
        envs = {name: env for name in commands}
        envs["get-token"] = {**env, "MCPTASK_TOKEN": "bench-token"}
        envs["get-stored"] = stored_credentials_env(env, server.url)
        envs["complete"] = completion_env(env, args.book)
        for name, cmd in commands.items():
            for _ in range(args.warmup):
                _, _, code, out = run_once(cmd, envs[name])
            if code != 0 or (
                name.startswith(("floor", "get")) and json.loads(out)["taskId"] != tid
            ):
                print(f"{name} failed (exit {code}): {' '.join(cmd)}", file=sys.stderr)
                return 1
            if name == "complete" and len(out.splitlines()) < 2:
                print(f"complete offered nothing: {out!r}", file=sys.stderr)
                return 1
        walls: dict[str, list[float]] = {k: [] for k in commands}
        cpus: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(args.rounds):
            order = list(commands)
            rng.shuffle(order)
            for name in order:
                wall, cpu, code, _ = run_once(commands[name], envs[name])
                if code != 0:
                    print(f"{name} failed (exit {code})", file=sys.stderr)
                    return 1
                walls[name].append(wall)
                cpus[name].append(cpu)
        imports = importtime(commands["get"], env) if args.importtime else []
    floor = statistics.median(walls["floor"])
    floor_cpu = statistics.median(cpus["floor"])
    results: Json = {"rounds": args.rounds, "cores": os.cpu_count(), "commands": {}}
    for name in commands:
        paired = [w / f for w, f in zip(walls[name], walls["floor"], strict=True)]
        results["commands"][name] = {
            "wallMedianS": round(statistics.median(walls[name]), 4),
            "cpuMedianS": round(statistics.median(cpus[name]), 4),
            "wallMinS": round(min(walls[name]), 4),
            "ratioToFloor": round(statistics.median(walls[name]) / floor, 3),
            "cpuRatioToFloor": round(statistics.median(cpus[name]) / floor_cpu, 3),
            "pairedRatioMedian": round(statistics.median(paired), 3),
            "target": TARGETS.get(name, ""),
        }
    if "get-stored" in cpus and "get-token" in cpus:
        paired = [a / b for a, b in zip(cpus["get-stored"], cpus["get-token"], strict=True)]
        results["storedOverToken"] = {
            "cpuMedianRatio": round(
                statistics.median(cpus["get-stored"]) / statistics.median(cpus["get-token"]), 3
            ),
            "pairedCpuRatioMedian": round(statistics.median(paired), 3),
            "target": "<= 1.05",
        }
    if imports:
        results["getImportsCumulativeS"] = {n: round(s, 4) for n, s in imports}
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"start-up, {args.rounds} interleaved rounds ({os.cpu_count()} cores); floor: {python}")
    print(
        f"{'command':10} {'wall med s':>10} {'CPU med s':>9} {'wall min s':>10} "
        f"{'x floor':>7} {'paired':>7} {'CPU x':>6}  target (wall x floor)"
    )
    for name, r in results["commands"].items():
        print(
            f"{name:10} {r['wallMedianS']:>10.4f} {r['cpuMedianS']:>9.4f} {r['wallMinS']:>10.4f} "
            f"{r['ratioToFloor']:>7.3f} {r['pairedRatioMedian']:>7.3f} "
            f"{r['cpuRatioToFloor']:>6.3f}  {r['target']}"
        )
    if "storedOverToken" in results:
        r = results["storedOverToken"]
        print(
            f"get-stored / get-token CPU: {r['cpuMedianRatio']:.3f} "
            f"(paired {r['pairedCpuRatioMedian']:.3f}), target {r['target']}"
        )
    if imports:
        print("mcptask get: slowest top-level imports (cumulative s)")
        for n, s in imports:
            print(f"  {n:30} {s:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
