"""Capture the wire examples of ``A2A_README.md`` from freshly started servers.

Run from the repository root with the project venv::

    .venv/bin/python tests/servers/a2a_capture.py > /tmp/a2a_examples.md

It starts ``a2a_server.py`` and ``agno_server.py`` (open and secured) exactly as the pytest
fixtures do, drives them with raw httpx and prints every request and answer as markdown. Not a
test; re-run it when a server version changes and paste the output into the README.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from servers.a2a_envs import (
    A2A_SERVER_SCRIPT,
    AGNO_SERVER_SCRIPT,
    ENVIRONMENTS,
)
from servers.common import free_port, start_server

V1 = {"A2A-Version": "1.0"}
client = httpx.Client(timeout=60)


def out(text: str = "") -> None:
    print(text, flush=True)


def fence(obj: Any) -> None:
    out("```json")
    out(json.dumps(obj, indent=2) if not isinstance(obj, str) else obj)
    out("```")


def show(title: str, request: str, r: httpx.Response, body: Any = None) -> Any:
    out(f"##### {title}")
    out()
    out(f"`{request}`" + (f" body `{json.dumps(body)}`" if body is not None else ""))
    out()
    interesting = ("content-type", "www-authenticate")
    headers = ", ".join(f"{k}: {v}" for k, v in r.headers.items() if k in interesting)
    out(f"HTTP {r.status_code} ({headers})")
    out()
    try:
        data = r.json()
    except ValueError:
        data = r.text
    fence(data)
    out()
    return data


def rpc(url: str, title: str, method: str, params: dict[str, Any], headers: dict[str, str]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    r = client.post(url, json=body, headers=headers)
    hdr = " A2A-Version: 1.0" if headers.get("A2A-Version") else " (no A2A-Version header)"
    return show(title, f"POST {url}{hdr}", r, body)


def sse(title: str, url: str, body: Any, headers: dict[str, str]) -> None:
    out(f"##### {title}")
    out()
    hdr = " A2A-Version: 1.0" if headers.get("A2A-Version") else " (no A2A-Version header)"
    out(
        f"`POST {url}{hdr}, Accept: text/event-stream`"
        + (f" body `{json.dumps(body)}`" if body else "")
    )
    out()
    with client.stream(
        "POST", url, json=body, headers={**headers, "Accept": "text/event-stream"}
    ) as r:
        out(f"HTTP {r.status_code} (content-type: {r.headers.get('content-type')}); raw lines:")
        out()
        out("```text")
        for line in r.iter_lines():
            out(line)
        out("```")
    out()


def v1_message(text: str, **ids: str) -> dict[str, Any]:
    msg: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER"}
    msg.update(ids)
    msg["parts"] = [{"text": text}]
    return msg


def capture_a2a(base: str) -> None:
    rpc_url = base + "/"
    rest = base + "/rest"
    out("### a2a-sdk 1.3.0")
    out()
    show(
        "Agent card",
        f"GET {base}/.well-known/agent-card.json",
        client.get(f"{base}/.well-known/agent-card.json"),
    )

    def send(title: str, text: str, **ids: str) -> dict[str, Any]:
        params = {"message": v1_message(text, **ids), "configuration": {"returnImmediately": True}}
        return rpc(rpc_url, title, "SendMessage", params, V1)["result"]["task"]  # type: ignore[no-any-return]

    out("#### Normal task: SendMessage, GetTask (working, completed), 0.3 tasks/get")
    out()
    t = send("1.0 SendMessage with returnImmediately", "hello")
    time.sleep(1.5)
    rpc(rpc_url, "1.0 GetTask while working", "GetTask", {"id": t["id"]}, V1)
    time.sleep(3)
    rpc(rpc_url, "1.0 GetTask when completed (full history)", "GetTask", {"id": t["id"]}, V1)
    rpc(rpc_url, "1.0 GetTask historyLength 0", "GetTask", {"id": t["id"], "historyLength": 0}, V1)
    rpc(
        rpc_url,
        "0.3 tasks/get (same task, no header)",
        "tasks/get",
        {"id": t["id"], "historyLength": 0},
        {},
    )
    show(
        "1.0 REST GET task",
        f"GET {rest}/tasks/{t['id']}?historyLength=0 A2A-Version: 1.0",
        client.get(f"{rest}/tasks/{t['id']}", params={"historyLength": 0}, headers=V1),
    )

    old = {
        "messageId": str(uuid.uuid4()),
        "role": "user",
        "kind": "message",
        "parts": [{"kind": "text", "text": "old client"}],
    }
    rpc(
        rpc_url,
        "0.3 message/send with blocking false",
        "message/send",
        {"message": old, "configuration": {"blocking": False}},
        {},
    )
    body = {"message": v1_message("rest hi"), "configuration": {"returnImmediately": True}}
    show(
        "1.0 REST POST /message:send",
        f"POST {rest}/message:send A2A-Version: 1.0",
        client.post(f"{rest}/message:send", json=body, headers=V1),
        body,
    )

    out("#### Input required")
    out()
    t = send("1.0 SendMessage 'ask me'", "ask me")
    time.sleep(1.8)
    rpc(rpc_url, "1.0 GetTask: input-required", "GetTask", {"id": t["id"], "historyLength": 0}, V1)
    rpc(
        rpc_url,
        "0.3 tasks/get: input-required",
        "tasks/get",
        {"id": t["id"], "historyLength": 0},
        {},
    )
    send(
        "1.0 SendMessage with the answer (same taskId and contextId)",
        "42",
        taskId=t["id"],
        contextId=t["contextId"],
    )
    time.sleep(2)
    rpc(rpc_url, "1.0 GetTask after the answer", "GetTask", {"id": t["id"], "historyLength": 0}, V1)

    out("#### Failed task")
    out()
    t = send("1.0 SendMessage 'fail please'", "fail please")
    time.sleep(1.8)
    rpc(rpc_url, "1.0 GetTask: failed", "GetTask", {"id": t["id"], "historyLength": 0}, V1)
    rpc(rpc_url, "0.3 tasks/get: failed", "tasks/get", {"id": t["id"], "historyLength": 0}, {})

    out("#### Cancel")
    out()
    t = send("1.0 SendMessage 'slow one'", "slow one")
    time.sleep(1.5)
    rpc(rpc_url, "1.0 CancelTask on a running task", "CancelTask", {"id": t["id"]}, V1)
    rpc(rpc_url, "1.0 GetTask after cancel", "GetTask", {"id": t["id"], "historyLength": 0}, V1)
    rpc(rpc_url, "1.0 CancelTask again (terminal task)", "CancelTask", {"id": t["id"]}, V1)
    t = send("1.0 SendMessage 'slow two'", "slow two")
    time.sleep(1.5)
    rpc(rpc_url, "0.3 tasks/cancel on a running task", "tasks/cancel", {"id": t["id"]}, {})
    rpc(rpc_url, "0.3 tasks/cancel again (terminal task)", "tasks/cancel", {"id": t["id"]}, {})
    t = send("1.0 SendMessage 'slow three'", "slow three")
    time.sleep(1.5)
    show(
        "1.0 REST cancel running",
        f"POST {rest}/tasks/{t['id']}:cancel A2A-Version: 1.0",
        client.post(f"{rest}/tasks/{t['id']}:cancel", headers=V1, json={}),
    )
    show(
        "1.0 REST cancel again",
        f"POST {rest}/tasks/{t['id']}:cancel A2A-Version: 1.0",
        client.post(f"{rest}/tasks/{t['id']}:cancel", headers=V1, json={}),
    )
    rpc(rpc_url, "1.0 CancelTask unknown task", "CancelTask", {"id": "no-such-task"}, V1)

    out("#### ListTasks")
    out()
    first = rpc(
        rpc_url,
        "1.0 ListTasks pageSize 2, historyLength 0",
        "ListTasks",
        {"pageSize": 2, "historyLength": 0},
        V1,
    )
    rpc(
        rpc_url,
        "1.0 ListTasks next page with includeArtifacts",
        "ListTasks",
        {
            "pageSize": 2,
            "historyLength": 0,
            "includeArtifacts": True,
            "pageToken": first["result"]["nextPageToken"],
        },
        V1,
    )
    token = first["result"]["nextPageToken"]
    while True:  # walk to the last page quietly, then show it
        params = {"pageSize": 2, "historyLength": 0, "pageToken": token}
        page = client.post(
            rpc_url,
            headers=V1,
            json={"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params},
        ).json()["result"]
        if not page["nextPageToken"]:
            break
        token = page["nextPageToken"]
    rpc(rpc_url, "1.0 ListTasks last page (nextPageToken is empty)", "ListTasks", params, V1)
    show(
        "1.0 REST GET /tasks?pageSize=1&historyLength=0",
        f"GET {rest}/tasks?pageSize=1&historyLength=0 A2A-Version: 1.0",
        client.get(f"{rest}/tasks", params={"pageSize": 1, "historyLength": 0}, headers=V1),
    )

    out("#### Streams (SSE)")
    out()
    t = send("1.0 SendMessage 'stream me'", "stream me")
    sse(
        "1.0 SubscribeToTask on the running task",
        rpc_url,
        {"jsonrpc": "2.0", "id": 7, "method": "SubscribeToTask", "params": {"id": t["id"]}},
        V1,
    )
    rpc(rpc_url, "1.0 SubscribeToTask on a finished task", "SubscribeToTask", {"id": t["id"]}, V1)
    r = client.post(
        rpc_url,
        headers={},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "message/send",
            "params": {
                "message": {**old, "messageId": str(uuid.uuid4())},
                "configuration": {"blocking": False},
            },
        },
    )
    sse(
        "0.3 tasks/resubscribe on a running task",
        rpc_url,
        {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "tasks/resubscribe",
            "params": {"id": r.json()["result"]["id"]},
        },
        {},
    )
    body = {"message": v1_message("rest stream"), "configuration": {"returnImmediately": True}}
    tid = client.post(f"{rest}/message:send", json=body, headers=V1).json()["task"]["id"]
    sse(
        "1.0 REST POST /tasks/{id}:subscribe on a running task",
        f"{rest}/tasks/{tid}:subscribe",
        None,
        V1,
    )

    out("#### Errors")
    out()
    rpc(rpc_url, "1.0 GetTask unknown task", "GetTask", {"id": "no-such-task"}, V1)
    rpc(rpc_url, "0.3 tasks/get unknown task", "tasks/get", {"id": "no-such-task"}, {})
    show(
        "1.0 REST GET unknown task",
        f"GET {rest}/tasks/no-such-task A2A-Version: 1.0",
        client.get(f"{rest}/tasks/no-such-task", headers=V1),
    )
    rpc(
        rpc_url, "1.0 GetTask without the A2A-Version header", "GetTask", {"id": "no-such-task"}, {}
    )
    rpc(
        rpc_url,
        "1.0 SendMessage without the A2A-Version header",
        "SendMessage",
        {"message": v1_message("x")},
        {},
    )
    rpc(
        rpc_url,
        "0.3 message/send with A2A-Version: 1.0",
        "message/send",
        {"message": {**old, "messageId": str(uuid.uuid4())}},
        V1,
    )
    show(
        "1.0 REST GET without the A2A-Version header",
        f"GET {rest}/tasks/no-such-task",
        client.get(f"{rest}/tasks/no-such-task"),
    )
    rpc(rpc_url, "1.0 unknown method", "NoSuchMethod", {}, V1)
    rpc(rpc_url, "0.3 unknown method", "tasks/nosuch", {}, {})


def capture_agno(agent_url: str, secure_agent_url: str, secure_base: str) -> None:
    out("### Agno AgentOS 3.1.10")
    out()

    def post(
        url: str,
        title: str,
        op: str,
        method: str,
        params: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> Any:
        body = {"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}
        auth = " Authorization: Bearer ..." if headers else ""
        r = client.post(f"{url}/v1/{op}", json=body, headers=headers or {})
        return show(title, f"POST {url}/v1/{op}{auth}", r, body)

    def msg(text: str, **extra: str) -> dict[str, Any]:
        return {
            "messageId": str(uuid.uuid4()),
            "role": "user",
            **extra,
            "parts": [{"kind": "text", "text": text}],
        }

    show(
        "Agent card",
        f"GET {agent_url}/.well-known/agent-card.json",
        client.get(f"{agent_url}/.well-known/agent-card.json"),
    )
    out("#### Start and poll")
    out()
    t = post(
        agent_url,
        "message:send with blocking false",
        "message:send",
        "message/send",
        {"message": msg("hello agno"), "configuration": {"blocking": False}},
    )["result"]
    time.sleep(0.5)
    post(
        agent_url,
        "tasks:get while working",
        "tasks:get",
        "tasks/get",
        {"id": t["id"], "contextId": t["contextId"]},
    )
    time.sleep(2.5)
    post(
        agent_url,
        "tasks:get when completed",
        "tasks:get",
        "tasks/get",
        {"id": t["id"], "contextId": t["contextId"]},
    )
    post(
        agent_url,
        "tasks:get again (messageIds change on every poll)",
        "tasks:get",
        "tasks/get",
        {"id": t["id"], "contextId": t["contextId"]},
    )
    t2 = post(
        agent_url,
        "message:send with our own contextId",
        "message:send",
        "message/send",
        {
            "message": msg("with ctx", contextId="my-context-1"),
            "configuration": {"blocking": False},
        },
    )["result"]
    post(
        agent_url,
        "message:send blocking (default)",
        "message:send",
        "message/send",
        {"message": msg("blocking call")},
    )
    out("#### Cancel")
    out()
    s = post(
        agent_url,
        "message:send 'slow ...' (20 s)",
        "message:send",
        "message/send",
        {"message": msg("slow agno"), "configuration": {"blocking": False}},
    )["result"]
    time.sleep(1)
    post(
        agent_url,
        "tasks:cancel on the running task",
        "tasks:cancel",
        "tasks/cancel",
        {"id": s["id"], "contextId": s["contextId"]},
    )
    time.sleep(2)
    post(
        agent_url,
        "tasks:get after cancel",
        "tasks:get",
        "tasks/get",
        {"id": s["id"], "contextId": s["contextId"]},
    )
    post(
        agent_url,
        "tasks:cancel on a finished task (state stays completed)",
        "tasks:cancel",
        "tasks/cancel",
        {"id": t2["id"], "contextId": "my-context-1"},
    )
    post(
        agent_url,
        "tasks:get of that finished task afterwards",
        "tasks:get",
        "tasks/get",
        {"id": t2["id"], "contextId": "my-context-1"},
    )
    post(
        agent_url,
        "tasks:cancel of an unknown task",
        "tasks:cancel",
        "tasks/cancel",
        {"id": "no-such-task", "contextId": "no-such-context"},
    )
    out("#### Errors")
    out()
    post(
        agent_url,
        "tasks:get unknown task: 404",
        "tasks:get",
        "tasks/get",
        {"id": "no-such-task", "contextId": t["contextId"]},
    )
    post(
        agent_url,
        "tasks:get with a wrong contextId: 404",
        "tasks:get",
        "tasks/get",
        {"id": t["id"], "contextId": "wrong-context"},
    )
    post(agent_url, "tasks:get without contextId: 400", "tasks:get", "tasks/get", {"id": t["id"]})
    post(
        agent_url.rsplit("/", 1)[0] + "/nobody",
        "tasks:get on an unknown agent: 404",
        "tasks:get",
        "tasks/get",
        {"id": t["id"], "contextId": t["contextId"]},
    )

    out("#### Secured AgentOS (OS_SECURITY_KEY=test-key-123)")
    out()
    good = {"Authorization": "Bearer test-key-123"}
    post(
        secure_agent_url,
        "message:send without a token: 401",
        "message:send",
        "message/send",
        {"message": msg("x"), "configuration": {"blocking": False}},
    )
    r = client.post(
        f"{secure_agent_url}/v1/message:send",
        headers={"Authorization": "Bearer wrong"},
        json={
            "jsonrpc": "2.0",
            "id": "r1",
            "method": "message/send",
            "params": {"message": msg("x")},
        },
    )
    show(
        "message:send with a wrong token: 401",
        f"POST {secure_agent_url}/v1/message:send Authorization: Bearer wrong",
        r,
    )
    show(
        "agent card without a token: 401",
        f"GET {secure_agent_url}/.well-known/agent-card.json",
        client.get(f"{secure_agent_url}/.well-known/agent-card.json"),
    )
    st = post(
        secure_agent_url,
        "message:send with the token",
        "message:send",
        "message/send",
        {"message": msg("secure hi"), "configuration": {"blocking": False}},
        good,
    )["result"]
    time.sleep(2.5)
    post(
        secure_agent_url,
        "tasks:get with the token",
        "tasks:get",
        "tasks/get",
        {"id": st["id"], "contextId": st["contextId"]},
        good,
    )
    show(
        "OS root card with the token: 404",
        f"GET {secure_base}/.well-known/agent-card.json Authorization: Bearer ...",
        client.get(f"{secure_base}/.well-known/agent-card.json", headers=good),
    )


def main() -> None:
    procs = []
    try:
        port = free_port()
        a2a = start_server(
            [str(ENVIRONMENTS["a2a"]()), str(A2A_SERVER_SCRIPT), "--port", str(port)],
            port=port,
            url=f"http://127.0.0.1:{port}/",
        )
        procs.append(a2a)
        agno_py = str(ENVIRONMENTS["agno"]())
        p1, p2 = free_port(), free_port()
        env = {"OS_SECURITY_KEY": "", "AGNO_TELEMETRY": "false"}
        procs.append(
            start_server(
                [agno_py, str(AGNO_SERVER_SCRIPT), "--port", str(p1)], port=p1, url="", env=env
            )
        )
        procs.append(
            start_server(
                [
                    agno_py,
                    str(AGNO_SERVER_SCRIPT),
                    "--port",
                    str(p2),
                    "--secure-key",
                    "test-key-123",
                ],
                port=p2,
                url="",
                env=env,
            )
        )
        time.sleep(1)
        capture_a2a(f"http://127.0.0.1:{port}")
        capture_agno(
            f"http://127.0.0.1:{p1}/a2a/agents/echo",
            f"http://127.0.0.1:{p2}/a2a/agents/echo",
            f"http://127.0.0.1:{p2}",
        )
    finally:
        for p in procs:
            p.stop()


if __name__ == "__main__":
    main()
