"""A transport owns its state: its URL, session, notification handler and deadline change only
through its own methods (`move_to`, `using_session`, `notifications_to`, `set_deadline`), never
by an attribute written from a protocol, a command, the endpoint or `check`."""

from __future__ import annotations

import ast
import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcptask.check.suite import Recorder
from mcptask.protocols import mcp2026
from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.legacy_sse import LegacySseTransport
from mcptask.transports.rpc import (
    HasDeadline,
    HasNotifications,
    HasSession,
    RpcClient,
    SwitchesUrl,
)
from mcptask.transports.stdio import StdioOptions, StdioTransport

PACKAGE = Path(__file__).resolve().parents[2] / "mcptask"
#: a transport's state, changed only by its own methods
STATE = frozenset({"url", "session_id", "on_notification", "deadline"})
#: writes of those names to objects that are not transports: config entries and options
NOT_TRANSPORTS = frozenset(
    {
        "session/config.py: entry.url",
        "session/config.py: out.url",
        "commands/demo.py: ctx.options.url",
    }
)


def state_writes(root: Path) -> list[str]:
    """Every write of a transport's state outside `transports/`: an attribute in STATE stored
    or deleted (any assignment form: `=`, `+=`, annotated, unpacking, `for`, `with ... as`,
    `del`) or set with `setattr`, on anything but `self` (an object's own attribute: the demo
    server's URL, the check recorder's copy of it)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("transports/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store | ast.Del)
                and node.attr in STATE
            ):
                owner = ast.unparse(node.value)
                where = f"{rel}: {owner}.{node.attr}"
                if owner != "self" and where not in NOT_TRANSPORTS:
                    found.append(f"{rel}:{node.lineno}: {owner}.{node.attr} written")
            elif (
                isinstance(node, ast.Call)
                and ast.unparse(node.func) in ("setattr", "object.__setattr__")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in STATE
            ):
                found.append(f"{rel}:{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_nobody_outside_the_transports_writes_their_state() -> None:
    offenders = state_writes(PACKAGE)
    assert not offenders, (
        "a transport's url, session_id, on_notification and deadline change through its "
        "methods (move_to, using_session, notifications_to, set_deadline)",
        offenders,
    )


def test_the_scan_sees_each_form_of_write(tmp_path: Path) -> None:
    (tmp_path / "protocols").mkdir()
    (tmp_path / "transports").mkdir()
    (tmp_path / "protocols" / "x.py").write_text(
        "transport.url = endpoint\n"
        "self.rpc.transport.session_id = before\n"
        "t.on_notification: object = None\n"
        "a, self.recorder.deadline = 1, 2\n"
        "del transport.session_id\n"
        "setattr(transport, 'deadline', 3)\n"
        "self.url = 'own'\n"  # an object's own attribute
        "transport.urls = []\n",  # not a state name
        encoding="utf-8",
    )
    (tmp_path / "transports" / "y.py").write_text("self.router.on_notification = h\n")
    assert sorted(line.split(": ", 1)[0] for line in state_writes(tmp_path)) == [
        f"protocols/x.py:{n}" for n in range(1, 7)
    ]


# -- the methods --------------------------------------------------------------------------


def test_the_transports_have_the_capabilities() -> None:
    http = HttpTransport(HttpOptions(url="http://127.0.0.1:9/mcp"))
    stdio = StdioTransport(StdioOptions(command=["true"]))
    legacy = LegacySseTransport(http)
    assert all(isinstance(http, c) for c in (HasSession, HasDeadline, SwitchesUrl))
    assert not isinstance(http, HasNotifications)
    assert all(isinstance(stdio, c) for c in (HasSession, HasDeadline, HasNotifications))
    assert not isinstance(stdio, SwitchesUrl)  # a process has no URL to move to
    assert all(isinstance(legacy, c) for c in (HasDeadline, HasNotifications))
    for transport in (http, stdio, legacy):
        assert isinstance(transport, HasDeadline)
        transport.set_deadline(12.5)
        assert transport.deadline == 12.5
        transport.set_deadline(None)
        assert transport.deadline is None


@pytest.mark.parametrize("backlog", [True, False])
def test_notifications_to_a_handler_inside_the_block(backlog: bool) -> None:
    """The backlog first (when asked), then each as it comes; the handler cleared on exit,
    an error's included; after it, notifications are kept again."""

    def note(n: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "method": "notifications/x", "params": {"n": n}}

    async def main() -> None:
        transport = StdioTransport(StdioOptions(command=["true"]))
        transport.router.route(note(1))
        got: list[dict[str, Any]] = []
        with pytest.raises(RuntimeError), transport.notifications_to(got.append, backlog=backlog):
            assert transport.on_notification == got.append
            transport.router.route(note(2))
            raise RuntimeError
        assert transport.on_notification is None
        transport.router.route(note(3))
        assert [m["params"]["n"] for m in got] == ([1, 2] if backlog else [2])
        kept = []
        while not transport.notifications.empty():
            kept.append(transport.notifications.get_nowait()["params"]["n"])
        assert kept == ([3] if backlog else [1, 3])

    asyncio.run(main())


def _session_server(seen: list[httpx.Request]) -> httpx.MockTransport:
    """Each `initialize` hands out a new session; `server/discover` is refused with one (the
    transport keeps the last one given; the protocols send it)."""

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = json.loads(request.content)
        inits = sum(json.loads(r.content)["method"] == "initialize" for r in seen)
        sid = f"s-{inits}" if body["method"] == "initialize" else "s-refusal"
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": body["id"]}
        if body["method"] == "server/discover":
            answer["error"] = {"code": -32601, "message": "Method not found"}
        else:
            answer["result"] = {}
        return httpx.Response(200, json=answer, headers={"Mcp-Session-Id": sid})

    return httpx.MockTransport(handler)


def test_using_session_puts_the_session_before_back() -> None:
    seen: list[httpx.Request] = []

    async def main() -> None:
        client = httpx.AsyncClient(transport=_session_server(seen))
        transport = HttpTransport(HttpOptions(url="http://127.0.0.1:9/mcp"), client=client)
        rpc = RpcClient(transport)
        await rpc.request("initialize", {})
        assert transport.session_id == "s-1"
        # a detour that keeps the session: what the refusal brought is dropped (mcp2026)
        assert await mcp2026.discover(rpc) is None
        assert transport.session_id == "s-1"
        # a session of its own (`check`), through the recorder that wraps the transport
        recorder = Recorder(transport)
        with recorder.using_session(None):
            assert recorder.session_id is None
            await RpcClient(recorder).request("initialize", {})
            assert recorder.session_id == "s-2"
        assert transport.session_id == "s-1"
        with pytest.raises(RuntimeError), transport.using_session("other"):
            assert transport.session_id == "other"
            raise RuntimeError
        assert transport.session_id == "s-1"
        await client.aclose()

    asyncio.run(main())


def test_move_to_sends_to_the_new_url() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        body = json.loads(request.content)
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": {}})

    async def main() -> None:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        transport = HttpTransport(HttpOptions(url="http://127.0.0.1:9/"), client=client)
        transport.move_to("http://127.0.0.1:9/a2a/v1")
        assert transport.url == "http://127.0.0.1:9/a2a/v1"
        await RpcClient(transport).request("GetTask", {"id": "t"})
        await client.aclose()

    asyncio.run(main())
    assert seen == ["http://127.0.0.1:9/a2a/v1"]
