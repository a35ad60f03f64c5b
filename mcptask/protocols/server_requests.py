"""The one dispatcher for requests an MCP server sends while mcptask waits on it (a plain call's
streams, `answer`'s `tasks/result` stream, the session's GET stream): `ping` is answered,
`elicitation/create` goes to the caller's `elicit`, every other method is refused with
METHOD_NOT_FOUND and a note; the ping's answer and the refusal are `transports.rpc.own_answer`,
what stdio and the legacy HTTP+SSE transport send for a request nobody handles. Each
request id is answered once; a question that will not be answered (the person dismissed it,
Ctrl-C) gets `cancel`, bounded by DISMISS_GRACE; one whose answer did not fit is held
(`HeldQuestion`: nothing sent, a later run may answer it)."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcptask.errors import McptaskError, UsageError
from mcptask.transports.rpc import Message, RpcClient, first_time, own_answer

ELICIT = "elicitation/create"
#: seconds an answer that dismisses a question (or a cancellation) may take on the way out
DISMISS_GRACE = 2.0

#: answers one `elicitation/create` (its id, its params): the answer to send, or None to send
#: nothing (a question that is not this caller's to answer); what it raises dismisses it
Elicit = Callable[[Any, dict[str, Any]], Awaitable[dict[str, Any] | None]]


async def not_ours(req_id: Any, params: dict[str, Any]) -> None:
    """An `Elicit` for a reader that asks no one: the question is left unanswered (another
    reader, or a later run, may answer it)."""
    return None


class HeldQuestion(UsageError):
    """An MCP 2025-11-25 question that was read, whose answer did not fit its form: nothing
    was sent (not even `cancel`), so the server still waits for an answer to `request_id`,
    which a later `answer` may send (`TaskProtocol.answer_held`) once it fits `params`'
    `requestedSchema`, checked before anything is sent."""

    def __init__(self, message: str, request_id: Any, params: dict[str, Any]) -> None:
        super().__init__(message)
        self.request_id = request_id
        self.params = params


class ServerRequests:
    """Answers the server's requests on one session (`headers` go with every answer)."""

    def __init__(
        self,
        rpc: RpcClient,
        *,
        note: Callable[[str], None],
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.rpc = rpc
        self.note = note
        self.headers = dict(headers or {})
        #: request ids already answered (a request seen on two streams is answered once)
        self.answered: set[str] = set()

    async def dispatch(self, message: Message, elicit: Elicit) -> dict[str, Any] | None:
        """Answer one request from the server (a message with an `id` and a `method`). The
        answer sent to an elicitation, else None."""
        req_id = message["id"]
        if not first_time(self.answered, req_id):
            return None
        method = str(message.get("method"))
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if method != ELICIT:
            await self.answer_own(message)
            return None
        try:
            answer = await elicit(req_id, params)
        except HeldQuestion:  # an answer that did not fit: the question is held, unanswered
            raise
        except BaseException:  # dismissed, Ctrl-C: the server hears
            await self.dismiss(req_id)
            raise
        if answer is None:
            return None
        await self.respond(req_id, answer)
        return answer

    async def answer_own(self, message: Message) -> None:
        """The answer mcptask gives itself (`own_answer`: a ping's, else METHOD_NOT_FOUND with
        a note), sent with this session's headers."""
        answer = own_answer(message)
        if "error" in answer:
            method = message.get("method")
            self.note(
                f"the server sent a {method} request, which mcptask does not support: refused"
            )
            await self.rpc.respond(message["id"], error=answer["error"], headers=self.headers)
            return
        await self.respond(message["id"], answer["result"])

    async def respond(self, req_id: Any, result: Any) -> None:
        await self.rpc.respond(req_id, result, headers=self.headers)

    async def dismiss(self, req_id: Any) -> None:
        """`cancel` for a question that will not be answered: best effort, bounded."""
        import asyncio

        with contextlib.suppress(McptaskError, OSError, TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(self.respond(req_id, {"action": "cancel"}), DISMISS_GRACE)
