"""A webhook receiver for pushed task updates (A2A push notifications), on the listener that
parses requests with h11 (transports/listener.py): a malformed or ambiguously framed request is
400 before its token is looked at.

Safe by default: it binds 127.0.0.1 on a random port, at a random path, and takes only
`POST <path>` with the right `X-A2A-Notification-Token` (compared in constant time; 401
otherwise), a `Content-Length` body of at most `max_body` bytes (413; no chunked bodies: 411),
of a JSON media type (415) holding a JSON object (400) that names a task (400) the receiver
was told about (404). A body seen before is a duplicate: answered 200, reported as one, never
passed on twice. Each request gets its answer as soon as it is read and checked, on a
connection of its own (`Connection: close`); what arrived is then handed to `on_delivery`,
which must not block (a queue's `put_nowait`). Every outside number is bounded: the request
head, the body, the time to send them, the connections at once.

It knows nothing of A2A: `task_of` says which task a body is about (the protocol's reading)."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcptask.text import jsonsafe
from mcptask.transports.listener import Incoming, Listener, Refused, Reply

#: the header A2A agents send a config's token in
TOKEN_HEADER = "x-a2a-notification-token"
#: the largest body taken (an update with its artifact); more is 413
MAX_BODY = 1024 * 1024
#: the largest request line plus headers
MAX_HEAD = 16 * 1024
#: seconds a client has to send its whole request
READ_SECONDS = 10.0
#: connections served at once; more are answered 503
MAX_CONNECTIONS = 64
#: bodies remembered to drop duplicates
SEEN = 4096


@dataclass
class Delivery:
    """One request the receiver answered: what it said (`status`, `reason` when refused) and
    what came (`body` when it was read and is JSON, `task_id` when it names a task)."""

    received: float
    status: int
    reason: str | None = None
    #: the token sent matched (None: no token header at all)
    token_matched: bool | None = None
    #: the scheme of the `Authorization` header sent (never its credentials)
    auth_scheme: str | None = None
    #: the `Authorization` header matched the one expected (None: none expected)
    auth_matched: bool | None = None
    body: Any = None
    task_id: str | None = None
    duplicate: bool = False

    @property
    def accepted(self) -> bool:
        """Taken and new: to be passed on."""
        return self.status == 200 and not self.duplicate


class WebhookReceiver:
    """`await start()`, then `url` is where to POST; `aclose()` stops it."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str | None = None,
        token: str | None = None,
        authorization: str | None = None,
        max_body: int = MAX_BODY,
        task_of: Callable[[Any], str | None] = lambda body: None,
        known: Callable[[str], bool] | None = None,
        on_delivery: Callable[[Delivery], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.host = host
        self.port = port
        self.path = path if path is not None else "/mcptask/" + secrets.token_urlsafe(12)
        if not self.path.startswith("/"):
            self.path = "/" + self.path
        self.token = token if token is not None else secrets.token_urlsafe(24)
        #: the whole `Authorization` header expected (`Bearer xyz`), when one is
        self.authorization = authorization
        self.max_body = max_body
        self.task_of = task_of
        self.known = known
        self.on_delivery = on_delivery
        self.clock = clock
        self._listener: Listener | None = None
        self._seen: OrderedDict[bytes, None] = OrderedDict()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.path}"

    async def start(self) -> None:
        self._listener = Listener(
            self._handle,
            self._refused,
            host=self.host,
            port=self.port,
            max_head=MAX_HEAD,
            read_seconds=READ_SECONDS,
            max_connections=MAX_CONNECTIONS,
        )
        await self._listener.start()
        self.port = self._listener.port

    async def aclose(self) -> None:
        if self._listener is not None:
            await self._listener.aclose()
            self._listener = None

    # -- one request ------------------------------------------------------------------------

    def _refused(self, status: int, reason: str) -> Reply:
        """A request refused before it was read as a webhook (malformed, too slow, too many)."""
        return self._reply(Delivery(received=self.clock(), status=status, reason=reason))

    async def _handle(self, incoming: Incoming) -> Reply:
        delivery = Delivery(received=self.clock(), status=200)
        try:
            await self._read(incoming, delivery)
        except Refused as refused:
            delivery.status, delivery.reason = refused.status, refused.reason
        return self._reply(delivery)

    def _reply(self, delivery: Delivery) -> Reply:
        body: dict[str, Any] = {"ok": delivery.status == 200}
        if delivery.reason:
            body["error"] = delivery.reason
        if delivery.duplicate:
            body["duplicate"] = True
        headers: list[tuple[str, str]] = []
        if delivery.status == 405:
            headers.append(("Allow", "POST"))
        if delivery.status == 401:
            headers.append(("WWW-Authenticate", 'A2A-Notification-Token realm="mcptask"'))
        then = None
        if self.on_delivery is not None:
            on_delivery = self.on_delivery

            def then() -> None:
                on_delivery(delivery)

        data = json.dumps(body).encode()
        return Reply(delivery.status, data, "application/json", headers, then=then)

    async def _read(self, incoming: Incoming, delivery: Delivery) -> None:
        method, target, headers = incoming.method, incoming.target, incoming.headers
        if method != "POST":
            raise Refused(405, f"{method[:20]} is not POST")
        if target.split("?", 1)[0] != self.path:
            raise Refused(404, "not the receiver's path")
        sent = headers.get(TOKEN_HEADER)
        if sent is not None:
            delivery.token_matched = hmac.compare_digest(sent.encode(), self.token.encode())
        authorization = headers.get("authorization")
        if authorization:
            delivery.auth_scheme = authorization.split(" ", 1)[0][:40]
        if self.authorization is not None:
            delivery.auth_matched = authorization is not None and hmac.compare_digest(
                authorization.encode(), self.authorization.encode()
            )
        if "transfer-encoding" in headers:
            raise Refused(411, "a body without Content-Length")
        if headers.get("content-length") is None:
            raise Refused(411, "no Content-Length")
        data = await incoming.body(self.max_body)  # h11 checked the Content-Length
        if delivery.token_matched is not True:
            # read (bounded) so the report can say what came; never passed on
            self._look(delivery, headers, data)
            raise Refused(401, "no token" if sent is None else "the wrong token")
        if delivery.auth_matched is False:
            self._look(delivery, headers, data)
            raise Refused(401, "the wrong Authorization")
        self._look(delivery, headers, data, strict=True)
        if delivery.task_id is None:
            raise Refused(400, "the body names no task")
        if self.known is not None and not self.known(delivery.task_id):
            raise Refused(404, "not a task this receiver registered")
        key = hashlib.sha256(data).digest()
        if key in self._seen:
            delivery.duplicate = True
            return
        self._seen[key] = None
        if len(self._seen) > SEEN:
            self._seen.popitem(last=False)

    def _look(
        self, delivery: Delivery, headers: dict[str, str], data: bytes, *, strict: bool = False
    ) -> None:
        """Read the body into `delivery`; with `strict`, what is not a JSON object is refused."""
        ctype = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if not (ctype == "application/json" or ctype.endswith("+json")):
            if strict:
                raise Refused(415, f"{ctype[:60] or 'no content type'}, not JSON")
            return
        try:
            body = jsonsafe.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            if strict:
                raise Refused(400, "a body that is not JSON") from None
            return
        if not isinstance(body, dict):
            if strict:
                raise Refused(400, "a body that is not a JSON object")
            return
        delivery.body = body
        try:
            delivery.task_id = self.task_of(body)
        except Exception:
            delivery.task_id = None
