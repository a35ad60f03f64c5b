"""A2A push notification configs over the HTTP+JSON binding (`A2ARest`), one layer at a time
over `httpx.MockTransport`: each method on its resource, the answers read as on JSON-RPC, the
binding's errors as the ones JSON-RPC would give."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mcptask.errors import NotApplicable, PushUrlRefused, TaskNotFound
from mcptask.model.refs import TaskRef
from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.rpc import RpcClient

BASE = "http://agent.test/rest"
CONFIGS = f"{BASE}/tasks/a%2Fb/pushNotificationConfigs"


def _rest(handler: Any) -> Any:
    from mcptask.protocols.a2a_rest import A2ARest

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return A2ARest(RpcClient(HttpTransport(HttpOptions(url=BASE), client)), BASE)


def _error(code: int, status: str, reason: str, message: str) -> dict[str, Any]:
    info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}
    return {"error": {"code": code, "status": status, "message": message, "details": [info]}}


def test_push_configs_go_to_their_resources() -> None:
    seen: list[tuple[str, str, Any, str | None]] = []
    config = {
        "taskId": "a/b",
        "id": "c 1",
        "url": "https://hook.test/h",
        "token": "tok",
        "authentication": {"scheme": "Bearer", "credentials": "cred"},
    }

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("agent-card.json"):
            return httpx.Response(404)
        body = json.loads(request.content) if request.content else None
        seen.append((request.method, str(request.url), body, request.headers.get("a2a-version")))
        if request.method == "DELETE":
            return httpx.Response(204)
        if request.method == "GET" and request.url.path.endswith("pushNotificationConfigs"):
            return httpx.Response(200, json={"configs": [config]})
        return httpx.Response(200, json=config)

    proto = _rest(handler)
    assert proto.can_push_configs
    ref = TaskRef("a/b")
    made = asyncio.run(
        proto.push_set(
            ref,
            "https://hook.test/h",
            token="tok",
            auth_scheme="Bearer",
            credentials="cred",
            config_id="c 1",
        )
    )
    got = asyncio.run(proto.push_get(ref, "c 1"))
    listed = asyncio.run(proto.push_list(ref))
    asyncio.run(proto.push_delete(ref, "c 1"))
    assert made == got == listed[0]
    assert (made.task_id, made.id, made.url, made.token) == ("a/b", "c 1", config["url"], "tok")
    assert (made.auth_scheme, made.credentials) == ("Bearer", "cred")
    assert seen == [
        ("POST", CONFIGS, config, "1.0"),  # the JSON-RPC 1.0 params: TaskPushNotificationConfig
        ("GET", f"{CONFIGS}/c%201", None, "1.0"),
        ("GET", CONFIGS, None, "1.0"),
        ("DELETE", f"{CONFIGS}/c%201", None, "1.0"),
    ]


def test_an_empty_config_list_and_a_delete_answered_with_an_empty_object() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={})

    proto = _rest(handler)
    assert asyncio.run(proto.push_list(TaskRef("t"))) == []  # proto-JSON omits an empty list
    assert asyncio.run(proto.push_delete(TaskRef("t"), "c")) is None


@pytest.mark.parametrize(
    ("status", "body", "error", "words"),
    [
        (
            400,
            _error(400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", "no push"),
            NotApplicable,
            "does not support push notifications (-32003 no push)",
        ),
        (
            400,
            _error(400, "INVALID_ARGUMENT", "INVALID_PARAMS", "Invalid push notification URL"),
            PushUrlRefused,  # a type (commands/_webhook.py stops on it), never the words
            "refused the push URL (Invalid push notification URL)",
        ),
        (
            404,
            _error(404, "NOT_FOUND", "TASK_NOT_FOUND", "Task not found"),
            TaskNotFound,
            "task t, or its push config: Task not found",
        ),
    ],
)
def test_push_refusals_read_as_on_json_rpc(
    status: int, body: dict[str, Any], error: type[Exception], words: str
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json=body)

    proto = _rest(handler)
    call = (
        proto.push_set(TaskRef("t"), "https://hook.test/h")
        if error is not TaskNotFound
        else proto.push_get(TaskRef("t"), "c")
    )
    with pytest.raises(error) as caught:
        asyncio.run(call)
    assert words in str(caught.value)


@pytest.mark.parametrize("status", [404, 405, 501])
def test_a_binding_served_without_push_routes_does_not_push(status: int) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("agent-card.json"):
            return httpx.Response(404)
        return httpx.Response(status, text="Not Found")

    proto = _rest(handler)
    with pytest.raises(NotApplicable) as caught:
        asyncio.run(proto.push_list(TaskRef("t1")))
    text = str(caught.value)
    assert "does not serve push notification configs over HTTP+JSON" in text
    assert f"GET /rest/tasks/t1/pushNotificationConfigs answered HTTP {status}" in text


def test_other_statuses_stay_what_they_are() -> None:
    from mcptask.errors import HttpStatusError

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="<html>bad gateway</html>")

    with pytest.raises(HttpStatusError):
        asyncio.run(_rest(handler).push_get(TaskRef("t1"), "c"))
