"""The one router of what a JSON-RPC peer sends on a channel of its own (a stdio server's stdout,
MCP's legacy HTTP+SSE stream), shared by transports/stdio.py and transports/legacy_sse.py. A
request nobody takes gets `rpc.own_answer` (a ping's empty result, else METHOD_NOT_FOUND), the
answer `protocols/server_requests.py` and `RpcClient.request` give too, so that a ping or an
unknown request is answered alike on every transport (a Streamable HTTP POST's event stream and
GET stream included).

An answer goes to the request waiting for its id (an error the peer could not tie to a request,
`id: null`, to the oldest one waiting); a `ping` is answered at once; a notification goes to
`on_notification` when set; any other message from the peer to `on_unsolicited` when set, else
to the oldest request waiting (its stream: `ServerRequests` answers it there), else, a request,
is refused with METHOD_NOT_FOUND (the peer would wait for ever), a notification kept in the
bounded `notifications` queue. Each transport says how an answer of ours is written (`reply`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from mcptask.transports.rpc import PING, Message, is_response, own_answer

if TYPE_CHECKING:
    import asyncio

# asyncio and inspect are imported where a router runs, not here: `own_answer` is imported by
# protocols/server_requests.py on every MCP run, and a one-shot run imports no asyncio (~11 ms)

#: a handler for what the peer sends unasked (push watch: tasks/status); may be a coroutine
UnsolicitedHandler = Callable[[Message], Awaitable[None] | None]


class PeerRouter:
    def __init__(
        self,
        reply: Callable[[Message], None],
        *,
        trace: Callable[[str], None],
        kept: int,
    ) -> None:
        import asyncio

        #: writes one answer of ours to the peer (without waiting)
        self.reply = reply
        self.trace = trace
        #: each request waiting for its answer, by id: what arrives for it
        self.pending: dict[Any, asyncio.Queue[Message | BaseException]] = {}
        #: server requests and notifications go here when set (push watch: tasks/status)
        self.on_unsolicited: UnsolicitedHandler | None = None
        #: notifications (no id) go here first when set (push watch: tasks/status)
        self.on_notification: Callable[[Message], None] | None = None
        #: notifications that arrived while no request was open and no handler was set
        self.notifications: asyncio.Queue[Message] = asyncio.Queue(maxsize=kept)
        #: `on_unsolicited`'s coroutines under way
        self.tasks: set[asyncio.Task[None]] = set()

    @contextmanager
    def notifications_to(
        self, handler: Callable[[Message], None], *, backlog: bool = False
    ) -> Iterator[None]:
        """`on_notification` is `handler` inside the block, None after it; `backlog`: the
        notifications kept so far go to it first (`rpc.HasNotifications`)."""
        while backlog and not self.notifications.empty():
            handler(self.notifications.get_nowait())
        self.on_notification = handler
        try:
            yield
        finally:
            self.on_notification = None

    def open(self, req_id: Any) -> asyncio.Queue[Message | BaseException]:
        import asyncio

        queue: asyncio.Queue[Message | BaseException] = asyncio.Queue()
        self.pending[req_id] = queue
        return queue

    def close(self, req_id: Any) -> None:
        self.pending.pop(req_id, None)

    def fail(self, exc: BaseException) -> None:
        """Every request waiting gets `exc` (the peer is gone)."""
        for queue in list(self.pending.values()):
            queue.put_nowait(exc)

    def route(self, msg: Message) -> None:
        if is_response(msg):
            queue = self.pending.get(msg.get("id"))
            if queue is None and msg.get("id") is None and self.pending:
                # an error the peer could not tie to a request (e.g. a parse error)
                queue = next(iter(self.pending.values()))
            if queue is None:
                self.trace(f"< (an answer to request {msg.get('id')!r} nobody waits for)")
                return
            queue.put_nowait(msg)
            return
        if "method" not in msg:
            self.trace("< (neither a request, a notification nor an answer: ignored)")
            return
        if "id" in msg and msg.get("method") == PING:
            self.reply(own_answer(msg))
            return
        if "id" not in msg and self.on_notification is not None:
            self.on_notification(msg)
            return
        if self.on_unsolicited is not None:
            outcome = self.on_unsolicited(msg)
            import inspect

            if inspect.isawaitable(outcome):
                import asyncio

                task = asyncio.ensure_future(outcome)
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
            return
        if self.pending:
            next(iter(self.pending.values())).put_nowait(msg)
            return
        if "id" in msg:  # a request nobody can answer: say so, or the peer would wait
            self.reply(own_answer(msg))
            return
        if self.notifications.full():
            self.notifications.get_nowait()
        self.notifications.put_nowait(msg)
