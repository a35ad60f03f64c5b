"""A2A (Agent2Agent) 1.0 and 0.3 over JSON-RPC: tasks started by a message, read, cancelled,
listed (1.0 only) and followed by subscription. Both versions share one class; what differs
(method names, part and role spellings, how answers are wrapped) is class data.

The module also holds what Agno's A2A routes share with plain A2A (`protocols.agno`): task
normalization, parts, and the result payload."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, StrictStr, field_validator

from mcptask.errors import (
    AuthError,
    HttpStatusError,
    NotApplicable,
    ProtocolError,
    PushUrlRefused,
    RpcError,
    ServerError,
    TaskNotFound,
    UsageError,
)
from mcptask.model.inputs import TEXT_FORM, Answered, InputRequest
from mcptask.model.push import PushConfig
from mcptask.model.refs import TaskRef
from mcptask.model.results import Created, TaskResult
from mcptask.model.status import Status, normalize_status
from mcptask.model.task import Task
from mcptask.protocols.base import (
    CannotList,
    Found,
    PageWalk,
    Responder,
    TaskFilter,
    TaskProtocol,
    Unrecognised,
    lenient_str,
    parse_wire,
    refuse_finished,
)
from mcptask.protocols.trace_context import TaskTrace, trace_headers, traced_message
from mcptask.protocols.wire import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    PUSH_NOT_SUPPORTED,
    TASK_NOT_CANCELABLE,
    TASK_NOT_FOUND,
    UNSUPPORTED_OPERATION,
    VERSION_NOT_SUPPORTED,
)
from mcptask.text import jsonsafe
from mcptask.text.command_line import command_line
from mcptask.transports.rpc import FetchesUrls, RpcClient, SwitchesUrl, Traces, error_from

# -- normalization (shared with Agno) ---------------------------------------------------------


class WireStatus(BaseModel):
    model_config = ConfigDict(extra="allow")

    state: StrictStr
    message: Any = None
    timestamp: str | None = None

    @field_validator("timestamp", mode="before")
    @classmethod
    def _str(cls, v: Any) -> str | None:
        return lenient_str(v)


class WireTask(BaseModel):
    """An A2A task (0.3 or 1.0). `id` and `status.state` must be strings; the rest is read
    leniently (the original stays in `raw`)."""

    model_config = ConfigDict(extra="allow")

    id: StrictStr
    status: WireStatus
    contextId: str | None = None

    @field_validator("contextId", mode="before")
    @classmethod
    def _str(cls, v: Any) -> str | None:
        return lenient_str(v)


def normalize_state(state: str) -> Status:
    """Every A2A spelling: 0.3 `input-required`, `canceled`, `unknown`; 1.0 `TASK_STATE_*`
    (also `TASK_STATE_CANCELLED` and `TASK_STATE_UNSPECIFIED`). Unknown words are `working`."""
    word = state.strip()
    if word.upper().startswith("TASK_STATE_"):
        word = word[len("TASK_STATE_") :]
    return normalize_status(word)


def wire_state(status: str) -> str:
    """A normalized status as A2A 1.0 spells it (`input_required` -> `TASK_STATE_INPUT_REQUIRED`,
    `cancelled` -> `TASK_STATE_CANCELED`)."""
    word = "canceled" if status == "cancelled" else status
    return "TASK_STATE_" + word.upper()


def question_in_history(data: Any) -> Any:
    """The agent's last message in a task's `history`: the question of an `input-required`
    status that carries none (agents built on some frameworks put it only there)."""
    history = data.get("history") if isinstance(data, dict) else None
    for message in reversed(history if isinstance(history, list) else []):
        if _is_agent(message) and message_text(message):
            return message
    return None


#: words in an artifact's name, or a data part's key, that say it holds a question for the
#: client (graph frameworks report an interrupt so: `__interrupt__`)
_ASKING = ("interrupt", "question", "input_request", "input-request", "elicitation")
#: keys under which such a data part carries the question's text
_ASKED_KEYS = ("question", "prompt", "message", "value", "text", "description")


def question_in_artifacts(data: Any, *, with_data: bool = False) -> dict[str, Any] | None:
    """An `input-required` task's question kept in an artifact (a data part named like an
    interrupt) when neither its status nor its history carries one: as an agent message whose
    text is the question found inside (else the parts as they came); `with_data`: the data
    parts too (a structured request `answer --data` answers)."""
    artifacts = data.get("artifacts") if isinstance(data, dict) else None
    for artifact in reversed(artifacts if isinstance(artifacts, list) else []):
        if not isinstance(artifact, dict) or not isinstance(artifact.get("parts"), list):
            continue
        parts = [p for p in artifact["parts"] if isinstance(p, dict)]
        names = [str(artifact.get("name") or "")]
        for part in parts:
            value = part_view(part).get("data")
            if isinstance(value, dict):
                names.extend(str(k) for k in value)
        if not any(word in n.lower() for n in names for word in _ASKING):
            continue
        text = next((t for t in (_asked_text(part_view(p)) for p in parts) if t), None)
        kept = [p for p in parts if part_view(p)["kind"] == "data"] if with_data else []
        return {"role": "agent", "parts": [{"text": text}, *kept] if text else parts}
    return None


def _asked_text(value: Any, depth: int = 0) -> str | None:
    """The first question-like text in a part's data (or the part's own text)."""
    if depth > 4:
        return None
    if isinstance(value, dict):
        if value.get("kind") == "text" and isinstance(value.get("text"), str):
            return str(value["text"]) or None
        for key in _ASKED_KEYS:
            if isinstance(value.get(key), str) and value[key].strip():
                return str(value[key])
        for inner in value.values():
            found = _asked_text(inner, depth + 1)
            if found:
                return found
    if isinstance(value, list):
        for inner in value:
            found = _asked_text(inner, depth + 1)
            if found:
                return found
    return None


def asked_in(data: Any) -> Any:
    """Where an `input-required` task without a status message asks: the agent's last
    message in its history, else an artifact named like an interrupt."""
    return question_in_history(data) or question_in_artifacts(data)


def normalize(data: Any, *, protocol: str, server: str, what: str = "task") -> Task:
    wire: WireTask = parse_wire(WireTask, data, what)
    status = normalize_state(wire.status.state)
    message = wire.status.message
    if status in ("input_required", "auth_required") and not message_text(message):
        message = asked_in(data) or message
    return Task(
        taskId=wire.id,
        status=status,
        statusMessage=message_text(message),
        lastUpdatedAt=wire.status.timestamp,
        protocol=protocol,
        server=server,
        contextId=wire.contextId,
        raw=dict(data),
    )


def part_view(part: Any) -> dict[str, Any]:
    """A part in one shape whatever the version: `{"kind": "text", "text"}`, `{"kind":
    "data", "data"}`, `{"kind": "file", "name", "mimeType", "uri" | "bytes"}`."""
    if not isinstance(part, dict):
        return {"kind": "unknown", "part": part}
    kind = part.get("kind")
    if isinstance(part.get("text"), str) and kind in (None, "text"):
        return {"kind": "text", "text": part["text"]}
    if kind == "data" or (kind is None and "data" in part):
        return {"kind": "data", "data": part.get("data")}
    if kind == "file" and isinstance(part.get("file"), dict):  # 0.3
        f = part["file"]
        view: dict[str, Any] = {
            "kind": "file",
            "name": f.get("name"),
            "mimeType": f.get("mimeType"),
        }
        if "uri" in f:
            view["uri"] = f.get("uri")
        if "bytes" in f:
            view["bytes"] = f.get("bytes")
        return view
    if kind is None and ("url" in part or "raw" in part):  # 1.0
        view = {"kind": "file", "name": part.get("filename"), "mimeType": part.get("mediaType")}
        if "url" in part:
            view["uri"] = part.get("url")
        if "raw" in part:
            view["bytes"] = part.get("raw")
        return view
    return {"kind": str(kind or "unknown"), "part": part}


def part_text(view: dict[str, Any]) -> str:
    kind = view.get("kind")
    if kind == "text":
        return str(view.get("text", ""))
    if kind == "data":
        return json.dumps(view.get("data"), indent=2, ensure_ascii=False)
    if kind == "file":
        name = view.get("name") or "unnamed"
        mime = view.get("mimeType") or "unknown type"
        where = view.get("uri") or ("inline" if view.get("bytes") else "no content")
        return f"[file: {name} ({mime}) {where}]"
    return json.dumps(view.get("part"), ensure_ascii=False)


def parts_of(message: Any) -> list[dict[str, Any]]:
    if not isinstance(message, dict) or not isinstance(message.get("parts"), list):
        return []
    return [part_view(p) for p in message["parts"]]


def message_text(message: Any) -> str | None:
    """The text parts of a message joined, and its data parts as readable text plus their
    JSON (a structured request, such as a function call): a status message as the contract
    shows it."""
    texts = []
    for part in parts_of(message):
        if part["kind"] == "text" and part["text"]:
            texts.append(part["text"])
        elif part["kind"] == "data" and part.get("data") is not None:
            texts.append(data_text(part["data"]))
    return "\n".join(texts) if texts else None


def data_text(data: Any) -> str:
    """A data part for a person: what it is in a few words, then its JSON."""
    body = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    return f"{_data_summary(data)}:\n{body}"


def _data_summary(data: Any) -> str:
    if isinstance(data, dict):
        name = data.get("name") or data.get("function") or data.get("tool")
        args = next((data[k] for k in ("arguments", "args", "parameters") if k in data), None)
        if isinstance(name, str) and isinstance(args, dict):
            listed = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
            return f"a call of {name}({listed})"
        if data:
            return f"structured data ({', '.join(str(k) for k in list(data)[:8])})"
    return "structured data"


def data_parts(message: Any) -> list[Any]:
    """The `data` of a message's data parts."""
    return [p.get("data") for p in parts_of(message) if p["kind"] == "data"]


def _is_agent(message: Any) -> bool:
    role = message.get("role") if isinstance(message, dict) else None
    return isinstance(role, str) and role.lower() in ("agent", "role_agent")


#: characters of a history message kept in the task book's log
TURN_TEXT = 300


def history_turns(raw: dict[str, Any]) -> list[tuple[str, str, str]]:
    """A task's `history` as (message id, role, text); its status message of now is there
    with the role `status` (seen as its status, it is no turn of its own later)."""
    status = raw.get("status")
    now = status.get("message") if isinstance(status, dict) else None
    said = now.get("messageId") if isinstance(now, dict) else None
    history = raw.get("history")
    out = []
    for message in history if isinstance(history, list) else []:
        if not isinstance(message, dict):
            continue
        mid = message.get("messageId")
        if not isinstance(mid, str) or not mid or mid == said:
            continue
        role = message.get("role")
        word = role.lower().removeprefix("role_") if isinstance(role, str) else "?"
        out.append((mid[:200], word[:20], (message_text(message) or "")[:TURN_TEXT]))
    if isinstance(said, str) and said:
        out.append((said[:200], "status", ""))  # seen as its status: never a turn of its own
    return out


def message_payload(message: Any) -> dict[str, Any]:
    """A direct answer (a message, no task) as a result payload."""
    parts = parts_of(message)
    text = "\n".join(part_text(p) for p in parts)
    role = message.get("role") if isinstance(message, dict) else None
    return {
        "text": text,
        "artifacts": [],
        "statusMessage": None,
        "message": {"role": role, "parts": parts},
    }


def result_payload(raw: dict[str, Any]) -> dict[str, Any]:
    """The result of a finished A2A task: its artifacts (text parts as text, data parts as
    JSON, files by name, type and uri) and its final status message; when it has neither
    (Agno), the agent's last message in `history`. `text` is what a person reads."""
    artifacts: list[dict[str, Any]] = []
    texts: list[str] = []
    found = raw.get("artifacts")
    for artifact in found if isinstance(found, list) else []:
        if not isinstance(artifact, dict):
            continue
        view: dict[str, Any] = {
            k: artifact[k] for k in ("artifactId", "name", "description") if k in artifact
        }
        view["parts"] = parts_of(artifact)
        artifacts.append(view)
        if view["parts"]:
            texts.append(artifact_text(view["parts"]))
    status = raw.get("status")
    status_message = message_text(status.get("message")) if isinstance(status, dict) else None
    if status_message:
        texts.append(status_message)
    payload: dict[str, Any] = {
        "text": "\n".join(texts),
        "artifacts": artifacts,
        "statusMessage": status_message,
    }
    word = status.get("state") if isinstance(status, dict) else None
    state = normalize_state(word) if isinstance(word, str) else None
    if not artifacts and (not status_message or state == "completed"):
        # no artifacts (Agno; agents whose GetTask drops them): the agent's last message in
        # `history` is a completed task's answer, when it is not the status message itself
        # (a failed task's status message says why; its history is not an answer)
        history = raw.get("history")
        said = status.get("message") if isinstance(status, dict) else None
        said_id = said.get("messageId") if isinstance(said, dict) else None
        for message in reversed(history if isinstance(history, list) else []):
            if not (_is_agent(message) and parts_of(message)):
                continue
            if said_id is not None and message.get("messageId") == said_id:
                break
            parts = parts_of(message)
            answer = "\n".join(part_text(p) for p in parts)
            if answer == status_message:
                break
            payload["text"] = "\n".join(t for t in (answer, status_message) if t)
            payload["message"] = {"role": message.get("role"), "parts": parts}
            if status_message:
                payload["answerFrom"] = ANSWER_HISTORY
            break
    return payload


#: where a result's answer came from when not from the task's artifacts (`answerFrom`)
ARTIFACTS_SEEN = "artifactsSeen"
ANSWER_HISTORY = "history"
ANSWER_SOURCES = {
    ARTIFACTS_SEEN: "the artifacts the task was seen with earlier (the agent's GetTask answers "
    "without them)",
    ANSWER_HISTORY: "the agent's last message in the task's history (the task has no artifacts)",
}
#: the largest artifacts (as JSON) the task book keeps of what a task was seen with
SEEN_LIMIT = 256 * 1024


def artifact_text(parts: list[dict[str, Any]]) -> str:
    """An artifact's parts for a person: text parts that end a line run on (the chunks of one
    document streamed in pieces read as it was written), anything else on a line of its own."""
    out = ""
    for i, part in enumerate(parts):
        text = part_text(part)
        if i and not (
            part["kind"] == "text" and parts[i - 1]["kind"] == "text" and out.endswith("\n")
        ):
            out += "\n"
        out += text
    return out


def merge_event(current: dict[str, Any] | None, kind: str, event: dict[str, Any]) -> dict[str, Any]:
    """Apply a stream event (a whole task, a status update, an artifact update) to the last
    known task, as the server would show it on the next read."""
    if kind == "task":
        return dict(event)
    task = (
        dict(current)
        if current is not None
        else {"id": event.get("taskId"), "contextId": event.get("contextId")}
    )
    if kind == "status" and isinstance(event.get("status"), dict):
        task["status"] = event["status"]
    elif kind == "artifact" and isinstance(event.get("artifact"), dict):
        artifact = event["artifact"]
        artifacts = [a for a in task.get("artifacts") or [] if isinstance(a, dict)]
        aid = artifact.get("artifactId")
        for i, old in enumerate(artifacts):
            if aid is not None and old.get("artifactId") == aid:
                if event.get("append") and isinstance(old.get("parts"), list):
                    artifacts[i] = {**old, "parts": [*old["parts"], *(artifact.get("parts") or [])]}
                else:
                    artifacts[i] = artifact
                break
        else:
            artifacts.append(artifact)
        task["artifacts"] = artifacts
    return task


#: stream event kinds, 1.0 (wrapper key) and 0.3 (`kind`)
_EVENT_KINDS = {
    "task": "task",
    "statusUpdate": "status",
    "status-update": "status",
    "artifactUpdate": "artifact",
    "artifact-update": "artifact",
    "message": "message",
}


def classify(result: Any) -> tuple[str, dict[str, Any]]:
    """What an answer or stream event holds: 1.0 wraps it (`{"task": {...}}`), 0.3 tags it
    (`{"kind": "task", ...}`)."""
    if not isinstance(result, dict):
        raise ProtocolError("the agent sent an answer that is not an object")
    kind = result.get("kind")
    if isinstance(kind, str) and kind in _EVENT_KINDS:
        return _EVENT_KINDS[kind], result
    for key in ("task", "message", "statusUpdate", "artifactUpdate"):
        if isinstance(result.get(key), dict):
            return _EVENT_KINDS[key], result[key]
    if "id" in result and "status" in result:
        return "task", result  # a bare task without `kind`
    raise ProtocolError("the agent sent an answer that is neither a task nor a message")


# -- the protocol -----------------------------------------------------------------------------


class A2ABase(TaskProtocol):
    """A2A over JSON-RPC; subclasses say which version."""

    version: ClassVar[str]
    #: the protocol name of the other version, for hints
    other: ClassVar[str]
    headers: ClassVar[dict[str, str]] = {}
    m_send: ClassVar[str]
    m_get: ClassVar[str]
    m_cancel: ClassVar[str]
    m_subscribe: ClassVar[str]
    m_list: ClassVar[str | None] = None
    user_role: ClassVar[str]

    def history_turns(self, task: Task) -> list[tuple[str, str, str]]:
        return history_turns(task.raw)

    message_extra: ClassVar[dict[str, Any]] = {}
    send_configuration: ClassVar[dict[str, Any]]

    default_interval: ClassVar[float] = 2.0
    can_subscribe: ClassVar[bool] = True
    not_found_code: ClassVar[int] = TASK_NOT_FOUND
    not_cancelable_code: ClassVar[int] = TASK_NOT_CANCELABLE
    has_artifacts: ClassVar[bool] = True

    def __init__(
        self,
        rpc: RpcClient,
        server: str,
        *,
        session: str | None = None,
        context_id: str | None = None,
    ) -> None:
        super().__init__(
            rpc.with_headers(self.headers), server, session=session, context_id=context_id
        )
        self._ids = 0
        #: the artifacts each task was last seen with (a send reply, a stream's events, an
        #: earlier run's, from the task book): the answer when GetTask drops them
        self._artifacts: dict[str, list[Any]] = {}
        #: task id -> artifact id -> `lastChunk` of its latest chunk, as the stream said
        self._chunk_ends: dict[str, dict[str, bool]] = {}
        #: the tasks whose artifacts this run has given the task book
        self._written: set[str] = set()

    def chunk_ends(self, task_id: str) -> dict[str, bool] | None:
        return self._chunk_ends.get(task_id)

    def apply_event(
        self, current: dict[str, Any] | None, kind: str, event: dict[str, Any]
    ) -> tuple[dict[str, Any], Task]:
        """A stream event applied to the task it follows (`merge_event`): the task's JSON and
        the task; notes whether an artifact's chunk was its last."""
        if kind == "artifact" and isinstance(event.get("artifact"), dict):
            aid = event["artifact"].get("artifactId")
            task_id = event.get("taskId") or (current or {}).get("id")
            if isinstance(aid, str) and isinstance(task_id, str):
                ends = self._chunk_ends.setdefault(task_id, {})
                ends[aid] = event.get("lastChunk") is True
        merged = merge_event(current, kind, event)
        return merged, self._task(merged, "task in the event stream")

    # -- encoding -------------------------------------------------------------------------------

    def text_part(self, text: str) -> dict[str, Any]:
        return {"text": text}

    def data_part(self, data: Any) -> dict[str, Any]:
        return {"data": data}

    def user_message(
        self, text: str | None, context_id: str | None, *, data: Any = None
    ) -> dict[str, Any]:
        parts = [self.text_part(text)] if text is not None else []
        if data is not None:
            parts.append(self.data_part(data))
        message: dict[str, Any] = {
            "messageId": str(uuid.uuid4()),
            "role": self.user_role,
            **self.message_extra,
            "parts": parts,
        }
        if context_id:
            message["contextId"] = context_id
        return message

    def _task(self, data: Any, what: str = "task") -> Task:
        task = normalize(data, protocol=self.name, server=self.server, what=what)
        artifacts = data.get("artifacts") if isinstance(data, dict) else None
        if isinstance(artifacts, list) and artifacts:
            self._artifacts[task.taskId] = artifacts
        return task

    def seen_fields(self, task: Task) -> dict[str, Any]:
        """The artifacts a task was seen with, for the task book: when first seen this run
        and when it ends, not at every poll between (a big watch's records stay light), and
        bounded (an agent's big answer is fetched again, not kept twice)."""
        artifacts = self._artifacts.get(task.taskId)
        if not artifacts or (task.taskId in self._written and not task.terminal):
            return {}
        self._written.add(task.taskId)
        if len(json.dumps(artifacts, default=str)) > SEEN_LIMIT:
            return {}
        return {"artifactsSeen": artifacts}

    def recall(self, task_id: str, record: dict[str, Any]) -> None:
        kept = record.get("artifactsSeen")
        if isinstance(kept, list) and kept and task_id not in self._artifacts:
            self._artifacts[task_id] = kept

    # -- calls and errors -----------------------------------------------------------------------

    async def _request(
        self, method: str, params: dict[str, Any], *, trace: TaskTrace | None = None
    ) -> Any:
        """One operation on the wire (JSON-RPC here; the HTTP+JSON binding, `a2a_rest`,
        maps each method to its resource, gRPC to its call); a request about a task carries
        its `trace` (HTTP headers here)."""
        await self._card_first()
        headers = trace_headers(trace)
        try:
            return await self.rpc.request(method, params, headers=headers)
        except HttpStatusError as exc:
            if not await self._moved_by_card(exc):
                raise
            return await self.rpc.request(method, params, headers=headers)

    #: the endpoint was looked up in the agent card already (`-p` with an origin or card URL)
    _card_read: bool = False

    async def _card_first(self) -> None:
        """A card's URL given with `-p`: the endpoint is the one the card names (nothing is
        ever posted to a card)."""
        card = not self._card_read and _is_card_url(self.rpc.transport.url)
        if card and not await self._endpoint_from_card():
            raise ServerError(
                f"the agent card at {self.rpc.transport.url} names no {self.name} endpoint"
            )

    async def _moved_by_card(self, exc: HttpStatusError) -> bool:
        """`-p` with the agent's origin (or another URL that is not its endpoint): a 404 or 405
        that is not JSON-RPC sends mcptask to the card for the endpoint, once."""
        if self._card_read or exc.status not in (404, 405):
            return False
        return await self._endpoint_from_card()

    async def _endpoint_from_card(self) -> bool:
        """Read the agent card (at the URL's base, then the origin, as detection does) and
        post from now on to the endpoint it names for this protocol. False: no card, or no
        such endpoint in it."""
        self._card_read = True
        transport = self.rpc.transport
        if not isinstance(transport, FetchesUrls) or not isinstance(transport, SwitchesUrl):
            return False
        typed = transport.url
        for card_url in card_urls(typed):
            try:
                response = await transport.get(card_url, max_body=CARD_LIMIT, json_only=True)
                card = response.json() if response.status_code == 200 else None
            except (ProtocolError, ValueError):
                continue
            named = card_endpoint(card, self.name) if isinstance(card, dict) else None
            if named is None:
                continue
            endpoint = post_url(typed, named)
            if _same_place(endpoint, typed):
                return False
            if isinstance(transport, Traces):
                transport.trace(f"* the agent card names the endpoint {endpoint}: posting there")
            transport.move_to(endpoint)
            return True
        return False

    async def _call(
        self,
        method: str,
        params: dict[str, Any],
        ref: TaskRef | None = None,
        *,
        trace: TaskTrace | None = None,
    ) -> Any:
        """`_request` about the task `ref` (its trace; `trace`: the task a send starts),
        the agent's errors read as the task's."""
        try:
            return await self._request(
                method, params, trace=trace or (ref.trace if ref is not None else None)
            )
        except RpcError as exc:
            raise self._error(exc, method, ref) from None

    def _error(self, exc: RpcError, method: str, ref: TaskRef | None) -> Exception:
        msg = exc.rpc_message
        if exc.code == TASK_NOT_FOUND and ref is not None:
            return TaskNotFound(f"task {ref.task_id}: {msg or 'not found'}", reason=msg or None)
        if exc.code == UNSUPPORTED_OPERATION:
            return ServerError(
                f"the agent does not support {method} ({msg or 'unsupported operation'})"
            )
        if exc.code == VERSION_NOT_SUPPORTED or (
            exc.code == INTERNAL_ERROR and "version" in msg.lower()
        ):
            return ServerError(
                f"the agent does not accept A2A {self.version} requests ({msg}); "
                f"if it speaks {self.other.removeprefix('a2a-')}, use -p {self.other}"
            )
        if exc.code == METHOD_NOT_FOUND:
            return ServerError(
                f"the agent has no method {method} (-32601 {msg or 'Method not found'}); "
                f"it may not speak A2A {self.version} (try -p {self.other})"
            )
        return exc

    # -- operations -----------------------------------------------------------------------------

    async def send_message(
        self, text: str, *, context_id: str | None, trace: TaskTrace | None = None
    ) -> Created:
        context_id = context_id or self.context_id
        params = {
            "message": traced_message(self.user_message(text, context_id), trace),
            "configuration": dict(self.send_configuration),
        }
        kind, body = classify(await self._call(self.m_send, params, trace=trace))
        if kind == "message":
            return Created(task=None, result=message_payload(body))
        if kind != "task":
            raise ProtocolError(f"the agent answered {self.m_send} with a {kind} event")
        task = self._task(body, "created task")
        return Created(task=task, ref=TaskRef(task.taskId, context_id=task.contextId or context_id))

    async def get(self, ref: TaskRef) -> Task:
        return await self._get(ref, self.history_length)

    # -- answering ------------------------------------------------------------------------------

    can_answer: ClassVar[bool] = True

    def input_requests(self, task: Task) -> list[InputRequest] | None:
        """An `input-required` task asks in its status message; the answer is text."""
        if task.status != "input_required":
            return []
        question = task.statusMessage or "the agent asks for input (it sent no message)"
        params: dict[str, Any] = {"message": question, "requestedSchema": TEXT_FORM}
        status = task.raw.get("status")
        asked = status.get("message") if isinstance(status, dict) else None
        if not message_text(asked):
            asked = (
                question_in_history(task.raw)
                or question_in_artifacts(task.raw, with_data=True)
                or asked
            )
        data = data_parts(asked)
        if data:
            params["data"] = data  # a structured request: `answer --data JSON` answers it
        return [InputRequest(task.taskId, "message", params, can_decline=False)]

    async def answer(
        self,
        ref: TaskRef,
        task: Task,
        responder: Responder,
        *,
        key: str | None = None,
        answered: frozenset[str] = frozenset(),
    ) -> Answered:
        """The answer is the next message of the task: sent with its `taskId` and
        `contextId`, non-blocking like `send`."""
        if key is not None:
            raise UsageError("--key picks among MCP 2026-07-28 input requests; A2A has none")
        requests = self.input_requests(task) or []
        if not requests:
            raise NotApplicable(f"task {ref.task_id} is {task.status}: it does not wait for input")
        request = requests[0]
        done = Answered()
        response = await responder(request)
        if response is None:
            done.dismissed = True
            return done
        content = response.get("content")
        content = content if isinstance(content, dict) else {}
        text = content.get("text")
        data = content.get("data")
        if (
            response.get("action") != "accept"
            or not (text is None or isinstance(text, str))
            or (text is None and data is None)
        ):
            raise UsageError(
                "an A2A agent takes an answer (--text TEXT or --data JSON), not a decline or "
                f"cancel; `{command_line('cancel', ref.task_id)}` cancels the task"
            )
        context = ref.context_id or task.contextId or self.context_id
        message = traced_message(self.user_message(text, context, data=data), ref.trace)
        message["taskId"] = ref.task_id
        params = {"message": message, "configuration": dict(self.send_configuration)}
        kind, body = classify(await self._call(self.m_send, params, ref))
        if kind == "task":
            done.task = self._task(body, "task")
            if done.task.taskId != ref.task_id:
                # the agent started a new task for the answer instead of continuing this one
                done.new_task = done.task
        done.sent.append((request, response))
        return done

    async def _get(self, ref: TaskRef, history_length: int | None) -> Task:
        params: dict[str, Any] = {"id": ref.task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        task = self._task(await self._call(self.m_get, params, ref))
        if task.taskId != ref.task_id:
            raise ProtocolError(
                f"asked for task {ref.task_id}, the agent answered task {task.taskId}"
            )
        return task

    async def result(self, ref: TaskRef, task: Task) -> TaskResult:
        raw = task.raw
        if not raw.get("artifacts") and "history" not in raw:
            # read without history (`get --history 0`): the fallbacks need it
            task = await self._get(ref, None)
            raw = task.raw
        seen = self._artifacts.get(ref.task_id)
        if not raw.get("artifacts") and seen:
            # GetTask dropped what the send reply or a stream carried
            payload = {**result_payload({**raw, "artifacts": seen}), "answerFrom": ARTIFACTS_SEEN}
        else:
            payload = result_payload(raw)
        source = payload.get("answerFrom")
        where = ANSWER_SOURCES.get(source) if isinstance(source, str) else None
        return TaskResult(task=task, payload=payload, source=where)

    async def cancel(self, ref: TaskRef) -> Task | None:
        try:
            data = await self._request(self.m_cancel, {"id": ref.task_id}, trace=ref.trace)
        except RpcError as exc:
            if exc.code != TASK_NOT_CANCELABLE:
                raise self._error(exc, self.m_cancel, ref) from None
            task = await self.get(ref)
            if task.terminal:
                raise NotApplicable(
                    f"task {ref.task_id} has already ended: {task.status}"
                ) from None
            raise NotApplicable(
                f"the agent says task {ref.task_id} cannot be cancelled "
                f"({exc.rpc_message or 'not cancelable'}); it is {task.status}"
            ) from None
        task = self._task(data, "cancelled task")
        refuse_finished(task, ref.task_id)
        return task

    async def list_tasks(self, refs: list[TaskRef]) -> list[Task]:
        if self.m_list is None:
            return []
        out: dict[str, Task] = {}
        token: str | None = None
        walk = PageWalk(self.m_list)
        wanted = self.list_filter
        limit = wanted.limit if wanted is not None else None
        while True:
            params: dict[str, Any] = {"pageSize": min(100, limit or 100), "historyLength": 0}
            params.update(self._filter_params(wanted))
            if token:
                params["pageToken"] = token
            try:
                data = await self._request(self.m_list, params)
            except RpcError as exc:
                if exc.code in (-32004, -32601):
                    raise CannotList(
                        f"the agent does not support {self.m_list} "
                        f"({exc.rpc_message or 'unsupported operation'})"
                    ) from None
                raise self._error(exc, self.m_list, None) from None
            if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
                raise ProtocolError(f"the agent's {self.m_list} answer has no `tasks` list")
            for item in data["tasks"]:
                task = self._task(item, f"task in {self.m_list}")
                if wanted is None or wanted.matches(task):
                    out.setdefault(task.taskId, task)
            nxt = data.get("nextPageToken")
            if limit is not None and len(out) >= limit:
                break
            if not walk.go_on(nxt, len(out)):
                break
            token = nxt
        self.list_cut = walk.cut
        return list(out.values())

    def _filter_params(self, wanted: TaskFilter | None) -> dict[str, Any]:
        """ListTasks' own filters (1.0): `contextId`, `status` (one state: several are
        filtered here), `statusTimestampAfter`."""
        if wanted is None:
            return {}
        params: dict[str, Any] = {}
        if wanted.context_id is not None:
            params["contextId"] = wanted.context_id
        if len(wanted.statuses) == 1:
            (status,) = wanted.statuses
            params["status"] = wire_state(status)
        if wanted.since is not None:
            from datetime import UTC, datetime

            stamp = datetime.fromtimestamp(wanted.since, UTC)
            params["statusTimestampAfter"] = stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return params

    async def subscribe(self, ref: TaskRef) -> AsyncIterator[Task]:
        """Follow a task by its event stream: yields the task after every status or artifact
        event; ends when the task ends or the stream closes. A task that has already ended
        is yielded once (read with `get`)."""
        self._ids += 1
        message = {
            "jsonrpc": "2.0",
            "id": f"subscribe-{self._ids}",
            "method": self.m_subscribe,
            "params": {"id": ref.task_id},
        }
        current: dict[str, Any] | None = None
        await self._card_first()
        stream = self.rpc.transport.send(message, headers=self.rpc.merged(trace_headers(ref.trace)))
        async with aclosing(stream):  # type: ignore[type-var]
            async for incoming in stream:
                if incoming.get("error") is not None:
                    exc = error_from(incoming["error"])
                    if exc.code == UNSUPPORTED_OPERATION and "terminal" in exc.rpc_message.lower():
                        done = await self.get(ref)
                        if done.terminal:
                            yield done
                            return
                    raise self._error(exc, self.m_subscribe, ref)
                if "result" not in incoming:
                    continue  # a request or notification: not ours to answer here
                kind, event = classify(incoming["result"])
                if kind == "message":
                    continue
                current, task = self.apply_event(current, kind, event)
                yield task
                if task.terminal:
                    return

    # -- push notification configs ----------------------------------------------------------
    # 1.0: `CreateTaskPushNotificationConfig {taskId, url, token, authentication {scheme,
    # credentials}, id?}`, Get/Delete `{taskId, id}`, List `{taskId}` -> `{configs}`; 0.3:
    # `tasks/pushNotificationConfig/set {taskId, pushNotificationConfig {url, token,
    # authentication {schemes, credentials}, id?}}`, get/delete `{id, pushNotificationConfigId}`,
    # list `{id}` -> a list.

    can_push_configs: ClassVar[bool] = True
    #: set, get, list, delete, by version
    _PUSH_METHODS: ClassVar[dict[str, tuple[str, str, str, str]]] = {
        "1.0": (
            "CreateTaskPushNotificationConfig",
            "GetTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigs",
            "DeleteTaskPushNotificationConfig",
        ),
        "0.3": (
            "tasks/pushNotificationConfig/set",
            "tasks/pushNotificationConfig/get",
            "tasks/pushNotificationConfig/list",
            "tasks/pushNotificationConfig/delete",
        ),
    }

    async def push_supported(self) -> bool | None:
        """The agent card's `capabilities.pushNotifications` (None: no card, or it says
        nothing)."""
        transport = self.rpc.transport
        if not isinstance(transport, FetchesUrls):
            return None
        for card_url in card_urls(self.server):
            try:
                response = await transport.get(card_url, max_body=CARD_LIMIT, json_only=True)
                card = response.json() if response.status_code == 200 else None
            except (ProtocolError, ValueError):
                continue
            if isinstance(card, dict):
                caps = card.get("capabilities")
                value = caps.get("pushNotifications") if isinstance(caps, dict) else None
                return value if isinstance(value, bool) else None
        return None

    async def _push_call(self, which: int, params: dict[str, Any], ref: TaskRef) -> Any:
        method = self._PUSH_METHODS[self.version][which]
        try:
            if which == 3:
                return await self._call_lenient(method, params, ref.trace)
            return await self.rpc.request(method, params, headers=trace_headers(ref.trace))
        except RpcError as exc:
            raise self._push_error(exc, method, ref, which) from None

    def _push_error(self, exc: RpcError, method: str, ref: TaskRef, which: int) -> Exception:
        msg = exc.rpc_message
        if exc.code == PUSH_NOT_SUPPORTED:
            return NotApplicable(
                f"the agent does not support push notifications (-32003 "
                f"{msg or 'push notification not supported'})"
            )
        if exc.code == INVALID_PARAMS and "url" in msg.lower():
            return PushUrlRefused(
                f"the agent refused the push URL ({msg}); agents should refuse loopback and "
                "private addresses from afar: give a URL it can reach (a tunnel, a public "
                "host; `watch --push-public-url`)"
            )
        if exc.code == TASK_NOT_FOUND and which in (1, 3):
            # agents answer a config they do not have like a task they do not have
            return TaskNotFound(
                f"task {ref.task_id}, or its push config: {msg or 'not found'}", reason=msg or None
            )
        return self._error(exc, method, ref)

    async def _call_lenient(
        self, method: str, params: dict[str, Any], trace: TaskTrace | None = None
    ) -> Any:
        """A request whose answer may lack `result` (a2a-sdk's 0.3 `delete` answers
        `{"jsonrpc", "id"}` alone): an answer with neither result nor error is success."""
        self._ids += 1
        req_id = f"push-{self._ids}"
        message = {"jsonrpc": "2.0", "id": req_id, "method": method, "params": params}
        stream = self.rpc.transport.send(message, headers=self.rpc.merged(trace_headers(trace)))
        async with aclosing(stream):  # type: ignore[type-var]
            async for incoming in stream:
                if "method" in incoming:
                    continue
                if incoming.get("id") != req_id:
                    raise ProtocolError(
                        f"the agent answered request id {incoming.get('id')!r} to {method}"
                    )
                if incoming.get("error") is not None:
                    raise error_from(incoming["error"])
                return incoming.get("result")
        raise ProtocolError(f"the agent closed the connection without answering {method}")

    def _push_config(self, data: Any, task_id: str) -> PushConfig:
        """A config as either version sends it."""
        if not isinstance(data, dict):
            raise ProtocolError("the agent sent a push config that is not an object")
        inner = data.get("pushNotificationConfig")
        body = inner if isinstance(inner, dict) else data  # 0.3 nests it
        url = body.get("url")
        if not isinstance(url, str):
            raise ProtocolError("the agent sent a push config without a url")
        auth = body.get("authentication")
        scheme = credentials = None
        if isinstance(auth, dict):
            schemes = auth.get("schemes")
            scheme = auth.get("scheme")
            if scheme is None and isinstance(schemes, list) and schemes:
                scheme = schemes[0]
            credentials = auth.get("credentials")
        found = data.get("taskId")
        return PushConfig(
            task_id=found if isinstance(found, str) else task_id,
            id=lenient_str(body.get("id")),
            url=url,
            token=lenient_str(body.get("token")),
            auth_scheme=scheme if isinstance(scheme, str) else None,
            credentials=credentials if isinstance(credentials, str) else None,
        )

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
        config: dict[str, Any] = {"url": url}
        if config_id:
            config["id"] = config_id
        if token:
            config["token"] = token
        if auth_scheme:
            auth: dict[str, Any] = (
                {"scheme": auth_scheme} if self.version == "1.0" else {"schemes": [auth_scheme]}
            )
            if credentials:
                auth["credentials"] = credentials
            config["authentication"] = auth
        if self.version == "1.0":
            params = {"taskId": ref.task_id, **config}
        else:
            params = {"taskId": ref.task_id, "pushNotificationConfig": config}
        return self._push_config(await self._push_call(0, params, ref), ref.task_id)

    def _config_params(self, ref: TaskRef, config_id: str) -> dict[str, Any]:
        if self.version == "1.0":
            return {"taskId": ref.task_id, "id": config_id}
        return {"id": ref.task_id, "pushNotificationConfigId": config_id}

    async def push_get(self, ref: TaskRef, config_id: str) -> PushConfig:
        data = await self._push_call(1, self._config_params(ref, config_id), ref)
        return self._push_config(data, ref.task_id)

    async def push_list(self, ref: TaskRef) -> list[PushConfig]:
        params = {"taskId": ref.task_id} if self.version == "1.0" else {"id": ref.task_id}
        data = await self._push_call(2, params, ref)
        if isinstance(data, dict):
            data = data.get("configs", [])  # 1.0 omits an empty list
        if not isinstance(data, list):
            raise ProtocolError("the agent's push config list is not a list")
        return [self._push_config(item, ref.task_id) for item in data]

    async def push_delete(self, ref: TaskRef, config_id: str) -> None:
        await self._push_call(3, self._config_params(ref, config_id), ref)


class A2A10(A2ABase):
    name: ClassVar[str] = "a2a-1.0"
    version: ClassVar[str] = "1.0"
    other: ClassVar[str] = "a2a-0.3"
    headers: ClassVar[dict[str, str]] = {"A2A-Version": "1.0"}
    m_send: ClassVar[str] = "SendMessage"
    m_get: ClassVar[str] = "GetTask"
    m_cancel: ClassVar[str] = "CancelTask"
    m_subscribe: ClassVar[str] = "SubscribeToTask"
    m_list: ClassVar[str | None] = "ListTasks"
    user_role: ClassVar[str] = "ROLE_USER"
    send_configuration: ClassVar[dict[str, Any]] = {"returnImmediately": True}


class A2A03(A2ABase):
    name: ClassVar[str] = "a2a-0.3"
    version: ClassVar[str] = "0.3"
    other: ClassVar[str] = "a2a-1.0"
    m_send: ClassVar[str] = "message/send"
    m_get: ClassVar[str] = "tasks/get"
    m_cancel: ClassVar[str] = "tasks/cancel"
    m_subscribe: ClassVar[str] = "tasks/resubscribe"
    can_list: ClassVar[bool] = False
    user_role: ClassVar[str] = "user"
    message_extra: ClassVar[dict[str, Any]] = {"kind": "message"}
    send_configuration: ClassVar[dict[str, Any]] = {"blocking": False}

    def text_part(self, text: str) -> dict[str, Any]:
        return {"kind": "text", "text": text}

    def data_part(self, data: Any) -> dict[str, Any]:
        return {"kind": "data", "data": data}


# -- detection --------------------------------------------------------------------------------

#: A2A versions mcptask speaks over JSON-RPC, highest first
_SPOKEN = (("1.0", "a2a-1.0"), ("0.3", "a2a-0.3"))
#: A2A 1.0 over the HTTP+JSON binding (`protocols.a2a_rest`)
REST_NAME = "a2a-1.0-rest"
_REST_BINDINGS = ("HTTP+JSON", "REST", "HTTP")
#: A2A 1.0 over gRPC (`protocols.a2a_grpc`, with the `grpc` extra)
GRPC_NAME = "a2a-1.0-grpc"
_AGNO_CARD_URL = re.compile(r"/v1/message:(stream|send)/?$")


def _version(value: Any) -> str | None:
    """`"1.0"`, `"0.3.0"` -> `"1.0"`, `"0.3"`."""
    if not isinstance(value, str):
        return None
    m = re.match(r"\s*v?(\d+)\.(\d+)", value)
    return f"{int(m.group(1))}.{int(m.group(2))}" if m else None


def _rest_binding(item: Any) -> bool:
    return isinstance(item, dict) and str(item.get("protocolBinding", "")).upper() in _REST_BINDINGS


def _grpc_binding(item: Any) -> bool:
    return isinstance(item, dict) and str(item.get("protocolBinding", "")).upper() == "GRPC"


def protocol_from_card(card: Any) -> str | None:
    """The highest A2A version mcptask speaks over JSON-RPC, as an agent card announces it;
    without a JSON-RPC interface, A2A 1.0 over HTTP+JSON where the card offers it, else over
    gRPC."""
    if not isinstance(card, dict):
        return None
    interfaces = card.get("supportedInterfaces")
    if isinstance(interfaces, list) and interfaces:  # 1.0
        versions = {
            _version(i.get("protocolVersion"))
            for i in interfaces
            if isinstance(i, dict) and str(i.get("protocolBinding", "")).upper() == "JSONRPC"
        }
        for version, name in _SPOKEN:
            if version in versions:
                return name
        if any(
            _rest_binding(i) and _version(i.get("protocolVersion")) == "1.0" for i in interfaces
        ):
            return REST_NAME
        if any(
            _grpc_binding(i) and _version(i.get("protocolVersion")) == "1.0" for i in interfaces
        ):
            return GRPC_NAME
        bindings = sorted(
            {
                f"{i.get('protocolBinding')} {i.get('protocolVersion')}"
                for i in interfaces
                if isinstance(i, dict)
            }
        )
        raise ServerError(
            "the agent card offers no interface mcptask speaks "
            f"(it offers: {', '.join(bindings) or 'none'}; mcptask speaks JSON-RPC 1.0 and 0.3, "
            "HTTP+JSON 1.0 and gRPC 1.0)"
        )
    url = card.get("url")
    if isinstance(url, str) and _AGNO_CARD_URL.search(urlsplit(url).path):
        return "agno"  # Agno's per-operation routes, mounted where the URL shape is not Agno's
    if "url" in card or "protocolVersion" in card or "preferredTransport" in card:  # 0.3, 0.2
        transports = {str(card.get("preferredTransport") or "JSONRPC").upper()}
        for extra in card.get("additionalInterfaces") or []:
            if isinstance(extra, dict):
                transports.add(str(extra.get("transport", "")).upper())
        if "JSONRPC" not in transports:
            raise ServerError(
                "the agent card offers no JSON-RPC interface "
                f"(transports: {', '.join(sorted(transports))})"
            )
        return "a2a-0.3"
    return None


#: an agent card is a small JSON document: more than this is not a card
CARD_LIMIT = 256 * 1024
_CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
_CARD_NAMES = ("agent-card.json", "agent.json")


def card_urls(url: str) -> list[str]:
    """The agent card at the URL itself when it is a card's URL, else at the URL's base, then
    at the origin (0.2's name only when that is the same place: at most two requests)."""
    u = urlsplit(url)
    base_path = u.path.rstrip("/")
    origin = urlunsplit((u.scheme, u.netloc, "", "", ""))
    card = _CARD_PATHS[0]
    if _is_card_url(url):
        return [origin + base_path]
    if not base_path:
        return [origin + card, origin + _CARD_PATHS[1]]
    return [origin + base_path + card, origin + card]


def card_endpoint(card: Any, protocol: str) -> str | None:
    """The URL the card says to post `protocol`'s JSON-RPC to: the 1.0 JSONRPC interface of
    that version, else the 0.3 card's `url` (or its JSONRPC `additionalInterfaces` entry)."""
    if not isinstance(card, dict):
        return None
    if protocol in (REST_NAME, GRPC_NAME):
        binding = _rest_binding if protocol == REST_NAME else _grpc_binding
        for item in card.get("supportedInterfaces") or []:
            if (
                binding(item)
                and _version(item.get("protocolVersion")) == "1.0"
                and isinstance(item.get("url"), str)
            ):
                return str(item["url"])
        return None
    version = protocol.removeprefix("a2a-")
    for item in card.get("supportedInterfaces") or []:
        if (
            isinstance(item, dict)
            and str(item.get("protocolBinding", "")).upper() == "JSONRPC"
            and _version(item.get("protocolVersion")) == version
            and isinstance(item.get("url"), str)
        ):
            return str(item["url"])
    if str(card.get("preferredTransport") or "JSONRPC").upper() == "JSONRPC":
        url = card.get("url")
        if isinstance(url, str):
            return url
    for extra in card.get("additionalInterfaces") or []:
        if isinstance(extra, dict) and str(extra.get("transport", "")).upper() == "JSONRPC":
            url = extra.get("url")
            if isinstance(url, str):
                return url
    return None


def post_url(typed: str, named: str | None) -> str:
    """Where to post: the endpoint the card names, on the origin that was typed (a card
    often names the host as the agent sees itself: `localhost`, an inner name), else the
    URL typed."""
    if not named:
        return typed
    try:
        n = urlsplit(named)
        t = urlsplit(typed)
    except ValueError:
        return typed
    if n.scheme not in ("http", "https") or not n.netloc:
        return typed
    if (n.scheme, n.netloc.lower()) == (t.scheme, t.netloc.lower()):
        return named
    return urlunsplit((t.scheme, t.netloc, n.path or "/", n.query, ""))


def _same_place(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def _is_card_url(url: str) -> bool:
    """An agent card's own URL: the well-known path, or any path whose last segment is a
    card's file name (`/agents/echo/agent-card.json`)."""
    path = urlsplit(url).path.rstrip("/")
    return path.endswith(_CARD_PATHS) or path.rpartition("/")[2] in _CARD_NAMES


async def probe(rpc: RpcClient, url: str) -> Found | None:
    """Which A2A version the agent at `url` speaks, from its agent card; no card:
    `Unrecognised`. Each card read gives up at once on an answer that is not JSON and reads
    at most CARD_LIMIT bytes. The endpoint the card names is where every request is to be
    posted (`Found.post_to`)."""
    transport = rpc.transport
    if not isinstance(transport, FetchesUrls):
        return None
    get = transport.get
    tried: list[str] = []
    for card_url in card_urls(url):
        try:
            response = await get(card_url, max_body=CARD_LIMIT, json_only=True)
        except ProtocolError:
            tried.append(f"{card_url} (over {CARD_LIMIT // 1024} KiB)")
            continue
        status = response.status_code
        if status in (401, 403):
            detail = ""
            try:
                body = jsonsafe.loads(response.content)
                if isinstance(body, dict) and isinstance(body.get("detail"), str):
                    detail = f" ({body['detail']})"
            except ValueError:
                pass
            raise AuthError(
                f"{card_url} refused the agent card request: HTTP {status}{detail}"
                + ("; set MCPTASK_TOKEN or --token-file" if status == 401 else "")
            )
        ctype = response.headers.get("content-type", "").split(";")[0].strip() or "no type"
        if status != 200:
            tried.append(f"{card_url} (HTTP {status})")
            continue
        try:
            card = jsonsafe.loads(response.content)  # strict, never nested past 256 levels
        except jsonsafe.Refused as exc:
            tried.append(f"{card_url} (JSON mcptask refuses: {exc})")
            continue
        except ValueError:
            tried.append(f"{card_url} ({ctype}, not JSON)")
            continue
        found = protocol_from_card(card)
        if found is None:
            tried.append(f"{card_url} (JSON, not an agent card)")
            continue
        if found != "agno":
            endpoint = post_url(url, card_endpoint(card, found))
            if not _same_place(endpoint, transport.url):
                return Found(found, post_to=endpoint)
        return Found(found)
    raise Unrecognised("no agent card: " + "; ".join(tried))
