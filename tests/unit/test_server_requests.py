"""Issue 23, defect 6: one dispatcher answers the requests a server sends, for plain calls and
for `answer` alike: the same code for what mcptask does not do, the same grace for a dismissal."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from mcptask.errors import UsageError
from mcptask.protocols.server_requests import ServerRequests
from mcptask.protocols.wire import METHOD_NOT_FOUND

PACKAGE = Path(__file__).resolve().parents[2] / "mcptask"


class Answers:
    """An RpcClient that records the answers sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[Any, Any, Any, Any]] = []

    async def respond(
        self, req_id: Any, result: Any = None, error: Any = None, *, headers: Any = None
    ) -> None:
        self.sent.append((req_id, result, error, headers))


def dispatcher() -> tuple[ServerRequests, Answers, list[str]]:
    rpc, notes = Answers(), []
    requests = ServerRequests(rpc, note=notes.append, headers={"Mcp-Session-Id": "s"})  # type: ignore[arg-type]
    return requests, rpc, notes


def test_ping_unsupported_and_elicitation() -> None:
    requests, rpc, notes = dispatcher()

    async def elicit(req_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"n": params["n"]}}

    async def main() -> None:
        await requests.dispatch({"id": 1, "method": "ping"}, elicit)
        await requests.dispatch({"id": 2, "method": "sampling/createMessage"}, elicit)
        got = await requests.dispatch(
            {"id": 0, "method": "elicitation/create", "params": {"n": 3}}, elicit
        )
        assert got == {"action": "accept", "content": {"n": 3}}
        # the same request seen again (on a second stream) is answered once
        await requests.dispatch({"id": 0, "method": "elicitation/create"}, elicit)

    asyncio.run(main())
    assert rpc.sent[0] == (1, {}, None, {"Mcp-Session-Id": "s"})
    assert rpc.sent[1][2]["code"] == METHOD_NOT_FOUND
    assert rpc.sent[2][:2] == (0, {"action": "accept", "content": {"n": 3}})
    assert len(rpc.sent) == 3
    assert notes == [
        "the server sent a sampling/createMessage request, which mcptask does not support: refused"
    ]


def test_a_question_that_fails_is_dismissed_and_the_failure_goes_on() -> None:
    requests, rpc, _ = dispatcher()

    async def elicit(req_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        raise UsageError("--json: does not fit the form")

    with pytest.raises(UsageError):
        asyncio.run(requests.dispatch({"id": 7, "method": "elicitation/create"}, elicit))
    assert rpc.sent == [(7, {"action": "cancel"}, None, {"Mcp-Session-Id": "s"})]


def test_no_other_module_answers_server_requests() -> None:
    """Plain calls (`mcp_calls`) and `answer` (MCP 2025) both go through `server_requests`:
    nobody else refuses a method or answers an elicitation with a `cancel` of its own."""
    pattern = re.compile(r"\.respond\(.*(error=|\"cancel\")|\"code\": (-32601|METHOD_NOT_FOUND)")
    offenders = [
        f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}"
        for path in (PACKAGE / "protocols").glob("*.py")
        if path.name not in ("server_requests.py",)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line) and not line.strip().startswith("#")
    ]
    assert not offenders, offenders
