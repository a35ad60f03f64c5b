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
* ``slow...``:       20 working steps of 1 s ("step i/20"), then the echo artifact;
* ``hold...``:       600 working steps ("step i/600"): a task still running whenever a test
                     gets to cancel it, however loaded the machine (it ends by cancel);
* ``report...``:     a text artifact ``report.md`` (id ``report``) streamed in four appended
                     chunks one step apart (``REPORT_CHUNKS``; the last with ``lastChunk``), then
                     a file artifact ``data.bin`` (``REPORT_FILE``: 4 KiB of bytes,
                     ``application/octet-stream``, as a ``raw`` part) and ``completed``;
* ``link...``:       at once, an artifact with one ``url`` part: this server's agent card
                     (``card.json``, ``application/json``), and ``completed``.

``--step-seconds`` changes the 1 s step duration.

``--push`` turns push notifications on (the SDK's in-memory config store and its sender, which
POSTs each update as a ``StreamResponse`` with ``X-A2A-Notification-Token``) and says
``pushNotifications: true`` in the card; ``--no-streaming`` says ``streaming: false`` (the SDK then
refuses ``SubscribeToTask``: updates reach a client only by webhook or by polling). With ``--push``
the agent screens push URLs as the spec asks (SHOULD refuse private addresses), except
``127.0.0.1``, where the tests' receivers listen: ``http://10.1.2.3/...`` is refused (-32602).
``--step-seconds`` changes the 1 s step duration. ``--rest-only`` serves the agent card and the
HTTP+JSON binding only (base ``/rest``; the card lists no JSON-RPC interface). ``--grpc-port G``
also serves the gRPC binding on ``127.0.0.1:G`` (a2a-sdk's ``GrpcHandler``; needs the ``grpc``
extra), listed in the card; with ``--grpc-only`` the card lists only that interface (the HTTP
server then serves the card alone).

``--record FILE`` writes every request it receives to FILE, one JSON line each
(``wire_recorder.py``): HTTP requests (headers and body), gRPC calls (their metadata), and the
metadata of each message its executor is given (``{"via": "executor", "taskId", "metadata"}``).
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
    Part,
)
from a2a_report import REPORT_CHUNKS, REPORT_FILE
from starlette.applications import Starlette

JSONRPC_PATH = "/"
REST_PREFIX = "/rest"

log = logging.getLogger("a2a_test_server")


class EchoExecutor(AgentExecutor):
    """Emits working steps, then an echo artifact; see the module docstring for special inputs."""

    def __init__(
        self, step_seconds: float = 1.0, base: str = "", record: str | None = None
    ) -> None:
        self.step = step_seconds
        #: the server's own root URL (`link...` points there)
        self.base = base
        #: `--record FILE`: the metadata of each message the executor is given
        self.record = record
        # task id -> the question we asked, for tasks waiting for an answer
        self.waiting: dict[str, str] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input().strip()
        task = context.current_task
        if task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        if self.record and context.message is not None:
            from google.protobuf.json_format import MessageToDict
            from wire_recorder import record

            metadata = MessageToDict(context.message.metadata)
            record(self.record, {"via": "executor", "taskId": task.id, "metadata": metadata})
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

        if lowered.startswith("link"):
            card = Part(
                url=self.base + "/.well-known/agent-card.json",
                media_type="application/json",
                filename="card.json",
            )
            await updater.add_artifact([card], artifact_id="link", name="link")
            await updater.complete()
            return
        if lowered.startswith("report"):
            await updater.start_work(msg("writing the report"))
            for i, chunk in enumerate(REPORT_CHUNKS):
                await updater.add_artifact(
                    [new_text_part(chunk)],
                    artifact_id="report",
                    name="report.md",
                    append=i > 0,
                    last_chunk=i == len(REPORT_CHUNKS) - 1,
                )
                await asyncio.sleep(self.step)
            data = Part(raw=REPORT_FILE, media_type="application/octet-stream", filename="data.bin")
            await updater.add_artifact([data], artifact_id="data", name="data")
            await updater.complete()
            return

        steps = 20 if lowered.startswith("slow") else 600 if lowered.startswith("hold") else 3
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


def build_card(
    base: str,
    *,
    push: bool = False,
    streaming: bool = True,
    rest_only: bool = False,
    grpc_port: int | None = None,
    grpc_only: bool = False,
) -> AgentCard:
    rpc_url = base + JSONRPC_PATH
    rest_url = base + REST_PREFIX
    interfaces = [
        AgentInterface(url=rpc_url, protocol_binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(url=rest_url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
        AgentInterface(url=rpc_url, protocol_binding="JSONRPC", protocol_version="0.3"),
    ]
    if rest_only:
        interfaces = [interfaces[1]]
    if grpc_port is not None:
        grpc = AgentInterface(
            url=f"127.0.0.1:{grpc_port}", protocol_binding="GRPC", protocol_version="1.0"
        )
        interfaces = [grpc] if grpc_only else [*interfaces, grpc]
    return AgentCard(
        name="mcptask test agent",
        description="Echoes its input after a few working steps (a2a-sdk 1.3.0 test server).",
        version="1.0.0",
        supported_interfaces=interfaces,
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
    port: int,
    step_seconds: float = 1.0,
    *,
    push: bool = False,
    streaming: bool = True,
    rest_only: bool = False,
    grpc_port: int | None = None,
    grpc_only: bool = False,
    record: str | None = None,
) -> tuple[Starlette, DefaultRequestHandler]:
    base = f"http://127.0.0.1:{port}"
    card = build_card(
        base,
        push=push,
        streaming=streaming,
        rest_only=rest_only,
        grpc_port=grpc_port,
        grpc_only=grpc_only,
    )
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
        agent_executor=EchoExecutor(step_seconds, base, record),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        **extra,  # type: ignore[arg-type]
    )
    routes = [*create_agent_card_routes(card)]
    if grpc_only:
        return Starlette(routes=routes), handler
    if not rest_only:
        routes += create_jsonrpc_routes(handler, JSONRPC_PATH, enable_v0_3_compat=True)
    # last: the REST routes end with a catch-all `/{tenant}` mount that shadows what follows
    routes += create_rest_routes(handler, path_prefix=REST_PREFIX)
    return Starlette(routes=routes), handler


def _grpc_recorder(path: str):  # -> grpc.aio.ServerInterceptor
    """A gRPC interceptor that records each call's method and kept metadata."""
    import grpc.aio
    from wire_recorder import kept_headers, record

    class Recorder(grpc.aio.ServerInterceptor):
        async def intercept_service(self, continuation, handler_call_details):
            metadata = handler_call_details.invocation_metadata or ()
            entry = {
                "via": "grpc",
                "rpc": handler_call_details.method,
                "headers": kept_headers((m.key, m.value) for m in metadata),
            }
            record(path, entry)
            return await continuation(handler_call_details)

    return Recorder()


async def serve(
    app: Starlette,
    handler: DefaultRequestHandler,
    port: int,
    grpc_port: int | None,
    record: str | None = None,
):
    """The HTTP app and, with `grpc_port`, the gRPC binding beside it on one event loop;
    `record`: every request received, to that file."""
    grpc_server = None
    asgi = app
    if record:
        from wire_recorder import RecordWire

        asgi = RecordWire(app, record)
    if grpc_port is not None:
        import grpc.aio
        from a2a.server.request_handlers.grpc_handler import GrpcHandler
        from a2a.types import a2a_pb2_grpc

        grpc_server = grpc.aio.server(interceptors=[_grpc_recorder(record)] if record else None)
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server)
        grpc_server.add_insecure_port(f"127.0.0.1:{grpc_port}")
        await grpc_server.start()
    config = uvicorn.Config(asgi, host="127.0.0.1", port=port, log_level="info")
    try:
        await uvicorn.Server(config).serve()
    finally:
        if grpc_server is not None:
            await grpc_server.stop(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--step-seconds", type=float, default=1.0)
    parser.add_argument("--push", action="store_true", help="push notifications on")
    parser.add_argument("--no-streaming", action="store_true", help="streaming off in the card")
    parser.add_argument("--rest-only", action="store_true")
    parser.add_argument("--grpc-port", type=int, default=None)
    parser.add_argument("--grpc-only", action="store_true")
    parser.add_argument("--record", help="write each request received to this file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    app, handler = build_app(
        args.port,
        args.step_seconds,
        push=args.push,
        streaming=not args.no_streaming,
        rest_only=args.rest_only,
        grpc_port=args.grpc_port,
        grpc_only=args.grpc_only,
        record=args.record,
    )
    asyncio.run(serve(app, handler, args.port, args.grpc_port, args.record))


if __name__ == "__main__":
    main()
