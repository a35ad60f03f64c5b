"""Checks for A2A agents over JSON-RPC (1.0, and 0.3 where that is what the agent speaks), and
over A2A 1.0's HTTP+JSON binding (the same checks, each method on its resource).

The agent card is read and judged first; then one message starts a task that is followed by
subscription and polling until it ends, a second task is cancelled while it runs, and the finished
task must refuse a cancel. Version handling is probed with requests that leave out or misstate
`A2A-Version`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import uuid
from contextlib import aclosing
from typing import Any
from urllib.parse import urlsplit

from mcptask.check.suite import (
    FAIL,
    INFO,
    PASS,
    WARN,
    BadAnswer,
    CheckDef,
    CheckFn,
    Outcome,
    TaskSuite,
    check_table,
    could_not_run,
    describe,
    keys,
    not_applicable,
    rpc_error_text,
    short,
    squash,
)
from mcptask.errors import NotApplicable, ProtocolError, RpcError
from mcptask.protocols.a2a import (
    A2A03,
    A2A10,
    CARD_LIMIT,
    GRPC_NAME,
    A2ABase,
    card_urls,
    classify,
)
from mcptask.protocols.a2a_rest import A2ARest, rest_error
from mcptask.protocols.base import TaskProtocol
from mcptask.text import jsonsafe
from mcptask.transports.rpc import error_from

A = "A2A 1.0"
STATES_10 = {
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_FAILED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_AUTH_REQUIRED",
}
STATES_03 = {
    "submitted",
    "working",
    "input-required",
    "completed",
    "canceled",
    "failed",
    "rejected",
    "auth-required",
    "unknown",
}
TERMINAL_WORDS = {"completed", "canceled", "failed", "rejected"}
TEXT = "mcptask check: hello"
POLL = 1.0


C = check_table(
    "a2a",
    (
        (
            "card.fields",
            "card",
            "the agent card carries the required fields",
            f"{A} §4.4.1 AgentCard, §4.4.5 AgentSkill",
        ),
        (
            "card.interfaces",
            "card",
            "the card's interfaces name an absolute url, a binding and a Major.Minor version, "
            "and include the endpoint checked",
            f"{A} §4.4.6 AgentInterface, §3.6 Versioning",
        ),
        (
            "wire.unsupported-version",
            "wire",
            "a request with an A2A-Version the agent does not support is -32009",
            f"{A} §3.6.2 Server Responsibilities, §5.4 Error Code Mappings",
        ),
        (
            "wire.version-header",
            "wire",
            "a 1.0 method without A2A-Version (meaning 0.3) is -32009",
            f"{A} §3.2.6 Service Parameters, §3.6.2 Server Responsibilities",
        ),
        (
            "creation.send",
            "creation",
            "a non-blocking SendMessage answers a Task at once, with a generated contextId",
            f"{A} §3.1.1 Send Message, §3.4.1 Context Identifier Semantics",
        ),
        (
            "stream.subscribe",
            "stream",
            "SubscribeToTask starts with the Task (1.0; in 0.3 any event of the task), or is "
            "-32004 when the card says no streaming",
            f"{A} §3.1.6 Subscribe to Task, §3.3.4 Capability Validation",
        ),
        (
            "wire.v03-compat",
            "wire",
            "a card that lists JSON-RPC 0.3 at this URL gets 0.3 answers there",
            f"{A} §5.2 Protocol Selection; A2A 0.3 tasks/get",
        ),
        (
            "cancel.running",
            "cancel",
            "CancelTask of a running task answers it canceled",
            f"{A} §3.1.5 Cancel Task",
        ),
        (
            "status.lifecycle",
            "status",
            "states start at submitted or working and never leave a terminal state",
            f"{A} §4.1.3 TaskState",
        ),
        (
            "status.states",
            "status",
            "every state is spelled as this version spells it",
            f"{A} §4.1.3 TaskState (0.3: kebab-case words)",
        ),
        (
            "list.includes-task",
            "list",
            "ListTasks lists the task and always carries nextPageToken",
            f"{A} §3.1.4 List Tasks",
        ),
        (
            "cancel.terminal",
            "cancel",
            "CancelTask of a finished task is -32002",
            f"{A} §3.1.5 Cancel Task, §5.4 Error Code Mappings",
        ),
        (
            "errors.unknown-task",
            "errors",
            "GetTask and CancelTask of an unknown id are -32001",
            f"{A} §3.3.2 Error Handling, §5.4 Error Code Mappings",
        ),
        (
            "push.capability",
            "push",
            "the card says whether the agent pushes (capabilities.pushNotifications, a boolean)",
            f"{A} §4.4.1 AgentCard capabilities, §3.3.4 Capability Validation",
        ),
        (
            "push.configs",
            "push",
            "push configs are created (with the id given), read, listed and deleted; an agent "
            "without push answers PushNotificationNotSupported (-32003)",
            f"{A} §3.1.7-§3.1.10 Push Notification Config operations, §3.3.4 Capability Validation",
        ),
        (
            "push.delivery",
            "push",
            "each state change of the task is POSTed to the config's URL as a StreamResponse, "
            "the final one included",
            f"{A} §3.1.7 Create Push Notification Config (Behavior), §4.3.3 Push Notification "
            "Payload",
        ),
        (
            "push.authentication",
            "push",
            "deliveries carry the config's token (X-A2A-Notification-Token) and the "
            "authentication it names",
            f"{A} §4.3.1 PushNotificationConfig, §4.3.2 AuthenticationInfo",
        ),
        (
            "push.after-delete",
            "push",
            "no delivery after the config is deleted; a second delete is not an error (idempotent)",
            f"{A} §3.1.10 Delete Push Notification Config",
        ),
    ),
)
CHECKS: list[CheckDef] = list(C.values())


def _state(task: Any) -> str | None:
    status = task.get("status") if isinstance(task, dict) else None
    state = status.get("state") if isinstance(status, dict) else None
    return state if isinstance(state, str) else None


def _word(state: str) -> str:
    """`TASK_STATE_INPUT_REQUIRED` / `input-required` -> `input-required`."""
    word = state.removeprefix("TASK_STATE_").lower().replace("_", "-")
    return "canceled" if word == "cancelled" else word


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _same_url(a: str, b: str) -> bool:
    def norm(u: str) -> tuple[str, str, str]:
        s = urlsplit(u)
        return (s.scheme.lower(), s.netloc.lower(), s.path.rstrip("/"))

    return norm(a) == norm(b)


# -- push notifications -------------------------------------------------------------------------

#: seconds to wait for deliveries after the task was seen to end (they may still be in flight)
PUSH_GRACE = 5.0
PUSH_CREDENTIALS = "mcptask-check-credentials"


class MessageReply(BadAnswer):
    """SendMessage answered a Message, not a task: legal in A2A (an agent that replies at
    once), so `creation.send` says so (INFO) and the task checks do not apply."""


class PushRun:
    """A task whose updates were POSTed to the check's receiver, and what the config calls
    answered on the way."""

    def __init__(self) -> None:
        self.track: A2ATrack | None = None
        self.config_id = f"mcptask-check-{uuid.uuid4().hex[:12]}"
        self.created: Any = None
        self.got: Any = None
        self.listed: Any = None
        self.errors: dict[str, RpcError] = {}
        self.deliveries: list[Any] = []
        self.token = ""


def _config_body(data: Any) -> dict[str, Any]:
    """A config as 1.0 (flat) or 0.3 (nested in `pushNotificationConfig`) sends it."""
    if not isinstance(data, dict):
        return {}
    inner = data.get("pushNotificationConfig")
    return inner if isinstance(inner, dict) else data


def _push_states(deliveries: list[Any], task_id: str) -> list[str]:
    from mcptask.protocols.a2a_push import read_event, task_id_of

    states: list[str] = []
    for d in deliveries:
        if d.task_id != task_id and task_id_of(d.body) != task_id:
            continue
        found = read_event(d.body)
        if found is None:
            continue
        state = _state(found[1])
        if state is not None:
            states.append(state)
    return states


class _PushChecks:
    """The push checks, mixed into `A2ASuite`."""

    async def _push_rpc(
        self: Any, which: int, params: dict[str, Any]
    ) -> tuple[Any, RpcError | None]:
        """One config call; an answer without `result` (a2a-sdk's 0.3 delete) is success.
        HTTP+JSON: the same 1.0 method on its resource (`A2ARest.exchange`)."""
        method = A2ABase._PUSH_METHODS[self.v.version][which]
        if self.rest is not None:
            self.recorder.answered = True
            try:
                return await self.rest.exchange(method, params, headers=self.headers()), None
            except RpcError as exc:
                return None, exc
        message: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": f"check-{uuid.uuid4().hex[:8]}",
            "method": method,
            "params": params,
        }
        try:
            async with aclosing(self.recorder.send(message, headers=self.headers())) as stream:
                async for incoming in stream:
                    if "method" in incoming:
                        continue
                    if incoming.get("error") is not None:
                        return None, error_from(incoming["error"])
                    return incoming.get("result"), None
        except RpcError as exc:
            return None, exc
        raise BadAnswer(f"{method}: the agent closed the connection without answering")

    def _push_params(self: Any, which: int, task_id: str, config: dict[str, Any]) -> dict[str, Any]:
        v10 = self.v10
        if which == 0:
            if v10:
                return {"taskId": task_id, **config}
            c = dict(config)
            if "authentication" in c:
                auth = c["authentication"]
                c["authentication"] = {
                    "schemes": [auth["scheme"]],
                    "credentials": auth["credentials"],
                }
            return {"taskId": task_id, "pushNotificationConfig": c}
        if which == 2:
            return {"taskId": task_id} if v10 else {"id": task_id}
        cid = config["id"]
        return (
            {"taskId": task_id, "id": cid}
            if v10
            else {"id": task_id, "pushNotificationConfigId": cid}
        )

    async def _push_says(self: Any) -> bool | None:
        _, card = await self.card.get()
        caps = card.get("capabilities")
        value = caps.get("pushNotifications") if isinstance(caps, dict) else None
        return value if isinstance(value, bool) else None

    async def _receiver(self: Any, deliveries: list[Any]) -> Any:
        from mcptask.protocols.a2a_push import task_id_of
        from mcptask.transports.webhook import WebhookReceiver

        receiver = WebhookReceiver(
            task_of=task_id_of,
            authorization=f"Bearer {PUSH_CREDENTIALS}",
            on_delivery=deliveries.append,
        )
        await receiver.start()
        return receiver

    async def _push_run(self: Any) -> PushRun:
        if await self._push_says() is not True:
            raise not_applicable("the card does not say pushNotifications: true")
        run = PushRun()
        receiver = await self._receiver(run.deliveries)
        run.token = receiver.token
        try:
            track = await self.send()
            run.track = track
            config = {
                "id": run.config_id,
                "url": receiver.url,
                "token": receiver.token,
                "authentication": {"scheme": "Bearer", "credentials": PUSH_CREDENTIALS},
            }
            run.created, error = await self._push_rpc(
                0, self._push_params(0, track.task_id, config)
            )
            if error is not None:
                run.errors["create"] = error
                return run
            run.got, error = await self._push_rpc(1, self._push_params(1, track.task_id, config))
            if error is not None:
                run.errors["get"] = error
            run.listed, error = await self._push_rpc(2, self._push_params(2, track.task_id, config))
            if error is not None:
                run.errors["list"] = error
            await self.wait_terminal(track)
            clock_end = asyncio.get_running_loop().time() + PUSH_GRACE
            final = _word(track.states[-1])
            while asyncio.get_running_loop().time() < clock_end:
                if final in [_word(s) for s in _push_states(run.deliveries, track.task_id)]:
                    break
                await asyncio.sleep(0.1)
            _, error = await self._push_rpc(3, self._push_params(3, track.task_id, config))
            if error is not None:
                run.errors["delete"] = error
            return run
        finally:
            await receiver.aclose()

    async def c_push_capability(self: Any) -> Outcome:
        _, card = await self.card.get()
        caps = card.get("capabilities")
        if not isinstance(caps, dict):
            return FAIL, "the card has no capabilities object"
        if "pushNotifications" not in caps:
            return PASS, "capabilities.pushNotifications is absent (no push)"
        value = caps["pushNotifications"]
        if not isinstance(value, bool):
            return FAIL, f"capabilities.pushNotifications is {short(value)}, not a boolean"
        return PASS, f"capabilities.pushNotifications: {str(value).lower()}"

    async def c_push_configs(self: Any) -> Outcome:
        if await self._push_says() is not True:
            track = await self.main.get()
            config = {"id": "mcptask-check", "url": "https://example.invalid/hook"}
            _, error = await self._push_rpc(0, self._push_params(0, track.task_id, config))
            if error is not None and error.code == -32003:
                return PASS, f"no push in the card; create: {rpc_error_text(error)}"
            what = rpc_error_text(error) if error is not None else "a config"
            return FAIL, f"no push in the card, yet create answered {what}, not -32003"
        run = await self.push_run.get()
        method = A2ABase._PUSH_METHODS[self.v.version]
        if "create" in run.errors:
            return FAIL, f"{method[0]}: {rpc_error_text(run.errors['create'])}"
        problems = []
        for name, data in (("create", run.created), ("get", run.got)):
            if name in run.errors:
                problems.append(f"{name}: {rpc_error_text(run.errors[name])}")
                continue
            body = _config_body(data)
            if body.get("id") != run.config_id:
                problems.append(f"{name} answered id {short(body.get('id'))}, not {run.config_id}")
            if not isinstance(body.get("url"), str):
                problems.append(f"{name} answered no url")
        if "list" in run.errors:
            problems.append(f"list: {rpc_error_text(run.errors['list'])}")
        else:
            items = run.listed.get("configs") if isinstance(run.listed, dict) else run.listed
            ids = [_config_body(c).get("id") for c in _list(items)]
            if run.config_id not in ids:
                problems.append(f"list does not hold the config ({short(ids)})")
        if "delete" in run.errors:
            problems.append(f"delete: {rpc_error_text(run.errors['delete'])}")
        if problems:
            return FAIL, "; ".join(problems)
        over = " over HTTP+JSON" if self.rest is not None else ""
        return PASS, (
            f"{', '.join(method)}{over}: config {run.config_id} made, read, listed, deleted"
        )

    async def c_push_delivery(self: Any) -> Outcome:
        run = await self.push_run.get()
        if run.track is None or "create" in run.errors:
            raise could_not_run("no push config could be made")
        track = run.track
        from mcptask.protocols.a2a_push import read_event

        # every POST that came with a JSON body counts here, refused by the receiver or not
        # (what it carried is judged by push.authentication)
        mine = [d for d in run.deliveries if d.body is not None or d.status == 415]
        bad = [d for d in mine if read_event(d.body) is None]
        pushed = squash([_word(s) for s in _push_states(mine, track.task_id)])
        polled = squash([_word(s) for s in track.states])
        if not mine:
            host = urlsplit(self.recorder.url).hostname or ""
            if host not in ("127.0.0.1", "localhost", "::1"):
                return WARN, (
                    "nothing was delivered to the receiver on 127.0.0.1; an agent on another "
                    "machine cannot reach it"
                )
            return FAIL, f"nothing was delivered while the task went {' → '.join(polled)}"
        if bad:
            return (
                FAIL,
                f"{len(bad)} of {len(mine)} deliveries are not a StreamResponse: "
                f"{short(bad[0].body)}",
            )
        if polled[-1] not in pushed:
            return FAIL, (
                f"the final state {polled[-1]} was not delivered (delivered: "
                f"{' → '.join(pushed) or 'no states'})"
            )
        missing = [w for w in polled[1:] if w not in pushed]
        text = f"{len(mine)} deliveries; states {' → '.join(pushed)} (polled {' → '.join(polled)})"
        if missing:
            return WARN, f"{text}; not delivered: {', '.join(missing)}"
        return PASS, text

    async def c_push_authentication(self: Any) -> Outcome:
        run = await self.push_run.get()
        if run.track is None or "create" in run.errors:
            raise could_not_run("no push config could be made")
        if not run.deliveries:
            raise could_not_run("nothing was delivered")
        no_token = [d for d in run.deliveries if d.token_matched is not True]
        no_auth = [d for d in run.deliveries if d.auth_matched is not True]
        neither = [d for d in no_token if d.auth_matched is not True]
        n = len(run.deliveries)
        if neither:
            return FAIL, (
                f"{len(neither)} of {n} deliveries carry neither the config's token nor its "
                "authentication: a receiver cannot tell them from forgeries"
            )
        if no_token:
            return WARN, (
                f"{len(no_token)} of {n} deliveries lack the config's token in "
                "X-A2A-Notification-Token (they carried Authorization: Bearer)"
            )
        if no_auth:
            return WARN, (
                f"{len(no_auth)} of {n} deliveries lack the configured Authorization: Bearer "
                "(the token matched)"
            )
        return PASS, f"all {n} deliveries carried the token and Authorization: Bearer"

    async def c_push_after_delete(self: Any) -> Outcome:
        if await self._push_says() is not True:
            raise not_applicable("the card does not say pushNotifications: true")
        await self.push_run.get()  # one task at a time
        deliveries: list[Any] = []
        receiver = await self._receiver(deliveries)
        try:
            track = await self.send()
            config = {"id": f"mcptask-check-{uuid.uuid4().hex[:12]}", "url": receiver.url}
            config["token"] = receiver.token
            _, error = await self._push_rpc(0, self._push_params(0, track.task_id, config))
            if error is not None:
                raise could_not_run(f"create: {rpc_error_text(error)}")
            _, error = await self._push_rpc(3, self._push_params(3, track.task_id, config))
            if error is not None:
                return FAIL, f"delete: {rpc_error_text(error)}"
            deleted = len(deliveries)
            _, again = await self._push_rpc(3, self._push_params(3, track.task_id, config))
            await self.wait_terminal(track)
            await asyncio.sleep(PUSH_GRACE / 2)  # time for a delivery that should not come
        finally:
            await receiver.aclose()
        late = _push_states(deliveries[deleted:], track.task_id)
        final = _word(track.states[-1])
        if final in [_word(s) for s in late]:
            return FAIL, f"the final state {final} was delivered after the config was deleted"
        if again is not None and again.code != -32001:
            return FAIL, f"a second delete: {rpc_error_text(again)} (MUST be idempotent)"
        text = f"nothing delivered after delete while the task went on to {final}"
        if again is not None:
            return WARN, f"{text}; a second delete answered {rpc_error_text(again)}"
        return PASS, f"{text}; a second delete succeeded"


class A2ATrack:
    def __init__(self, task: dict[str, Any]) -> None:
        self.task_id = str(task["id"])
        self.context_id = task.get("contextId")
        self.created = task
        self.states: list[str] = []
        self.last = task
        self.see(task)

    @property
    def state(self) -> str:
        return self.word

    def see(self, task: dict[str, Any]) -> None:
        state = _state(task)
        if state is not None:
            self.states.append(state)
        self.last = task

    @property
    def word(self) -> str:
        return _word(self.states[-1]) if self.states else "?"

    @property
    def terminal(self) -> bool:
        return self.word in TERMINAL_WORDS


class A2ASuite(_PushChecks, TaskSuite[A2ATrack]):
    protocol = "a2a"

    def __init__(self, *args: Any, proto: TaskProtocol, **kwargs: Any) -> None:
        if proto.name == GRPC_NAME:
            raise NotApplicable(
                "check tests A2A over JSON-RPC and HTTP+JSON; it does not test the gRPC binding yet"
            )
        super().__init__(*args, **kwargs)
        self.protocol = proto.name
        self.agno = not isinstance(proto, A2ABase)
        self.v: type[A2ABase] = A2A03 if isinstance(proto, A2A03) else A2A10
        #: HTTP+JSON: every method goes to its resource (`A2ARest.exchange`)
        self.rest: A2ARest | None = proto if isinstance(proto, A2ARest) else None
        self.binding = "HTTP+JSON" if self.rest is not None else "JSONRPC"
        self.proto = proto
        self.card = self.lazy("the agent card", self._card)
        self.all_states: list[tuple[str, str]] = []
        self.push_run = self.lazy("a task followed by webhook", self._push_run)

    @property
    def v10(self) -> bool:
        return self.v is A2A10

    def plan(self) -> list[tuple[CheckDef, CheckFn]]:
        order: list[tuple[str, CheckFn]] = [
            ("card.fields", self.c_card_fields),
            ("card.interfaces", self.c_interfaces),
            ("wire.unsupported-version", self.c_unsupported_version),
            ("wire.version-header", self.c_version_header),
            ("creation.send", self.c_send),
            ("stream.subscribe", self.c_subscribe),
            ("wire.v03-compat", self.c_v03),
            ("cancel.running", self.c_cancel_running),
            ("status.lifecycle", self.c_lifecycle),
            ("status.states", self.c_states),
            ("list.includes-task", self.c_list),
            ("cancel.terminal", self.c_cancel_terminal),
            ("errors.unknown-task", self.c_unknown),
            ("push.capability", self.c_push_capability),
            ("push.configs", self.c_push_configs),
            ("push.delivery", self.c_push_delivery),
            ("push.authentication", self.c_push_authentication),
            ("push.after-delete", self.c_push_after_delete),
        ]
        if self.agno:
            return [(C[name], self._agno) for name, _ in order]
        return [(C[name], fn) for name, fn in order]

    async def _agno(self) -> Outcome:
        raise could_not_run(
            "mcptask check speaks A2A JSON-RPC; Agno's per-operation routes are not covered yet"
        )

    # -- plumbing -------------------------------------------------------------------------------

    def headers(self) -> dict[str, str]:
        return dict(self.v.headers)

    async def request(
        self, method: str, params: dict[str, Any], headers: dict[str, str] | None = None
    ) -> Any:
        if self.rest is not None:
            self.recorder.answered = True
            return await self.rest.exchange(
                method, params, headers=self.headers() if headers is None else headers
            )
        return await self.rpc.request(
            method, params, headers=self.headers() if headers is None else headers
        )

    def task_of(self, data: Any, what: str) -> dict[str, Any]:
        try:
            kind, body = classify(data)
        except ProtocolError as exc:
            raise BadAnswer(f"{what} answered {short(data, 100)}: {exc.message}") from None
        if kind != "task" or not isinstance(body.get("id"), str):
            raise BadAnswer(f"{what} answered a {kind}, not a task: {short(body, 100)}")
        state = _state(body)
        if state is not None:
            self.all_states.append((what, state))
        return body

    async def send(self) -> A2ATrack:
        params = {"message": self.proto_message(), "configuration": dict(self.v.send_configuration)}
        data = await self.request(self.v.m_send, params)
        with contextlib.suppress(ProtocolError):
            if classify(data)[0] == "message":
                # legal: an agent may answer a message at once, with a Message (A2A §3.1.1)
                raise MessageReply(short(data, 100))
        return A2ATrack(self.task_of(data, self.v.m_send))

    def proto_message(self) -> dict[str, Any]:
        assert isinstance(self.proto, A2ABase)
        message = self.proto.user_message(TEXT, None)
        message["messageId"] = str(uuid.uuid4())
        return message

    async def get_task(self, track: A2ATrack) -> dict[str, Any]:
        data = await self.request(self.v.m_get, {"id": track.task_id, "historyLength": 0})
        task = self.task_of(data, self.v.m_get)
        track.see(task)
        return task

    def poll_after(self, track: A2ATrack) -> float:
        return POLL

    # -- fixtures -------------------------------------------------------------------------------

    async def _card(self) -> tuple[str, dict[str, Any]]:
        tried: list[str] = []
        for url in card_urls(self.recorder.url):
            # bounded, and never an endless stream (as detection reads it)
            response = await self.recorder.get(url, max_body=CARD_LIMIT, json_only=True)
            tried.append(f"{url}: HTTP {response.status_code}")
            if response.status_code != 200:
                continue
            try:
                card = jsonsafe.loads(response.content)
            except jsonsafe.Refused as exc:
                raise BadAnswer(f"{url} is JSON mcptask refuses: {exc}") from None
            except ValueError:
                raise BadAnswer(f"{url} is not JSON") from None
            if isinstance(card, dict):
                return url, card
            raise BadAnswer(f"{url} is not a JSON object")
        raise BadAnswer("no agent card: " + "; ".join(tried))

    async def _make_main(self) -> A2ATrack:
        return await self.send()

    # -- card -----------------------------------------------------------------------------------

    async def c_card_fields(self) -> Outcome:
        found, error = await self.card.attempt()
        if error is not None:
            return FAIL, describe(error)
        assert found is not None
        url, card = found
        self.facts["serverInfo"] = {"name": card.get("name"), "version": card.get("version")}
        if self.v10:
            required = [
                "name",
                "description",
                "supportedInterfaces",
                "version",
                "capabilities",
                "defaultInputModes",
                "defaultOutputModes",
                "skills",
            ]
        else:
            required = [
                "name",
                "description",
                "url",
                "version",
                "capabilities",
                "defaultInputModes",
                "defaultOutputModes",
                "skills",
            ]
        missing = [k for k in required if card.get(k) in (None, "")]
        raw_skills = card.get("skills")
        skills: list[Any] = raw_skills if isinstance(raw_skills, list) else []
        for i, skill in enumerate(skills):
            lacks = [
                k
                for k in ("id", "name", "description", "tags")
                if not isinstance(skill, dict) or skill.get(k) in (None, "")
            ]
            if lacks:
                missing.append(f"skills[{i}].{'/'.join(lacks)}")
        if missing:
            return FAIL, f"{url} lacks {', '.join(missing)}"
        return PASS, (
            f"{url}: {short(card.get('name'), 60)!r} version {short(card.get('version'))},"
            f" {len(skills)} skill(s), capabilities {keys(card.get('capabilities'))}"
        )

    async def c_interfaces(self) -> Outcome:
        _, card = await self.card.get()
        endpoint = self.recorder.url
        if not self.v10:
            url = card.get("url")
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                return FAIL, f"the 0.3 card's url {short(url)} is not an absolute http(s) URL"
            extra = _list(card.get("additionalInterfaces"))
            listed = [url] + [i.get("url") for i in extra if isinstance(i, dict)]
            if not any(isinstance(u, str) and _same_url(u, endpoint) for u in listed):
                return WARN, f"the card does not list {endpoint} (it lists {short(listed)})"
            return PASS, f"url {url}, preferredTransport {short(card.get('preferredTransport'))}"
        interfaces = card.get("supportedInterfaces")
        if not isinstance(interfaces, list) or not interfaces:
            return FAIL, "supportedInterfaces is missing or empty"
        problems: list[str] = []
        notes: list[str] = []
        described: list[str] = []
        mine = False
        for i, item in enumerate(interfaces):
            if not isinstance(item, dict):
                problems.append(f"supportedInterfaces[{i}] is not an object")
                continue
            url, binding, version = (
                item.get("url"),
                item.get("protocolBinding"),
                item.get("protocolVersion"),
            )
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                problems.append(f"[{i}].url {short(url)} is not an absolute http(s) URL")
            if not isinstance(binding, str) or not binding:
                problems.append(f"[{i}].protocolBinding is missing")
            if not isinstance(version, str) or not re.fullmatch(r"\d+\.\d+(\.\d+)?", version):
                problems.append(f"[{i}].protocolVersion {short(version)} is not Major.Minor")
            elif version.count(".") == 2:
                notes.append(f"[{i}].protocolVersion {version} has a patch number (SHOULD NOT)")
            described.append(f"{binding} {version}")
            if (
                isinstance(url, str)
                and _same_url(url, endpoint)
                and str(binding).upper() == self.binding
                and version == self.v.version
            ):
                mine = True
        if problems:
            return FAIL, "; ".join(problems)
        if not mine:
            notes.append(f"no {self.binding} {self.v.version} interface at {endpoint}")
        text = f"{len(interfaces)} interfaces: {', '.join(described)}"
        if notes:
            return WARN, f"{text}; {'; '.join(notes)}"
        return PASS, text

    # -- version handling -----------------------------------------------------------------------

    async def c_unsupported_version(self) -> Outcome:
        if not self.v10:
            raise not_applicable("A2A 0.3 has no version header")
        _, error = await self.attempt(
            self.v.m_get,
            {"id": f"mcptask-check-{uuid.uuid4().hex}"},
            headers={"A2A-Version": "99.0"},
        )
        if error is not None and error.code == -32009:
            return PASS, f"A2A-Version 99.0: {rpc_error_text(error)}"
        what = rpc_error_text(error) if error is not None else "a result"
        return FAIL, f"A2A-Version 99.0 got {what}, not -32009 VersionNotSupported"

    async def c_version_header(self) -> Outcome:
        if not self.v10:
            raise not_applicable("A2A 0.3 has no version header")
        _, error = await self.attempt(
            self.v.m_get, {"id": f"mcptask-check-{uuid.uuid4().hex}"}, headers={}
        )
        if error is not None and error.code == -32009:
            return PASS, f"{self.v.m_get} without A2A-Version: {rpc_error_text(error)}"
        if error is not None and error.code == -32601:
            return WARN, (
                f"{self.v.m_get} without A2A-Version: {rpc_error_text(error)} (read as "
                "0.3, where the method does not exist); -32009 says why"
            )
        what = rpc_error_text(error) if error is not None else "a result"
        return WARN, (
            f"{self.v.m_get} without A2A-Version was processed as 1.0 ({what}); a "
            "missing header means 0.3"
        )

    # -- the task -------------------------------------------------------------------------------

    async def c_send(self) -> Outcome:
        track, error = await self.made(self.main)
        if isinstance(error, MessageReply):
            self.facts["taskSupport"] = False
            return INFO, (
                f"no task support: {self.v.m_send} answered with a Message, not a task (A2A "
                f"allows it), so the task checks do not apply: {error.message}"
            )
        if error is not None:
            return FAIL, f"{self.v.m_send}: {describe(error)}"
        assert track is not None
        task = track.created
        if not task.get("contextId"):
            return FAIL, "the task has no contextId (the agent MUST generate one)"
        state = _state(task)
        if state is None:
            return FAIL, f"the task has no status.state: {short(task.get('status'))}"
        text = f"task {track.task_id} in context {task['contextId']}, state {state}"
        if track.terminal:
            return WARN, f"{text}: already finished, so the non-blocking send waited"
        return PASS, text

    async def c_subscribe(self) -> Outcome:
        _, card = await self.card.get()
        track = await self.main.get()
        raw_caps = card.get("capabilities")
        caps: dict[str, Any] = raw_caps if isinstance(raw_caps, dict) else {}
        streaming = caps.get("streaming") is True
        message = {
            "jsonrpc": "2.0",
            "id": f"check-{uuid.uuid4().hex[:8]}",
            "method": self.v.m_subscribe,
            "params": {"id": track.task_id},
        }
        first: dict[str, Any] | None = None
        error: RpcError | None = None
        if self.rest is not None:
            first, error = await self._rest_first_event(self.rest, track.task_id)
        else:
            first, error = await self._first_event(message)
        return self._judge_subscribe(streaming, first, error, track)

    async def _rest_first_event(
        self, rest: A2ARest, task_id: str
    ) -> tuple[dict[str, Any] | None, RpcError | None]:
        """`POST /tasks/{id}:subscribe`: its first event, as a JSON-RPC answer would carry
        it (`{"result": ...}`), or the refusal."""

        from mcptask.transports.rpc import SpeaksRest

        transport = rest.rpc.transport
        if not isinstance(transport, SpeaksRest):
            raise could_not_run("HTTP+JSON needs an HTTP endpoint")
        stream = transport.event_stream(
            method="POST", url=rest.subscribe_url(task_id), body={}, headers=self.headers()
        )
        try:
            async with aclosing(stream):  # type: ignore[type-var]
                async for event in stream:
                    if event.event == "open" or not event.data.strip():
                        continue
                    self.recorder.answered = True
                    try:
                        return {"result": jsonsafe.loads(event.data)}, None
                    except ValueError:
                        return {"result": event.data}, None
        except RpcError as exc:
            if exc.code >= 0 and exc.http_status is not None:
                # a `google.rpc.Status` read as a JSON-RPC error (its HTTP status as the code,
                # its ErrorInfo reason lost): asked again plainly, it reads as the binding's
                return None, await self._rest_refusal(transport, rest, task_id, exc)
            return None, exc
        return None, None

    async def _rest_refusal(
        self, transport: Any, rest: A2ARest, task_id: str, first: RpcError
    ) -> RpcError:
        """The subscribe refusal as `rest_error` reads it (-32004 for UNSUPPORTED_OPERATION),
        or `first` when a second ask does not say more."""
        url = rest.subscribe_url(task_id)
        response = await transport.rest("POST", url, body={}, headers=self.headers())
        if response.is_success:
            return first
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        again = rest_error(response.status_code, response.content, ctype, url)
        return again if isinstance(again, RpcError) else first

    async def _first_event(
        self, message: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, RpcError | None]:
        first: dict[str, Any] | None = None
        error: RpcError | None = None
        try:
            async with aclosing(self.recorder.send(message, headers=self.headers())) as stream:
                async for incoming in stream:
                    if "method" in incoming:
                        continue
                    if incoming.get("error") is not None:
                        error = error_from(incoming["error"])
                    else:
                        first = incoming
                    break
        except RpcError as exc:
            error = exc
        return first, error

    def _judge_subscribe(
        self,
        streaming: bool,
        first: dict[str, Any] | None,
        error: RpcError | None,
        track: A2ATrack,
    ) -> Outcome:
        if not streaming:
            if error is not None and error.code == -32004:
                return (
                    PASS,
                    f"the card says no streaming; {self.v.m_subscribe}: {rpc_error_text(error)}",
                )
            what = rpc_error_text(error) if error else "a stream"
            return (
                FAIL,
                f"the card says no streaming, yet {self.v.m_subscribe} gave {what}, not -32004",
            )
        if error is not None:
            if error.code == -32004 and track.terminal:
                raise could_not_run("the task ended before the subscription")
            return FAIL, f"the card says streaming, {self.v.m_subscribe}: {rpc_error_text(error)}"
        if first is None:
            return FAIL, f"{self.v.m_subscribe} closed without an event"
        try:
            kind, body = classify(first.get("result"))
        except ProtocolError as exc:
            return FAIL, f"the first event is not A2A: {exc.message}"
        if kind != "task" and not self.v10:
            # 0.3's tasks/resubscribe has no rule for the first event (1.0 §3.1.6 added it)
            return _judge_v03_first_event(kind, body, track.task_id)
        if kind != "task":
            return FAIL, f"the first event is a {kind}; it MUST be the Task"
        if body.get("id") != track.task_id:
            return FAIL, f"the first event is task {short(body.get('id'))}, not {track.task_id}"
        state = _state(body)
        if state is not None:
            self.all_states.append((self.v.m_subscribe, state))
            track.see(body)
        return PASS, f"the first event is the Task ({state})"

    async def c_v03(self) -> Outcome:
        if not self.v10:
            raise not_applicable("the agent is spoken to in 0.3 already")
        _, card = await self.card.get()
        listed = [
            i
            for i in _list(card.get("supportedInterfaces"))
            if isinstance(i, dict)
            and str(i.get("protocolBinding", "")).upper() == "JSONRPC"
            and i.get("protocolVersion") == "0.3"
            and isinstance(i.get("url"), str)
            and _same_url(i["url"], self.recorder.url)
        ]
        if not listed:
            raise not_applicable("the card lists no JSON-RPC 0.3 interface at this URL")
        track = await self.main.get()
        data, error = await self.attempt(
            A2A03.m_get, {"id": track.task_id, "historyLength": 0}, headers={}
        )
        if error is not None:
            return FAIL, f"0.3 tasks/get of the task: {rpc_error_text(error)}"
        task = data if isinstance(data, dict) else {}
        state = _state(task)
        if task.get("kind") != "task" or state is None:
            return FAIL, f"0.3 tasks/get answered no 0.3 task (kind {short(task.get('kind'))})"
        if state not in STATES_03:
            return FAIL, f"0.3 tasks/get spells the state {state!r}"
        return PASS, f"0.3 tasks/get answers kind task, state {state!r}"

    async def c_cancel_running(self) -> Outcome:
        track = await self.send()
        data, error = await self.attempt(self.v.m_cancel, {"id": track.task_id})
        if error is not None:
            now = await self.get_task(track)
            if error.code == -32002 and _word(_state(now) or "") in TERMINAL_WORDS:
                raise could_not_run(f"the task was {_state(now)} before the cancel arrived")
            return FAIL, f"{self.v.m_cancel} of a {track.word} task: {rpc_error_text(error)}"
        task = self.task_of(data, self.v.m_cancel)
        track.see(task)
        if track.word == "canceled":
            return PASS, f"{self.v.m_cancel} answered the task {_state(task)}"
        return WARN, (
            f"{self.v.m_cancel} answered the task {_state(task)}, not canceled "
            "(cancellation is not guaranteed)"
        )

    async def c_lifecycle(self) -> Outcome:
        track = await self.main_done.get()
        await asyncio.sleep(POLL / 2)
        await self.get_task(track)
        words = [_word(s) for s in track.states]
        path = squash(words)
        if path[0] not in ("submitted", "working"):
            return FAIL, f"the task began {path[0]} ({' → '.join(path)})"
        for before, after in itertools.pairwise(path):
            if before in TERMINAL_WORDS:
                return FAIL, f"left the terminal state {before} for {after} ({' → '.join(path)})"
        return PASS, f"{' → '.join(path)} over {len(words)} answers; stays {path[-1]}"

    async def c_states(self) -> Outcome:
        await self.main_done.get()
        valid = STATES_10 if self.v10 else STATES_03
        wrong = sorted({f"{s!r} ({where})" for where, s in self.all_states if s not in valid})
        if wrong:
            return (
                FAIL,
                f"states not spelled as A2A {self.v.version} spells them: {', '.join(wrong)}",
            )
        seen = sorted({s for _, s in self.all_states})
        return (
            PASS,
            f"{len(self.all_states)} states, all {self.v.version} spellings: {', '.join(seen)}",
        )

    async def c_list(self) -> Outcome:
        if self.v.m_list is None:
            raise not_applicable(f"A2A {self.v.version} has no ListTasks")
        track = await self.main.get()
        params: dict[str, Any] = {"pageSize": 100, "historyLength": 0}
        if track.context_id:
            params["contextId"] = track.context_id
        data, error = await self.attempt(self.v.m_list, params)
        if error is not None:
            return FAIL, f"{self.v.m_list}: {rpc_error_text(error)}"
        if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
            return FAIL, f"{self.v.m_list} answered no `tasks` list: {short(data, 100)}"
        ids = [t.get("id") for t in data["tasks"] if isinstance(t, dict)]
        if "nextPageToken" not in data or not isinstance(data["nextPageToken"], str):
            return FAIL, f"{self.v.m_list} answered without nextPageToken (MUST always be present)"
        if track.task_id not in ids:
            return (
                WARN,
                f"{self.v.m_list} in the task's context does not list it ({len(ids)} tasks)",
            )
        return PASS, (
            f"{self.v.m_list} lists the task ({len(ids)} in its context), "
            f"nextPageToken {data['nextPageToken']!r}"
        )

    async def c_cancel_terminal(self) -> Outcome:
        track = await self.main_done.get()
        before = track.word
        data, error = await self.attempt(self.v.m_cancel, {"id": track.task_id})
        if error is not None:
            if error.code == -32002:
                return PASS, f"{self.v.m_cancel} of the {before} task: {rpc_error_text(error)}"
            return (
                FAIL,
                f"{self.v.m_cancel} of the {before} task: {rpc_error_text(error)}, not -32002",
            )
        answered = _state(data.get("task", data)) if isinstance(data, dict) else None
        now = await self.get_task(track)
        return FAIL, (
            f"{self.v.m_cancel} of the {before} task was accepted (answered "
            f"{short(answered)}); {self.v.m_get} now says {short(_state(now))}"
        )

    async def c_unknown(self) -> Outcome:
        no_such = f"mcptask-check-no-such-task-{uuid.uuid4().hex}"
        bad: list[str] = []
        for method in (self.v.m_get, self.v.m_cancel):
            _, error = await self.attempt(method, {"id": no_such})
            if error is None:
                bad.append(f"{method} answered a result")
            elif error.code != -32001:
                bad.append(f"{method}: {rpc_error_text(error)}")
        if bad:
            return FAIL, "unknown task id: " + "; ".join(bad)
        return PASS, f"{self.v.m_get} and {self.v.m_cancel} of an unknown id: -32001 TaskNotFound"


def _judge_v03_first_event(kind: str, body: dict[str, Any], task_id: str) -> Outcome:
    """A 0.3 subscription may begin with any event of the task (a status or artifact
    update): only that it belongs to the task is judged."""
    if kind == "message":
        return PASS, "the first event is a message (0.3 sets no rule for the first event)"
    named = body.get("taskId")
    if named != task_id:
        return FAIL, f"the first event ({kind} update) is for task {short(named)}, not {task_id}"
    return PASS, f"the first event is a {kind} update of the task (0.3 sets no rule for it)"
