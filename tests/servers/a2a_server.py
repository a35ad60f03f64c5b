"""A small real A2A server for mcptask's tests, built on a2a-sdk 1.3.0.

Run it in the venv that ``a2a_envs.py`` builds (``a2a-sdk[http-server]==1.3.0`` + uvicorn)::

    python a2a_server.py --port P

It binds 127.0.0.1 only and serves, on ``http://127.0.0.1:P``:

* agent card:        ``GET  /.well-known/agent-card.json`` (1.0 ``supportedInterfaces`` plus the
                     0.3 ``url``/``preferredTransport``/``protocolVersion`` fields)
* JSON-RPC endpoint: ``POST /`` (1.0 with header ``A2A-Version: 1.0``; 0.3 methods such as
                     ``tasks/get`` without the header, via the SDK's compat adapter)
* HTTP+JSON (REST):  base ``/rest`` (``POST /rest/message:send``, ``GET /rest/tasks/{id}``,
                     ``POST /rest/tasks/{id}:cancel``, ``GET /rest/tasks``, ...; 1.0 only)

Tasks live in memory. The agent's behaviour depends on the user's text:

* anything else:     ``working`` with messages "step 1/3", "step 2/3", "step 3/3" about 1 s apart,
                     then an artifact ``echo: <text>`` and ``completed``;
* ``fail...``:       one working step, then ``failed`` with a status message;
* ``ask...``:        one working step, then ``input-required`` with a question; the next message
                     sent to the same task (its ``taskId``) is the answer: artifact
                     ``answer: <answer>`` and ``completed``;
* ``slow...``:       20 working steps of 1 s ("step i/20"), then the echo artifact
                     (for cancel tests).

``--step-seconds`` changes the 1 s step duration.

``--push`` turns push notifications on (the SDK's in-memory config store and its sender, which
POSTs each update as a ``StreamResponse`` with ``X-A2A-Notification-Token``) and says
``pushNotifications: true`` in the card; ``--no-streaming`` says ``streaming: false`` (the SDK then
refuses ``SubscribeToTask``: updates reach a client only by webhook or by polling). With ``--push``
the agent screens push URLs as the spec asks (SHOULD refuse private addresses), except
``127.0.0.1``, where the tests' receivers listen: ``http://10.1.2.3/...`` is refused (-32602).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
from urllib.parse import urlsplit

import httpx
import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
)
from starlette.applications import Starlette

JSONRPC_PATH = "/"
REST_PREFIX = "/rest"

log = logging.getLogger("a2a_test_server")


class EchoExecutor(AgentExecutor):
    """Emits working steps, then an echo artifact; see the module docstring for special inputs."""

    def __init__(self, step_seconds: float = 1.0) -> None:
        self.step = step_seconds
        # task id -> the question we asked, for tasks waiting for an answer
        self.waiting: dict[str, str] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input().strip()
        task = context.current_task
        if task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def msg(t: str):  # an agent message bound to this task
            return updater.new_agent_message([new_text_part(t)])

        if task.id in self.waiting:
            self.waiting.pop(task.id)
            await updater.start_work(msg("got the answer"))
            await asyncio.sleep(self.step)
            await updater.add_artifact([new_text_part(f"answer: {text}")], name="answer")
            await updater.complete()
            return

        lowered = text.lower()
        if lowered.startswith("fail"):
            await updater.start_work(msg("step 1/1"))
            await asyncio.sleep(self.step)
            await updater.failed(msg(f"failed on purpose: {text}"))
            return
        if lowered.startswith("ask"):
            await updater.start_work(msg("step 1/1"))
            await asyncio.sleep(self.step)
            question = "What is your answer?"
            self.waiting[task.id] = question
            await updater.requires_input(msg(question))
            return

        steps = 20 if lowered.startswith("slow") else 3
        for i in range(1, steps + 1):
            await updater.start_work(msg(f"step {i}/{steps}"))
            await asyncio.sleep(self.step)
        await updater.add_artifact([new_text_part(f"echo: {text}")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        task_id = context.task_id or (task.id if task else "")
        context_id = context.context_id or (task.context_id if task else "")
        self.waiting.pop(task_id, None)
        updater = TaskUpdater(event_queue, task_id, context_id)
        await updater.cancel(updater.new_agent_message([new_text_part("cancelled by request")]))


def build_card(base: str, *, push: bool = False, streaming: bool = True) -> AgentCard:
    rpc_url = base + JSONRPC_PATH
    rest_url = base + REST_PREFIX
    return AgentCard(
        name="mcptask test agent",
        description="Echoes its input after a few working steps (a2a-sdk 1.3.0 test server).",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=rpc_url, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=rest_url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
            AgentInterface(url=rpc_url, protocol_binding="JSONRPC", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=push),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="echo",
                name="echo",
                description="Echo the input; 'fail...' fails, 'ask...' asks a question, "
                "'slow...' takes 20 s.",
                tags=["test"],
                examples=["hello", "fail now", "ask me", "slow please"],
            )
        ],
    )


async def screen_push_url(url: str) -> bool:
    """The spec's SHOULD (refuse private and loopback addresses), but for 127.0.0.1 where the
    tests' receivers listen."""
    host = urlsplit(url).hostname or ""
    if host == "127.0.0.1":
        return True
    try:
        return ipaddress.ip_address(host).is_global
    except ValueError:
        return False  # a name: this test agent resolves none


def build_app(
    port: int, step_seconds: float = 1.0, *, push: bool = False, streaming: bool = True
) -> Starlette:
    base = f"http://127.0.0.1:{port}"
    card = build_card(base, push=push, streaming=streaming)
    extra: dict[str, object] = {}
    if push:
        store = InMemoryPushNotificationConfigStore()
        extra = {
            "push_config_store": store,
            "push_sender": BasePushNotificationSender(
                httpx.AsyncClient(timeout=10), store, push_url_validator=screen_push_url
            ),
            "push_url_validator": screen_push_url,
        }
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(step_seconds),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        **extra,  # type: ignore[arg-type]
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, JSONRPC_PATH, enable_v0_3_compat=True),
        *create_rest_routes(handler, path_prefix=REST_PREFIX),
    ]
    return Starlette(routes=routes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--step-seconds", type=float, default=1.0)
    parser.add_argument("--push", action="store_true", help="push notifications on")
    parser.add_argument("--no-streaming", action="store_true", help="streaming off in the card")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    app = build_app(args.port, args.step_seconds, push=args.push, streaming=not args.no_streaming)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="info")


if __name__ == "__main__":
    main()
