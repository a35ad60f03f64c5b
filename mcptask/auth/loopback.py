"""Receiving the authorization response: a one-shot HTTP listener on 127.0.0.1 (a free port, or
the port a stored registration names), and, for SSH sessions, the address the browser ended on
pasted on stdin."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from urllib.parse import parse_qsl, urlsplit

from mcptask.errors import AuthError

CALLBACK = "/callback"
_NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
_BAD = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
#: the most header lines a request to the listener may have (a browser sends about 20)
MAX_HEADERS = 100
#: the longest line of it (asyncio's StreamReader limit): longer is a forged request
MAX_LINE = 16 * 1024
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
        self._server: asyncio.AbstractServer | None = None
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
        try:
            self._server = await asyncio.start_server(
                self._serve, "127.0.0.1", self._want_port, limit=MAX_LINE
            )
        except OSError:
            if not self._want_port:
                raise
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=MAX_LINE)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._done.set()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One request. Anything but this login's redirect (a forged or oversized request, a
        response without this login's `state`) is answered 400 or 404, and the listener keeps
        waiting for the real one."""
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            for _ in range(MAX_HEADERS):
                if (await asyncio.wait_for(reader.readline(), 10)) in (b"\r\n", b"\n", b""):
                    break
            else:
                writer.write(_BAD)
                return
            parts = line.decode("latin-1").split()
            if len(parts) != 3 or parts[0] != "GET":
                writer.write(_BAD)
                return
            u = urlsplit(parts[1])
            params = dict(parse_qsl(u.query, keep_blank_values=True))
            if u.path != CALLBACK or not params:
                writer.write(_NOT_FOUND)
                return
            if not self._ours(params):
                writer.write(_BAD)
                return
            body = _PAGE.encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            self._deliver(params)
        except (ValueError, asyncio.LimitOverrunError, asyncio.IncompleteReadError):
            with contextlib.suppress(Exception):
                writer.write(_BAD)  # a line over MAX_LINE: not a browser's redirect
            return
        except (TimeoutError, OSError, UnicodeDecodeError):
            return
        finally:
            with contextlib.suppress(Exception):
                await writer.drain()
                writer.close()

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
