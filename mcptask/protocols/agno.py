"""Agno AgentOS's A2A routes: one path per operation under an agent or team base
(`.../a2a/agents/{id}/v1/message:send`, `tasks:get`, `tasks:cancel`), A2A 0.3 JSON-RPC bodies,
a `contextId` required to reach a task, FastAPI `{"detail": ...}` errors, no list, no
re-subscription (poll)."""

from __future__ import annotations

import re
import uuid
from typing import Any, ClassVar

from mcptask.errors import (
    HttpStatusError,
    NotApplicable,
    ProtocolError,
    ServerError,
    TaskNotFound,
    UsageError,
)
from mcptask.model.refs import TaskRef
from mcptask.model.results import Created, TaskResult
from mcptask.model.task import Task
from mcptask.protocols.a2a import classify, message_payload, normalize, result_payload
from mcptask.protocols.base import TaskProtocol
from mcptask.protocols.trace_context import TaskTrace, trace_headers, traced_message
from mcptask.transports.rpc import RpcClient

#: an agent, team or workflow base, optionally with the version segment, or one of the
#: operation URLs Agno announces (its card names `.../v1/message:stream`)
_SHAPE = re.compile(
    r"^(?P<base>.*?/a2a/(?P<kind>agents|teams|workflows)/[^/]+)"
    r"(?:/v1(?:/(?:message:send|message:stream|tasks:get|tasks:cancel))?)?/?$"
)


def agno_base(url: str) -> tuple[str, str]:
    """The agent/team base URL (no trailing `/v1`) and `agents` or `teams`."""
    bare = url.split("?", 1)[0].split("#", 1)[0]
    m = _SHAPE.match(bare)
    if m:
        return m.group("base"), m.group("kind")
    base = bare.rstrip("/")
    for op in ("/message:send", "/message:stream", "/tasks:get", "/tasks:cancel"):
        base = base.removesuffix(op)
    base = base.removesuffix("/v1")
    return base, "agents"


async def probe(rpc: RpcClient, url: str) -> str | None:
    """Agno is known by its URL shape alone (no request): `/a2a/agents/<id>` or
    `/a2a/teams/<id>`, optionally followed by `/v1`."""
    from urllib.parse import urlsplit

    path = urlsplit(url).path
    return "agno" if _SHAPE.match(path) else None


class Agno(TaskProtocol):
    name: ClassVar[str] = "agno"
    default_interval: ClassVar[float] = 2.0
    can_list: ClassVar[bool] = False
    can_subscribe: ClassVar[bool] = False

    def __init__(
        self,
        rpc: RpcClient,
        server: str,
        *,
        session: str | None = None,
        context_id: str | None = None,
    ) -> None:
        super().__init__(rpc, server, session=session, context_id=context_id)
        self.base, self.kind = agno_base(server)

    def _task(self, data: Any, what: str = "task") -> Task:
        return normalize(data, protocol=self.name, server=self.server, what=what)

    def _context(self, ref: TaskRef) -> str:
        context = ref.context_id or self.context_id
        if not context:
            raise UsageError(
                f"Agno needs the task's context to reach task {ref.task_id}: pass --context-id "
                "(the contextId `send` printed; tasks sent from this machine remember it)"
            )
        return context

    # -- requests -------------------------------------------------------------------------------

    async def _post(
        self,
        op: str,
        method: str,
        params: dict[str, Any],
        ref: TaskRef | None,
        *,
        trace: TaskTrace | None = None,
    ) -> Any:
        """One operation's route; a request about a task carries its trace (`ref.trace`;
        `trace`: the task a send starts) in HTTP headers."""
        url = f"{self.base}/v1/{op}"
        headers = trace_headers(trace or (ref.trace if ref is not None else None))
        try:
            return await self.rpc.request(method, params, url=url, headers=headers)
        except HttpStatusError as exc:
            raise self._error(exc, op, ref) from None

    def _error(self, exc: HttpStatusError, op: str, ref: TaskRef | None) -> Exception:
        detail = exc.detail or ""
        if exc.status == 404 and ref is not None and "task not found" in detail.lower():
            return TaskNotFound(
                f"task {ref.task_id}: not found in context {ref.context_id or self.context_id} "
                "(Agno answers the same for an unknown task and a wrong --context-id)"
            )
        if exc.status == 501:
            component = "team" if self.kind == "teams" else "agent"
            what = {"message:send": "start tasks", "tasks:get": "poll tasks"}.get(
                op, "cancel tasks"
            )
            return ServerError(
                f"this Agno {component} cannot {what} over A2A: Agno does not support it for "
                f"this {component} type (HTTP 501: {detail or 'Not Implemented'})"
            )
        return exc

    # -- operations -----------------------------------------------------------------------------

    async def send_message(
        self, text: str, *, context_id: str | None, trace: TaskTrace | None = None
    ) -> Created:
        context_id = context_id or self.context_id
        message: dict[str, Any] = {
            "messageId": str(uuid.uuid4()),
            "role": "user",
            "kind": "message",
            "parts": [{"kind": "text", "text": text}],
        }
        if context_id:
            message["contextId"] = context_id
        params = {"message": traced_message(message, trace), "configuration": {"blocking": False}}
        kind, body = classify(
            await self._post("message:send", "message/send", params, None, trace=trace)
        )
        if kind == "message":
            return Created(task=None, result=message_payload(body))
        if kind != "task":
            raise ProtocolError(f"the agent answered message/send with a {kind} event")
        task = self._task(body, "created task")
        return Created(task=task, ref=TaskRef(task.taskId, context_id=task.contextId or context_id))

    def _no_lookup(self, ref: TaskRef, what: str) -> ServerError:
        return ServerError(
            f"Agno cannot {what} workflow tasks: a workflow's task exists only in the answer "
            f"to the message that ran it (task {ref.task_id}; `send --result` shows it)"
        )

    async def get(self, ref: TaskRef) -> Task:
        if self.kind == "workflows":
            raise self._no_lookup(ref, "look up")
        params: dict[str, Any] = {"id": ref.task_id, "contextId": self._context(ref)}
        if self.history_length is not None:
            params["historyLength"] = self.history_length
        task = self._task(await self._post("tasks:get", "tasks/get", params, ref))
        if task.taskId != ref.task_id:
            raise ProtocolError(
                f"asked for task {ref.task_id}, the agent answered task {task.taskId}"
            )
        return task

    async def result(self, ref: TaskRef, task: Task) -> TaskResult:
        return TaskResult(task=task, payload=result_payload(task.raw))

    async def cancel(self, ref: TaskRef) -> Task | None:
        if self.kind == "workflows":
            raise self._no_lookup(ref, "cancel")
        # Agno answers `canceled` for any id, finished or unknown: look the task up first
        task = await self.get(ref)
        if task.terminal:
            raise NotApplicable(f"task {ref.task_id} has already ended: {task.status}")
        params = {"id": ref.task_id, "contextId": self._context(ref)}
        await self._post("tasks:cancel", "tasks/cancel", params, ref)
        # its answer is always `canceled`; the run stops when Agno next checks: poll to see it
        return None

    async def list_tasks(self, refs: list[TaskRef]) -> list[Task]:
        return []
