"""MCP 2025-11-25: tasks in the core protocol, bound to the session that created them."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import asyncio

from pydantic import BaseModel, ConfigDict, StrictStr, field_validator

from mcptask import __version__
from mcptask.errors import (
    AnswerLost,
    ExitCode,
    HttpStatusError,
    McptaskError,
    NotApplicable,
    ProtocolError,
    RpcError,
    ServerError,
    SessionGone,
    TaskEnded,
    TaskNotFound,
    TransportError,
    UsageError,
    is_transient,
)
from mcptask.model.inputs import Answered, InputRequest
from mcptask.model.refs import TaskRef
from mcptask.model.results import Created, TaskResult
from mcptask.model.status import normalize_status
from mcptask.model.task import Task
from mcptask.model.times import utc_stamp
from mcptask.model.tools import Tool
from mcptask.pacing import poll_seconds
from mcptask.protocols.base import (
    PROGRESS_NOTIFICATION,
    CallHooks,
    CannotList,
    Deliver,
    Health,
    PageWalk,
    PushFeed,
    Responder,
    TaskProtocol,
    Unrecognised,
    lenient_int,
    lenient_str,
    page_by_page,
    paged,
    parse_wire,
    progress_from,
    refuse_finished,
    tool_from_wire,
)
from mcptask.protocols.mcp_calls import CallTalk, progress_token
from mcptask.protocols.server_requests import ELICIT, HeldQuestion, ServerRequests, not_ours
from mcptask.protocols.trace_context import TaskTrace, traced_meta
from mcptask.protocols.wire import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND
from mcptask.text import jsonsafe
from mcptask.text.sanitize import one_line
from mcptask.transports.rpc import (
    HasEventStream,
    HasNotifications,
    HasSession,
    Message,
    RpcClient,
    ServerMessageHandler,
    Traces,
)

VERSION = "2025-11-25"
#: the versions a server may agree to at `initialize` (highest first): after it, every request
#: carries the one agreed in `MCP-Protocol-Version` (older servers refuse any other with 400)
SPOKEN_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

CLIENT_CAPABILITIES: dict[str, Any] = {
    "tasks": {"list": {}, "cancel": {}, "requests": {"elicitation": {"create": {}}}},
    "elicitation": {"form": {}},
}


class WireTask(BaseModel):
    """A task as MCP 2025-11-25 sends it. `taskId` and `status` must be strings; the rest is
    read leniently (a wrong type is dropped, the original stays in `raw`)."""

    # built on first use: a task in the usual shape never needs it (`_plain`)
    model_config = ConfigDict(extra="allow", defer_build=True)

    taskId: StrictStr
    status: StrictStr
    statusMessage: str | None = None
    createdAt: str | None = None
    lastUpdatedAt: str | None = None
    ttl: int | None = None
    pollInterval: int | None = None

    @field_validator("statusMessage", "createdAt", "lastUpdatedAt", mode="before")
    @classmethod
    def _str(cls, v: Any) -> str | None:
        return lenient_str(v)

    @field_validator("ttl", "pollInterval", mode="before")
    @classmethod
    def _int(cls, v: Any) -> int | None:
        return lenient_int(v)


#: a task's optional fields that are text, and numbers (`WireTask`)
_TEXT = ("statusMessage", "createdAt", "lastUpdatedAt")
_WHOLE = ("ttl", "pollInterval")


def _plain(data: Any) -> bool:
    """Whether a wire task is already in the shape `WireTask` leaves as it is (as most are):
    `taskId` and `status` text, the text fields text or null, the numbers integers or null."""
    if type(data) is not dict or type(data.get("taskId")) is not str:
        return False
    if type(data.get("status")) is not str:
        return False
    for k in _TEXT:
        v = data.get(k)
        if v is not None and type(v) is not str:
            return False
    for k in _WHOLE:
        v = data.get(k)
        if v is not None and type(v) is not int:
            return False
    return True


def normalize(data: Any, *, protocol: str, server: str, what: str = "task") -> Task:
    if _plain(data):
        # the same task without two pydantic validations (a list of 100,000 passes through)
        return Task.trusted(
            {
                "taskId": data["taskId"],
                "status": normalize_status(data["status"]),
                "statusMessage": data.get("statusMessage"),
                "createdAt": utc_stamp(data.get("createdAt")),
                "lastUpdatedAt": utc_stamp(data.get("lastUpdatedAt")),
                "ttl": data.get("ttl"),
                "pollInterval": data.get("pollInterval"),
                "protocol": protocol,
                "server": server,
                "contextId": None,
                "inputRequests": None,
                "lastSeenAt": None,
                "bookNote": None,
                "raw": dict(data),
            }
        )
    wire: WireTask = parse_wire(WireTask, data, what)
    return Task(
        taskId=wire.taskId,
        status=normalize_status(wire.status),
        statusMessage=wire.statusMessage,
        createdAt=wire.createdAt,
        lastUpdatedAt=wire.lastUpdatedAt,
        ttl=wire.ttl,
        pollInterval=wire.pollInterval,
        protocol=protocol,
        server=server,
        raw=dict(data),
    )


def describe_capabilities(caps: Any) -> str:
    if not isinstance(caps, dict) or not caps:
        return "nothing"
    return ", ".join(sorted(str(k) for k in caps))


STATUS_NOTIFICATION = "notifications/tasks/status"
RELATED_TASK = "io.modelcontextprotocol/related-task"
#: how long `answer` waits for the server to deliver its question on `tasks/result`
QUESTION_WAIT = 15.0
#: an answer slower than this may come after the server stopped waiting (reference: 60 s)
ANSWER_PATIENCE = 55.0


#: where a draft of the tasks spec put a task made by a `tools/call` (in the result's `_meta`)
DRAFT_TASK = "modelcontextprotocol.io/task"


def draft_task(data: Any) -> dict[str, Any] | None:
    """The task a draft-shaped answer names: a result whose `_meta` holds `DRAFT_TASK` with a
    `taskId` (and its status). None for any other answer."""
    meta = data.get("_meta") if isinstance(data, dict) else None
    found = meta.get(DRAFT_TASK) if isinstance(meta, dict) else None
    if not isinstance(found, dict) or not isinstance(found.get("taskId"), str):
        return None
    task = dict(found)
    if not isinstance(task.get("status"), str):
        task["status"] = "working"
    return task


def related_task(params: Any) -> str | None:
    """The task a server request belongs to (`_meta` `related-task`), when it says."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
    task_id = related.get("taskId") if isinstance(related, dict) else None
    return task_id if isinstance(task_id, str) else None


class _Answered(Exception):
    """Raised out of the `tasks/result` message handler once the question is answered: it
    ends the call (which would otherwise block until the task finishes)."""


RECONNECT_MIN = 0.5
RECONNECT_MAX = 30.0


class SessionFeed(PushFeed):
    """A session's standalone GET SSE stream: `notifications/tasks/status` for its tasks.
    One stream per session (the reference server refuses a second with 409). 405 means the
    server offers no stream; 409 that another client holds it: both end pushing (polling goes
    on). A dropped stream is reopened after the server's `retry` with `Last-Event-ID`."""

    def __init__(self, proto: Mcp2025, session: str, task_ids: set[str]) -> None:
        super().__init__(task_ids)
        self.proto = proto
        self.session = session
        self.last_event_id: str | None = None
        self.retry = 1.0

    async def run(self, deliver: Deliver, health: Health) -> None:
        import asyncio

        transport = self.proto.rpc.transport
        if not isinstance(transport, HasEventStream):
            return
        stream = transport.event_stream
        failures = 0
        while True:
            try:
                async for event in stream(
                    headers=self.proto.rpc.merged({"Mcp-Session-Id": self.session}),
                    last_event_id=self.last_event_id,
                ):
                    if event.event == "open":
                        health(True)
                        failures = 0
                        continue
                    if event.id:
                        self.last_event_id = event.id
                    if event.retry is not None:
                        self.retry = min(max(event.retry / 1000.0, RECONNECT_MIN), RECONNECT_MAX)
                    await self._handle(event.data, deliver)
            except HttpStatusError as exc:
                if exc.status in (405, 409):
                    health(False)
                    return
                failures += 1
            except ServerError:
                failures += 1
            health(False)
            await asyncio.sleep(
                min(self.retry * (2 ** min(failures, 5)), RECONNECT_MAX) if failures else self.retry
            )

    async def _handle(self, data: str, deliver: Deliver) -> None:
        message = _message(data)
        if message is None:
            return
        if message.get("method") == PROGRESS_NOTIFICATION:
            self._progress(message.get("params"))
            return
        if await self.proto.stream_message(message, self.session):
            return  # a task's question, kept for `answer`; any other request answered
        if message.get("method") != STATUS_NOTIFICATION:
            return
        params = message.get("params")
        if not isinstance(params, dict) or params.get("taskId") not in self.task_ids:
            return
        try:
            task = self.proto._task(params, "pushed task")
        except ProtocolError:
            return  # a malformed push is ignored: polling is the safety net
        await deliver(task)

    def _progress(self, params: Any) -> None:
        """Progress of a task-augmented call: tied to its task by the `related-task` `_meta`,
        else by the progress token mcptask gave the task's `tools/call` (servers that send it
        on the session's stream without the `_meta`)."""
        token = params.get("progressToken") if isinstance(params, dict) else None
        task_id = related_task(params) or self.proto.task_of_token(token)
        if task_id is None or task_id not in self.task_ids or self.progress is None:
            return
        progress = progress_from(params, task_id=task_id)
        if progress is not None:
            self.progress(progress)


class StdioFeed(PushFeed):
    """Over stdio, `notifications/tasks/status` arrive on the server's stdout: the feed is
    live for as long as the process runs."""

    def __init__(self, proto: Mcp2025, task_ids: set[str]) -> None:
        super().__init__(task_ids)
        self.proto = proto

    async def run(self, deliver: Deliver, health: Health) -> None:
        import asyncio

        transport = self.proto.rpc.transport
        inbox: asyncio.Queue[str] = asyncio.Queue()

        def on_notification(message: dict[str, Any]) -> None:
            inbox.put_nowait(json.dumps(message))

        if not isinstance(transport, HasNotifications):
            return
        # those that came before the feed first, then each as it comes, until the feed ends
        with transport.notifications_to(on_notification, backlog=True):
            health(True)
            handler = SessionFeed(self.proto, "", self.task_ids)
            handler.progress = self.progress
            while True:
                await handler._handle(await inbox.get(), deliver)


class OnlyNewer(ServerError):
    """`initialize` refused: the server speaks only the newer versions in `versions`."""

    versions: list[str]


def _initialize_refused(exc: RpcError) -> McptaskError:
    """`initialize` refused with -32022 (unsupported version): a server that speaks only newer
    MCP (fastmcp 4 over stdio without the tasks extension) has no 2025-11-25 tasks."""
    if exc.code != -32022:
        return exc
    data = exc.data if isinstance(exc.data, dict) else {}
    supported = data.get("supported")
    listed = [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []
    speaks = f"it speaks only MCP {', '.join(listed)}" if listed else "it refuses MCP 2025-11-25"
    error = OnlyNewer(f"the server does not support tasks over MCP {VERSION}: {speaks}")
    error.versions = listed
    error.hint = (
        "MCP 2026-07-28 tasks need the tasks extension, which the server did not offer; "
        "-p mcp-2026-07-28 makes plain calls"
    )
    return error


async def confirm(rpc: RpcClient, url: str) -> Mcp2025:
    """Detection's confirmation that an endpoint which refused `server/discover` with -32601
    speaks MCP: its `initialize`. Answered: the protocol, its session open (used as it is).
    Refused as a JSON-RPC server refuses a method it does not have, or not in JSON-RPC at
    all: `Unrecognised`. A server that refuses the version (-32022) is MCP all the same."""
    proto = Mcp2025(rpc, url)
    try:
        await proto.open_session(need_tasks=False)
    except OnlyNewer:
        return proto
    except RpcError as exc:
        if exc.code not in (METHOD_NOT_FOUND, INVALID_REQUEST):
            raise
        shown = one_line(exc.rpc_message, 80) or "method not found"
        raise Unrecognised(f"initialize: {exc.code} {shown}") from None
    except (HttpStatusError, ProtocolError) as exc:
        raise Unrecognised(f"initialize: {exc.message}") from None
    return proto


class Mcp2025(TaskProtocol):
    name: ClassVar[str] = "mcp-2025-11-25"
    default_interval: ClassVar[float] = 1.0

    def __init__(
        self,
        rpc: RpcClient,
        server: str,
        *,
        session: str | None = None,
        context_id: str | None = None,
    ) -> None:
        super().__init__(
            rpc.with_headers({"MCP-Protocol-Version": VERSION}),
            server,
            session=session,
            context_id=context_id,
        )
        self._opening: asyncio.Lock | None = None  # made when first needed (start-up)
        #: questions read from the GET stream, by task (see `take_stream_message`)
        self._questions: dict[str, asyncio.Queue[Message]] = {}
        #: the dispatcher of each session's GET stream requests (each answered once)
        self._stream_requests: dict[str, ServerRequests] = {}
        self.server_info: dict[str, Any] = {}
        self.capabilities: dict[str, Any] = {}
        self.server_version = "?"
        #: the MCP version agreed at `initialize` (None: not initialized by this object)
        self.negotiated: str | None = None
        #: this object ran `initialize` (so `capabilities` is what the server announced)
        self.initialized = False
        self._tools: list[Tool] | None = None
        #: the progress token mcptask gave each task's `tools/call` -> the task (kept in the
        #: task book): progress that names the token but not the task is the task's
        self._tokens: dict[str, str] = {}
        #: the tokens this run minted, by task (written to the task book once)
        self._minted: dict[str, str] = {}

    def task_of_token(self, token: Any) -> str | None:
        """The task whose `tools/call` carried this progress token."""
        return self._tokens.get(token) if isinstance(token, str) else None

    def _minted_for(self, token: str, task_id: str) -> None:
        self._tokens[token] = task_id
        self._minted[task_id] = token

    def seen_fields(self, task: Task) -> dict[str, Any]:
        token = self._minted.pop(task.taskId, None)
        return {"progressToken": token} if token is not None else {}

    def recall(self, task_id: str, record: dict[str, Any]) -> None:
        token = record.get("progressToken")
        if isinstance(token, str) and token:
            self._tokens.setdefault(token, task_id)

    # -- sessions -------------------------------------------------------------------------------

    async def open_session(self, *, need_tasks: bool = True) -> str:
        """`initialize` + `notifications/initialized`, once; with `need_tasks`, checks that
        the server does tasks (`tools` and plain calls do not need them)."""
        import asyncio

        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self.session is None:
                self.session = await self._initialize()
        if need_tasks:
            self._require_tasks()
        return self.session

    async def _initialize(self) -> str:
        params = {
            "protocolVersion": VERSION,
            "capabilities": CLIENT_CAPABILITIES,
            "clientInfo": {"name": "mcptask", "version": __version__},
        }
        try:
            result = await self.rpc.request("initialize", params, answer_headers={})
        except RpcError as exc:
            raise _initialize_refused(exc) from None
        except HttpStatusError as exc:
            # the 2025-11-25 fallback to the deprecated HTTP+SSE transport: 400/404/405 to the
            # POST, then a GET whose event stream names the endpoint to POST to
            if exc.status not in (400, 404, 405):
                raise
            from mcptask.transports.legacy_sse import open_legacy

            legacy = await open_legacy(self.rpc.transport)
            if legacy is None:
                raise
            self.rpc.transport = legacy
            result = await self.rpc.request("initialize", params, answer_headers={})
        if not isinstance(result, dict):
            raise ProtocolError("the server's initialize answer is not an object")
        caps = result.get("capabilities")
        self.capabilities = caps if isinstance(caps, dict) else {}
        info = result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else {}
        self.server_version = str(result.get("protocolVersion", "?"))
        transport = self.rpc.transport
        session = (transport.session_id if isinstance(transport, HasSession) else None) or ""
        self._agree(result.get("protocolVersion"), session)
        headers = {"Mcp-Session-Id": session} if session else {}
        await self.rpc.notify("notifications/initialized", headers=headers)
        self.initialized = True
        return session

    def _agree(self, version: Any, session: str) -> None:
        """The version the server answered `initialize` with: one mcptask speaks goes in the
        `MCP-Protocol-Version` header of every later request (2025-11-25 transports: servers
        before 2025-11-25 refuse any other with 400); any other ends the run (the spec: a
        client that does not speak the server's version disconnects)."""
        if not isinstance(version, str) or version not in SPOKEN_VERSIONS:
            shown = one_line(str(version), 40) if version is not None else "no version"
            raise ServerError(
                f"the server answered initialize with MCP {shown}, which mcptask does not "
                f"speak (it speaks {', '.join(SPOKEN_VERSIONS)})"
            )
        self.negotiated = version
        self.rpc.headers["MCP-Protocol-Version"] = version  # this client's, merged per request
        transport = self.rpc.transport
        if isinstance(transport, Traces):
            where = f"session {session}" if session else "the session"
            older = f" (mcptask asked for {VERSION})" if version != VERSION else ""
            transport.trace(f"* MCP {version} on {where}{older}")

    @property
    def protocol_version(self) -> str | None:
        return self._newer.protocol_version if self._newer is not None else self.negotiated

    def _version_headers(self, ref: TaskRef | None, session: str) -> dict[str, str]:
        """A task's session reused from the task book speaks the version agreed when it was
        opened (kept with the task); a session this run opened, the one agreed now."""
        if ref is not None and ref.version and session and session != self.session:
            return {"MCP-Protocol-Version": ref.version}
        return {}

    @property
    def makes_tasks(self) -> bool:
        """A server we initialized says so in its capabilities (a reused session: assumed)."""
        if self._newer is not None:
            return False
        return not self.initialized or "tasks" in self.capabilities

    def _require_tasks(self) -> None:
        """A server we initialized that announced no `tasks` does not do them (a session
        given with `--session` was checked by whoever opened it)."""
        if not self.makes_tasks:
            name = self.server_info.get("name", "the server")
            raise ServerError(
                f"{name} does not support tasks (MCP {self.server_version}); "
                f"it advertises: {describe_capabilities(self.capabilities)}"
            )

    async def _session_for(self, ref: TaskRef | None, *, need_tasks: bool = True) -> str:
        if ref is not None and ref.session:
            return ref.session
        if self.session is not None:
            if need_tasks:
                self._require_tasks()
            return self.session
        return await self.open_session(need_tasks=need_tasks)

    async def _call(
        self,
        method: str,
        params: dict[str, Any],
        ref: TaskRef | None,
        *,
        on_message: ServerMessageHandler | None = None,
        need_tasks: bool = True,
        req_id: int | None = None,
        trace: TaskTrace | None = None,
    ) -> Any:
        """One request in the task's session (`ref`; None: this run's); a request about a
        task carries its trace in `_meta` (`ref.trace`; `trace`: the task a `tools/call`
        makes)."""
        session = await self._session_for(ref, need_tasks=need_tasks)
        headers = {"Mcp-Session-Id": session} if session else {}
        headers.update(self._version_headers(ref, session))
        params = traced_meta(params, trace or (ref.trace if ref is not None else None))
        try:
            return await self.rpc.request(
                method,
                params,
                headers=headers,
                on_message=on_message,
                req_id=req_id,
                answer_headers=headers,  # the session's, and its version
            )
        except HttpStatusError as exc:
            if exc.status == 404 and session and ref is not None:
                raise SessionGone(
                    f"the session that created task {ref.task_id} no longer exists on the server "
                    "(HTTP 404); its tasks cannot be reached",
                    reason="HTTP 404",
                ) from None
            raise
        except RpcError as exc:
            gone = exc.http_status == 404 or (
                exc.http_status == 400 and "session" in exc.rpc_message.lower()
            )
            if gone and session and ref is not None:
                raise SessionGone(
                    f"the session that created task {ref.task_id} no longer exists on the server "
                    f"({exc.rpc_message}); its tasks cannot be reached",
                    reason=exc.rpc_message or f"HTTP {exc.http_status}",
                ) from None
            raise

    def _not_found(self, ref: TaskRef, exc: RpcError) -> TaskNotFound:
        error = TaskNotFound(
            f"task {ref.task_id}: {exc.rpc_message or 'not found'}", reason=exc.rpc_message or None
        )
        if self.legacy_transport:
            from mcptask.transports.legacy_sse import DEPRECATED

            error.hint = (
                f"this URL is {DEPRECATED}, whose sessions end with their connection: a task "
                "made by an earlier run cannot be reached"
            )
        return error

    @property
    def legacy_transport(self) -> bool:
        """The URL turned out to be the deprecated HTTP+SSE transport (2024-11-05)."""
        import sys

        module = sys.modules.get("mcptask.transports.legacy_sse")
        return module is not None and isinstance(self.rpc.transport, module.LegacySseTransport)

    @property
    def transport_label(self) -> str | None:
        return "the deprecated HTTP+SSE transport" if self.legacy_transport else None

    def _task(self, data: Any, what: str = "task") -> Task:
        return normalize(data, protocol=self.name, server=self.server, what=what)

    def push_feeds(self, refs: list[TaskRef]) -> list[PushFeed]:
        if isinstance(self.rpc.transport, HasNotifications):
            return [StdioFeed(self, {ref.task_id for ref in refs})]
        sessions: dict[str, set[str]] = {}
        for ref in refs:
            session = ref.session or self.session
            if session:
                sessions.setdefault(session, set()).add(ref.task_id)
        return [SessionFeed(self, session, ids) for session, ids in sessions.items()]

    # -- operations -----------------------------------------------------------------------------

    async def get(self, ref: TaskRef) -> Task:
        try:
            data = await self._call("tasks/get", {"taskId": ref.task_id}, ref)
        except RpcError as exc:
            if exc.code == INVALID_PARAMS:
                raise self._not_found(ref, exc) from None
            raise
        task = self._task(data)
        if task.taskId != ref.task_id:
            raise ProtocolError(
                f"asked for task {ref.task_id}, the server answered task {task.taskId}"
            )
        return task

    async def result(self, ref: TaskRef, task: Task) -> TaskResult:
        """`tasks/result` of a finished task. A server may first deliver questions that nobody
        waits for any more (the reference server keeps an unanswered question in the task's
        queue after its 60 s timeout and delivers it, stale, to the next reader): they are
        skipped, unanswered; pings are answered."""
        session = await self._session_for(ref)
        headers = {"Mcp-Session-Id": session} if session else {}
        requests = ServerRequests(self.rpc, note=self._trace, headers=headers)

        async def skip_stale(message: Message) -> None:
            if "id" in message:  # a stale question: left; a ping answered, the rest refused
                await requests.dispatch(message, not_ours)

        try:
            payload = await self._call(
                "tasks/result", {"taskId": ref.task_id}, ref, on_message=skip_stale
            )
        except RpcError as exc:
            if exc.code == INVALID_PARAMS and "not found" in exc.rpc_message.lower():
                raise self._not_found(ref, exc) from None
            if is_transient(exc):
                raise  # a server in trouble (5xx, -32429): `watch` retries, others exit 4
            return TaskResult(task=task, error=exc.to_json())
        return TaskResult(task=task, payload=payload)

    # -- answering ------------------------------------------------------------------------------

    can_answer: ClassVar[bool] = True

    def input_requests(self, task: Task) -> list[InputRequest] | None:
        return None  # the question only comes on the `tasks/result` stream

    async def answer(
        self,
        ref: TaskRef,
        task: Task,
        responder: Responder,
        *,
        key: str | None = None,
        answered: frozenset[str] = frozenset(),
    ) -> Answered:
        """The server queues its question for the session and delivers it once, on the first
        `tasks/result` stream opened for the task (from any process): read it, answer it (a
        POST of the JSON-RPC response with the request's id, which may be 0), and stop reading
        at once, so that a later question stays queued for the next reader.

        Read but not answered: requests for another task (their `related-task` names it; they
        cannot be put back: a note says so) and ids the task book says were answered (stale).
        Sampling and any other request get a JSON-RPC error (mcptask does not do them); pings
        are answered. A question that has been read cannot be put back: when the person
        dismisses it or the run is interrupted, `cancel` is sent; an answer given that does not
        fit its form sends nothing and raises `HeldQuestion` (the server still waits: a later
        `answer_held` sends a fitting answer to the same request id). While no question has
        come, the task is polled: the read ends when it stops waiting (`NotApplicable`) or
        after QUESTION_WAIT seconds (`TaskEnded`, 6)."""
        import asyncio

        if key is not None:
            raise UsageError(
                "--key picks one of several MCP 2026-07-28 input requests; an MCP 2025-11-25 "
                "server asks one question at a time"
            )
        session = await self._session_for(ref)
        headers = {"Mcp-Session-Id": session} if session else {}
        done = Answered()
        asking = False
        requests = ServerRequests(self.rpc, note=done.notes.append, headers=headers)
        asked: list[InputRequest] = []

        async def elicit(req_id: Any, params: dict[str, Any]) -> dict[str, Any] | None:
            nonlocal asking
            related = related_task(params)
            if related is not None and related != ref.task_id:
                done.notes.append(
                    f"skipped a question for task {related} that came on the stream of task "
                    f"{ref.task_id} (it cannot be delivered again)"
                )
                return None
            if str(req_id) in answered:
                done.notes.append(f"skipped question {req_id}: answered before (stale)")
                return None
            request = InputRequest(ref.task_id, ELICIT, params, key=str(req_id))
            asked.append(request)
            asking = True
            try:
                response = await responder(request)
            except UsageError as exc:  # an answer that does not fit: held, nothing sent
                raise HeldQuestion(exc.message, req_id, params) from None
            except McptaskError as exc:  # dismissed (`cancel` sent)
                exc.hint = (
                    "the question was dismissed (cancel sent): an MCP 2025-11-25 question "
                    "is delivered once"
                )
                raise
            if response is None:
                done.dismissed = True
                return {"action": "cancel"}
            return response

        async def on_message(message: Message) -> None:
            if "id" not in message:
                return  # a notification
            asked_at = asyncio.get_running_loop().time()
            response = await requests.dispatch(message, elicit)
            if response is None:
                return
            done.sent.append((asked[-1], response))
            took = asyncio.get_running_loop().time() - asked_at
            if took > ANSWER_PATIENCE:
                done.notes.append(
                    f"the answer came {took:.0f} s after the question: the server may have "
                    "stopped waiting for it (the reference server waits 60 s)"
                )
            raise _Answered

        reader = asyncio.ensure_future(
            self._call("tasks/result", {"taskId": ref.task_id}, ref, on_message=on_message)
        )
        # some servers ask on the session's GET stream instead (with the task's related-task
        # `_meta`): read it too, and take what a watch's feed already read from it
        mailbox = self._mailbox(ref.task_id)
        stream = asyncio.ensure_future(self._read_questions(session))
        waiter: asyncio.Future[Message] = asyncio.ensure_future(mailbox.get())
        from_stream = False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + QUESTION_WAIT
        # the server's pace, but a question is looked for at least every 5 s
        pace = min(poll_seconds(task.pollInterval, 1.0), 5.0)
        try:
            while not reader.done():
                await asyncio.wait({reader, waiter}, timeout=pace)
                if waiter.done() and not reader.done():
                    try:
                        await on_message(waiter.result())
                    except _Answered:
                        from_stream = True
                        break
                    waiter = asyncio.ensure_future(mailbox.get())
                    continue
                if reader.done() or asking:
                    continue  # a question came: the person takes the time they need
                now = await self.get(ref)
                if now.status != "input_required":
                    raise NotApplicable(
                        f"task {ref.task_id} no longer waits for input: it is {now.status}"
                    )
                if loop.time() >= deadline:
                    raise TaskEnded(
                        f"task {ref.task_id} waits for input, but the server delivered no "
                        f"question on tasks/result within {QUESTION_WAIT:g} s (an MCP "
                        "2025-11-25 question is delivered once: another client may have read it)",
                        ExitCode.INPUT,
                    )
        finally:
            for job in (reader, stream, waiter):
                if not job.done():
                    job.cancel()
            await asyncio.gather(reader, stream, waiter, return_exceptions=True)
        if from_stream:
            return done
        try:
            reader.result()
        except _Answered:
            return done
        except RpcError as exc:
            if exc.code == INVALID_PARAMS and "not found" in exc.rpc_message.lower():
                raise self._not_found(ref, exc) from None
            raise
        raise NotApplicable(
            f"task {ref.task_id} no longer waits for input: the server sent its result "
            "instead of a question"
        )

    async def answer_held(self, ref: TaskRef, request_id: Any, response: dict[str, Any]) -> None:
        """The JSON-RPC response to a question read by an earlier run (its request id, in the
        task's session): the server waits for it as long as it waits for any answer."""
        session = await self._session_for(ref)
        headers = {"Mcp-Session-Id": session} if session else {}
        await self.rpc.respond(request_id, response, headers=headers)

    # -- questions on the GET stream -----------------------------------------------------------

    def _mailbox(self, task_id: str) -> asyncio.Queue[Message]:
        """Questions for a task that came on the session's GET stream, until answered."""
        import asyncio

        return self._questions.setdefault(task_id, asyncio.Queue())

    def _trace(self, line: str) -> None:
        transport = self.rpc.transport
        if isinstance(transport, Traces):
            transport.trace(f"* {line}")

    async def stream_message(self, message: Message, session: str) -> bool:
        """A message read from the session's GET stream: a question for a task is kept for
        `answer` (`take_stream_message`); any other request goes to the session's
        `ServerRequests` (a ping answered, a question nobody here asked left, anything else
        refused, as stdio's router refuses a request nobody handles). True when it was a
        request. Best effort: an answer that cannot be sent is traced."""
        if self.take_stream_message(message):
            return True
        if "id" not in message or "method" not in message:
            return False
        requests = self._stream_requests.get(session)
        if requests is None:
            headers = {"Mcp-Session-Id": session} if session else {}
            requests = ServerRequests(self.rpc, note=self._trace, headers=headers)
            self._stream_requests[session] = requests
        try:
            await requests.dispatch(message, not_ours)
        except McptaskError as exc:
            self._trace(f"could not answer the server's {message.get('method')}: {exc}")
        return True

    def take_stream_message(self, message: Any) -> bool:
        """A message read from the GET stream: an `elicitation/create` that names its task
        (`related-task` `_meta`) is kept for `answer`. True when it was one."""
        if not isinstance(message, dict) or message.get("method") != "elicitation/create":
            return False
        if "id" not in message:
            return False
        task_id = related_task(message.get("params"))
        if task_id is None:
            return False
        self._mailbox(task_id).put_nowait(message)
        return True

    async def _read_questions(self, session: str) -> None:
        """Read the session's GET stream for questions while `answer` waits. A server with no
        stream (405), or one already open elsewhere (409, e.g. by `watch`'s feed, which keeps
        what it reads for us), ends this quietly."""
        transport = self.rpc.transport
        if not isinstance(transport, HasEventStream) or not session:
            return
        with contextlib.suppress(McptaskError):
            headers = self.rpc.merged({"Mcp-Session-Id": session})
            async for event in transport.event_stream(headers=headers):
                message = _message(event.data)
                if message is not None:
                    await self.stream_message(message, session)

    async def cancel(self, ref: TaskRef) -> Task | None:
        try:
            data = await self._call("tasks/cancel", {"taskId": ref.task_id}, ref)
        except RpcError as exc:
            if exc.code != INVALID_PARAMS:
                raise
            # -32602 is both "unknown task" and "already terminal": ask which
            task = await self.get(ref)
            raise NotApplicable(f"task {ref.task_id} has already ended: {task.status}") from None
        task = self._task(data, "cancelled task")
        refuse_finished(task, ref.task_id)
        return task

    lists_by_session: ClassVar[bool] = True

    async def list_tasks(self, refs: list[TaskRef]) -> list[Task]:
        """Every known session's `tasks/list`. A server whose `tasks` capability has no
        `list`, or that answers -32601, cannot list: `CannotList`."""
        return [task async for page in self.list_pages(refs) for task in page]

    async def list_pages(self, refs: list[TaskRef]) -> AsyncIterator[list[Task]]:
        # each session once, in the order the book knows them (a dict: 100,000 tasks in a
        # few sessions are one pass, not one search of the list each)
        sessions: list[str | None] = list(dict.fromkeys(ref.session for ref in refs))
        if self.session is not None and self.session not in sessions:
            sessions.append(self.session)
        if not sessions:
            sessions.append(None)
        seen: set[str] = set()
        for session in sessions:
            try:
                async for page in self._list_session(session):
                    fresh = [t for t in page if t.taskId not in seen]
                    seen.update(t.taskId for t in fresh)
                    if fresh:
                        yield fresh
            except TaskNotFound:
                continue  # that session is gone

    async def _list_session(self, session: str | None) -> AsyncIterator[list[Task]]:
        ref = TaskRef(task_id="(list)", session=session) if session else None
        if ref is None:
            await self._session_for(None)  # the capabilities say whether it lists
        tasks_caps = self.capabilities.get("tasks") if isinstance(self.capabilities, dict) else None
        if self.capabilities and isinstance(tasks_caps, dict) and "list" not in tasks_caps:
            raise CannotList(
                "the server's tasks capability has no `list`: it cannot list its tasks"
            )
        walk = PageWalk("tasks/list")
        pages = page_by_page(lambda p: self._call("tasks/list", p, ref), walk, "tasks")
        try:
            async for items in pages:
                yield [self._task(t, "task in tasks/list") for t in items]
        except RpcError as exc:
            if exc.code == -32601:
                raise CannotList(
                    f"the server has no tasks/list ({exc.rpc_message or 'method not found'})"
                ) from None
            raise
        self.list_cut = walk.cut or self.list_cut

    # -- tools ----------------------------------------------------------------------------------

    has_tools: ClassVar[bool] = True

    #: a server that refused 2025 `initialize` but speaks 2026-07-28 (without the tasks
    #: extension, or detection would have chosen it): `tools` and plain calls go there
    _newer: TaskProtocol | None = None

    async def _tools_over_newer(self, exc: OnlyNewer) -> TaskProtocol | None:
        from mcptask.protocols import mcp2026

        if mcp2026.VERSION not in exc.versions:
            return None
        self._newer = mcp2026.Mcp2026(self.rpc, self.server)
        transport = self.rpc.transport
        if isinstance(transport, Traces):
            transport.trace(
                f"* the server speaks only MCP {', '.join(exc.versions)}: tools and plain "
                f"calls go over {mcp2026.VERSION} (it offers no tasks there)"
            )
        return self._newer

    async def list_tools(self) -> list[Tool]:
        """Every page of `tools/list` (kept for the rest of the run); needs no task support.
        A server that speaks only 2026-07-28 is asked over that version."""
        if self._tools is None:
            if self._newer is not None:
                return await self._newer.list_tools()
            try:
                pages = await paged(
                    lambda p: self._call("tools/list", p, None, need_tasks=False),
                    "tools/list",
                    "tools",
                )
            except OnlyNewer as exc:
                newer = await self._tools_over_newer(exc)
                if newer is None:
                    raise
                self._tools = await newer.list_tools()
                return self._tools
            self._tools = [t for t in (tool_from_wire(d) for d in pages) if t is not None]
            self.list_cut = pages.cut
        return self._tools

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        ttl: int | None,
        trace: TaskTrace | None = None,
    ) -> Created:
        await self._session_for(None)  # a server without tasks says so first
        info = await self.tool(tool)
        if not info.runs_as_task:
            raise ServerError(
                f"tool {tool!r} does not run as a task (taskSupport: {info.taskSupport})",
                hint="`mcptask tools` shows which tools do; without --task, `call` runs it "
                "as a plain call",
            )
        task_param: dict[str, Any] = {"ttl": ttl} if ttl is not None else {}
        # a progress token: a server may report the task's progress (tied to it by its
        # `related-task` `_meta`, or by this token alone; `watch` shows it)
        token = progress_token()
        params = {
            "name": tool,
            "arguments": arguments,
            "task": task_param,
            "_meta": {"progressToken": token},
        }
        try:
            data = await self._call("tools/call", params, None, trace=trace)
        except TransportError as exc:
            lost = "the tools/call was sent but its answer was lost: a task may exist"
            raise AnswerLost(f"{exc.message}; {lost}", session=self.session) from None
        if isinstance(data, dict) and "task" in data:
            task = self._task(data["task"], "created task")
            self._minted_for(token, task.taskId)
            ref = TaskRef(task.taskId, session=self.session or None, version=self.negotiated)
            return Created(task=task, ref=ref)
        draft = draft_task(data)
        if draft is not None:
            # an earlier draft of the tasks spec: a `CallToolResult` (empty) whose `_meta`
            # names the task; it is running, so it is followed, never reported as the result
            task = self._task(draft, "task in the result's _meta")
            self._minted_for(token, task.taskId)
            ref = TaskRef(task.taskId, session=self.session or None, version=self.negotiated)
            note = (
                f"the server answered in a draft shape of MCP tasks (a result whose _meta "
                f"{DRAFT_TASK!r} names task {task.taskId}): following that task"
            )
            return Created(task=task, ref=ref, extra={"note": note})
        if isinstance(data, dict) and "content" in data:
            return Created(task=None, result=data)
        raise ProtocolError("the server's tools/call answer holds neither a task nor a result")

    async def call_plain(
        self, tool: str, arguments: dict[str, Any], hooks: CallHooks
    ) -> dict[str, Any]:
        """`tools/call` without a task. Progress for our `progressToken` and log messages go
        to `hooks`; server requests (elicitation) are answered from the call's own stream and
        from the session's GET stream, opened first (the TypeScript SDK sends a request that
        names no related request there, and drops it when no stream is open). Ctrl-C (the
        call cancelled) sends `notifications/cancelled` for it."""
        import asyncio

        if self._newer is not None:
            return await self._newer.call_plain(tool, arguments, hooks)
        session = await self._session_for(None, need_tasks=False)
        modern = await self._plain_leg(session)
        if modern is not None:
            return await modern.call_plain(tool, arguments, hooks)
        headers = {"Mcp-Session-Id": session} if session else {}
        token = progress_token()
        talk = CallTalk(self.rpc, hooks, token, asker=f"tool {tool}", headers=headers)
        listener = await self._open_listener(session, talk)
        req_id = self.rpc.next_id()
        params = {"name": tool, "arguments": arguments, "_meta": {"progressToken": token}}
        try:
            data = await self._call(
                "tools/call",
                params,
                None,
                on_message=talk.handle,
                need_tasks=False,
                req_id=req_id,
                trace=hooks.trace,
            )
        except (asyncio.CancelledError, UsageError):
            # Ctrl-C, or an answer that does not fit: the call is abandoned, the server told
            await talk.cancel(req_id)
            raise
        finally:
            if listener is not None:
                listener.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await listener
        if not isinstance(data, dict):
            raise ProtocolError("the server's tools/call answer is not an object")
        return data

    async def _plain_leg(self, session: str) -> TaskProtocol | None:
        """The version a plain call needs (chosen per command): a server whose 2025 leg is
        stateless (HTTP, no session: it cannot send its questions to mcptask) and that also
        speaks MCP 2026-07-28 gets the call over 2026, whose multi round-trip answers need
        no session. None: this leg it is."""
        transport = self.rpc.transport
        if session or not self.initialized or not isinstance(transport, HasEventStream):
            return None
        from mcptask.protocols import mcp2026

        if await mcp2026.discover(self.rpc) is None:
            return None
        if isinstance(transport, Traces):
            transport.trace(
                f"* the server's MCP {self.negotiated} leg keeps no session (it cannot ask "
                f"questions there): this plain call goes over MCP {mcp2026.VERSION}"
            )
        return mcp2026.Mcp2026(self.rpc, self.server)

    async def _open_listener(self, session: str, talk: CallTalk) -> asyncio.Task[None] | None:
        """The session's GET stream, read by a task that hands every message to `talk`;
        returns once the stream is open (or refused: 405, 409 and the like leave the call's
        own stream, which is all many servers use)."""
        import asyncio

        transport = self.rpc.transport
        if not isinstance(transport, HasEventStream) or not session:
            return None
        stream = transport.event_stream
        opened = asyncio.Event()

        async def listen() -> None:
            try:
                async for event in stream(headers=self.rpc.merged({"Mcp-Session-Id": session})):
                    if event.event == "open":
                        opened.set()
                        continue
                    message = _message(event.data)
                    if message is not None:
                        await talk.handle(message)
            except McptaskError:
                pass  # no stream here: the call's own stream still carries what it needs
            finally:
                opened.set()

        task = asyncio.ensure_future(listen())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(opened.wait(), LISTEN_WAIT)
        return task


#: how long a plain call waits for the session's GET stream to open before it is sent
LISTEN_WAIT = 5.0


def _message(data: str) -> dict[str, Any] | None:
    """One SSE event's JSON-RPC message; None for priming events and anything not JSON."""
    if not data.strip():
        return None
    try:
        message = jsonsafe.loads(data)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None
