"""An a2a-sdk 1.3.0 agent with the habits of agents met in the field (issue 39), each behind a
flag, for the classes of failure no other server in the suite shows. Run it in the ``a2a`` venv
(``a2a_envs.py``)::

    python a2a_field_server.py --port P [--discover-400] [--card-path PATH | --no-card]
        [--drop-artifacts] [--ask-in-artifact] [--internal-errors] [--http500]

The agent is a2a-sdk's own ``DefaultRequestHandler`` and JSON-RPC routes (1.0, and 0.3 through
the SDK's compat layer) at ``POST /``; the flags bend them:

* ``--discover-400``: a method the agent does not know (``server/discover``, ``initialize``) is
  answered HTTP 400 with JSON-RPC ``-32601 Unknown method '...'`` (some frameworks' JSON-RPC
  front answers unknown methods so; the SDK says HTTP 200).
* ``--card-path PATH``: the agent card is served at PATH (e.g. ``/agents/echo/agent-card.json``)
  instead of ``/.well-known/agent-card.json``; ``--no-card``: no card at all (reached with ``-p``).
* ``--drop-artifacts``: ``GetTask`` answers without the task's artifacts (the answer stays in the
  task's history, as the last agent message, and in what ``SendMessage`` and streams carried).
* ``--ask-in-artifact``: ``ask...`` puts the task in ``input-required`` with no status message and
  its question in an artifact ``__interrupt__`` (one data part ``{"__interrupt__": [{"value":
  QUESTION}]}``), the way graph frameworks report an interrupt.
* ``--internal-errors``: ``GetTask`` of an unknown task and ``CancelTask`` of a finished one are
  answered ``-32603 Internal error`` instead of the spec's ``-32001`` / ``-32002``.
* ``--http500``: a message whose text starts with ``explode`` is answered HTTP 500 with a JSON
  body in an early draft's shape (``{"error": {"code": "BACKEND_DOWN", "detail": ...}}``
  without JSON-RPC's fields).

Texts: ``quick...`` completes at once: an agent message ``echo: <text>`` (kept in history), an
artifact ``echo: <text>``, then ``completed`` with the status message ``Task completed
successfully``; ``ask...`` asks ``What is your name?`` and completes with ``hello, <answer>``;
anything else works for ``--step-seconds`` (default 1 s) per step, 3 steps, then like quick.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging

import uvicorn
from a2a.helpers.proto_helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from a2a.utils.errors import InternalError, TaskNotCancelableError, TaskNotFoundError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

QUESTION = "What is your name?"
UNKNOWN_METHODS = ("server/discover", "initialize")


class FieldExecutor(AgentExecutor):
    def __init__(self, step: float, ask_in_artifact: bool) -> None:
        self.step = step
        self.ask_in_artifact = ask_in_artifact
        self.waiting: set[str] = set()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input().strip()
        task = context.current_task
        if task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def msg(t: str):  # an agent message of this task
            return updater.new_agent_message([new_text_part(t)])

        if task.id in self.waiting:
            self.waiting.discard(task.id)
            await updater.add_artifact([new_text_part(f"hello, {text}")], name="greeting")
            await updater.complete(msg("Task completed successfully"))
            return
        if text.lower().startswith("ask"):
            self.waiting.add(task.id)
            if self.ask_in_artifact:
                interrupt = {"__interrupt__": [{"value": QUESTION, "resumable": True}]}
                await updater.add_artifact([new_data_part(interrupt)], name="__interrupt__")
                await updater.requires_input()
            else:
                await updater.requires_input(msg(QUESTION))
            return
        if not text.lower().startswith("quick"):
            for i in range(1, 4):
                await updater.start_work(msg(f"step {i}/3"))
                await asyncio.sleep(self.step)
        # the answer as an agent message (kept in history once the status moves on), as an
        # artifact, then a final status message that says nothing of it
        await updater.start_work(msg(f"echo: {text}"))
        await updater.add_artifact([new_text_part(f"echo: {text}")], name="echo")
        await updater.complete(msg("Task completed successfully"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        task_id = context.task_id or (task.id if task else "")
        context_id = context.context_id or (task.context_id if task else "")
        self.waiting.discard(task_id)
        updater = TaskUpdater(event_queue, task_id, context_id)
        await updater.cancel(updater.new_agent_message([new_text_part("cancelled")]))


class FieldHandler(DefaultRequestHandler):
    """The SDK's handler, with GetTask dropping artifacts and -32603 for spec errors."""

    drop_artifacts = False
    internal_errors = False

    async def on_get_task(self, params, context):  # type: ignore[no-untyped-def]
        try:
            task = await super().on_get_task(params, context)
        except TaskNotFoundError:
            if self.internal_errors:
                raise InternalError(message="Internal error") from None
            raise
        if task is not None and self.drop_artifacts:
            task.ClearField("artifacts")
        return task

    async def on_cancel_task(self, params, context):  # type: ignore[no-untyped-def]
        try:
            return await super().on_cancel_task(params, context)
        except (TaskNotFoundError, TaskNotCancelableError):
            if self.internal_errors:
                raise InternalError(message="Internal error") from None
            raise


def build_card(base: str) -> AgentCard:
    return AgentCard(
        name="mcptask field agent",
        description="An a2a-sdk agent with habits met in the field (mcptask tests).",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="echo", tags=["test"])],
    )


def build_app(args: argparse.Namespace) -> Starlette:
    base = f"http://127.0.0.1:{args.port}"
    card = build_card(base)
    handler = FieldHandler(
        agent_executor=FieldExecutor(args.step_seconds, args.ask_in_artifact),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    handler.drop_artifacts = args.drop_artifacts
    handler.internal_errors = args.internal_errors
    routes = []
    if not args.no_card:
        if args.card_path:
            routes += create_agent_card_routes(card, card_url=args.card_path)
        else:
            routes += create_agent_card_routes(card)
    routes += create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True)

    async def front(request: Request, call_next):  # type: ignore[no-untyped-def]
        if request.method != "POST" or request.url.path != "/":
            return await call_next(request)
        body = await request.body()
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        method = message.get("method") if isinstance(message, dict) else None
        if args.discover_400 and method in UNKNOWN_METHODS:
            error = {"code": -32601, "message": f"Unknown method '{method}'"}
            return JSONResponse(
                {"jsonrpc": "2.0", "id": message.get("id"), "error": error}, status_code=400
            )
        if args.http500 and method in ("message/send", "SendMessage", "message/stream"):
            text = json.dumps(message.get("params", {}))
            if '"explode' in text:
                detail = {
                    "error": {
                        "code": "BACKEND_DOWN",
                        "detail": "the model backend did not answer in 30 s",
                    }
                }
                return Response(json.dumps(detail), status_code=500, media_type="application/json")
        return await call_next(request)  # starlette hands the body read here on

    return Starlette(routes=routes, middleware=[Middleware(BaseHTTPMiddleware, dispatch=front)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--step-seconds", type=float, default=1.0)
    parser.add_argument("--discover-400", action="store_true")
    parser.add_argument("--card-path", default=None)
    parser.add_argument("--no-card", action="store_true")
    parser.add_argument("--drop-artifacts", action="store_true")
    parser.add_argument("--ask-in-artifact", action="store_true")
    parser.add_argument("--internal-errors", action="store_true")
    parser.add_argument("--http500", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    uvicorn.run(build_app(args), host="127.0.0.1", port=args.port, log_level="info")


if __name__ == "__main__":
    main()
