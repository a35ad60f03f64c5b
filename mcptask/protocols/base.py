"""What every protocol module provides: task operations in, normalized `Task`s out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError

from mcptask.errors import McptaskError, NotApplicable, ProtocolError, ServerError, UsageError
from mcptask.model.inputs import Answered, InputRequest
from mcptask.model.push import PushConfig
from mcptask.model.refs import TaskRef
from mcptask.model.results import Created, TaskResult
from mcptask.model.status import TERMINAL
from mcptask.model.task import Task
from mcptask.model.tools import Tool
from mcptask.protocols.trace_context import TaskTrace
from mcptask.protocols.wire import INTERNAL_ERROR, INVALID_PARAMS, TASK_SUPPORT, task_support
from mcptask.text.sanitize import one_line
from mcptask.transports.rpc import RpcClient


class Unrecognised(ServerError):
    """A detection probe got an answer that is not its protocol (HTML, a 404 page, an event
    stream where a card belongs): `message` says what came. `decisive`: the answer rules out
    MCP altogether (the MCP probe's POST was not answered in JSON-RPC), so when no later probe
    recognises the endpoint, it is neither MCP nor A2A."""

    def __init__(
        self,
        message: str,
        *,
        decisive: bool = False,
        status: int | None = None,
        confirm: bool = False,
    ) -> None:
        super().__init__(message)
        self.decisive = decisive
        #: the HTTP status of the answer, when it was an HTTP error
        self.status = status
        #: the answer does not rule MCP out (a -32601 to `server/discover`): when no other
        #: probe recognises the endpoint, MCP 2025-11-25's `initialize` must confirm it
        self.confirm = confirm


class CannotList(ServerError):
    """The server has no task listing after all (no `tasks.list` capability, -32601, A2A
    -32004): `list` shows the task book instead, with this as its note."""


def refuse_finished(task: Task, task_id: str) -> None:
    """A cancel answered with the task in a terminal state other than `cancelled`: the server
    did not cancel it (the spec asks for an error; some servers send the finished task)."""
    if task.status in TERMINAL and task.status != "cancelled":
        raise NotApplicable(
            f"task {task_id} has already ended: {task.status} (the server answered the cancel "
            "with the finished task)"
        )


async def read_status(proto: TaskProtocol, ref: TaskRef) -> Task:
    """`proto.get(ref)`, with a -32603 (internal error) where the spec has a not-found code
    of its own told apart: the server is asked for a task that cannot exist; answered with
    the same code, that code is how it says "not found" (`TaskNotFound`, saying that the code
    was not the spec's); answered otherwise, the -32603 stands."""
    from mcptask.errors import RpcError, TaskNotFound

    try:
        return await proto.get(ref)
    except RpcError as exc:
        if exc.code != INTERNAL_ERROR:
            raise
        internal = exc
    import uuid

    try:
        await proto.get(TaskRef(task_id=f"mcptask-absent-{uuid.uuid4().hex}"))
    except RpcError as other:
        if other.code == INTERNAL_ERROR:
            raise TaskNotFound(
                f"task {ref.task_id}: not found (the server answered "
                f"{_off_spec(internal, proto.not_found_code)}"
                ", as it does for a task that cannot exist)"
            ) from None
    except McptaskError:
        pass
    raise internal


async def ask_cancel(proto: TaskProtocol, ref: TaskRef) -> Task | None:
    """`proto.cancel(ref)`, with a -32603 (internal error) read as the spec's codes would
    have said: the task's status is read; finished, `NotApplicable`; unknown, `TaskNotFound`
    (each saying that the server's code was not the spec's); otherwise the -32603 stands."""
    from mcptask.errors import RpcError, TaskNotFound

    try:
        return await proto.cancel(ref)
    except RpcError as exc:
        if exc.code != INTERNAL_ERROR:
            raise
        internal = exc
    try:
        task = await read_status(proto, ref)
    except TaskNotFound:
        said = _off_spec(internal, proto.not_found_code)
        raise TaskNotFound(
            f"task {ref.task_id}: not found (the server answered the cancel {said})"
        ) from None
    if task.status in TERMINAL:
        raise NotApplicable(
            f"task {ref.task_id} has already ended: {task.status} (the server answered the "
            f"cancel {_off_spec(internal, proto.not_cancelable_code)})"
        )
    raise internal


def _off_spec(exc: Any, spec_code: int) -> str:
    """How a server's -32603 is told: its message, and the code the spec has for the case."""
    shown = one_line(str(exc.rpc_message), 80) or "Internal error"
    return f"-32603 {shown!r}, not the spec's {spec_code}"


@dataclass
class Found:
    """What auto-detection concluded: the protocol, and the endpoint to post to when the
    server named another one on its origin (an A2A agent card's `url`). The endpoint that
    built the transport sets it there, once."""

    name: str
    post_to: str | None = None
    #: the protocol object that confirmed the endpoint (its session open): used as it is
    opened: Any = None
    #: the connection served another version of the protocol first: over stdio, `name` is
    #: to be tried on a fresh process (the endpoint keeps the first if that one refuses)
    fresh: bool = False


#: turns one input request into its answer: `{"action": "accept", "content": {...}}`,
#: `{"action": "decline"}` or `{"action": "cancel"}`; None when the person dismissed the
#: question without choosing (Ctrl-C, end of input)
Responder = Callable[[InputRequest], Awaitable[dict[str, Any] | None]]


def tool_from_wire(data: Any, *, default_support: str = "forbidden") -> Tool | None:
    """One `tools/list` entry, read leniently; None when it has no name (not a tool)."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    title = data.get("title")
    annotations = data.get("annotations")
    if not isinstance(title, str) and isinstance(annotations, dict):
        title = annotations.get("title")  # the older place for a title
    description = data.get("description")
    schema = data.get("inputSchema")
    return Tool(
        name=data["name"],
        title=title if isinstance(title, str) else None,
        description=description if isinstance(description, str) else None,
        taskSupport=_support(data, default_support),
        inputSchema=schema if isinstance(schema, dict) else {"type": "object"},
        raw=dict(data),
    )


def _support(tool: dict[str, Any], default: str) -> str:
    """`execution.taskSupport` when it is one of the spec's words, else `default`."""
    support = task_support(tool)
    return support if support in TASK_SUPPORT else default


def find_tool(tools: list[Tool], name: str) -> Tool:
    for tool in tools:
        if tool.name == name:
            return tool
    import difflib

    names = sorted(t.name for t in tools)
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    close += [n for n in names if name and name.lower() in n.lower() and n not in close][:3]
    if close:
        raise UsageError(
            f"the server has no tool {name!r}; did you mean {' or '.join(close[:3])}? "
            f"(`mcptask tools` lists all {len(names)})"
        )
    raise UsageError(f"the server has no tool {name!r}; its tools: {', '.join(names) or 'none'}")


@dataclass
class Progress:
    """A `notifications/progress`: how far a request (or the task it made) has come."""

    progress: float
    total: float | None = None
    message: str | None = None
    #: the task it belongs to (its `related-task` `_meta`), for task-augmented calls
    task_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "event": "progress",
            "progress": self.progress,
            "total": self.total,
            "message": self.message,
        }
        if self.task_id is not None:
            out["taskId"] = self.task_id
        return out


@dataclass
class LogMessage:
    """A `notifications/message` (MCP logging): level, logger name, data."""

    level: str
    data: Any
    logger: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"event": "log", "level": self.level, "logger": self.logger, "data": self.data}


def _number_or_none(value: Any) -> float | None:
    """A JSON number as sent (an integer stays one); None for anything else, NaN, infinity."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and (value != value or abs(value) == float("inf")):
        return None
    return value


def progress_from(params: Any, *, task_id: str | None = None) -> Progress | None:
    """A progress notification's params, read leniently; None when `progress` is no number."""
    if not isinstance(params, dict):
        return None
    progress = _number_or_none(params.get("progress"))
    if progress is None:
        return None
    message = params.get("message")
    return Progress(
        progress=progress,
        total=_number_or_none(params.get("total")),
        message=message if isinstance(message, str) else None,
        task_id=task_id,
    )


def log_from(params: Any) -> LogMessage | None:
    if not isinstance(params, dict) or "data" not in params:
        return None
    level, logger = params.get("level"), params.get("logger")
    return LogMessage(
        level=level if isinstance(level, str) else "info",
        data=params["data"],
        logger=logger if isinstance(logger, str) else None,
    )


@dataclass
class CallHooks:
    """What a plain (non-task) `tools/call` reports while it runs, and who answers the
    server's questions. `responder` None: every elicitation is declined."""

    on_progress: Callable[[Progress], None] | None = None
    on_log: Callable[[LogMessage], None] | None = None
    responder: Responder | None = None
    #: remarks for the person (requests refused), one line each
    on_note: Callable[[str], None] | None = None
    #: after the call was abandoned (Ctrl-C): whether `notifications/cancelled` reached the
    #: server (None: not abandoned)
    cancel_sent: bool | None = None
    #: the call's trace, carried in its `_meta` (`--traceparent`, `TRACEPARENT`)
    trace: TaskTrace | None = None

    def note(self, message: str) -> None:
        if self.on_note is not None:
            self.on_note(message)


PROGRESS_NOTIFICATION = "notifications/progress"
LOG_NOTIFICATION = "notifications/message"


Deliver = Callable[[Task], Awaitable[None]]
Health = Callable[[bool], None]
#: where a push feed reports progress of a task it follows
ProgressSink = Callable[[Progress], None]


class PushFeed(ABC):
    """A source of task updates the server pushes (an MCP session's GET stream, an A2A
    subscription). `run` delivers tasks as they arrive and reports whether the feed is live;
    it reconnects by itself and returns only when pushing is impossible or over."""

    #: how its updates are labelled (`via` in ndjson and the live view)
    via: ClassVar[str] = "push"

    def __init__(self, task_ids: set[str]) -> None:
        self.task_ids = task_ids
        #: set by the watcher: progress notifications tied to one of the tasks go here
        self.progress: ProgressSink | None = None

    @abstractmethod
    async def run(self, deliver: Deliver, health: Health) -> None: ...


class SubscriptionFeed(PushFeed):
    """One task's subscription (A2A `SubscribeToTask` / `tasks/resubscribe`), reopened when
    it breaks while the task runs; a refusal (the agent cannot stream) ends pushing."""

    def __init__(self, proto: TaskProtocol, ref: TaskRef) -> None:
        super().__init__({ref.task_id})
        self.proto = proto
        self.ref = ref

    async def run(self, deliver: Deliver, health: Health) -> None:
        import asyncio

        from mcptask.errors import McptaskError, TransportError

        failures = 0
        while failures < 6:
            live = False
            try:
                async for task in self.proto.subscribe(self.ref):
                    if not live:
                        live = True
                        failures = 0
                        health(True)
                    await deliver(task)
                    if task.terminal:
                        return
            except TransportError:
                failures += 1
            except McptaskError:
                health(False)
                return
            health(False)
            await asyncio.sleep(min(30.0, 0.5 * 2**failures))


@dataclass(frozen=True)
class TaskFilter:
    """`list --status/--context/--since/--limit`: which tasks a list shows. A protocol that
    can filter on the server does (`TaskProtocol.list_filter`); the command checks every task
    again (`matches`), so a server that ignores a filter shows no more than was asked."""

    #: normalized status words (`working`, `input_required`); empty: every status
    statuses: frozenset[str] = frozenset()
    context_id: str | None = None
    #: seconds since the epoch: tasks updated at or after it (a task without a time is left
    #: out: it cannot be said to be recent)
    since: float | None = None
    #: at most this many tasks
    limit: int | None = None

    def matches(self, task: Task) -> bool:
        from mcptask.model.times import epoch

        if self.statuses and task.status not in self.statuses:
            return False
        if self.context_id is not None and task.contextId != self.context_id:
            return False
        if self.since is not None:
            when = epoch(task.lastUpdatedAt, naive_utc=True) or epoch(
                task.createdAt, naive_utc=True
            )
            if when is None or when < self.since:
                return False
        return True

    def apply(self, tasks: list[Task]) -> list[Task]:
        kept = [t for t in tasks if self.matches(t)]
        return kept[: self.limit] if self.limit is not None else kept


class TaskProtocol(ABC):
    name: ClassVar[str]
    #: seconds between polls when the server gives no hint
    default_interval: ClassVar[float] = 1.0
    #: the server has a list method (2026-07-28 has none: `list` shows the task book)
    can_list: ClassVar[bool] = True
    #: its list needs of the task book only the sessions its tasks were made in (one
    #: `tasks/list` walk per session: `TaskRef("", session=...)` each), not their references
    lists_by_session: ClassVar[bool] = False
    #: the protocol can re-subscribe to a running task's event stream
    can_subscribe: ClassVar[bool] = False
    #: `get --history N` (A2A `historyLength`); protocols without history ignore it
    history_length: int | None = None
    #: `list`'s filters, for a protocol that can ask the server for only those tasks (A2A
    #: ListTasks); the command filters what comes back either way
    list_filter: TaskFilter | None = None
    #: why the last list (of tasks or tools) stopped before its last page, or None
    list_cut: str | None = None
    #: the spec's error codes for a task the server does not have, and one it cannot cancel
    #: (told apart from servers that answer -32603 for both: `read_status`, `ask_cancel`)
    not_found_code: ClassVar[int] = INVALID_PARAMS
    not_cancelable_code: ClassVar[int] = INVALID_PARAMS

    def __init__(
        self,
        rpc: RpcClient,
        server: str,
        *,
        session: str | None = None,
        context_id: str | None = None,
    ) -> None:
        self.rpc = rpc
        self.server = server
        #: `--session` (MCP 2025-11-25) and `--context-id` (A2A) from the command line
        self.session = session
        self.context_id = context_id

    async def aclose(self) -> None:  # noqa: B027 (optional hook)
        """Release protocol resources; the RPC client is closed by its owner."""

    # -- what every protocol does -------------------------------------------------------------

    @abstractmethod
    async def get(self, ref: TaskRef) -> Task:
        """One status fetch. Unknown or expired: `TaskNotFound`."""

    @abstractmethod
    async def result(self, ref: TaskRef, task: Task) -> TaskResult:
        """The payload of a task already seen in a terminal state."""

    @abstractmethod
    async def cancel(self, ref: TaskRef) -> Task | None:
        """Ask for cancellation. Returns the task when the answer is a status, None when the
        server only acknowledged. A finished task: `NotApplicable`."""

    @abstractmethod
    async def list_tasks(self, refs: list[TaskRef]) -> list[Task]:
        """The server's tasks (all pages). `refs` are the task book's tasks for this endpoint
        (session-bound protocols list once per known session)."""

    async def list_pages(self, refs: list[TaskRef]) -> AsyncIterator[list[Task]]:
        """`list_tasks` a page at a time, for a caller that passes them on as they come (a
        list of 100,000 tasks is never held whole); here, all of them at once."""
        yield await self.list_tasks(refs)

    def push_feeds(self, refs: list[TaskRef]) -> list[PushFeed]:
        """Feeds of pushed updates for these tasks: one subscription per task where the
        protocol can re-subscribe to a task (A2A), none where it cannot push."""
        if not self.can_subscribe:
            return []
        return [SubscriptionFeed(self, ref) for ref in refs]

    #: the protocol has push notification configs (`push`, `watch --push-receiver`)
    can_push_configs: ClassVar[bool] = False

    async def push_supported(self) -> bool | None:
        """What the server says of push notifications before any config call (the A2A agent
        card's `capabilities.pushNotifications`); None when it says nothing."""
        return None

    async def push_set(
        self,
        ref: TaskRef,
        url: str,
        *,
        token: str | None = None,
        auth_scheme: str | None = None,
        credentials: str | None = None,
        config_id: str | None = None,
    ) -> PushConfig:
        raise NotApplicable(f"push notification configs are A2A's; {self.name} has none")

    async def push_get(self, ref: TaskRef, config_id: str) -> PushConfig:
        raise NotApplicable(f"push notification configs are A2A's; {self.name} has none")

    async def push_list(self, ref: TaskRef) -> list[PushConfig]:
        raise NotApplicable(f"push notification configs are A2A's; {self.name} has none")

    async def push_delete(self, ref: TaskRef, config_id: str) -> None:
        raise NotApplicable(f"push notification configs are A2A's; {self.name} has none")

    async def subscribe(self, ref: TaskRef) -> AsyncIterator[Task]:
        """Follow one task's event stream (protocols with `can_subscribe`)."""
        raise NotImplementedError
        yield  # pragma: no cover

    def seen_fields(self, task: Task) -> dict[str, Any]:
        """What the task book keeps of what a task was seen with, beyond its status (A2A: its
        artifacts, the answer when a later GetTask drops them)."""
        return {}

    def recall(self, task_id: str, record: dict[str, Any]) -> None:  # noqa: B027 (hook)
        """Take back what `seen_fields` kept of a task (its task book record)."""

    #: the protocol's tasks carry artifacts that may grow while they run (A2A): `watch`
    #: shows each update (`protocols.artifacts`)
    has_artifacts: ClassVar[bool] = False

    def chunk_ends(self, task_id: str) -> dict[str, bool] | None:
        """What the task's event stream said of each artifact's latest chunk (artifact id ->
        `lastChunk`); None where no stream said anything."""
        return None

    def book_fields(self, ref: TaskRef) -> dict[str, Any]:
        """What the task book keeps to reach this task again."""
        fields = {"protocol": self.name, "session": ref.session, "contextId": ref.context_id}
        if ref.version:
            fields["protocolVersion"] = ref.version
        return fields

    @property
    def transport_label(self) -> str | None:
        """How the endpoint is reached, where a person should know it (None: as usual)."""
        return None

    @property
    def protocol_version(self) -> str | None:
        """The MCP version in use ("2025-06-18"), once it is known (labels `tools` and
        `call`)."""
        return None

    # -- what only some protocols do ------------------------------------------------------------

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        ttl: int | None,
        trace: TaskTrace | None = None,
    ) -> Created:
        """A task-making `tools/call`; `trace`: the task's trace, carried by the request."""
        raise UsageError(f"`call` starts MCP tool calls; {self.name} starts tasks with `send`")

    #: the protocol has tools (`tools`, plain calls)
    has_tools: ClassVar[bool] = False

    @property
    def makes_tasks(self) -> bool:
        """Whether the server can run tool calls as tasks, as far as it said so far."""
        return True

    async def list_tools(self) -> list[Tool]:
        raise UsageError(f"`tools` lists MCP tools; {self.name} has no tools")

    async def tool(self, name: str) -> Tool:
        """One tool by name; a name the server does not have is a usage error naming its
        tools."""
        return find_tool(await self.list_tools(), name)

    async def call_plain(
        self, tool: str, arguments: dict[str, Any], hooks: CallHooks
    ) -> dict[str, Any]:
        """A plain `tools/call` (no task): its `CallToolResult`, while `hooks` hear about its
        progress, logs and questions. A JSON-RPC error raises `RpcError`."""
        raise UsageError(f"`call` runs MCP tools; {self.name} starts tasks with `send`")

    async def send_message(
        self, text: str, *, context_id: str | None, trace: TaskTrace | None = None
    ) -> Created:
        """A message that starts a task; `trace`: the task's trace, carried by the request."""
        raise UsageError(f"`send` starts A2A tasks; {self.name} starts tasks with `call`")

    #: the protocol can answer tasks that wait for input (`answer`, the form in `watch`)
    can_answer: ClassVar[bool] = False

    def history_turns(self, task: Task) -> list[tuple[str, str, str]]:
        """The messages of the task's own history (A2A), each (id, role, text), and its status
        message of now as role `status` (that is its status, never a turn of its own): the
        task book's log fills the turns between two looks from them. None kept: []."""
        return []

    def input_requests(self, task: Task) -> list[InputRequest] | None:
        """What an `input_required` task asks, when the protocol shows it before answering
        (2026-07-28 `inputRequests`, the A2A status message); None when the question only
        comes while answering (2025-11-25: on the `tasks/result` stream, read once)."""
        return []

    async def answer(
        self,
        ref: TaskRef,
        task: Task,
        responder: Responder,
        *,
        key: str | None = None,
        answered: frozenset[str] = frozenset(),
    ) -> Answered:
        """Answer what `task` (seen `input_required`) asks: each pending request goes through
        `responder` and its answer to the server. `key` picks one request where several are
        pending; `answered` are keys the task book says were answered already (never sent
        twice). Whether the server took the answer is for the caller to confirm (servers
        acknowledge answers they ignore)."""
        raise NotApplicable(f"{self.name} tasks never ask for input: there is nothing to answer")

    async def answer_held(self, ref: TaskRef, request_id: Any, response: dict[str, Any]) -> None:
        """Send the answer to a question read before and held (`HeldQuestion`)."""
        raise NotApplicable(f"{self.name} holds no question to answer later")


#: a paginated list is walked for at most this many pages ...
MAX_PAGES = 1000
#: ... and this many items
MAX_ITEMS = 100_000


class Pages(list[Any]):
    """A paginated list's items; `cut` says why the walk stopped before the last page (a
    server whose cursors never end, or loop, must not hold mcptask), or None."""

    cut: str | None = None


class PageWalk:
    """The cursors of one paginated list: `next(cursor, count)` says whether to go on."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.seen: set[str] = set()
        self.pages = 0
        self.cut: str | None = None

    def go_on(self, cursor: Any, count: int) -> bool:
        """After a page: whether to fetch the one `cursor` names (`count` items so far)."""
        self.pages += 1
        if not isinstance(cursor, str) or not cursor:
            return False
        if cursor in self.seen:
            self.cut = f"the server's {self.method} cursors loop (a cursor came twice)"
        elif self.pages >= MAX_PAGES:
            self.cut = f"mcptask stops after {MAX_PAGES} pages of {self.method}"
        elif count >= MAX_ITEMS:
            self.cut = f"mcptask stops after {MAX_ITEMS} items of {self.method}"
        self.seen.add(cursor)
        return self.cut is None


async def paged(fetch: Callable[[dict[str, Any]], Awaitable[Any]], method: str, key: str) -> Pages:
    """Every page of an MCP cursor-paginated list (`cursor` in, `nextCursor` out). `fetch`
    sends `method` with the given params; a page without its `key` list is not the protocol.
    A walk stopped early (cursors that loop or never end) says why in `Pages.cut`."""
    out = Pages()
    walk = PageWalk(method)
    async for items in page_by_page(fetch, walk, key):
        out.extend(items)
    out.cut = walk.cut
    return out


async def page_by_page(
    fetch: Callable[[dict[str, Any]], Awaitable[Any]], walk: PageWalk, key: str
) -> AsyncIterator[list[Any]]:
    """`paged`'s pages as they come; why the walk stopped early, in `walk.cut`."""
    count = 0
    cursor: str | None = None
    while True:
        data = await fetch({"cursor": cursor} if cursor else {})
        if not isinstance(data, dict) or not isinstance(data.get(key), list):
            raise ProtocolError(f"the server's {walk.method} answer has no `{key}` list")
        items = data[key][: max(0, MAX_ITEMS - count)]
        count += len(items)
        yield items
        nxt = data.get("nextCursor")
        if not walk.go_on(nxt, count):
            return
        cursor = nxt


def parse_wire(model: type[BaseModel], data: Any, what: str) -> Any:
    """Validate a wire object; anything wrong is the server's fault (exit 4), one line."""
    if not isinstance(data, Mapping):
        raise ProtocolError(f"the server sent {what} that is not an object: {_kind(data)}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or what
        raise ProtocolError(f"the server sent an invalid {what}: {loc}: {first['msg']}") from None


def _kind(data: Any) -> str:
    return "null" if data is None else type(data).__name__


def lenient_str(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        return str(value)
    return None


def lenient_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value and abs(value) < 1e15:
        return int(value)
    return None
