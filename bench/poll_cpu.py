"""CPU per poll through mcptask's own stack, the lean way and through httpx's client.

A watch of many tasks sends `tasks/get` after `tasks/get` through `Protocol.get` ->
`RpcClient` -> `HttpTransport` in its "many" mode (`HttpOptions.many`). This runs exactly that,
in this process, against the load server (`load_server.py`, its own process), with `--inflight`
polls at a time, for MCP 2025-11-25 and 2026-07-28, in two ways, interleaved round by round:

- `lean`: as a watch sends them, on the poll pool (`transports/poll_pool.py`: requests as bytes
  made once per endpoint, answers parsed by llhttp);
- `client`: each through `httpx.AsyncClient.send` on httpx's own async pool
  (`HttpTransport._lean_off`, as after a redirect).

Each task has its W3C trace, as in a watch (every poll carries it: MCP in `params._meta`, made
once per task); `--no-trace` leaves it out (as before issue 35). It reports the median CPU
(user + system of this process) per poll. Only the client's side is
in it (the server is another process), so it is steadier than `watch_scale.py` on a busy
machine; it leaves out the scheduler and the output of a whole watch.

    python bench/poll_cpu.py [--polls 3000] [--rounds 7] [--inflight 32] [--no-trace] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_server import LoadServer

VERSIONS = ("mcp-2025-11-25", "mcp-2026-07-28")


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def measure(url: str, session: str, ids: list[str], args: argparse.Namespace) -> Any:
    from mcptask.model.refs import TaskRef
    from mcptask.protocols.mcp2025 import Mcp2025
    from mcptask.protocols.mcp2026 import Mcp2026
    from mcptask.transports.http import HttpOptions, HttpTransport
    from mcptask.transports.rpc import RpcClient

    protos: dict[str, Any] = {}
    for version in VERSIONS:
        transport = HttpTransport(HttpOptions(url=url, many=True))
        rpc = RpcClient(transport)
        if version == VERSIONS[0]:
            protos[version] = Mcp2025(rpc, url, session=session)
        else:
            protos[version] = Mcp2026(rpc, url)
    refs = [TaskRef(tid, session=session) for tid in ids]
    if not args.no_trace:
        from mcptask.protocols.trace_context import TaskTrace
        from mcptask.text.traceparent import derived_ids

        for ref in refs:
            ref.trace = TaskTrace(derived_ids(url, ref.task_id))
    sem = asyncio.Semaphore(args.inflight)

    async def one(proto: Any, ref: Any) -> None:
        async with sem:
            await proto.get(ref)

    async def batch(proto: Any, n: int) -> float:
        before = cpu()
        await asyncio.gather(*(one(proto, refs[i % len(refs)]) for i in range(n)))
        return (cpu() - before) / n

    per: dict[str, list[float]] = {f"{v} {w}": [] for v in VERSIONS for w in ("lean", "client")}
    try:
        for proto in protos.values():
            await batch(proto, args.inflight * 4)  # warm: connections, imports
        for _ in range(args.rounds):
            for version, proto in protos.items():
                for way in ("lean", "client"):
                    proto.rpc.transport._lean_off = way == "client"
                    per[f"{version} {way}"].append(await batch(proto, args.polls))
    finally:
        for proto in protos.values():
            await proto.rpc.aclose()
    return {k: round(statistics.median(v) * 1000, 4) for k, v in per.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--polls", type=int, default=3000, help="polls per round and way")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--inflight", type=int, default=32)
    p.add_argument("--tasks", type=int, default=1000)
    p.add_argument("--no-trace", action="store_true", help="polls without a trace")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    with LoadServer(duration=3600) as server:
        made = server.create(args.tasks, 3600, 1000)
        figures = asyncio.run(measure(server.url, made["session"], made["ids"], args))
    if args.json:
        print(json.dumps({"cores": os.cpu_count(), "cpuMsPerPoll": figures}, indent=2))
        return 0
    print(
        f"CPU ms per tasks/get, {args.inflight} in flight, median of {args.rounds} rounds of "
        f"{args.polls} ({os.cpu_count()} cores)"
    )
    for version in VERSIONS:
        lean, client = figures[f"{version} lean"], figures[f"{version} client"]
        print(f"  {version}: lean {lean:.3f}   through the client {client:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
