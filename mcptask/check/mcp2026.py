"""Checks for MCP 2026-07-28 with the tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`).

Requests are built by hand (`_meta`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) so a check
can leave the declaration out or send a wrong header on purpose. Tools carry no task metadata on
this wire, so the task tool comes from `--tool` (without it the task checks cannot run: the run is
incomplete).
"""

from __future__ import annotations

from typing import Any

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
    Skip,
    check_table,
    could_not_run,
    describe,
    entropy_bits,
    is_int,
    keys,
    not_applicable,
    rpc_error_text,
    short,
)
from mcptask.protocols.mcp2026 import (
    META_CAPABILITIES,
    TASKS_EXTENSION,
    VERSION,
    client_meta,
    request_headers,
)
from mcptask.protocols.wire import task_support

S = "SEP-2663 tasks extension"
CORE = "MCP 2026-07-28"
MISSING_CAPABILITY = -32021
#: the code SEP-2663's drafts used before the core renumbered its errors
DRAFT_MISSING_CAPABILITY = -32003
HEADER_MISMATCH = -32020
WRONG_NAME = "mcptask-check-wrong-name"


C = check_table(
    "mcp2026",
    (
        (
            "capability.discover",
            "capability",
            "server/discover offers 2026-07-28 and lists the tasks extension",
            f"{S} §Capability Negotiation",
        ),
        (
            "capability.tool-metadata",
            "capability",
            "whether tools say which of them make tasks (a fact: 2026-07-28 has no taskSupport)",
            f"{S} §Capability Negotiation (server-directed creation)",
        ),
        (
            "creation.undeclared",
            "creation",
            "a tools/call without the extension in clientCapabilities never yields a task",
            f"{S} §Capability Negotiation (MUST NOT)",
        ),
        (
            "creation.result-type",
            "creation",
            'a declared tools/call that makes a task answers a flat Task with resultType "task"',
            f"{S} §Polymorphic Results, §Task Creation",
        ),
        (
            "creation.durable",
            "creation",
            "the task exists when CreateTaskResult arrives: tasks/get resolves at once",
            f"{S} §Task Creation (MUST)",
        ),
        (
            "status.result-type",
            "status",
            'tasks/get answers the task flat with resultType "complete"',
            f"{S} §Task Polling (MUST)",
        ),
        (
            "status.ttl",
            "status",
            "ttlMs is present (integer ms or null); pollIntervalMs, when present, is positive ms",
            f"{S} §Tasks (Task)",
        ),
        (
            "status.message",
            "status",
            "a working task says what it is doing (statusMessage)",
            f"{S} §Tasks (optional field)",
        ),
        (
            "update.unknown-key",
            "update",
            "tasks/update with a key that is not outstanding is acknowledged and ignored",
            f"{S} §Task Update Requests",
        ),
        (
            "wire.mcp-name",
            "wire",
            "an Mcp-Name header that does not match the body is rejected (-32020)",
            f"{S} §Streamable HTTP: Routing Headers; {CORE} Streamable HTTP §Server Validation",
        ),
        (
            "wire.mcp-method",
            "wire",
            "an Mcp-Method header that does not match the body is rejected (-32020)",
            f"{CORE} Streamable HTTP §Server Validation",
        ),
        (
            "status.lifecycle",
            "status",
            "statuses follow the allowed paths and stay terminal",
            f"{S} §Task Status",
        ),
        (
            "status.timestamps",
            "status",
            "createdAt and lastUpdatedAt are ISO 8601",
            f"{S} §Tasks (Task)",
        ),
        (
            "result.inline",
            "result",
            "a completed task carries its result inline (a failed one its error)",
            f"{S} §Task Polling, §Error Handling",
        ),
        (
            "result.removed",
            "result",
            "tasks/result no longer exists: -32601",
            f"{S} §Motivation (tasks/result removed); JSON-RPC 2.0 §5.1",
        ),
        (
            "list.removed",
            "list",
            "tasks/list no longer exists: -32601",
            f"{S} §Security Considerations (no tasks/list); JSON-RPC 2.0 §5.1",
        ),
        (
            "errors.undeclared",
            "errors",
            "tasks/get, tasks/update and tasks/cancel without the declaration are -32021",
            f"{CORE} basic §Error Codes; {S} §Capability Negotiation",
        ),
        (
            "errors.unknown-task",
            "errors",
            "an unknown taskId is -32602 (MUST for tasks/get, SHOULD for update and cancel)",
            f"{S} §Error Handling: Protocol Errors",
        ),
        (
            "cancel.ack",
            "cancel",
            "tasks/cancel is acknowledged with an empty result; the task then ends",
            f"{S} §Task Cancellation",
        ),
        (
            "result.failed",
            "result",
            "a JSON-RPC failure ends failed with `error`; a tool error (isError) stays completed",
            f"{S} §Task Status, §Task Execution Errors",
        ),
        (
            "security.task-ids",
            "security",
            "task ids are unique and hard to guess",
            f"{S} §Security Considerations",
        ),
    ),
)
CHECKS: list[CheckDef] = list(C.values())


class Mcp2026Suite(McpSuite):
    protocol = "mcp-2026-07-28"
    FORBIDDEN_TOOL = "--tool {tool} says taskSupport: forbidden"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.discovered = self.lazy("server/discover", self._discover)
        self.task_ids: list[str] = []

    def plan(self) -> list[tuple[CheckDef, CheckFn]]:
        order: list[tuple[str, CheckFn]] = [
            ("capability.discover", self.c_discover),
            ("capability.tool-metadata", self.c_tool_metadata),
            ("creation.undeclared", self.c_undeclared_call),
            ("creation.result-type", self.c_creation),
            ("creation.durable", self.c_durable),
            ("status.result-type", self.c_get),
            ("status.ttl", self.c_ttl),
            ("status.message", self.c_message),
            ("update.unknown-key", self.c_update),
            ("wire.mcp-name", self.c_mcp_name),
            ("wire.mcp-method", self.c_mcp_method),
            ("status.lifecycle", self.c_lifecycle),
            ("status.timestamps", self.c_timestamps),
            ("result.inline", self.c_inline),
            ("result.removed", self.c_removed_result),
            ("list.removed", self.c_removed_list),
            ("errors.undeclared", self.c_undeclared_tasks),
            ("errors.unknown-task", self.c_unknown),
            ("cancel.ack", self.c_cancel),
            ("result.failed", self.c_failed),
            ("security.task-ids", self.c_task_ids),
        ]
        return [
            (C[name], fn if name == "capability.discover" else self.guarded(fn))
            for name, fn in order
        ]

    def guarded(self, fn: CheckFn) -> CheckFn:
        """The check, run only when the server offers 2026-07-28 tasks at all (a server that
        does not fails `capability.discover`; the rest does not apply)."""

        async def run() -> Outcome:
            data, error = await self.discovered.attempt()
            caps = data.get("capabilities") if isinstance(data, dict) else None
            extensions = caps.get("extensions") if isinstance(caps, dict) else None
            if (
                error is not None
                or not isinstance(extensions, dict)
                or (TASKS_EXTENSION not in extensions)
            ):
                raise not_applicable(
                    f"the server does not offer MCP {VERSION} with {TASKS_EXTENSION} "
                    "(mcp2026.capability.discover)"
                )
            return await fn()

        return run

    # -- plumbing -------------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: dict[str, Any],
        *,
        name: str | None = None,
        declare: bool = True,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> Any:
        meta = client_meta()
        if not declare:
            meta[META_CAPABILITIES] = {"elicitation": {"form": {}}}
        sent = request_headers(method, name)
        sent.update(headers or {})
        return await self.rpc.request(
            method, {**params, "_meta": meta}, headers=sent, timeout=timeout
        )

    def routing(self, task_id: str) -> dict[str, Any]:
        return {"name": task_id}

    def support(self, tool: Tool) -> str | None:
        return task_support(tool)

    async def create(self, tool: str, arguments: dict[str, Any], *, guessed: bool = False) -> Track:
        data = await self.request(
            "tools/call",
            {"name": tool, "arguments": arguments},
            name=tool,
            timeout=self.opts.task_timeout + 10,
        )
        if not isinstance(data, dict):
            raise BadAnswer(f"tools/call answered something that is not an object: {short(data)}")
        kind = data.get("resultType")
        if isinstance(data.get("task"), dict) and "taskId" not in data:
            raise BadAnswer(
                "tools/call answered a 2025-11-25 style nested {task: ...}; "
                '2026-07-28 tasks are flat with resultType "task"'
            )
        if kind == "task" or (kind is None and "taskId" in data and "content" not in data):
            if not isinstance(data.get("taskId"), str) or not data["taskId"]:
                raise BadAnswer(f"the created task has no string taskId: {short(data)}")
            self.task_ids.append(data["taskId"])
            return Track(data["taskId"], tool, data, seen=[data])
        text = (
            f"tools/call {tool} answered without a task (resultType {short(kind)}); the "
            "server decides per call whether to make one"
        )
        raise not_applicable(text) if guessed else could_not_run(text + ": choose another --tool")

    # -- fixtures -------------------------------------------------------------------------------

    async def _discover(self) -> dict[str, Any]:
        data = await self.request("server/discover", {})
        if not isinstance(data, dict):
            raise BadAnswer(f"server/discover answered {short(data)}")
        return data

    def auto_tool(self, tools: list[Tool]) -> tuple[Tool, dict[str, Any]]:
        found = self.first_task_tool(tools)
        if found is not None:
            return found
        self.note(
            "on MCP 2026-07-28 tools do not say which of them make tasks: pass --tool NAME "
            "k=v naming one; without it the task checks cannot run and the run is incomplete"
        )
        raise could_not_run(
            "--tool is needed: 2026-07-28 tools carry no task metadata, so "
            "mcptask cannot tell which tool makes a task"
        )

    # -- capability -----------------------------------------------------------------------------

    async def c_discover(self) -> Outcome:
        data, error = await self.discovered.attempt()
        if error is not None:
            return FAIL, f"server/discover: {describe(error)}"
        assert data is not None
        meta = data.get("_meta")
        info = meta.get("io.modelcontextprotocol/serverInfo") if isinstance(meta, dict) else None
        if isinstance(info, dict):
            self.facts["serverInfo"] = info
        versions = data.get("supportedVersions")
        caps = data.get("capabilities")
        extensions = caps.get("extensions") if isinstance(caps, dict) else None
        problems = []
        if not isinstance(versions, list) or VERSION not in versions:
            problems.append(f"supportedVersions {short(versions)} lacks {VERSION}")
        if not isinstance(extensions, dict) or TASKS_EXTENSION not in extensions:
            problems.append(f"capabilities.extensions ({keys(extensions)}) lacks {TASKS_EXTENSION}")
        if problems:
            return FAIL, "; ".join(problems)
        text = f"supportedVersions {short(versions)}; extensions: {keys(extensions)}"
        if data.get("resultType") != "complete":
            return WARN, f"{text}; but resultType is {short(data.get('resultType'))}, not complete"
        return PASS, text

    async def c_tool_metadata(self) -> Outcome:
        tools = await self.tools.get()
        marked = [f"{t.get('name')} ({task_support(t)})" for t in tools if task_support(t)]
        tool = self.opts.tool
        if marked:
            return (
                INFO,
                f"{len(marked)} of {len(tools)} tools carry taskSupport: {', '.join(marked)}",
            )
        then = (
            f"the task tool is --tool {tool}"
            if tool
            else "pass --tool NAME k=v: without it the task checks cannot run"
        )
        return INFO, f"none of the {len(tools)} tools says whether it makes tasks; {then}"

    # -- creation -------------------------------------------------------------------------------

    async def c_undeclared_call(self) -> Outcome:
        tool, args = await self.probe.get()
        name = str(tool["name"])
        data, error = await self.attempt(
            "tools/call",
            {"name": name, "arguments": args},
            name=name,
            declare=False,
            timeout=self.opts.task_timeout + 10,
        )
        if error is not None:
            if error.code == MISSING_CAPABILITY:
                return PASS, f"refused: {rpc_error_text(error)}"
            return WARN, (
                f"answered {rpc_error_text(error)}; expected a plain result or {MISSING_CAPABILITY}"
            )
        if isinstance(data, dict) and (
            data.get("resultType") == "task"
            or "taskId" in data
            or isinstance(data.get("task"), dict)
        ):
            tid = data.get("taskId") or (data.get("task") or {}).get("taskId")
            return FAIL, (
                f"{name} without the extension declared still answered a task ({short(tid)})"
            )
        kind = data.get("resultType") if isinstance(data, dict) else None
        return PASS, (
            f"without the extension, {name} answered its result directly "
            f"(resultType {short(kind)}): {short(result_text(data), 60)!r}"
        )

    async def c_creation(self) -> Outcome:
        track, error = await self.made(self.main)
        if error is not None:
            return FAIL, f"tools/call with the extension declared: {describe(error)}"
        assert track is not None
        data = track.created
        missing = [
            k for k in ("taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs") if k not in data
        ]
        if data.get("resultType") != "task":
            return FAIL, (
                f"the task came back with resultType {short(data.get('resultType'))}; "
                'it MUST be "task"'
            )
        if missing:
            return FAIL, f"the created task lacks {', '.join(missing)}"
        if data.get("status") not in STATUSES:
            return FAIL, f"the created task has status {short(data.get('status'))}"
        return PASS, (
            f"resultType task, taskId {track.task_id!r}, status {data.get('status')}, "
            f"from {track.tool}"
        )

    async def c_durable(self) -> Outcome:
        track = await self.main.get()
        clock = Clock()
        data, error = await self.attempt("tasks/get", {"taskId": track.task_id}, name=track.task_id)
        if error is not None:
            return FAIL, f"tasks/get right after creation: {rpc_error_text(error)}"
        if isinstance(data, dict) and isinstance(data.get("status"), str):
            track.seen.append(data)
        return PASS, f"tasks/get resolved right after creation ({clock.elapsed() * 1000:.0f} ms)"

    # -- status ---------------------------------------------------------------------------------

    async def c_get(self) -> Outcome:
        track = await self.main.get()
        data = await self.request("tasks/get", {"taskId": track.task_id}, name=track.task_id)
        if not isinstance(data, dict):
            return FAIL, f"tasks/get answered {short(data)}"
        if data.get("taskId") != track.task_id:
            return FAIL, f"asked for {track.task_id!r}, answered taskId {short(data.get('taskId'))}"
        if data.get("status") not in STATUSES:
            return FAIL, f"status {short(data.get('status'))} is not an MCP status"
        track.seen.append(data)
        kind = data.get("resultType")
        if kind != "complete":
            return FAIL, f"tasks/get answered resultType {short(kind)}; it MUST be complete"
        return PASS, f"flat task, resultType complete, status {data['status']}"

    async def c_ttl(self) -> Outcome:
        track = await self.main.get()
        problems: list[str] = []
        legacy: set[str] = set()
        for task in track.seen:
            if "ttlMs" not in task:
                problems.append("a task answer has no ttlMs (required; null means unlimited)")
            elif task["ttlMs"] is not None and (not is_int(task["ttlMs"]) or task["ttlMs"] < 0):
                problems.append(f"ttlMs {short(task['ttlMs'])} is not integer milliseconds")
            poll = task.get("pollIntervalMs")
            if poll is not None and (not is_int(poll) or poll <= 0):
                problems.append(f"pollIntervalMs {short(poll)} is not positive integer ms")
            legacy.update(k for k in ("ttl", "pollInterval") if k in task)
        if problems:
            return FAIL, "; ".join(dict.fromkeys(problems))
        first = track.seen[0]
        poll = short(first.get("pollIntervalMs"))
        text = f"ttlMs {short(first.get('ttlMs'))}, pollIntervalMs {poll}"
        if legacy:
            return WARN, f"{text}; also the 2025-11-25 names {', '.join(sorted(legacy))}"
        return PASS, text

    async def c_update(self) -> Outcome:
        track = await self.main.get()
        data, error = await self.attempt(
            "tasks/update",
            {
                "taskId": track.task_id,
                "inputResponses": {"mcptask-check-not-outstanding": {"action": "decline"}},
            },
            name=track.task_id,
        )
        if error is not None:
            return WARN, (
                f"tasks/update with a key that is not outstanding: {rpc_error_text(error)}"
                "; it SHOULD be acknowledged and ignored"
            )
        extra = (
            [k for k in (data or {}) if k not in ("resultType", "_meta")]
            if isinstance(data, dict)
            else ["(not an object)"]
        )
        if not isinstance(data, dict) or data.get("resultType") != "complete" or extra:
            return (
                FAIL,
                f"the acknowledgement is not an empty result, resultType complete: {short(data)}",
            )
        return PASS, f"acknowledged with {short(data.get('resultType'))} and ignored"

    # -- wire -----------------------------------------------------------------------------------

    async def c_mcp_name(self) -> Outcome:
        if not self.recorder.http:
            raise not_applicable("Mcp-Name is an HTTP header; this target is stdio")
        track = await self.main.get()
        tool, args = await self.probe.get()
        problems: list[str] = []
        seen: list[str] = []
        _, error = await self.attempt("tasks/get", {"taskId": track.task_id}, name=WRONG_NAME)
        if error is None:
            problems.append("tasks/get with a wrong Mcp-Name was answered")
        elif error.code != HEADER_MISMATCH:
            problems.append(f"tasks/get with a wrong Mcp-Name: {rpc_error_text(error)}")
        else:
            seen.append(f"tasks/get {rpc_error_text(error)}")
        data, error = await self.attempt(
            "tools/call", {"name": tool["name"], "arguments": args}, name=WRONG_NAME
        )
        if error is None:
            if isinstance(data, dict) and isinstance(data.get("taskId"), str):
                self.task_ids.append(data["taskId"])
            problems.append(f"tools/call {tool['name']} with Mcp-Name {WRONG_NAME} was run")
        elif error.code != HEADER_MISMATCH:
            problems.append(f"tools/call with a wrong Mcp-Name: {rpc_error_text(error)}")
        else:
            seen.append(f"tools/call {rpc_error_text(error)}")
        if problems:
            return FAIL, "; ".join(problems)
        return PASS, "; ".join(seen)

    async def c_mcp_method(self) -> Outcome:
        if not self.recorder.http:
            raise not_applicable("Mcp-Method is an HTTP header; this target is stdio")
        track = await self.main.get()
        _, error = await self.attempt(
            "tasks/get",
            {"taskId": track.task_id},
            name=track.task_id,
            headers={"Mcp-Method": "tools/list"},
        )
        if error is None:
            return FAIL, "tasks/get sent with Mcp-Method: tools/list was answered"
        if error.code != HEADER_MISMATCH:
            return FAIL, f"tasks/get with Mcp-Method tools/list: {rpc_error_text(error)}"
        return PASS, f"tasks/get with Mcp-Method tools/list: {rpc_error_text(error)}"

    # -- the finished task ----------------------------------------------------------------------

    async def c_inline(self) -> Outcome:
        track = await self.main_done.get()
        return _judge_outcome(track.last, track.tool)

    async def c_removed_result(self) -> Outcome:
        return await self._removed("tasks/result")

    async def c_removed_list(self) -> Outcome:
        return await self._removed("tasks/list")

    async def _removed(self, method: str) -> Outcome:
        params: dict[str, Any] = {}
        name: str | None = None
        if method == "tasks/result":
            # the task when there is one, else an id of none: the method itself must be gone
            track, _ = await self.main.attempt()
            name = track.task_id if track is not None else self.no_such
            params = {"taskId": name}
        data, error = await self.attempt(method, params, name=name)
        if error is None:
            return FAIL, f"{method} answered a result: {short(data, 100)}"
        if error.code == -32601:
            return PASS, f"{method}: {rpc_error_text(error)}"
        return FAIL, f"{method}: {rpc_error_text(error)}, not -32601"

    async def c_undeclared_tasks(self) -> Outcome:
        track = await self.main_done.get()
        problems: list[str] = []
        notes: list[str] = []
        good: list[str] = []
        calls: list[tuple[str, dict[str, Any]]] = [
            ("tasks/get", {"taskId": track.task_id}),
            ("tasks/update", {"taskId": track.task_id, "inputResponses": {}}),
            ("tasks/cancel", {"taskId": track.task_id}),
        ]
        for method, params in calls:
            data, error = await self.attempt(method, params, name=track.task_id, declare=False)
            if error is None:
                problems.append(f"{method} was answered: {short(data, 60)}")
            elif error.code == DRAFT_MISSING_CAPABILITY:
                notes.append(
                    f"{method}: {error.code} (the SEP's draft code; 2026-07-28 "
                    f"uses {MISSING_CAPABILITY})"
                )
            elif error.code != MISSING_CAPABILITY:
                problems.append(f"{method}: {rpc_error_text(error)}")
            else:
                data_ = error.data if isinstance(error.data, dict) else {}
                required = data_.get("requiredCapabilities")
                ext = required.get("extensions") if isinstance(required, dict) else None
                if not isinstance(ext, dict) or TASKS_EXTENSION not in ext:
                    notes.append(
                        f"{method}: -32021 without data.requiredCapabilities naming the extension"
                    )
                else:
                    good.append(method)
        if problems:
            return FAIL, "without the declaration: " + "; ".join(problems)
        if notes:
            return WARN, "; ".join(notes)
        return PASS, (f"{', '.join(good)} without the declaration: -32021 naming {TASKS_EXTENSION}")

    async def c_unknown(self) -> Outcome:
        fails: list[str] = []
        warns: list[str] = []
        for method, params in (
            ("tasks/get", {"taskId": self.no_such}),
            ("tasks/update", {"taskId": self.no_such, "inputResponses": {}}),
            ("tasks/cancel", {"taskId": self.no_such}),
        ):
            _, error = await self.attempt(method, params, name=self.no_such)
            wrong = (
                f"{method} answered a result"
                if error is None
                else f"{method}: {rpc_error_text(error)}"
                if error.code != -32602
                else None
            )
            if wrong:
                (fails if method == "tasks/get" else warns).append(wrong)
        if fails:
            return FAIL, "unknown taskId: " + "; ".join(fails + warns)
        if warns:
            return WARN, "unknown taskId (SHOULD be -32602): " + "; ".join(warns)
        return PASS, "tasks/get, tasks/update and tasks/cancel of an unknown taskId: -32602"

    async def c_cancel(self) -> Outcome:
        tool, args = await self.probe.get()
        track = await self.create(str(tool["name"]), args)
        data, error = await self.attempt(
            "tasks/cancel", {"taskId": track.task_id}, name=track.task_id
        )
        if error is not None:
            return FAIL, f"tasks/cancel of a {track.status} task: {rpc_error_text(error)}"
        extra = (
            [k for k in data if k not in ("resultType", "_meta")]
            if isinstance(data, dict)
            else ["(not an object)"]
        )
        if not isinstance(data, dict) or data.get("resultType") != "complete" or extra:
            return FAIL, (
                f"the acknowledgement is not an empty result with resultType complete: "
                f"{short(data)}"
            )
        clock = Clock()
        try:
            await self.wait_terminal(track)
        except Skip:
            return WARN, (
                f"acknowledged; the task was still {track.status} after "
                f"{clock.elapsed():.0f} s (cancellation is cooperative)"
            )
        if track.status == "cancelled":
            return PASS, f"acknowledged, then cancelled within {clock.elapsed():.1f} s"
        return PASS, (
            f"acknowledged; the task ended {track.status} (cancellation is cooperative, "
            "a finished task may stay finished)"
        )

    async def c_failed(self) -> Outcome:
        track, error = await self.made(self.failing)
        if error is not None:
            return FAIL, f"creating the failing task: {describe(error)}"
        assert track is not None
        task = track.last
        if track.status == "completed":
            result = task.get("result")
            if isinstance(result, dict) and result.get("isError") is True:
                return PASS, (
                    f"{track.tool} returned a tool error: the task is completed with "
                    f"isError in result ({short(result_text(result), 60)!r}), as 2026 wants"
                )
            if self.facts.get("failingTool", {}).get("chosen") == "--failing-tool":
                raise could_not_run(f"--failing-tool {track.tool} completed without an error")
            raise not_applicable(
                f"not applicable: {track.tool} (guessed by its name) completed "
                "without an error; no tool known to fail"
            )
        if track.status != "failed":
            raise could_not_run(f"the failing task ended {track.status}")
        verdict, text = _judge_outcome(task, track.tool)
        if verdict != PASS:
            return verdict, text
        message = task.get("statusMessage")
        if not isinstance(message, str) or not message.strip():
            return WARN, f"{text}; no statusMessage (SHOULD say why)"
        return PASS, text

    async def c_task_ids(self) -> Outcome:
        await self.main.get()
        ids = list(dict.fromkeys(self.task_ids))
        if len(ids) != len(self.task_ids):
            return FAIL, f"the same taskId was given to two tasks: {short(self.task_ids)}"
        weakest = min(ids, key=entropy_bits)
        bits = entropy_bits(weakest)
        if bits < 64:
            return WARN, (
                f"task ids look guessable: {weakest!r} carries ~{bits:.0f} random bits; "
                "ids are the only guard here (MUST be unguessable)"
            )
        return PASS, f"{len(ids)} distinct ids, the weakest ~{bits:.0f} random bits ({weakest!r})"


def _judge_outcome(task: dict[str, Any], tool: str) -> Outcome:
    status = task.get("status")
    if status == "completed":
        result = task.get("result")
        if not isinstance(result, dict):
            return FAIL, "the completed task carries no `result` object"
        if not isinstance(result.get("content"), list):
            return FAIL, f"`result` is not a CallToolResult: {short(result, 100)}"
        if "error" in task:
            return FAIL, "the completed task carries an `error` too"
        return PASS, f"completed with result inline: {short(result_text(result), 80)!r}"
    if status == "failed":
        error = task.get("error")
        if "result" in task:
            return FAIL, "the failed task carries a `result`; failed is only for JSON-RPC errors"
        if (
            not isinstance(error, dict)
            or not is_int(error.get("code"))
            or not isinstance(error.get("message"), str)
        ):
            return FAIL, f"the failed task's `error` is not a JSON-RPC error object: {short(error)}"
        return PASS, f"{tool} failed with error {error['code']} {short(error['message'], 80)!r}"
    if status in TERMINAL:
        raise not_applicable(f"the task ended {status}: no result or error to carry")
    raise could_not_run(f"the task is {status}")
