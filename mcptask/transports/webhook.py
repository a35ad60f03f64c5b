"""A webhook receiver for pushed task updates (A2A push notifications): a small HTTP/1.1 server
on asyncio streams, standard library only.

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

import asyncio
import contextlib
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

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    431: "Request Header Fields Too Large",
    503: "Service Unavailable",
}


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


class _Refused(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


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
        self._server: asyncio.Server | None = None
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self._open = 0
        self._handlers: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.path}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port, limit=MAX_HEAD)
        sockets = self._server.sockets
        if sockets:
            self.port = int(sockets[0].getsockname()[1])

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._handlers):
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            self._server = None

    # -- one connection -------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        me = asyncio.current_task()
        if me is not None:
            self._handlers.add(me)
        self._open += 1
        delivery = Delivery(received=self.clock(), status=200)
        try:
            if self._open > MAX_CONNECTIONS:
                raise _Refused(503, "too many connections")
            await asyncio.wait_for(self._read(reader, delivery), READ_SECONDS)
        except _Refused as refused:
            delivery.status, delivery.reason = refused.status, refused.reason
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            delivery.status, delivery.reason = 400, "incomplete request"
        except asyncio.LimitOverrunError:
            delivery.status, delivery.reason = 431, "request head too large"
        except ValueError:  # the head over the stream's limit
            delivery.status, delivery.reason = 431, "request head too large"
        finally:
            self._open -= 1
        try:
            await self._answer(writer, delivery)
        finally:
            if me is not None:
                self._handlers.discard(me)
        if self.on_delivery is not None:
            self.on_delivery(delivery)

    async def _answer(self, writer: asyncio.StreamWriter, delivery: Delivery) -> None:
        body: dict[str, Any] = {"ok": delivery.status == 200}
        if delivery.reason:
            body["error"] = delivery.reason
        if delivery.duplicate:
            body["duplicate"] = True
        data = json.dumps(body).encode()
        head = (
            f"HTTP/1.1 {delivery.status} {_REASONS.get(delivery.status, 'Error')}\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n"
            "Connection: close\r\n"
        )
        if delivery.status == 405:
            head += "Allow: POST\r\n"
        if delivery.status == 401:
            head += 'WWW-Authenticate: A2A-Notification-Token realm="mcptask"\r\n'
        try:
            writer.write(head.encode("latin-1") + b"\r\n" + data)
            await asyncio.wait_for(writer.drain(), READ_SECONDS)
        except (TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)

    async def _read(self, reader: asyncio.StreamReader, delivery: Delivery) -> None:
        raw = await reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _Refused(400, "not an HTTP/1.x request")
        method, target = parts[0], parts[1]
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if not line:
                continue
            name, sep, value = line.partition(":")
            if not sep:
                raise _Refused(400, "a malformed header")
            headers[name.strip().lower()] = value.strip()
        if method != "POST":
            raise _Refused(405, f"{method[:20]} is not POST")
        if target.split("?", 1)[0] != self.path:
            raise _Refused(404, "not the receiver's path")
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
            raise _Refused(411, "a body without Content-Length")
        length_text = headers.get("content-length")
        if length_text is None:
            raise _Refused(411, "no Content-Length")
        if not length_text.isdigit() or len(length_text) > 12:
            raise _Refused(400, "a bad Content-Length")
        length = int(length_text)
        if length > self.max_body:
            raise _Refused(413, f"a body over {self.max_body} bytes")
        data = await reader.readexactly(length)
        if delivery.token_matched is not True:
            # read (bounded) so the report can say what came; never passed on
            self._look(delivery, headers, data)
            raise _Refused(401, "no token" if sent is None else "the wrong token")
        if delivery.auth_matched is False:
            self._look(delivery, headers, data)
            raise _Refused(401, "the wrong Authorization")
        self._look(delivery, headers, data, strict=True)
        if delivery.task_id is None:
            raise _Refused(400, "the body names no task")
        if self.known is not None and not self.known(delivery.task_id):
            raise _Refused(404, "not a task this receiver registered")
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
                raise _Refused(415, f"{ctype[:60] or 'no content type'}, not JSON")
            return
        try:
            body = jsonsafe.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            if strict:
                raise _Refused(400, "a body that is not JSON") from None
            return
        if not isinstance(body, dict):
            if strict:
                raise _Refused(400, "a body that is not a JSON object")
            return
        delivery.body = body
        try:
            delivery.task_id = self.task_of(body)
        except Exception:
            delivery.task_id = None
