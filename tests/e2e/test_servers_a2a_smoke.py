# ruff: noqa: F811  (pytest fixtures imported from servers.a2a_plugin are test parameters)
"""Smoke tests of the real A2A test servers, with raw httpx (no mcptask code).

They check that the fixtures in ``servers/a2a_plugin.py`` start servers that behave as
``servers/A2A_README.md`` documents.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx

from servers.a2a_plugin import (  # noqa: F401
    A2AServerProcess,
    AgnoServerProcess,
    a2a_server,
    agno_secure_server,
    agno_server,
)

V1 = {"A2A-Version": "1.0"}
TERMINAL_V1 = {
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
}


def _rpc(
    url: str, method: str, params: dict[str, Any], headers: dict[str, str] | None = None
) -> Any:
    body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}
    r = httpx.post(url, json=body, headers=headers or {}, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def _v1_message(
    text: str, task_id: str | None = None, context_id: str | None = None
) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id:
        msg["taskId"] = task_id
    if context_id:
        msg["contextId"] = context_id
    return msg


def _send_v1(server: A2AServerProcess, text: str, **ids: str) -> dict[str, Any]:
    answer = _rpc(
        server.url,
        "SendMessage",
        {"message": _v1_message(text, **ids), "configuration": {"returnImmediately": True}},
        V1,
    )
    assert "result" in answer, answer
    task: dict[str, Any] = answer["result"]["task"]
    assert task["id"]
    return task


def _poll_v1(
    server: A2AServerProcess, task_id: str, until: set[str], timeout: float = 30.0
) -> tuple[dict[str, Any], list[str]]:
    """GetTask until the state is in ``until``; return the task and the states seen."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while True:
        answer = _rpc(server.url, "GetTask", {"id": task_id}, V1)
        task: dict[str, Any] = answer["result"]
        state = task["status"]["state"]
        if not seen or seen[-1] != state:
            seen.append(state)
        if state in until:
            return task, seen
        assert time.monotonic() < deadline, f"task {task_id} stuck in {state}: {seen}"
        time.sleep(0.25)


def _texts(parts: list[dict[str, Any]]) -> list[str]:
    return [p["text"] for p in parts if "text" in p]


# --------------------------------------------------------------------- a2a-sdk 1.3.0


def test_a2a_card(a2a_server: A2AServerProcess) -> None:
    r = httpx.get(a2a_server.card_url, timeout=10)
    assert r.status_code == 200
    card = r.json()
    interfaces = {
        (i["protocolBinding"], i["protocolVersion"]): i["url"] for i in card["supportedInterfaces"]
    }
    assert interfaces[("JSONRPC", "1.0")] == a2a_server.url
    assert interfaces[("HTTP+JSON", "1.0")] == a2a_server.rest_url
    assert card["capabilities"]["streaming"] is True
    # 0.3 fields the SDK adds for old clients
    assert card["protocolVersion"] == "0.3"
    assert card["url"] == a2a_server.url


def test_a2a_send_poll_complete_and_v03_get(a2a_server: A2AServerProcess) -> None:
    task = _send_v1(a2a_server, "hello smoke")
    assert task["status"]["state"] in {"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"}
    done, seen = _poll_v1(a2a_server, task["id"], TERMINAL_V1)
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", seen
    assert "TASK_STATE_WORKING" in seen
    assert _texts(done["artifacts"][0]["parts"]) == ["echo: hello smoke"]
    steps = [t for m in done["history"] if m["role"] == "ROLE_AGENT" for t in _texts(m["parts"])]
    assert steps == ["step 1/3", "step 2/3", "step 3/3"]

    # 0.3 JSON-RPC on the same endpoint, without the version header
    old = _rpc(a2a_server.url, "tasks/get", {"id": task["id"]})
    assert old["result"]["kind"] == "task"
    assert old["result"]["status"]["state"] == "completed"
    assert old["result"]["artifacts"][0]["parts"] == [{"kind": "text", "text": "echo: hello smoke"}]


def test_a2a_subscribe_sse(a2a_server: A2AServerProcess) -> None:
    task = _send_v1(a2a_server, "stream smoke")
    events: list[dict[str, Any]] = []
    body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task["id"]}}
    headers = {**V1, "Accept": "text/event-stream"}
    with httpx.stream("POST", a2a_server.url, json=body, headers=headers, timeout=30) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:])["result"])
    kinds = [next(iter(e)) for e in events]
    assert kinds[0] == "task"
    assert "statusUpdate" in kinds and "artifactUpdate" in kinds
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    artifact = next(e["artifactUpdate"]["artifact"] for e in events if "artifactUpdate" in e)
    assert _texts(artifact["parts"]) == ["echo: stream smoke"]


def test_a2a_input_required_then_answer(a2a_server: A2AServerProcess) -> None:
    task = _send_v1(a2a_server, "ask something")
    waiting, _ = _poll_v1(a2a_server, task["id"], {"TASK_STATE_INPUT_REQUIRED", *TERMINAL_V1})
    assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert _texts(waiting["status"]["message"]["parts"]) == ["What is your answer?"]
    _send_v1(a2a_server, "42", task_id=task["id"], context_id=task["contextId"])
    done, _ = _poll_v1(a2a_server, task["id"], TERMINAL_V1)
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert _texts(done["artifacts"][0]["parts"]) == ["answer: 42"]


def test_a2a_fail(a2a_server: A2AServerProcess) -> None:
    task = _send_v1(a2a_server, "fail now")
    done, _ = _poll_v1(a2a_server, task["id"], TERMINAL_V1)
    assert done["status"]["state"] == "TASK_STATE_FAILED"
    assert _texts(done["status"]["message"]["parts"]) == ["failed on purpose: fail now"]


def test_a2a_cancel(a2a_server: A2AServerProcess) -> None:
    task = _send_v1(a2a_server, "slow cancel me")
    _poll_v1(a2a_server, task["id"], {"TASK_STATE_WORKING"})
    answer = _rpc(a2a_server.url, "CancelTask", {"id": task["id"]}, V1)
    assert answer["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    again = _rpc(a2a_server.url, "CancelTask", {"id": task["id"]}, V1)
    assert again["error"]["code"] == -32002


def test_a2a_unknown_task(a2a_server: A2AServerProcess) -> None:
    new = _rpc(a2a_server.url, "GetTask", {"id": "no-such-task"}, V1)
    assert new["error"]["code"] == -32001
    old = _rpc(a2a_server.url, "tasks/get", {"id": "no-such-task"})
    assert old["error"]["code"] == -32001
    r = httpx.get(f"{a2a_server.rest_url}/tasks/no-such-task", headers=V1, timeout=10)
    assert r.status_code == 404


# --------------------------------------------------------------------- Agno AgentOS 3.1.10


def _agno_post(
    server: AgnoServerProcess, op: str, method: str, params: dict[str, Any], headers: dict[str, str]
) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}
    return httpx.post(f"{server.url}/v1/{op}", json=body, headers=headers, timeout=30)


def _agno_run(server: AgnoServerProcess, text: str, headers: dict[str, str]) -> dict[str, Any]:
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    }
    r = _agno_post(
        server,
        "message:send",
        "message/send",
        {"message": message, "configuration": {"blocking": False}},
        headers,
    )
    assert r.status_code == 202, r.text
    task: dict[str, Any] = r.json()["result"]
    assert task["status"]["state"] == "submitted"
    assert task["contextId"]

    deadline = time.monotonic() + 30
    while True:
        g = _agno_post(
            server,
            "tasks:get",
            "tasks/get",
            {"id": task["id"], "contextId": task["contextId"]},
            headers,
        )
        assert g.status_code == 200, g.text
        polled: dict[str, Any] = g.json()["result"]
        if polled["status"]["state"] in {"completed", "failed", "canceled"}:
            return polled
        assert time.monotonic() < deadline, polled
        time.sleep(0.3)


def test_agno_send_and_poll(agno_server: AgnoServerProcess) -> None:
    done = _agno_run(agno_server, "hello agno", agno_server.headers)
    assert done["status"]["state"] == "completed"
    texts = [t for m in done["history"] for t in _texts(m["parts"])]
    assert "echo: hello agno" in texts


def test_agno_unknown_task_is_404(agno_server: AgnoServerProcess) -> None:
    r = _agno_post(agno_server, "tasks:get", "tasks/get", {"id": "nope", "contextId": "nope"}, {})
    assert r.status_code == 404
    assert r.json() == {"detail": "Task not found"}


def test_agno_secure(agno_secure_server: AgnoServerProcess) -> None:
    assert agno_secure_server.security_key == "test-key-123"
    params = {
        "message": {"messageId": "m1", "role": "user", "parts": [{"kind": "text", "text": "x"}]}
    }
    r = _agno_post(agno_secure_server, "message:send", "message/send", params, {})
    assert r.status_code == 401
    assert r.json() == {"detail": "Authorization header required"}
    r = _agno_post(
        agno_secure_server,
        "message:send",
        "message/send",
        params,
        {"Authorization": "Bearer wrong"},
    )
    assert r.status_code == 401
    done = _agno_run(agno_secure_server, "secure hello", {"Authorization": "Bearer test-key-123"})
    texts = [t for m in done["history"] for t in _texts(m["parts"])]
    assert "echo: secure hello" in texts


def test_agno_cancel(agno_server: AgnoServerProcess) -> None:
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "user",
        "parts": [{"kind": "text", "text": "slow"}],
    }
    r = _agno_post(
        agno_server,
        "message:send",
        "message/send",
        {"message": message, "configuration": {"blocking": False}},
        {},
    )
    assert r.status_code == 202, r.text
    task = r.json()["result"]
    ids = {"id": task["id"], "contextId": task["contextId"]}
    time.sleep(0.5)
    c = _agno_post(agno_server, "tasks:cancel", "tasks/cancel", ids, {})
    assert c.status_code == 200
    assert c.json()["result"]["status"]["state"] == "canceled"
    deadline = time.monotonic() + 10
    while True:
        polled = _agno_post(agno_server, "tasks:get", "tasks/get", ids, {}).json()["result"]
        if polled["status"]["state"] == "canceled":
            break
        assert time.monotonic() < deadline, polled
        time.sleep(0.3)
