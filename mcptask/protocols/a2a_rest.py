"""A2A 1.0 over its HTTP+JSON binding (REST): the same operations as JSON-RPC 1.0
(`protocols.a2a`), each on its own resource. Messages, tasks, parts and stream events are the
same JSON as in JSON-RPC 1.0 (the A2A spec's one data model), so everything but the wire is
shared with `A2A10`: this module maps each method to its resource, reads the binding's errors
(an HTTP status with a `google.rpc.Status` body whose `ErrorInfo.reason` names the A2A error)
and follows a task by `POST /tasks/{id}:subscribe`.

| operation | resource |
|---|---|
| send (and answer) | `POST {base}/message:send` |
| get | `GET {base}/tasks/{id}?historyLength=N` |
| cancel | `POST {base}/tasks/{id}:cancel` |
| list | `GET {base}/tasks?pageSize=..&pageToken=..` |
| subscribe | `POST {base}/tasks/{id}:subscribe` (SSE, each event's data a StreamResponse) |
| push set | `POST {base}/tasks/{id}/pushNotificationConfigs` (the config) |
| push get | `GET {base}/tasks/{id}/pushNotificationConfigs/{configId}` |
| push list | `GET {base}/tasks/{id}/pushNotificationConfigs` -> `{configs}` |
| push delete | `DELETE {base}/tasks/{id}/pushNotificationConfigs/{configId}` (`{}` or no body) |

A push method's params are JSON-RPC 1.0's (`{taskId, id?, url, ...}`); its answers are the same
TaskPushNotificationConfig JSON, read by `A2ABase._push_config`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any, ClassVar
from urllib.parse import quote, urlencode, urlsplit

from mcptask.errors import (
    AuthError,
    HttpStatusError,
    NotApplicable,
    ProtocolError,
    RpcError,
    ServerError,
)
from mcptask.model.refs import TaskRef
from mcptask.model.task import Task
from mcptask.protocols.a2a import A2A10, REST_NAME, classify
from mcptask.protocols.trace_context import TaskTrace, trace_headers
from mcptask.protocols.wire import (
    INVALID_PARAMS,
    TASK_NOT_CANCELABLE,
    TASK_NOT_FOUND,
    UNSUPPORTED_OPERATION,
    VERSION_NOT_SUPPORTED,
)
from mcptask.text import jsonsafe
from mcptask.text.sanitize import one_line
from mcptask.text.urls import origin
from mcptask.transports.rpc import SpeaksRest

#: `ErrorInfo.reason` of the binding's errors -> the A2A error code JSON-RPC uses
REASONS = {
    "TASK_NOT_FOUND": TASK_NOT_FOUND,
    "TASK_NOT_CANCELABLE": TASK_NOT_CANCELABLE,
    "PUSH_NOTIFICATION_NOT_SUPPORTED": -32003,
    "UNSUPPORTED_OPERATION": UNSUPPORTED_OPERATION,
    "CONTENT_TYPE_NOT_SUPPORTED": -32005,
    "INVALID_AGENT_RESPONSE": -32006,
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED": -32007,
    "EXTENSION_SUPPORT_REQUIRED": -32008,
    "VERSION_NOT_SUPPORTED": VERSION_NOT_SUPPORTED,
    "INVALID_PARAMS": INVALID_PARAMS,
}


def _reason(error: dict[str, Any]) -> str | None:
    details = error.get("details")
    for item in details if isinstance(details, list) else []:
        if isinstance(item, dict) and isinstance(item.get("reason"), str):
            return str(item["reason"])
    return None


def rest_error(status: int, body: bytes, ctype: str, where: str) -> Exception:
    """A non-2xx answer of the binding as an mcptask error: a `google.rpc.Status`-shaped body
    (`{"error": {"code", "status", "message", "details": [ErrorInfo]}}`) becomes the RpcError
    JSON-RPC would have given (its A2A code from `reason`); 401/403 `AuthError`; anything else
    `HttpStatusError` with a short excerpt of the body."""
    parsed: Any = None
    try:
        parsed = jsonsafe.loads(body) if body.strip() else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    message = ""
    if isinstance(error, dict):
        message = str(error.get("message") or error.get("status") or "")
        reason = _reason(error)
        if status not in (401, 403):
            code = REASONS.get(reason or "")
            if code is None and status == 404:
                code = TASK_NOT_FOUND  # a task resource that is not there
            if code is not None:
                return RpcError(code, message, {"reason": reason}, http_status=status)
    elif isinstance(parsed, dict) and isinstance(parsed.get("detail"), str):
        message = parsed["detail"]
    elif isinstance(error, str):
        message = error
    elif body.strip() and ctype.startswith("text/"):
        message = body[:300].decode("utf-8", "replace")
    text = f": {one_line(message, 200)}" if message.strip() else ""
    if status in (401, 403):
        what = "authentication required" if status == 401 else "permission denied"
        return AuthError(f"{where} refused the request: HTTP {status} {what}{text}")
    return HttpStatusError(f"{where} answered HTTP {status}{text}", status=status)


class A2ARest(A2A10):
    """A2A 1.0 over HTTP+JSON. The URL is the binding's base (the card's `HTTP+JSON`
    interface `url`); requests carry `A2A-Version: 1.0` like JSON-RPC 1.0."""

    name: ClassVar[str] = REST_NAME
    other: ClassVar[str] = "a2a-1.0"
    binding: ClassVar[str] = "HTTP+JSON"
    #: push configs: `A2ABase`'s 1.0 methods, each on its `/tasks/{id}/pushNotificationConfigs`
    #: resource (`_resource`)
    can_push_configs: ClassVar[bool] = True

    def _url(self, path: str, query: dict[str, Any] | None = None) -> str:
        base = self.rpc.transport.url.rstrip("/")
        given = {k: v for k, v in (query or {}).items() if v is not None}
        return base + path + ("?" + urlencode(given) if given else "")

    def _transport(self) -> SpeaksRest:
        transport = self.rpc.transport
        if not isinstance(transport, SpeaksRest):
            raise ServerError("A2A HTTP+JSON needs an HTTP endpoint (--url)")
        return transport

    async def _request(
        self, method: str, params: dict[str, Any], *, trace: TaskTrace | None = None
    ) -> Any:
        return await self.exchange(method, params, trace=trace)

    async def _push_call(self, which: int, params: dict[str, Any], ref: TaskRef) -> Any:
        method = self._PUSH_METHODS["1.0"][which]
        try:
            return await self.exchange(method, params, trace=ref.trace)
        except RpcError as exc:
            raise self._push_error(exc, method, ref, which) from None
        except HttpStatusError as exc:
            if exc.status not in (404, 405, 501):
                raise
            # no A2A error, just no such route: the binding is served without push
            verb, url, _ = self._resource(method, params)
            raise NotApplicable(
                f"the agent does not serve push notification configs over HTTP+JSON "
                f"({verb} {one_line(urlsplit(url).path, 200)} answered HTTP {exc.status})"
            ) from None

    async def exchange(
        self,
        method: str,
        params: dict[str, Any],
        *,
        headers: dict[str, str] | None = None,
        trace: TaskTrace | None = None,
    ) -> Any:
        """A JSON-RPC 1.0 method and its params, on the binding's resource; its answer, or
        the error JSON-RPC would have given. `headers` replace the usual ones (`check`);
        `trace`: the task's, as headers."""
        await self._card_first()
        verb, url, body = self._resource(method, params)
        given = headers if headers is not None else self.rpc.merged(trace_headers(trace))
        response = await self._transport().rest(verb, url, body=body, headers=given)
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        where = origin(self.rpc.transport.url)
        if not response.is_success:
            error = rest_error(response.status_code, response.content, ctype, where)
            if isinstance(error, HttpStatusError) and await self._moved_by_card(error):
                return await self.exchange(method, params, headers=headers, trace=trace)
            raise error
        if verb == "DELETE" and not response.content.strip():
            return None  # 204, or 200 without a body: deleted
        try:
            return jsonsafe.loads(response.content)
        except (ValueError, UnicodeDecodeError, RecursionError):
            snippet = one_line(response.content[:200].decode("utf-8", "replace"), 80)
            raise ProtocolError(
                f"{where} answered {verb} {url} with {ctype or 'no content type'}, not JSON: "
                f"{snippet!r}"
            ) from None

    def _resource(self, method: str, params: dict[str, Any]) -> tuple[str, str, Any]:
        task_id = quote(str(params.get("id", "")), safe="")
        if method == self.m_send:
            return "POST", self._url("/message:send"), params
        if method == self.m_get:
            query = {"historyLength": params.get("historyLength")}
            return "GET", self._url(f"/tasks/{task_id}", query), None
        if method == self.m_cancel:
            return "POST", self._url(f"/tasks/{task_id}:cancel"), {}
        if method == self.m_list:
            keys = ("pageSize", "pageToken", "historyLength", "contextId", "status")
            query = {k: params.get(k) for k in (*keys, "statusTimestampAfter")}
            return "GET", self._url("/tasks", query), None
        push = self._PUSH_METHODS["1.0"]
        if method in push:
            task_id = quote(str(params.get("taskId", "")), safe="")
            configs = f"/tasks/{task_id}/pushNotificationConfigs"
            one = f"{configs}/{quote(str(params.get('id', '')), safe='')}"
            if method == push[0]:
                return "POST", self._url(configs), params
            if method == push[1]:
                return "GET", self._url(one), None
            if method == push[2]:
                query = {k: params.get(k) for k in ("pageSize", "pageToken")}
                return "GET", self._url(configs, query), None
            return "DELETE", self._url(one), None
        raise ServerError(f"mcptask does not speak {method} over A2A HTTP+JSON")

    def subscribe_url(self, task_id: str) -> str:
        return self._url(f"/tasks/{quote(task_id, safe='')}:subscribe")

    async def subscribe(self, ref: TaskRef) -> AsyncIterator[Task]:
        """`POST /tasks/{id}:subscribe`: an event stream whose events are StreamResponses (the
        task, status and artifact updates), as JSON-RPC's SubscribeToTask results. A finished
        task is refused (400 UNSUPPORTED_OPERATION): it is read once instead."""
        await self._card_first()
        url = self.subscribe_url(ref.task_id)
        current: dict[str, Any] | None = None
        stream = self._transport().event_stream(
            method="POST", url=url, body={}, headers=self.rpc.merged(trace_headers(ref.trace))
        )
        try:
            async with aclosing(stream):  # type: ignore[type-var]
                async for event in stream:
                    if event.event == "open" or not event.data.strip():
                        continue
                    try:
                        data = jsonsafe.loads(event.data)
                    except (ValueError, RecursionError):
                        raise ProtocolError(
                            f"the agent sent a stream event that is not JSON: "
                            f"{one_line(event.data, 80)!r}"
                        ) from None
                    if isinstance(data, dict) and isinstance(data.get("error"), dict):
                        raise rest_error(400, event.data.encode(), "application/json", url)
                    kind, body = classify(data)
                    if kind == "message":
                        continue
                    current, task = self.apply_event(current, kind, body)
                    yield task
                    if task.terminal:
                        return
        except (RpcError, HttpStatusError) as exc:
            status = exc.http_status if isinstance(exc, RpcError) else exc.status
            if status == 404:
                raise self._error(
                    RpcError(TASK_NOT_FOUND, "not found", http_status=404), "subscribe", ref
                ) from None
            done = await self.get(ref)
            if done.terminal:
                yield done
                return
            raise ServerError(
                f"the agent refused to stream task {ref.task_id} ({exc.message})"
            ) from None
