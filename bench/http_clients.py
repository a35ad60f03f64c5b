"""CPU per `tasks/get` for each HTTP client mcptask could poll with, against the load server.

Each client sends `--requests` MCP `tasks/get` requests (JSON body out, JSON answer parsed) with
`--concurrency` of them in flight, and the figure is this process's CPU time (user + system)
per request; the server runs in another process. Clients that are not installed are skipped.

- `httpx-async`: `httpx.AsyncClient`, default transport (httpcore + anyio), `sniffio` not
  installed (as in mcptask's venv today): httpcore tries `import sniffio` on every request and
  each failed import searches `sys.path` again;
- `httpx-async+sniffio`: the same with `sniffio` installed;
- `httpx-aiohttp`: `httpx.AsyncClient(transport=httpx_aiohttp.AiohttpTransport())`;
- `aiohttp`: `aiohttp.ClientSession` directly;
- `httpx-sync`: `httpx.Client`, one request at a time (concurrency ignored);
- `raw-asyncio`: keep-alive HTTP/1.1 over `asyncio` streams with no HTTP library: a floor.

    python bench/http_clients.py [--requests 3000] [--concurrency 1,16,64] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_server import LoadServer

Json = dict[str, Any]


def body(task_id: str, n: int) -> bytes:
    msg = {"jsonrpc": "2.0", "id": n, "method": "tasks/get", "params": {"taskId": task_id}}
    return json.dumps(msg, separators=(",", ":")).encode()


HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


async def drive(
    one: Callable[[str, int], Awaitable[None]], ids: list[str], total: int, concurrency: int
) -> None:
    counter = itertools.count()

    async def worker(k: int) -> None:
        tid = ids[k % len(ids)]
        while (n := next(counter)) < total:
            await one(tid, n)

    await asyncio.gather(*(worker(k) for k in range(concurrency)))


async def run_httpx(url: str, sid: str, ids: list[str], total: int, conc: int, aio: bool) -> None:
    import httpx

    # a transport given: the environment's proxies are not consulted (the server is local)
    kwargs: dict[str, Any] = {"transport": httpx.AsyncHTTPTransport(verify=False)}
    if aio:
        from httpx_aiohttp import AiohttpTransport

        kwargs["transport"] = AiohttpTransport()
    headers = {**HEADERS, "Mcp-Session-Id": sid}
    async with httpx.AsyncClient(**kwargs) as client:

        async def one(tid: str, n: int) -> None:
            r = await client.post(url, content=body(tid, n), headers=headers)
            json.loads(r.content)

        await drive(one, ids, 20, 1)  # warm-up
        await drive(one, ids, total, conc)


async def run_aiohttp(url: str, sid: str, ids: list[str], total: int, conc: int) -> None:
    import aiohttp

    headers = {**HEADERS, "Mcp-Session-Id": sid}
    async with aiohttp.ClientSession() as session:

        async def one(tid: str, n: int) -> None:
            async with session.post(url, data=body(tid, n), headers=headers) as r:
                json.loads(await r.read())

        await drive(one, ids, 20, 1)
        await drive(one, ids, total, conc)


async def run_raw(url: str, sid: str, ids: list[str], total: int, conc: int) -> None:
    host, port = url.removeprefix("http://").split("/")[0].split(":")
    path = "/" + url.removeprefix("http://").split("/", 1)[1]

    async def worker_conn() -> Callable[[str, int], Awaitable[None]]:
        reader, writer = await asyncio.open_connection(host, int(port))

        async def one(tid: str, n: int) -> None:
            data = body(tid, n)
            head = f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n" + "".join(
                f"{k}: {v}\r\n" for k, v in {**HEADERS, "Mcp-Session-Id": sid}.items()
            )
            writer.write(f"{head}Content-Length: {len(data)}\r\n\r\n".encode() + data)
            raw = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in raw.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            json.loads(await reader.readexactly(length))

        return one

    conns = [await worker_conn() for _ in range(conc)]
    counter = itertools.count()

    async def worker(k: int) -> None:
        tid = ids[k % len(ids)]
        while (n := next(counter)) < total:
            await conns[k](tid, n)

    await asyncio.gather(*(worker(k) for k in range(conc)))


def run_sync(url: str, sid: str, ids: list[str], total: int) -> None:
    import httpx

    headers = {**HEADERS, "Mcp-Session-Id": sid}
    with httpx.Client(transport=httpx.HTTPTransport(verify=False)) as client:
        for n in range(total):
            r = client.post(url, content=body(ids[n % len(ids)], n), headers=headers)
            json.loads(r.content)


class _HideSniffio:
    """Makes `import sniffio` fail the way it does where it is not installed: after searching
    every `sys.path` entry (httpcore tries that import for every request)."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> None:
        if name == "sniffio":
            import importlib.machinery

            importlib.machinery.PathFinder.find_spec("sniffio_not_installed", path)
            raise ModuleNotFoundError("No module named 'sniffio'", name="sniffio")


def hide_sniffio() -> None:
    sys.modules.pop("sniffio", None)
    sys.meta_path.insert(0, _HideSniffio())


def child(args: argparse.Namespace) -> None:
    """One measurement in a fresh process: prints {"cpuPerRequestMs", "wallS"}."""
    if args.client == "httpx-async":
        hide_sniffio()
    ids = args.ids.split(",")
    t0, c0 = time.perf_counter(), time.process_time()
    # the warm-up is inside each runner; measure it out by timing a second pass instead
    total, conc = args.requests, int(args.concurrency)
    if args.client in ("httpx-async", "httpx-async+sniffio", "httpx-aiohttp"):
        aio = args.client == "httpx-aiohttp"
        asyncio.run(run_httpx(args.url, args.session, ids, 50, 1, aio))
        t0, c0 = time.perf_counter(), time.process_time()
        asyncio.run(run_httpx(args.url, args.session, ids, total, conc, aio))
    elif args.client == "aiohttp":
        asyncio.run(run_aiohttp(args.url, args.session, ids, 50, 1))
        t0, c0 = time.perf_counter(), time.process_time()
        asyncio.run(run_aiohttp(args.url, args.session, ids, total, conc))
    elif args.client == "httpx-sync":
        run_sync(args.url, args.session, ids, 50)
        t0, c0 = time.perf_counter(), time.process_time()
        run_sync(args.url, args.session, ids, total)
    elif args.client == "raw-asyncio":
        asyncio.run(run_raw(args.url, args.session, ids, 50, 1))
        t0, c0 = time.perf_counter(), time.process_time()
        asyncio.run(run_raw(args.url, args.session, ids, total, conc))
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    print(json.dumps({"cpuPerRequestMs": cpu / total * 1000, "wallS": wall}))


CLIENTS = {
    "httpx-async": ["httpx"],
    "httpx-async+sniffio": ["httpx", "sniffio"],
    "httpx-aiohttp": ["httpx", "httpx_aiohttp"],
    "aiohttp": ["aiohttp"],
    "httpx-sync": ["httpx"],
    "raw-asyncio": [],
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--requests", type=int, default=3000)
    p.add_argument("--concurrency", default="1,16,64")
    p.add_argument("--clients", default=",".join(CLIENTS))
    p.add_argument("--json", action="store_true")
    p.add_argument("--client", help=argparse.SUPPRESS)
    p.add_argument("--url", help=argparse.SUPPRESS)
    p.add_argument("--session", help=argparse.SUPPRESS)
    p.add_argument("--ids", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.client:
        child(args)
        return 0
    levels = [int(c) for c in args.concurrency.split(",")]
    results: list[Json] = []
    with LoadServer(duration=3600) as server:
        made = server.create(max(levels), 3600, 1000)
        for name in args.clients.split(","):
            missing = [m for m in CLIENTS[name] if importlib.util.find_spec(m) is None]
            if missing:
                results.append({"client": name, "skipped": f"not installed: {', '.join(missing)}"})
                continue
            for conc in [1] if name == "httpx-sync" else levels:
                cmd = [sys.executable, __file__, "--client", name, "--url", server.url]
                cmd += ["--session", made["session"], "--ids", ",".join(made["ids"])]
                cmd += ["--requests", str(args.requests), "--concurrency", str(conc)]
                out = subprocess.run(cmd, capture_output=True, text=True, check=False)
                if out.returncode != 0:
                    results.append(
                        {"client": name, "concurrency": conc, "error": out.stderr[-300:]}
                    )
                    continue
                r = json.loads(out.stdout)
                results.append(
                    {
                        "client": name,
                        "concurrency": conc,
                        "cpuPerRequestMs": round(r["cpuPerRequestMs"], 3),
                        "requestsPerSecond": round(args.requests / r["wallS"]),
                    }
                )
    if args.json:
        print(json.dumps({"cores": os.cpu_count(), "results": results}, indent=2))
        return 0
    print(f"CPU per MCP tasks/get, {args.requests} requests each ({os.cpu_count()} cores)")
    print(f"{'client':22} {'in flight':>9} {'CPU ms/req':>10} {'req/s':>7}")
    for r in results:
        if "skipped" in r or "error" in r:
            print(f"{r['client']:22} {r.get('skipped') or 'error: ' + r['error'][-80:]}")
            continue
        print(
            f"{r['client']:22} {r['concurrency']:>9} {r['cpuPerRequestMs']:>10.3f} "
            f"{r['requestsPerSecond']:>7}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
