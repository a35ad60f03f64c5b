"""What both MCP versions share in a plain (non-task) `tools/call`: the progress token, the
notifications that come while it runs (progress, logs), and the server's requests (through
`server_requests`: elicitation answered by the caller's responder, pings, everything else
refused)."""

from __future__ import annotations

import contextlib
import itertools
import secrets
from collections.abc import Mapping
from typing import Any

from mcptask.errors import McptaskError
from mcptask.model.inputs import InputRequest
from mcptask.protocols.base import (
    LOG_NOTIFICATION,
    PROGRESS_NOTIFICATION,
    CallHooks,
    log_from,
    progress_from,
)
from mcptask.protocols.server_requests import DISMISS_GRACE, ELICIT, ServerRequests
from mcptask.transports.rpc import Message, RpcClient

CANCELLED = "notifications/cancelled"

_tokens = itertools.count(1)
#: tokens of two mcptask processes on one session must differ too
_PROCESS = secrets.token_hex(4)


def progress_token() -> str:
    """A token unique within this process: progress for it belongs to our call."""
    return f"mcptask-{_PROCESS}-{next(_tokens)}"


async def elicitation_answer(
    hooks: CallHooks, params: dict[str, Any], *, key: str, asker: str
) -> dict[str, Any]:
    """The answer to one `elicitation/create`: the responder's, `cancel` when the person
    dismissed it, `decline` without a responder."""
    if hooks.responder is None:
        hooks.note(f"{asker} asks for input; declined (no way to answer here)")
        return {"action": "decline"}
    request = InputRequest("", ELICIT, params, key=key, asker=asker)
    response = await hooks.responder(request)
    return response if response is not None else {"action": "cancel"}


class CallTalk:
    """Handles what the server sends while one plain call runs, from whichever stream it
    comes (the call's own, the session's GET stream, a stdio server's stdout)."""

    def __init__(
        self,
        rpc: RpcClient,
        hooks: CallHooks,
        token: str,
        *,
        asker: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.rpc = rpc
        self.hooks = hooks
        self.token = token
        self.asker = asker
        self.headers = dict(headers or {})
        self.requests = ServerRequests(rpc, note=hooks.note, headers=self.headers)

    async def handle(self, message: Message) -> None:
        if "id" not in message:
            self._notification(message.get("method"), message.get("params"))
            return
        await self.requests.dispatch(message, self._elicit)

    async def _elicit(self, req_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        return await elicitation_answer(self.hooks, params, key=str(req_id), asker=self.asker)

    def _notification(self, method: Any, params: Any) -> None:
        if method == PROGRESS_NOTIFICATION and isinstance(params, dict):
            if params.get("progressToken") != self.token:
                return  # another request's progress
            progress = progress_from(params)
            if progress is not None and self.hooks.on_progress is not None:
                self.hooks.on_progress(progress)
        elif method == LOG_NOTIFICATION:
            log = log_from(params)
            if log is not None and self.hooks.on_log is not None:
                self.hooks.on_log(log)

    async def cancel(
        self,
        req_id: Any,
        params_meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Tell the server we gave up on request `req_id` (Ctrl-C): best effort, bounded.
        `params_meta` and `headers` are what the protocol version wants on a notification
        (2026-07-28: the client `_meta`, `Mcp-Method`); else the session's headers."""
        import asyncio

        params: dict[str, Any] = {"requestId": req_id, "reason": "interrupted by the user"}
        if params_meta:
            params["_meta"] = dict(params_meta)
        sent = {**self.headers, **(headers or {})}
        self.hooks.cancel_sent = False
        with contextlib.suppress(McptaskError, OSError, TimeoutError):
            await asyncio.wait_for(self.rpc.notify(CANCELLED, params, headers=sent), DISMISS_GRACE)
            self.hooks.cancel_sent = True
