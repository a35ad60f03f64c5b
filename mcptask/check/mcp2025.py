"""Checks for MCP 2025-11-25 tasks (the core protocol's experimental `tasks`, SEP-1686).

The session is opened by hand (raw `initialize`), so what the server declares can be judged rather
than refused. One task made with the chosen tool is observed working, waited for through
`tasks/result`, then examined finished (result, list, cancel, another session); a second task is
cancelled while it runs; a failing task (when one is known) is examined for its error payload.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from mcptask import __version__
from mcptask.check.mcp_common import STATUSES, TERMINAL, McpSuite, Tool, Track, result_text
from mcptask.check.suite import (
    FAIL,
    INFO,
    PASS,
    WARN,
    BadAnswer,
    CheckDef,
    CheckFn,
    Clock,
    Outcome,
    build_arguments,
    check_table,
    could_not_run,
    describe,
    entropy_bits,
    is_number,
    keys,
    not_applicable,
    poll_interval,
    rpc_error_text,
    settle,
    short,
)
from mcptask.errors import UsageError
from mcptask.protocols.mcp2025 import SPOKEN_VERSIONS
from mcptask.protocols.wire import task_support

VERSION = "2025-11-25"
RELATED = "io.modelcontextprotocol/related-task"
#: the ttl every task made here asks for (ms)
REQUESTED_TTL = 60_000
S = "MCP 2025-11-25 tasks"


C = check_table(
    "mcp2025",
    (
        (
            "wire.protocol-version",
            "wire",
            "initialize settles on protocol version 2025-11-25",
            "MCP 2025-11-25 lifecycle §Version Negotiation",
        ),
        (
            "capability.tasks",
            "capability",
            "the server declares the tasks capability",
            f"{S} §Capabilities",
        ),
        (
            "capability.tools",
            "capability",
            "tasks.requests.tools.call agrees with the tools' execution.taskSupport",
            f"{S} §Tool-Level Negotiation",
        ),
        (
            "creation.forbidden-tool",
            "creation",
            "a tool whose taskSupport is forbidden refuses a task-augmented call (-32601)",
            f"{S} §Tool-Level Negotiation (SHOULD)",
        ),
        (
            "creation.required-tool",
            "creation",
            "a tool whose taskSupport is required refuses a call without params.task (-32601)",
            f"{S} §Tool-Level Negotiation (MUST)",
        ),
        (
            "creation.shape",
            "creation",
            "a task-augmented tools/call answers CreateTaskResult {task: {...}} in status working",
            f"{S} §Creating Tasks, §Task Status Lifecycle",
        ),
        (
            "creation.ttl",
            "creation",
            "ttl is present (integer ms or null); pollInterval, when present, is positive ms",
            f"{S} §TTL and Resource Management",
        ),
        (
            "creation.ttl-honoured",
            "creation",
            "the requested ttl is kept (a receiver MAY override it)",
            f"{S} §TTL and Resource Management",
        ),
        (
            "status.get",
            "status",
            "tasks/get answers the task itself, flat, with its own taskId",
            f"{S} §Getting Tasks",
        ),
        (
            "status.message",
            "status",
            "a working task says what it is doing (statusMessage)",
            f"{S} §Data Types: Task (optional field)",
        ),
        (
            "result.waits",
            "result",
            "tasks/result on a working task holds the answer until the task is terminal",
            f"{S} §Result Retrieval (MUST block)",
        ),
        (
            "status.lifecycle",
            "status",
            "statuses start at working, follow the allowed paths, and stay terminal",
            f"{S} §Task Status Lifecycle",
        ),
        (
            "status.timestamps",
            "status",
            "createdAt and lastUpdatedAt are ISO 8601 in every task answer",
            f"{S} §TTL and Resource Management",
        ),
        (
            "result.related-task",
            "result",
            "tasks/result's answer carries _meta io.modelcontextprotocol/related-task",
            f"{S} §Related Task Metadata (MUST)",
        ),
        (
            "result.payload",
            "result",
            "tasks/result returns what tools/call would have returned (a CallToolResult)",
            f"{S} §Result Retrieval",
        ),
        (
            "list.includes-task",
            "list",
            "a task reachable with tasks/get is listed by tasks/list",
            f"{S} §Task Listing (MUST)",
        ),
        (
            "list.bad-cursor",
            "list",
            "tasks/list with an invalid cursor is -32602",
            f"{S} §Error Handling: Protocol Errors",
        ),
        (
            "session.binding",
            "session",
            "whether a task is reachable from another session (a fact; unbound ids must be "
            "unguessable)",
            f"{S} §Security Considerations: Task Isolation",
        ),
        (
            "cancel.terminal",
            "cancel",
            "cancelling a task in a terminal status is -32602",
            f"{S} §Task Cancellation (MUST reject)",
        ),
        (
            "cancel.running",
            "cancel",
            "tasks/cancel answers the task already cancelled, and it stays cancelled",
            f"{S} §Task Cancellation",
        ),
        (
            "errors.failed-status",
            "errors",
            "a failing tool call ends failed, with a statusMessage saying why",
            f"{S} §Task Execution Errors",
        ),
        (
            "result.failed-payload",
            "result",
            "tasks/result of a failed task returns its error payload (isError result or the "
            "JSON-RPC error)",
            f"{S} §Result Retrieval, §Task Execution Errors",
        ),
        (
            "errors.unknown-task",
            "errors",
            "tasks/get, tasks/result and tasks/cancel of an unknown taskId are -32602",
            f"{S} §Error Handling: Protocol Errors",
        ),
    ),
)
CHECKS: list[CheckDef] = list(C.values())


@dataclass
class Session:
    id: str | None
    result: dict[str, Any]

    @property
    def capabilities(self) -> dict[str, Any]:
        caps = self.result.get("capabilities")
        return caps if isinstance(caps, dict) else {}

    @property
    def tasks(self) -> dict[str, Any] | None:
        tasks = self.capabilities.get("tasks")
        return tasks if isinstance(tasks, dict) else None


def _support(tool: Tool) -> str:
    """taskSupport; a tool that does not say forbids tasks."""
    value = task_support(tool)
    return "forbidden" if value is None else value


def _read_only(tool: dict[str, Any]) -> bool:
    annotations = tool.get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


class Mcp2025Suite(McpSuite):
    protocol = "mcp-2025-11-25"
    FORBIDDEN_TOOL = "--tool {tool} does not run as a task (taskSupport: forbidden)"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.session = self.lazy("initialize", self._initialize)
        #: the version each session agreed on (`initialize`'s answer, when mcptask speaks it):
        #: its requests carry it, as servers before 2025-11-25 refuse any other with 400
        self.versions: dict[str | None, str] = {}

    def plan(self) -> list[tuple[CheckDef, CheckFn]]:
        order: list[tuple[str, CheckFn]] = [
            ("wire.protocol-version", self.c_protocol_version),
            ("capability.tasks", self.c_capability),
            ("capability.tools", self.c_tools),
            ("creation.forbidden-tool", self.c_forbidden_tool),
            ("creation.required-tool", self.c_required_tool),
            ("creation.shape", self.c_creation),
            ("creation.ttl", self.c_ttl),
            ("creation.ttl-honoured", self.c_ttl_honoured),
            ("status.get", self.c_get),
            ("status.message", self.c_message),
            ("result.waits", self.c_result_waits),
            ("status.lifecycle", self.c_lifecycle),
            ("status.timestamps", self.c_timestamps),
            ("result.related-task", self.c_related_task),
            ("result.payload", self.c_payload),
            ("list.includes-task", self.c_list),
            ("list.bad-cursor", self.c_bad_cursor),
            ("session.binding", self.c_binding),
            ("cancel.terminal", self.c_cancel_terminal),
            ("cancel.running", self.c_cancel_running),
            ("errors.failed-status", self.c_failed_status),
            ("result.failed-payload", self.c_failed_payload),
            ("errors.unknown-task", self.c_unknown),
        ]
        return [(C[name], fn) for name, fn in order]

    # -- plumbing -------------------------------------------------------------------------------

    def headers(self, session: str | None) -> dict[str, str]:
        out = {"MCP-Protocol-Version": self.versions.get(session, VERSION)}
        if session:
            out["Mcp-Session-Id"] = session
        return out

    async def request(
        self,
        method: str,
        params: dict[str, Any],
        *,
        session: str | None = None,
        timeout: float | None = None,
    ) -> Any:
        sid = session if session is not None else (await self.session.get()).id
        return await self.rpc.request(method, params, headers=self.headers(sid), timeout=timeout)

    async def new_session(self) -> Session:
        params = {
            "protocolVersion": VERSION,
            "capabilities": {
                "tasks": {"list": {}, "cancel": {}, "requests": {"elicitation": {"create": {}}}},
                "elicitation": {"form": {}},
            },
            "clientInfo": {"name": "mcptask-check", "version": __version__},
        }
        with self.recorder.using_session(None):  # a session of its own, the run's kept
            result = await self.rpc.request(
                "initialize", params, headers={"MCP-Protocol-Version": VERSION}
            )
            sid = self.recorder.session_id
        if not isinstance(result, dict):
            raise BadAnswer(f"initialize answered something that is not an object: {short(result)}")
        agreed = result.get("protocolVersion")
        if isinstance(agreed, str) and agreed in SPOKEN_VERSIONS:
            self.versions[sid] = agreed
        await self.rpc.notify("notifications/initialized", headers=self.headers(sid))
        return Session(sid, result)

    def support(self, tool: Tool) -> str:
        return _support(tool)

    async def ready(self) -> None:
        await self.tasks_capability()

    async def create(self, tool: str, arguments: dict[str, Any], *, guessed: bool = False) -> Track:
        """A task made with the tool (whether it was `guessed` changes nothing here: a
        task-augmented call answers a task or is wrong)."""
        data = await self.request(
            "tools/call", {"name": tool, "arguments": arguments, "task": {"ttl": REQUESTED_TTL}}
        )
        task = data.get("task") if isinstance(data, dict) else None
        if not isinstance(task, dict):
            what = (
                "a tool result (no task)"
                if isinstance(data, dict) and "content" in data
                else short(data)
            )
            raise BadAnswer(f"tools/call with params.task answered {what}")
        if not isinstance(task.get("taskId"), str) or not task["taskId"]:
            raise BadAnswer(f"the created task has no string taskId: {short(task)}")
        return Track(task["taskId"], tool, data, seen=[task])

    # -- fixtures -------------------------------------------------------------------------------

    async def _initialize(self) -> Session:
        return await self.new_session()

    async def tasks_capability(self) -> dict[str, Any]:
        session = await self.session.get()
        tasks = session.tasks
        if tasks is None:
            raise not_applicable("the server declares no tasks capability")
        return tasks

    def auto_tool(self, tools: list[Tool]) -> tuple[Tool, dict[str, Any]]:
        if self.opts.pairs:
            raise UsageError("k=v arguments need --tool NAME")
        found = self.first_task_tool(tools)
        if found is not None:
            tool, args = found
            self.note(
                f"task tool: {tool['name']} {short(args)} (the first that allows "
                "tasks; choose another with --tool NAME k=v)"
            )
            return found
        raise could_not_run(
            "no tool allows tasks with arguments mcptask can fill in; pass --tool NAME k=v"
        )

    # -- capability and wire --------------------------------------------------------------------

    async def c_protocol_version(self) -> Outcome:
        session = await self.session.get()
        info = session.result.get("serverInfo")
        if isinstance(info, dict):
            self.facts["serverInfo"] = info
        version = session.result.get("protocolVersion")
        if version == VERSION:
            return PASS, f"initialize answered protocolVersion {VERSION}"
        return WARN, (
            f"asked for {VERSION}, the server answered protocolVersion {short(version)}: "
            "tasks are defined for 2025-11-25"
        )

    async def c_capability(self) -> Outcome:
        session, error = await self.session.attempt()
        if error is not None:
            return FAIL, f"initialize failed: {describe(error)}"
        assert session is not None
        tasks = session.tasks
        if tasks is None:
            # legal: a server without tasks breaks no rule, it has none to check (exit 4,
            # "no task support", as `list` says)
            self.facts["taskSupport"] = False
            return INFO, (
                "no task support: initialize declares no tasks capability; it declares: "
                f"{keys(session.capabilities)}"
            )
        requests = tasks.get("requests") if isinstance(tasks.get("requests"), dict) else {}
        declared = [name for name in ("list", "cancel") if name in tasks]
        kinds = [
            f"{k}.{m}"
            for k, v in (requests or {}).items()
            for m in (v if isinstance(v, dict) else {})
        ]
        text = (
            f"tasks: {', '.join(declared) or 'neither list nor cancel'}; "
            f"requests: {', '.join(kinds) or 'none'}"
        )
        extra = [k for k in kinds if k != "tools.call"]
        if extra:
            text += f" ({', '.join(extra)} are not request types 2025-11-25 defines for servers)"
        return PASS, text

    async def c_tools(self) -> Outcome:
        tasks = await self.tasks_capability()
        tools = await self.tools.get()
        requests = tasks.get("requests")
        tools_req = requests.get("tools") if isinstance(requests, dict) else None
        has_call = isinstance(tools_req, dict) and "call" in tools_req
        invalid = []
        for tool in tools:
            execution = tool.get("execution")
            value = execution.get("taskSupport") if isinstance(execution, dict) else None
            if value is not None and value not in ("forbidden", "optional", "required"):
                invalid.append(f"{tool.get('name')}: {short(value)}")
        allowing = [
            f"{t.get('name')} ({_support(t)})"
            for t in tools
            if _support(t) in ("optional", "required")
        ]
        if invalid:
            return FAIL, f"execution.taskSupport values that are not allowed: {', '.join(invalid)}"
        if allowing and not has_call:
            return FAIL, (
                f"{len(allowing)} tools allow tasks ({', '.join(allowing[:5])}) but "
                "tasks.requests.tools.call is not declared: clients MUST NOT use tasks"
            )
        if has_call and not allowing:
            return WARN, "tasks.requests.tools.call is declared but no tool allows tasks"
        if not allowing:
            return PASS, "no tool allows tasks and tasks.requests.tools.call is not declared"
        return PASS, (
            f"tasks.requests.tools.call declared; {len(allowing)} of {len(tools)} tools "
            f"allow tasks: {', '.join(allowing[:6])}"
        )

    # -- creation -------------------------------------------------------------------------------

    async def c_forbidden_tool(self) -> Outcome:
        await self.tasks_capability()
        tools = await self.tools.get()
        for tool in tools:
            if _support(tool) == "forbidden" and _read_only(tool):
                args = build_arguments(tool.get("inputSchema"), [])
                if args is not None:
                    break
        else:
            raise not_applicable(
                "no read-only tool (annotations.readOnlyHint) that forbids tasks, to probe safely"
            )
        name = tool["name"]
        data, error = await self.attempt(
            "tools/call", {"name": name, "arguments": args, "task": {"ttl": REQUESTED_TTL}}
        )
        if error is not None:
            if error.code == -32601:
                return PASS, f"{name} (taskSupport forbidden) as a task: {rpc_error_text(error)}"
            return WARN, (
                f"{name} (taskSupport forbidden) as a task: {rpc_error_text(error)}; "
                "the spec asks for -32601"
            )
        if isinstance(data, dict) and "task" in data:
            return WARN, f"{name} (taskSupport forbidden) was run as a task: {short(data['task'])}"
        if isinstance(data, dict) and data.get("isError") is True:
            return WARN, (
                f"{name} (taskSupport forbidden) as a task was refused inside a tool result "
                f"(isError: {short(result_text(data), 100)}), not as a JSON-RPC -32601 error"
            )
        return WARN, f"{name} (taskSupport forbidden) ran as a normal call instead of -32601"

    async def c_required_tool(self) -> Outcome:
        tool, args = await self.probe.get()
        name = tool["name"]
        if _support(tool) != "required":
            raise not_applicable(
                f"the task tool {name} does not require tasks (taskSupport: {_support(tool)})"
            )
        data, error = await self.attempt("tools/call", {"name": name, "arguments": args})
        if error is not None:
            if error.code == -32601:
                return PASS, f"{name} without params.task: {rpc_error_text(error)}"
            return WARN, (
                f"{name} without params.task: {rpc_error_text(error)}; the spec asks "
                "for -32601 (its Error Handling section also allows -32600)"
            )
        if isinstance(data, dict) and "task" in data:
            return FAIL, f"{name} without params.task created a task anyway: {short(data['task'])}"
        if isinstance(data, dict) and data.get("isError") is True:
            return WARN, (
                f"{name} without params.task was refused inside a tool result "
                f"(isError: {short(result_text(data), 100)}), not as a JSON-RPC -32601 error"
            )
        return FAIL, f"{name} (taskSupport required) ran without params.task: {short(data, 100)}"

    async def c_creation(self) -> Outcome:
        track, error = await self.made(self.main)
        if error is not None:
            tool = self.facts.get("tool", {}).get("name", "the tool")
            return FAIL, f"tools/call {tool} with params.task: {describe(error)}"
        assert track is not None
        task = track.created["task"]
        others = [k for k in track.created if k not in ("task", "_meta")]
        status = task.get("status")
        if status != "working":
            return FAIL, f"the task was created in status {short(status)}; it MUST begin working"
        text = f"{{task: {{taskId: {track.task_id!r}, status: working, ...}}}} from {track.tool}"
        if others:
            return WARN, f"{text}; CreateTaskResult also carries {', '.join(others)}"
        return PASS, text

    async def c_ttl(self) -> Outcome:
        track = await self.main.get()
        self.cite(self.main)
        problems: list[str] = []
        for where, task in (
            ("creation", track.created["task"]),
            *(("tasks/get", t) for t in track.seen[1:]),
        ):
            if "ttl" not in task:
                problems.append(f"{where}: no ttl (MUST be the actual ttl or null)")
            elif task["ttl"] is not None and (not is_number(task["ttl"]) or task["ttl"] < 0):
                problems.append(f"{where}: ttl {short(task['ttl'])} is not a duration in ms")
            poll = task.get("pollInterval")
            if poll is not None and (not is_number(poll) or poll <= 0):
                problems.append(f"{where}: pollInterval {short(poll)} is not a positive duration")
        if problems:
            return FAIL, "; ".join(dict.fromkeys(problems))
        task = track.created["task"]
        return (
            PASS,
            f"ttl {short(task.get('ttl'))} ms, pollInterval {short(task.get('pollInterval'))}",
        )

    async def c_ttl_honoured(self) -> Outcome:
        track = await self.main.get()
        self.cite(self.main)
        ttl = track.created["task"].get("ttl")
        if ttl == REQUESTED_TTL:
            return PASS, f"asked for ttl {REQUESTED_TTL} ms and got it"
        if ttl is None and "ttl" in track.created["task"]:
            return WARN, f"asked for ttl {REQUESTED_TTL} ms, got null (unlimited)"
        return WARN, (
            f"asked for ttl {REQUESTED_TTL} ms, got {short(ttl)}: allowed (MAY override), "
            "but the client's retention wish is ignored"
        )

    # -- status ---------------------------------------------------------------------------------

    async def c_get(self) -> Outcome:
        track = await self.main.get()
        data = await self.request("tasks/get", {"taskId": track.task_id})
        if not isinstance(data, dict):
            return FAIL, f"tasks/get answered {short(data)}"
        if "task" in data and "taskId" not in data:
            return FAIL, "tasks/get wrapped the task in {task: ...}; the Task is the result itself"
        if data.get("taskId") != track.task_id:
            return (
                FAIL,
                f"asked for {track.task_id!r}, tasks/get answered {short(data.get('taskId'))}",
            )
        status = data.get("status")
        if status not in STATUSES:
            return (
                FAIL,
                f"tasks/get answered status {short(status)}, not one of {', '.join(STATUSES)}",
            )
        track.seen.append(data)
        meta = data.get("_meta")
        if isinstance(meta, dict) and RELATED in meta:
            return WARN, f"status {status}; the answer carries related-task _meta (SHOULD NOT)"
        return PASS, f"tasks/get answered the task flat, status {status}"

    # -- result ---------------------------------------------------------------------------------

    async def c_result_waits(self) -> Outcome:
        track = await self.main.get()
        if track.terminal:
            raise could_not_run(
                f"the task was already {track.status} before tasks/result was "
                "sent; use a longer task (--tool NAME k=v)"
            )
        clock = Clock()
        waiting = asyncio.create_task(
            self.attempt(
                "tasks/result", {"taskId": track.task_id}, timeout=self.opts.task_timeout + 10
            )
        )
        try:
            while not waiting.done():
                await asyncio.wait({waiting}, timeout=poll_interval(track.last))
                if not waiting.done() and not track.terminal:
                    await self.get_task(track)
        finally:
            await settle(waiting)  # never left behind, whatever ended the loop
        _data, error = waiting.result()
        took = clock.elapsed()
        after = await self.get_task(track)
        status = after.get("status")
        if error is not None:
            if status not in TERMINAL:
                return FAIL, (
                    f"tasks/result answered {rpc_error_text(error)} after {took:.1f} s "
                    f"while the task was {status}, instead of waiting"
                )
            if status == "failed":
                return PASS, f"tasks/result waited {took:.1f} s, then the task's error"
            return FAIL, (
                f"tasks/result answered {rpc_error_text(error)} after {took:.1f} s; "
                f"the task is {status}"
            )
        if status not in TERMINAL:
            return (
                FAIL,
                f"tasks/result answered after {took:.1f} s while the task was still {status}",
            )
        return PASS, f"tasks/result held its answer {took:.1f} s, until the task was {status}"

    async def c_related_task(self) -> Outcome:
        track = await self.main_done.get()
        data, error = await self.attempt("tasks/result", {"taskId": track.task_id})
        if error is not None:
            if track.status == "failed":
                raise not_applicable(
                    f"the task failed and tasks/result answered its JSON-RPC "
                    f"error ({rpc_error_text(error)}), which has no _meta"
                )
            return FAIL, f"tasks/result of the {track.status} task: {rpc_error_text(error)}"
        track.created["_result"] = data
        meta = data.get("_meta") if isinstance(data, dict) else None
        related = meta.get(RELATED) if isinstance(meta, dict) else None
        if isinstance(related, dict) and related.get("taskId") == track.task_id:
            return PASS, f"_meta[{RELATED!r}] = {{taskId: {track.task_id!r}}}"
        if isinstance(related, dict):
            return FAIL, f"related-task names {short(related.get('taskId'))}, not {track.task_id!r}"
        return FAIL, (
            f"the {track.status} task's result has no {RELATED} in _meta (_meta keys: {keys(meta)})"
        )

    async def c_payload(self) -> Outcome:
        track = await self.main_done.get()
        data = track.created.get("_result")
        if data is None:
            data, error = await self.attempt("tasks/result", {"taskId": track.task_id})
            if error is not None:
                raise could_not_run(f"tasks/result: {rpc_error_text(error)}")
        if not isinstance(data, dict) or not isinstance(data.get("content"), list):
            return (
                FAIL,
                f"tasks/result answered something that is not a CallToolResult: {short(data)}",
            )
        flag = data.get("isError")
        if flag is not None and not isinstance(flag, bool):
            return FAIL, f"isError is {short(flag)}, not a boolean"
        return PASS, (
            f"a CallToolResult with {len(data['content'])} content item(s)"
            f"{', isError true' if flag else ''}: {short(result_text(data), 80)!r}"
        )

    # -- list -----------------------------------------------------------------------------------

    async def c_list(self) -> Outcome:
        tasks = await self.tasks_capability()
        if "list" not in tasks:
            raise not_applicable("the server does not declare tasks.list")
        track = await self.main.get()
        ids: list[str] = []
        cursor: str | None = None
        pages = 0
        for pages in range(1, 101):  # noqa: B007
            data, error = await self.attempt("tasks/list", {"cursor": cursor} if cursor else {})
            if error is not None:
                return FAIL, f"tasks/list: {rpc_error_text(error)}"
            if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
                return FAIL, f"tasks/list answered no `tasks` list: {short(data)}"
            ids.extend(str(t.get("taskId")) for t in data["tasks"] if isinstance(t, dict))
            nxt = data.get("nextCursor")
            if not isinstance(nxt, str) or not nxt or nxt == cursor:
                break
            cursor = nxt
        if track.task_id in ids:
            return PASS, f"tasks/list lists the task ({len(ids)} tasks in {pages} page(s))"
        return FAIL, (
            f"tasks/list does not list task {track.task_id} although tasks/get returns "
            f"it (it listed {len(ids)} tasks)"
        )

    async def c_bad_cursor(self) -> Outcome:
        tasks = await self.tasks_capability()
        if "list" not in tasks:
            raise not_applicable("the server does not declare tasks.list")
        data, error = await self.attempt("tasks/list", {"cursor": "mcptask-check-invalid-cursor"})
        if error is None:
            count = (
                len(data["tasks"])
                if isinstance(data, dict) and isinstance(data.get("tasks"), list)
                else "?"
            )
            return FAIL, f"tasks/list accepted an invalid cursor (answered {count} tasks)"
        if error.code == -32602:
            return PASS, f"tasks/list with an invalid cursor: {rpc_error_text(error)}"
        return FAIL, f"tasks/list with an invalid cursor: {rpc_error_text(error)}, not -32602"

    # -- session --------------------------------------------------------------------------------

    async def c_binding(self) -> Outcome:
        if not self.recorder.http:
            raise not_applicable("over stdio there is one connection, so one session")
        track = await self.main.get()
        other = await self.new_session()
        if other.id is None:
            other_text = "a second initialize (the server gives no session ids)"
        else:
            other_text = "a second session"
        _data, error = await self.attempt("tasks/get", {"taskId": track.task_id}, session=other.id)
        bits = entropy_bits(track.task_id)
        if error is not None:
            return INFO, (
                f"tasks are bound to their session: from {other_text}, tasks/get of the "
                f"task answered {rpc_error_text(error)}"
            )
        text = (
            f"tasks are not bound to a session: {other_text} can read task "
            f"{track.task_id} (~{bits:.0f} random bits in its id)"
        )
        if bits < 64:
            return WARN, text + "; unbound task ids MUST be unguessable"
        return INFO, text

    # -- cancel ---------------------------------------------------------------------------------

    async def c_cancel_terminal(self) -> Outcome:
        tasks = await self.tasks_capability()
        if "cancel" not in tasks:
            raise not_applicable("the server does not declare tasks.cancel")
        track = await self.main_done.get()
        before = track.status
        data, error = await self.attempt("tasks/cancel", {"taskId": track.task_id})
        if error is not None:
            if error.code == -32602:
                return PASS, f"cancelling the {before} task: {rpc_error_text(error)}"
            return FAIL, f"cancelling the {before} task: {rpc_error_text(error)}, not -32602"
        answered = data.get("status") if isinstance(data, dict) else short(data)
        now = await self.get_task(track)
        return FAIL, (
            f"cancelling the {before} task was accepted (answered status "
            f"{short(answered)}); tasks/get now says {short(now.get('status'))}"
        )

    async def c_cancel_running(self) -> Outcome:
        tasks = await self.tasks_capability()
        if "cancel" not in tasks:
            raise not_applicable("the server does not declare tasks.cancel")
        tool, args = await self.probe.get()
        track = await self.create(str(tool["name"]), args)
        data, error = await self.attempt("tasks/cancel", {"taskId": track.task_id})
        if error is not None:
            now = await self.get_task(track)
            if now.get("status") in ("completed", "failed"):
                raise could_not_run(
                    f"the task was {now.get('status')} before the cancel arrived; use a longer task"
                )
            return FAIL, f"tasks/cancel of the working task: {rpc_error_text(error)}"
        answered = data.get("status") if isinstance(data, dict) else None
        if answered != "cancelled":
            return FAIL, (
                f"tasks/cancel answered status {short(answered)}; the task MUST be "
                "cancelled before the answer is sent"
            )
        first = await self.get_task(track)
        await asyncio.sleep(poll_interval(first))
        later = await self.get_task(track)
        if first.get("status") != "cancelled" or later.get("status") != "cancelled":
            return FAIL, (
                f"answered cancelled, then tasks/get said {short(first.get('status'))}, "
                f"then {short(later.get('status'))}"
            )
        result, rerror = await self.attempt("tasks/result", {"taskId": track.task_id})
        after = (
            rpc_error_text(rerror) if rerror else f"a result: {short(result_text(result), 60)!r}"
        )
        return PASS, f"answered cancelled and stayed cancelled; tasks/result then gives {after}"

    # -- errors ---------------------------------------------------------------------------------

    async def c_failed_status(self) -> Outcome:
        track, error = await self.made(self.failing)
        if error is not None:
            return FAIL, f"creating the failing task: {describe(error)}"
        assert track is not None
        picked = self.facts.get("failingTool", {})
        if track.status != "failed":
            data, _ = await self.attempt("tasks/result", {"taskId": track.task_id})
            if isinstance(data, dict) and data.get("isError") is True:
                return WARN, (
                    f"{track.tool} returned isError: true but the task is "
                    f"{track.status}; such a task should reach failed"
                )
            if picked.get("chosen") == "--failing-tool":
                raise could_not_run(f"--failing-tool {track.tool} ended {track.status}, not failed")
            raise not_applicable(
                f"not applicable: {track.tool} (guessed by its name) ended "
                f"{track.status}; no tool known to fail"
            )
        message = track.last.get("statusMessage")
        if not isinstance(message, str) or not message.strip():
            return WARN, f"{track.tool} ended failed without a statusMessage (SHOULD say why)"
        return PASS, f"{track.tool} ended failed: {short(message, 80)!r}"

    async def c_failed_payload(self) -> Outcome:
        track = await self.failing.get()
        if track.status != "failed":
            raise not_applicable(f"the failing tool's task ended {track.status}")
        data, error = await self.attempt("tasks/result", {"taskId": track.task_id})
        if error is not None:
            return PASS, f"tasks/result returned the task's JSON-RPC error: {rpc_error_text(error)}"
        if isinstance(data, dict) and data.get("isError") is True:
            meta = data.get("_meta")
            tagged = isinstance(meta, dict) and isinstance(meta.get(RELATED), dict)
            return PASS, (
                f"tasks/result returned the isError result {short(result_text(data), 60)!r}"
                f"{'' if tagged else ' (without related-task _meta)'}"
            )
        return WARN, (
            f"the task failed but tasks/result answered a result without isError: "
            f"{short(data, 100)}"
        )

    async def c_unknown(self) -> Outcome:
        await self.tasks_capability()
        bad: list[str] = []
        good: list[str] = []
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            _, error = await self.attempt(method, {"taskId": self.no_such})
            if error is None:
                bad.append(f"{method} answered a result")
            elif error.code != -32602:
                bad.append(f"{method}: {rpc_error_text(error)}")
            else:
                good.append(method)
        if bad:
            return FAIL, "unknown taskId: " + "; ".join(bad)
        return PASS, f"{', '.join(good)} of an unknown taskId: -32602"
