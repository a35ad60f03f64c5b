"""An Agno AgentOS (agno 3.1.10) with an A2A interface, for mcptask's tests.

Run it in the venv that ``a2a_envs.py`` builds (``agno[os,a2a]==3.1.10`` + uvicorn + sqlalchemy;
agno pins ``a2a-sdk<1.0``, so this cannot share a venv with ``a2a_server.py``)::

    python agno_server.py --port P [--secure-key K] [--delay S] [--slow-delay S]

It binds 127.0.0.1 only. One agent, id ``echo``, whose model is a local ``Model`` subclass (no
API key, no network) that sleeps ``--delay`` seconds (default 2) and answers ``echo: <text>``;
a text starting with ``slow`` sleeps ``--slow-delay`` seconds (default 20) instead (cancel tests).
Sessions and runs live in a SQLite file in a temporary folder (deleted at exit).

A2A agent base URL: ``http://127.0.0.1:P/a2a/agents/echo``; below it
``/v1/message:send``, ``/v1/message:stream``, ``/v1/tasks:get``, ``/v1/tasks:cancel`` and
``/.well-known/agent-card.json``.

A workflow, id ``pipeline``, runs the same agent as its one step; its A2A base is
``http://127.0.0.1:P/a2a/workflows/pipeline`` (``message:send`` blocks until the run ends and
answers the finished task; Agno has no ``tasks:get`` for workflows).

``--secure-key K`` sets ``OS_SECURITY_KEY=K``: every route then needs ``Authorization: Bearer K``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AGENT_ID = "echo"
WORKFLOW_ID = "pipeline"
SLICE = 0.2  # seconds between cancellation checks while the model "thinks"


def _last_user_text(messages: Any) -> str:
    for m in reversed(list(messages or [])):
        if getattr(m, "role", None) == "user":
            content = m.get_content_string() if hasattr(m, "get_content_string") else m.content
            return str(content or "")
    return ""


def build_model(delay: float, slow_delay: float):
    from agno.models.base import Model
    from agno.models.response import ModelResponse
    from agno.run.cancel import araise_if_cancelled, raise_if_cancelled

    @dataclass
    class EchoModel(Model):
        """Sleeps ``delay`` seconds, then answers ``echo: <last user text>``."""

        id: str = "echo-model"
        name: str = "EchoModel"
        provider: str = "mcptask-tests"
        delay: float = 2.0
        slow_delay: float = 20.0

        def _delay(self, messages: Any) -> float:
            slow = _last_user_text(messages).strip().lower().startswith("slow")
            return self.slow_delay if slow else self.delay

        def _answer(self, messages: Any) -> ModelResponse:
            return ModelResponse(role="assistant", content=f"echo: {_last_user_text(messages)}")

        # Sleep in short slices and stop as soon as the run is cancelled (tasks:cancel), the way
        # a streaming provider would between chunks; Agno then marks the run cancelled.
        def _sleep(self, kwargs: dict[str, Any]) -> None:
            run_id = getattr(kwargs.get("run_response"), "run_id", None)
            deadline = time.monotonic() + self._delay(kwargs.get("messages"))
            while (left := deadline - time.monotonic()) > 0:
                if run_id:
                    raise_if_cancelled(run_id)
                time.sleep(min(left, SLICE))

        async def _asleep(self, kwargs: dict[str, Any]) -> None:
            run_id = getattr(kwargs.get("run_response"), "run_id", None)
            deadline = time.monotonic() + self._delay(kwargs.get("messages"))
            while (left := deadline - time.monotonic()) > 0:
                if run_id:
                    await araise_if_cancelled(run_id)
                await asyncio.sleep(min(left, SLICE))

        def invoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
            self._sleep(kwargs)
            return self._answer(kwargs.get("messages"))

        async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
            await self._asleep(kwargs)
            return self._answer(kwargs.get("messages"))

        def invoke_stream(self, *args: Any, **kwargs: Any) -> Iterator[ModelResponse]:
            self._sleep(kwargs)
            yield self._answer(kwargs.get("messages"))

        async def ainvoke_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelResponse]:
            await self._asleep(kwargs)
            yield self._answer(kwargs.get("messages"))

        def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
            return response  # type: ignore[no-any-return]

        def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
            return response  # type: ignore[no-any-return]

    return EchoModel(delay=delay, slow_delay=slow_delay)


def build_app(db_file: Path, delay: float, slow_delay: float):
    from agno.agent import Agent
    from agno.db.sqlite import SqliteDb
    from agno.os import AgentOS
    from agno.os.interfaces.a2a import A2A

    db = SqliteDb(db_file=str(db_file))
    agent = Agent(
        id=AGENT_ID,
        name="Echo agent",
        description="Echoes the user's text after a short delay (mcptask test agent).",
        model=build_model(delay, slow_delay),
        db=db,
        telemetry=False,
    )
    from agno.workflow import Workflow

    workflow = Workflow(
        id=WORKFLOW_ID,
        name="Echo pipeline",
        description="One step: the echo agent (mcptask test workflow).",
        steps=[agent],
        db=db,
        telemetry=False,
    )
    agent_os = AgentOS(
        id="mcptask-test-os",
        agents=[agent],
        workflows=[workflow],
        interfaces=[A2A(agents=[agent], workflows=[workflow])],
        db=db,
        telemetry=False,
    )
    return agent_os.get_app()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--secure-key", default=None)
    parser.add_argument("--delay", type=float, default=2.0)
    parser.add_argument("--slow-delay", type=float, default=20.0)
    args = parser.parse_args()

    os.environ["AGNO_TELEMETRY"] = "false"
    if args.secure_key:
        os.environ["OS_SECURITY_KEY"] = args.secure_key
    else:
        os.environ.pop("OS_SECURITY_KEY", None)

    import uvicorn

    with tempfile.TemporaryDirectory(prefix="mcptask-agno-") as tmp:
        app = build_app(Path(tmp) / "agno.db", args.delay, args.slow_delay)
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="info")


if __name__ == "__main__":
    main()
