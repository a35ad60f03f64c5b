"""Issue 23, defect 8: the headers a protocol needs go with its own requests (merged per
request, as httpx merges a client's defaults); the transport, shared with `check`'s suites and
the other protocols probed, is never written."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import httpx

from mcptask.protocols.a2a import A2A10
from mcptask.protocols.mcp2025 import Mcp2025
from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.rpc import RpcClient

PACKAGE = Path(__file__).resolve().parents[2] / "mcptask"


def test_a_protocol_s_headers_go_with_its_requests_not_on_the_transport() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = json.loads(request.content)
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": {}})

    async def main() -> None:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        transport = HttpTransport(HttpOptions(url="http://127.0.0.1:9/a2a"), client=client)
        rpc = RpcClient(transport)
        a2a = A2A10(rpc, "http://127.0.0.1:9/a2a")
        Mcp2025(rpc, "http://127.0.0.1:9/a2a")  # another protocol on the same transport
        await a2a.rpc.request("GetTask", {"id": "t"})
        await RpcClient(transport).request("GetTask", {"id": "t"})  # e.g. `check`'s suite
        await a2a.rpc.request("GetTask", {"id": "t"}, headers={"A2A-Version": "0.3"})
        await client.aclose()

    asyncio.run(main())
    assert seen[0].headers.get("A2A-Version") == "1.0"
    assert "MCP-Protocol-Version" not in seen[0].headers
    assert "A2A-Version" not in seen[1].headers  # the transport carries no protocol's header
    assert seen[2].headers.get("A2A-Version") == "0.3"  # the caller's own wins


def test_request_ids_stay_unique_across_a_protocol_s_client() -> None:
    rpc = RpcClient(HttpTransport(HttpOptions(url="http://127.0.0.1:9/mcp")))
    proto = Mcp2025(rpc, "http://127.0.0.1:9/mcp")
    ids = [rpc.next_id(), proto.rpc.next_id(), rpc.next_id()]
    assert len(set(ids)) == 3


def test_nobody_writes_the_transport_s_headers_or_url() -> None:
    """A transport's URL moves only by its own `move_to` (the endpoint that built it, to the
    card's endpoint; A2A's `-p` with an origin or card URL, which learns the endpoint from the
    card on its first request): tests/unit/test_transport_state.py. Its headers, never."""
    pattern = re.compile(r"transport\.(headers|url)\s*(=[^=]|\[|\.update|\.clear|\.pop)")
    offenders = [
        f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}"
        for path in PACKAGE.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not offenders, offenders


def test_a_protocol_s_raw_sends_carry_its_headers() -> None:
    """A protocol that sends on the transport itself (a stream, an answer without `result`, a
    REST exchange) passes its client's headers (`rpc.merged`): the A2A version header once went
    missing from push `delete` and from the HTTP+JSON subscribe stream that way."""
    import ast

    offenders = []
    for path in (PACKAGE / "protocols").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in ("send", "event_stream", "rest"):
                continue
            if "transport" not in ast.unparse(node.func.value):
                continue
            if not any(k.arg == "headers" for k in node.keywords):
                offenders.append(f"{path.name}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert not offenders, offenders
