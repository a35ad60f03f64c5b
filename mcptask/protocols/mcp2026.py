"""MCP 2026-07-28 with the tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`).

No sessions and no `initialize`: every request carries `_meta` (protocol version, client
capabilities, client info) and the headers `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`.
`tasks/get` is the only read: it carries the final `result` (completed) or `error` (failed)
inline; there is no `tasks/result` and no `tasks/list`.
"""

from __future__ import annotations

import base64
import re
import weakref
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, StrictStr, field_validator

from mcptask import __version__
from mcptask.errors import (
    ExitCode,
    HttpStatusError,
    McptaskError,
    NotApplicable,
    ProtocolError,
    RpcError,
    ServerError,
    TaskEnded,
    TaskNotFound,
    TransportError,
    UsageError,
)
from mcptask.model.inputs import Answered, InputRequest
from mcptask.model.refs import TaskRef
from mcptask.model.results import Created, TaskResult
from mcptask.model.status import normalize_status
from mcptask.model.task import Task
from mcptask.model.tools import Tool
from mcptask.protocols.base import (
    CallHooks,
    Deliver,
    Found,
    Health,
    PushFeed,
    Responder,
    TaskProtocol,
    Unrecognised,
    lenient_int,
    lenient_str,
    paged,
    parse_wire,
    tool_from_wire,
)
from mcptask.protocols.mcp_calls import (
    CANCELLED,
    CallTalk,
    elicitation_answer,
    progress_token,
)
from mcptask.protocols.server_requests import ELICIT
from mcptask.protocols.trace_context import TaskTrace, traced_meta
from mcptask.protocols.wire import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    UNSUPPORTED_VERSION,
)
from mcptask.text.sanitize import one_line
from mcptask.transports.rpc import (
    HasNotifications,
    HasSession,
    Message,
    RpcClient,
    ServerMessageHandler,
    Transport,
)

VERSION = "2026-07-28"
NAME = "mcp-2026-07-28"
#: what detection answers for MCP servers that do not do 2026-07-28 tasks
FALLBACK = "mcp-2025-11-25"
FALLBACK_VERSION = "2025-11-25"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"

#: rounds of a plain call's multi round-trip requests before mcptask gives up
MAX_ROUNDS = 10


def client_meta(*, tasks: bool = True) -> dict[str, Any]:
    """The `_meta` every request's params carry (a fresh copy: callers may change it);
    without `tasks`, the tasks extension is not declared (the server then makes no task)."""
    capabilities: dict[str, Any] = {"elicitation": {"form": {}}}
    if tasks:
        capabilities["extensions"] = {TASKS_EXTENSION: {}}
    return {
        META_VERSION: VERSION,
        META_CAPABILITIES: capabilities,
        META_CLIENT_INFO: {"name": "mcptask", "version": __version__},
    }


def with_meta(params: dict[str, Any]) -> dict[str, Any]:
    return {**params, "_meta": client_meta()}


def _traced_client_meta(trace: Mapping[str, str]) -> dict[str, Any]:
    """The client `_meta` with a task's trace beside it (made once per task)."""
    return {**client_meta(), **trace}


_SENTINEL = re.compile(r"^=\?base64\?.*\?=$", re.DOTALL)
_HEADER_SAFE = re.compile(r"^[\x20-\x7e]*$")


def header_value(value: str) -> str:
    """`Mcp-Name` value encoding (SEP-2243): printable ASCII without edge whitespace as is,
    anything else (non-ASCII, control characters, CR/LF) as `=?base64?<standard b64>?=`."""
    if _HEADER_SAFE.match(value) and value == value.strip() and not _SENTINEL.match(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


#: the headers of an answer of ours to a request the server sends on a request's stream (the
#: version; `Mcp-Method` and `Mcp-Name` name a request, not an answer)
ANSWER_HEADERS = {"MCP-Protocol-Version": VERSION}


def request_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": VERSION, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = header_value(name)
    return headers


# -- errors a person can act on --------------------------------------------------------------


def _paths(tree: Any, prefix: str = "") -> list[str]:
    """`{"extensions": {"x/tasks": {}}}` -> `["extensions.x/tasks"]`."""
    if not isinstance(tree, dict) or not tree:
        return [prefix] if prefix else []
    out: list[str] = []
    for key, sub in tree.items():
        out.extend(_paths(sub, f"{prefix}.{key}" if prefix else str(key)))
    return out


def supported_versions(exc: RpcError) -> list[str] | None:
    data = exc.data
    versions = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(versions, list):
        return None
    return [v for v in versions if isinstance(v, str)]


def unsupported_version_error(exc: RpcError) -> ServerError:
    versions = supported_versions(exc)
    if not versions:
        return ServerError(
            f"the server does not accept MCP protocol version {VERSION} "
            f"({UNSUPPORTED_VERSION}: {exc.rpc_message})"
        )
    text = f"server supports protocol versions: {', '.join(versions)}"
    error = ServerError(f"the server does not accept MCP protocol version {VERSION}; {text}")
    if FALLBACK_VERSION in versions:
        error.hint = f"try -p {FALLBACK}"
    return error


def explain(exc: RpcError, method: str) -> McptaskError | None:
    """The 2026-07-28 errors, as messages a person understands (None: keep the original)."""
    if exc.code == HEADER_MISMATCH:
        return ServerError(
            f"the server says mcptask's MCP headers do not match the request ({exc.rpc_message}); "
            "a proxy between mcptask and the server may be changing MCP-Protocol-Version, "
            "Mcp-Method or Mcp-Name"
        )
    if exc.code == MISSING_CAPABILITY:
        required = exc.data.get("requiredCapabilities") if isinstance(exc.data, dict) else None
        names = ", ".join(_paths(required)) or "not named"
        return ServerError(
            f"the server requires a client capability mcptask does not declare for {method} "
            f"({names}): {exc.rpc_message}"
        )
    if exc.code == UNSUPPORTED_VERSION:
        return unsupported_version_error(exc)
    if exc.code == METHOD_NOT_FOUND and method.startswith("tasks/"):
        return ServerError(
            f"the server has no {method} method: it does not offer the MCP tasks extension "
            f"({TASKS_EXTENSION})"
        )
    text = exc.rpc_message.lower()
    if exc.http_status == 400 and ("session" in text or "not initialized" in text):
        # a 2025-11-25 server refuses session-less requests this way
        exc.hint = f"the server seems to expect MCP {FALLBACK_VERSION} sessions; try -p {FALLBACK}"
    return None


# -- the wire task ---------------------------------------------------------------------------


class WireTask(BaseModel):
    """A task as 2026-07-28 sends it (`tools/call` with `resultType: "task"`, `tasks/get`).
    `taskId` and `status` must be strings; the rest is read leniently (a wrong type is
    dropped, the original stays in `raw`)."""

    model_config = ConfigDict(extra="allow")

    taskId: StrictStr
    status: StrictStr
    statusMessage: str | None = None
    createdAt: str | None = None
    lastUpdatedAt: str | None = None
    ttlMs: int | None = None
    pollIntervalMs: int | None = None
    inputRequests: dict[str, Any] | None = None

    @field_validator("statusMessage", "createdAt", "lastUpdatedAt", mode="before")
    @classmethod
    def _str(cls, v: Any) -> str | None:
        return lenient_str(v)

    @field_validator("ttlMs", "pollIntervalMs", mode="before")
    @classmethod
    def _int(cls, v: Any) -> int | None:
        return lenient_int(v)

    @field_validator("inputRequests", mode="before")
    @classmethod
    def _map(cls, v: Any) -> dict[str, Any] | None:
        return v if isinstance(v, dict) else None


def normalize(data: Any, *, server: str, what: str = "task") -> Task:
    wire: WireTask = parse_wire(WireTask, data, what)
    return Task(
        taskId=wire.taskId,
        status=normalize_status(wire.status),
        statusMessage=wire.statusMessage,
        createdAt=wire.createdAt,
        lastUpdatedAt=wire.lastUpdatedAt,
        ttl=wire.ttlMs,
        pollInterval=wire.pollIntervalMs,
        protocol=NAME,
        server=server,
        inputRequests=wire.inputRequests,
        raw=dict(data),
    )


def _has_outcome(task: Task) -> bool:
    return (task.status == "completed" and "result" in task.raw) or (
        task.status == "failed" and "error" in task.raw
    )


def _error_object(task: Task) -> dict[str, Any]:
    """A failed task's JSON-RPC error, as sent; read leniently when the server sent none."""
    error = task.raw.get("error")
    if isinstance(error, dict):
        return error
    if error is not None:
        return {"message": str(error)}
    return {"message": task.statusMessage or "the task failed; the server sent no error object"}


# -- push: subscriptions/listen (SEP-2575) with task ids (SEP-2663) --------------------------

LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
TASK_NOTIFICATION = "notifications/tasks"
#: a quiet listen stream is given up (and opened again) after this long; polling goes on
LISTEN_READ_TIMEOUT = 300.0
LISTEN_RETRY_MIN = 0.5
LISTEN_RETRY_MAX = 30.0
LISTEN_FAILURES = 6


class ListenFeed(PushFeed):
    """`subscriptions/listen` with `notifications.taskIds`: the server acknowledges the ids it
    accepted (`notifications/subscriptions/acknowledged`), then sends `notifications/tasks`
    carrying each task as `tasks/get` returns it. Only the accepted ids are live (polled at
    the relaxed pace); the others keep their `pollInterval`. A stream that ends or drops is
    listened to again (there is no replay: the tasks are fetched again at once, by the
    watcher's return to the normal pace). A server that accepts none of the ids (fastmcp 4.1.4
    serves listen without task events) or refuses the method ends pushing: polling goes on."""

    def __init__(self, proto: Mcp2026, task_ids: set[str]) -> None:
        super().__init__(set(task_ids))
        self.proto = proto
        self.wanted = set(task_ids)

    async def run(self, deliver: Deliver, health: Health) -> None:
        import asyncio

        failures = 0
        while failures < LISTEN_FAILURES:
            self.task_ids = set(self.wanted)
            outcome = await self._listen(deliver, health)
            health(False)
            if outcome == "refused":
                return
            failures = 0 if outcome == "ended" else failures + 1
            await asyncio.sleep(min(LISTEN_RETRY_MAX, LISTEN_RETRY_MIN * 2**failures))

    async def _listen(self, deliver: Deliver, health: Health) -> str:
        """One listen stream: "ended" (the server closed it after acknowledging), "dropped"
        (the connection failed), or "refused" (no task ids accepted, or no such method)."""
        import asyncio

        inbox: asyncio.Queue[Message] = asyncio.Queue()

        async def on_message(message: Message) -> None:
            inbox.put_nowait(message)

        transport = self.proto.rpc.transport
        # over stdio, notifications come outside any request's stream
        feed: AbstractContextManager[None] = (
            transport.notifications_to(inbox.put_nowait)
            if isinstance(transport, HasNotifications)
            else nullcontext()
        )
        request = asyncio.ensure_future(self.proto.listen(sorted(self.wanted), on_message))
        accepted: set[str] | None = None
        try:
            with feed:
                while True:
                    getter = asyncio.ensure_future(inbox.get())
                    await asyncio.wait({request, getter}, return_when=asyncio.FIRST_COMPLETED)
                    messages = [getter.result()] if getter.done() else []
                    if not getter.done():
                        getter.cancel()
                    while not inbox.empty():
                        messages.append(inbox.get_nowait())
                    for message in messages:
                        if message.get("method") == ACKNOWLEDGED:
                            accepted = _accepted(message) & self.wanted
                            if not accepted:
                                return "refused"
                            self.task_ids = accepted
                            health(True)
                        elif message.get("method") == TASK_NOTIFICATION and accepted is not None:
                            task = self._task(message.get("params"))
                            if task is not None and task.taskId in accepted:
                                await deliver(task)
                    if request.done():
                        return _listen_outcome(request, acknowledged=accepted is not None)
        finally:
            if not request.done():
                request.cancel()
            await asyncio.gather(request, return_exceptions=True)

    def _task(self, params: Any) -> Task | None:
        try:
            return self.proto._task(params, "pushed task")
        except ProtocolError:
            return None  # a malformed push is ignored: polling is the safety net


def _accepted(message: Message) -> set[str]:
    params = message.get("params")
    notifications = params.get("notifications") if isinstance(params, dict) else None
    ids = notifications.get("taskIds") if isinstance(notifications, dict) else None
    return {i for i in ids if isinstance(i, str)} if isinstance(ids, list) else set()


def _listen_outcome(request: Any, *, acknowledged: bool) -> str:
    """How a listen request ended: a stream that was acknowledged and then broke off
    (a reset, closed without the final response) was dropped; a refusal before any
    acknowledgement (-32601, HTTP 4xx, not the protocol) ends pushing."""
    try:
        request.result()
    except TransportError:
        return "dropped"
    except ProtocolError:
        return "dropped" if acknowledged else "refused"
    except McptaskError:
        return "refused"
    return "ended" if acknowledged else "refused"


# -- the protocol ----------------------------------------------------------------------------


#: what `server/discover` answered, per connection (detection's answer, reused by the
#: protocol whatever headers its client adds)
_DISCOVERED: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def _session_kept(transport: Transport) -> AbstractContextManager[None]:
    """The transport's session as it is, back after the block (a probe of this version may
    bring one of 2025-11-25's)."""
    if isinstance(transport, HasSession):
        return transport.using_session(transport.session_id)
    return nullcontext()


async def discover(rpc: RpcClient) -> dict[str, Any] | None:
    """`server/discover` of a 2026-07-28 server: its answer (`supportedVersions`,
    `capabilities`), or None when the server does not speak 2026-07-28 (any error). Asked
    once per client (detection's answer counts)."""
    if rpc.transport in _DISCOVERED:
        return _DISCOVERED[rpc.transport]
    headers = request_headers("server/discover")
    try:
        with _session_kept(rpc.transport):  # a 2025 leg's refusal may bring a session id
            data = await rpc.request(
                "server/discover", with_meta({}), headers=headers, answer_headers=ANSWER_HEADERS
            )
    except McptaskError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("supportedVersions"), list):
        return None
    if VERSION not in data["supportedVersions"]:
        return None
    _DISCOVERED[rpc.transport] = data
    return data


def offers_tasks(discovered: dict[str, Any]) -> bool:
    caps = discovered.get("capabilities")
    extensions = caps.get("extensions") if isinstance(caps, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


class Mcp2026(TaskProtocol):
    name: ClassVar[str] = NAME
    default_interval: ClassVar[float] = 1.0
    can_list: ClassVar[bool] = False
    #: whether the server offers the tasks extension (`server/discover`), once asked
    _offers_tasks: bool | None = None

    @property
    def protocol_version(self) -> str | None:
        return VERSION

    @property
    def makes_tasks(self) -> bool:
        """A server without the tasks extension runs every call at once (multi round-trip
        answers where it needs input): `call` makes plain calls there."""
        return self._offers_tasks is not False

    async def tool(self, name: str) -> Tool:
        """The tool, once the server said whether it makes tasks at all (`call` decides)."""
        if self._offers_tasks is None:
            found = await discover(self.rpc)
            self._offers_tasks = offers_tasks(found) if found is not None else None
        return await super().tool(name)

    async def _request(
        self,
        method: str,
        params: dict[str, Any],
        name: str | None = None,
        *,
        on_message: ServerMessageHandler | None = None,
        req_id: int | None = None,
        trace: TaskTrace | None = None,
    ) -> Any:
        """One request; its params get the client `_meta` unless they carry their own, and
        a request about a task its `trace` (the whole `_meta` made once per task)."""
        if "_meta" not in params:
            if trace is not None:
                params = {**params, "_meta": trace.form(NAME, _traced_client_meta)}
            else:
                params = with_meta(params)
        else:
            params = traced_meta(params, trace)
        try:
            return await self.rpc.request(
                method,
                params,
                headers=request_headers(method, name),
                on_message=on_message,
                req_id=req_id,
                answer_headers=ANSWER_HEADERS,
            )
        except RpcError as exc:
            better = explain(exc, method)
            if better is not None:
                raise better from None
            raise

    async def _task_request(self, method: str, ref: TaskRef) -> Any:
        return await self._task_request_params(method, ref, {"taskId": ref.task_id})

    async def _task_request_params(self, method: str, ref: TaskRef, params: dict[str, Any]) -> Any:
        try:
            return await self._request(method, params, name=ref.task_id, trace=ref.trace)
        except RpcError as exc:
            if exc.code == INVALID_PARAMS:
                raise TaskNotFound(
                    f"task {ref.task_id}: {exc.rpc_message or 'not found'}",
                    reason=exc.rpc_message or None,
                ) from None
            raise

    def _task(self, data: Any, what: str = "task") -> Task:
        return normalize(data, server=self.server, what=what)

    def push_feeds(self, refs: list[TaskRef]) -> list[PushFeed]:
        return [ListenFeed(self, {ref.task_id for ref in refs})] if refs else []

    async def listen(self, task_ids: list[str], on_message: ServerMessageHandler) -> Any:
        """A `subscriptions/listen` for these tasks; its messages go to `on_message`. Returns
        when the server ends the subscription."""
        params = with_meta({"notifications": {"taskIds": task_ids}})
        return await self.rpc.request(
            LISTEN,
            params,
            headers=request_headers(LISTEN),
            timeout=LISTEN_READ_TIMEOUT,
            on_message=on_message,
        )

    # -- operations -----------------------------------------------------------------------------

    async def get(self, ref: TaskRef) -> Task:
        task = self._task(await self._task_request("tasks/get", ref))
        if task.taskId != ref.task_id:
            raise ProtocolError(
                f"asked for task {ref.task_id}, the server answered task {task.taskId}"
            )
        return task

    async def result(self, ref: TaskRef, task: Task) -> TaskResult:
        """From the `result`/`error` that `tasks/get` carries inline (2026-07-28 has no
        `tasks/result`); fetched again when the task given lacks it."""
        if not _has_outcome(task):
            task = await self.get(ref)
        if task.status == "completed":
            if "result" not in task.raw:
                raise ProtocolError(
                    f"task {task.taskId} is completed but the server's tasks/get answer "
                    "carries no `result`"
                )
            return TaskResult(task=task, payload=task.raw["result"])
        if task.status == "failed":
            return TaskResult(task=task, error=_error_object(task))
        raise NotApplicable(f"task {task.taskId} is {task.status}; it has no result")

    async def cancel(self, ref: TaskRef) -> Task | None:
        """The ack of `tasks/cancel` says nothing (finished tasks are acked too): look the
        task up first, then ask. Cancellation is cooperative: `watch` shows when it lands."""
        task = await self.get(ref)
        if task.terminal:
            raise NotApplicable(f"task {ref.task_id} has already ended: {task.status}")
        await self._task_request("tasks/cancel", ref)
        return None

    # -- answering ------------------------------------------------------------------------------

    can_answer: ClassVar[bool] = True

    def input_requests(self, task: Task) -> list[InputRequest] | None:
        """The task's `inputRequests`, keyed as the server sent them (fastmcp-tasks rewrites
        them as `<taskId>:<hex>`: they are used as received)."""
        out = []
        for key, embedded in (task.inputRequests or {}).items():
            embedded = embedded if isinstance(embedded, dict) else {}
            params = embedded.get("params")
            out.append(
                InputRequest(
                    task.taskId,
                    str(embedded.get("method", "?")),
                    params if isinstance(params, dict) else {},
                    key=str(key),
                )
            )
        return out

    async def answer(
        self,
        ref: TaskRef,
        task: Task,
        responder: Responder,
        *,
        key: str | None = None,
        answered: frozenset[str] = frozenset(),
    ) -> Answered:
        """One `tasks/update` with an `inputResponses` entry per pending request answered.
        Without `key`, every pending request not answered before; with it, that one (even
        if it was: the person asks for it). Requests mcptask cannot answer (sampling, ...)
        are left pending. A dismissed question sends nothing: it stays pending."""
        pending = self.input_requests(task) or []
        if not pending:
            raise NotApplicable(
                f"task {ref.task_id} is {task.status} but lists no input requests; "
                "there is nothing to answer"
            )
        keys = [r.key for r in pending]
        if key is not None:
            chosen = [r for r in pending if r.key == key]
            if not chosen:
                raise UsageError(
                    f"--key {key!r}: task {ref.task_id} has no pending input request with that "
                    f"key; its keys: {', '.join(str(k) for k in keys)}"
                )
        else:
            chosen = [r for r in pending if r.key not in answered]
            if not chosen:
                raise TaskEnded(
                    f"task {ref.task_id} still waits for answers mcptask already sent "
                    f"({', '.join(str(k) for k in keys)}): the server has not taken them "
                    "(send one again with --key KEY)",
                    ExitCode.INPUT,
                )
        done = Answered()
        unanswerable = [r for r in chosen if not r.answerable]
        for r in unanswerable:
            done.notes.append(
                f"input request {r.key} is a {r.method} request, which mcptask cannot answer: "
                "left pending"
            )
        chosen = [r for r in chosen if r.answerable]
        if not chosen:
            methods = ", ".join(sorted({r.method for r in unanswerable}))
            raise NotApplicable(
                f"task {ref.task_id} asks for {methods}, which mcptask cannot answer"
            )
        responses: dict[str, Any] = {}
        for request in chosen:
            response = await responder(request)
            if response is None:  # dismissed: nothing is sent, every request stays pending
                done.dismissed = True
                done.sent.clear()
                return done
            assert request.key is not None
            responses[request.key] = response
            done.sent.append((request, response))
        await self._task_request_params(
            "tasks/update", ref, {"taskId": ref.task_id, "inputResponses": responses}
        )
        return done

    # -- tools ----------------------------------------------------------------------------------

    has_tools: ClassVar[bool] = True
    _tools: list[Tool] | None = None

    async def list_tools(self) -> list[Tool]:
        """Every page of `tools/list`. Servers may say nothing of task support here (fastmcp
        4 does not): the server decides per call, so a tool that says nothing is `optional`
        where the server offers the tasks extension, `forbidden` where it does not."""
        if self._tools is None:
            if self._offers_tasks is None:
                found = await discover(self.rpc)
                self._offers_tasks = offers_tasks(found) if found is not None else None
            default = "forbidden" if self._offers_tasks is False else "optional"
            pages = await paged(lambda p: self._request("tools/list", p), "tools/list", "tools")
            tools = (tool_from_wire(d, default_support=default) for d in pages)
            self._tools = [t for t in tools if t is not None]
            self.list_cut = pages.cut
        return self._tools

    async def call_plain(
        self, tool: str, arguments: dict[str, Any], hooks: CallHooks
    ) -> dict[str, Any]:
        """`tools/call` without the tasks extension (the server runs it at once), with a
        `progressToken`. A server that needs input answers `input_required` with its
        `inputRequests` (multi round-trip requests): each goes through `hooks`, and the call
        is sent again with the `inputResponses` (and the `requestState`, echoed), at most
        MAX_ROUNDS times."""
        import asyncio

        token = progress_token()
        talk = CallTalk(self.rpc, hooks, token, asker=f"tool {tool}")
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        for _ in range(MAX_ROUNDS):
            meta = client_meta(tasks=False)
            meta["progressToken"] = token
            if hooks.trace is not None:
                meta.update(hooks.trace.fields)
            req_id = self.rpc.next_id()
            try:
                data = await self._request(
                    "tools/call",
                    {**params, "_meta": meta},
                    tool,
                    on_message=talk.handle,
                    req_id=req_id,
                )
            except (asyncio.CancelledError, UsageError):
                # Ctrl-C, or an answer that does not fit: the call is abandoned, the server told
                await talk.cancel(req_id, client_meta(tasks=False), request_headers(CANCELLED))
                raise
            if not isinstance(data, dict):
                raise ProtocolError("the server's tools/call answer is not an object")
            if data.get("resultType") != "input_required":
                if data.get("resultType") == "task":
                    raise ProtocolError(
                        "the server made a task of a call that did not declare the tasks extension"
                    )
                return data
            params = {"name": tool, "arguments": arguments}
            params["inputResponses"] = await self._input_responses(tool, data, hooks)
            if "requestState" in data:
                params["requestState"] = data["requestState"]
        raise ServerError(f"tool {tool!r} still asks for input after {MAX_ROUNDS} rounds")

    async def _input_responses(
        self, tool: str, data: dict[str, Any], hooks: CallHooks
    ) -> dict[str, Any]:
        requests = data.get("inputRequests")
        if not isinstance(requests, dict):
            raise ProtocolError("the server's input_required answer has no `inputRequests` map")
        responses: dict[str, Any] = {}
        for key, embedded in requests.items():
            embedded = embedded if isinstance(embedded, dict) else {}
            method, params = embedded.get("method"), embedded.get("params")
            if method != ELICIT:
                raise ServerError(f"tool {tool!r} asks for {method}, which mcptask cannot answer")
            responses[str(key)] = await elicitation_answer(
                hooks,
                params if isinstance(params, dict) else {},
                key=str(key),
                asker=f"tool {tool}",
            )
        return responses

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        ttl: int | None,
        trace: TaskTrace | None = None,
    ) -> Created:
        """The server decides per call whether to make a task (tools/list does not say)."""
        if ttl is not None:
            raise UsageError(f"--ttl: the server owns the ttl on {VERSION}; leave --ttl out")
        params = {"name": tool, "arguments": arguments}
        data = await self._request("tools/call", params, tool, trace=trace)
        if not isinstance(data, dict):
            raise ProtocolError("the server's tools/call answer is not an object")
        kind = data.get("resultType")
        if kind == "task" or (kind is None and "taskId" in data and "content" not in data):
            task = self._task(data, "created task")
            return Created(task=task, ref=TaskRef(task.taskId))
        if kind == "input_required":
            raise TaskEnded(
                f"tool {tool!r} asks for input without creating a task (resultType "
                "input_required): a call that is not a task answers it; leave out --task",
                ExitCode.INPUT,
            )
        if kind is None or kind == "complete":
            return Created(task=None, result=data)
        raise ProtocolError(f"the server's tools/call answer has an unknown resultType {kind!r}")

    async def list_tasks(self, refs: list[TaskRef]) -> list[Task]:
        """There is no list method: the given (task book) tasks, each fetched again."""
        out: list[Task] = []
        for ref in refs:
            try:
                out.append(await self.get(ref))
            except TaskNotFound:
                continue
        return out


# -- detection -------------------------------------------------------------------------------


async def probe(rpc: RpcClient, url: str) -> str | Found | None:
    """One `server/discover`: 2026-07-28 with tasks -> this protocol; an MCP-style refusal
    (a JSON-RPC error with HTTP 4xx, or any JSON-RPC error over stdio) -> 2025-11-25; a
    JSON-RPC answer that is not MCP's -> None (the next probe runs); an answer that is not
    JSON-RPC at all (HTML, a 404 page) -> `Unrecognised` (decisive: not MCP). Connection
    failures propagate. The probe asks for the connection to be closed after it:
    some agents answer an unknown method with HTTP 500 and leave the connection dead."""
    stdio = not url.startswith(("http://", "https://"))
    headers = {**request_headers("server/discover"), "Connection": "close"}
    try:
        # a 2025-11-25 server may hand out a session id with its refusal: not ours to keep
        with _session_kept(rpc.transport):
            data = await rpc.request(
                "server/discover", with_meta({}), headers=headers, answer_headers=ANSWER_HEADERS
            )
    except RpcError as exc:
        if exc.code == UNSUPPORTED_VERSION:
            versions = supported_versions(exc)
            if versions and FALLBACK_VERSION not in versions:
                raise unsupported_version_error(exc) from None
            return FALLBACK
        if not stdio and exc.code == METHOD_NOT_FOUND:
            # -32601 only says "not 2026-07-28": A2A JSON-RPC agents answer an unknown method
            # so too (HTTP 200, or 400 behind some frameworks). MCP 2025-11-25 is confirmed by
            # its `initialize` once no agent card was found (`protocols.detect`)
            shown = one_line(exc.rpc_message, 80) or "method not found"
            raise Unrecognised(f"server/discover: -32601 {shown}", confirm=True) from None
        if stdio or (exc.http_status is not None and 400 <= exc.http_status < 500):
            # fastmcp 3 (400 -32600), server-everything (400 -32000), stdio servers (-32601)
            return FALLBACK
        return None
    except (HttpStatusError, ProtocolError) as exc:
        # 404 / 405 without a JSON-RPC body, HTML, not JSON-RPC at all
        status = exc.status if isinstance(exc, HttpStatusError) else None
        raise Unrecognised(
            f"server/discover: {exc.message}", decisive=True, status=status
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("supportedVersions"), list):
        return None
    versions = [v for v in data["supportedVersions"] if isinstance(v, str)]
    if VERSION in versions:
        _DISCOVERED[rpc.transport] = data
    caps = data.get("capabilities")
    extensions = caps.get("extensions") if isinstance(caps, dict) else None
    has_tasks = isinstance(extensions, dict) and TASKS_EXTENSION in extensions
    if VERSION in versions and has_tasks:
        return NAME
    # MCP, but no 2026-07-28 tasks: if it does tasks at all, it does them the 2025-11-25 way
    # (whose module says clearly when the server does no tasks). A stdio connection that
    # served a 2026-07-28 request may refuse the 2025 handshake after it (the MCP SDK's
    # dual-era loop: -32022): the fallback is tried on a fresh process (`Found.fresh`)
    if stdio and VERSION in versions:
        return Found(FALLBACK, fresh=True)
    return FALLBACK
