"""Receiving the authorization response: a one-shot HTTP listener on 127.0.0.1 (a free port, or
the port a stored registration names; requests parsed by h11 on transports/listener.py, as the
webhook receiver's), and, for SSH sessions, the address the browser ended on pasted on stdin."""

from __future__ import annotations

import asyncio
import sys
import threading
from urllib.parse import parse_qsl, urlsplit

from mcptask.errors import AuthError
from mcptask.transports.listener import Incoming, Listener, Reply

CALLBACK = "/callback"
#: the most header lines a request to the listener may have (a browser sends about 20)
MAX_HEADERS = 100
#: the largest request head (a browser's is a few KiB): larger is a forged request
MAX_HEAD = 16 * 1024
#: seconds a browser has to send its request
READ_SECONDS = 10.0
_PAGE = (
    "<!doctype html><meta charset=utf-8><title>mcptask</title>"
    "<p>mcptask received the authorization response. You can close this tab.</p>"
)


def parse_response(text: str) -> dict[str, str]:
    """The parameters of an authorization response: a full redirect URL, or its query."""
    text = text.strip()
    query = urlsplit(text).query if "://" in text else text.lstrip("?")
    return dict(parse_qsl(query, keep_blank_values=True))


class Loopback:
    """`async with Loopback() as lb:` ... `lb.redirect_uri` ... `await lb.wait(timeout)`."""

    def __init__(self, port: int = 0, *, paste: bool = False, stdin_fd: int | None = None) -> None:
        self._want_port = port
        self._paste = paste
        self._stdin_fd = stdin_fd
        self._listener: Listener | None = None
        self._answer: asyncio.Future[dict[str, str]] | None = None
        #: the login's `state`: a response without it is not this login's (answered 400)
        self._state: str | None = None
        #: set once the response arrived (or the login ended): the paste reader stops
        self._done = threading.Event()
        self.paste_thread: threading.Thread | None = None
        self.port = 0

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK}"

    async def __aenter__(self) -> Loopback:
        loop = asyncio.get_running_loop()
        self._answer = loop.create_future()

        def listener(port: int) -> Listener:
            return Listener(
                self._handle,
                lambda status, reason: Reply(400),  # whatever it was: not a redirect
                port=port,
                max_head=MAX_HEAD,
                read_seconds=READ_SECONDS,
            )

        self._listener = listener(self._want_port)
        try:
            await self._listener.start()
        except OSError:
            if not self._want_port:
                raise
            self._listener = listener(0)
            await self._listener.start()
        self.port = self._listener.port
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._done.set()
        if self._listener is not None:
            await self._listener.aclose()

    async def _handle(self, incoming: Incoming) -> Reply:
        """One request. Anything but this login's redirect (a forged or oversized request, a
        response without this login's `state`) is answered 400 or 404, and the listener keeps
        waiting for the real one."""
        if incoming.header_count > MAX_HEADERS or incoming.method != "GET":
            return Reply(400)
        u = urlsplit(incoming.target)
        params = dict(parse_qsl(u.query, keep_blank_values=True))
        if u.path != CALLBACK or not params:
            return Reply(404)
        if not self._ours(params):
            return Reply(400)
        page = _PAGE.encode()
        return Reply(200, page, "text/html; charset=utf-8", then=lambda: self._deliver(params))

    def _ours(self, params: dict[str, str]) -> bool:
        return self._state is None or params.get("state") == self._state

    def _deliver(self, params: dict[str, str]) -> None:
        if self._answer is not None and not self._answer.done() and self._ours(params):
            self._done.set()
            self._answer.set_result(params)

    def _read_paste(self, loop: asyncio.AbstractEventLoop) -> None:
        """A daemon thread: a line on stdin that holds this login's authorization response.
        It reads a byte at a time, and only when one is there, so that it stops as soon as the
        response arrives (by the listener or pasted) and takes nothing of stdin after it."""
        import os
        import select

        try:
            fd = self._stdin_fd if self._stdin_fd is not None else sys.stdin.fileno()
        except (OSError, ValueError, AttributeError):
            return
        line = b""
        while not self._done.is_set():
            try:
                ready, _, _ = select.select([fd], [], [], 0.2)
                if not ready:
                    continue
                byte = os.read(fd, 1)
            except (OSError, ValueError):
                return
            if not byte:
                return  # end of input
            line += byte
            if byte != b"\n" and len(line) < 64 * 1024:
                continue
            params = parse_response(line.decode("utf-8", "replace"))
            line = b""
            if params and self._ours(params):
                loop.call_soon_threadsafe(self._deliver, params)
                return

    async def wait(self, timeout: float, state: str | None = None) -> dict[str, str]:
        """The authorization response (with `state`, when given: others are not this
        login's)."""
        assert self._answer is not None
        self._state = state
        if self._paste:
            loop = asyncio.get_running_loop()
            self.paste_thread = threading.Thread(target=self._read_paste, args=(loop,), daemon=True)
            self.paste_thread.start()
        try:
            return await asyncio.wait_for(asyncio.shield(self._answer), timeout)
        except TimeoutError:
            raise AuthError(
                f"no authorization response within {timeout:.0f} s (MCPTASK_LOGIN_TIMEOUT)"
            ) from None
        finally:
            self._done.set()


def login_timeout() -> float:
    """`MCPTASK_LOGIN_TIMEOUT` (seconds, bounded like every other number of seconds)."""
    from mcptask.text.numbers import env_seconds

    return env_seconds("MCPTASK_LOGIN_TIMEOUT", 300.0)
