"""Receiving the authorization response: a one-shot HTTP listener on 127.0.0.1 (a free port, or
the port a stored registration names), and, for SSH sessions, the address the browser ended on
pasted on stdin."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from urllib.parse import parse_qsl, urlsplit

from mcptask.errors import AuthError, UsageError

CALLBACK = "/callback"
_NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
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

    def __init__(self, port: int = 0, *, paste: bool = False) -> None:
        self._want_port = port
        self._paste = paste
        self._server: asyncio.AbstractServer | None = None
        self._answer: asyncio.Future[dict[str, str]] | None = None
        self.port = 0

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK}"

    async def __aenter__(self) -> Loopback:
        loop = asyncio.get_running_loop()
        self._answer = loop.create_future()
        try:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", self._want_port)
        except OSError:
            if not self._want_port:
                raise
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass
            parts = line.decode("latin-1").split()
            target = parts[1] if len(parts) >= 2 else "/"
            u = urlsplit(target)
            params = dict(parse_qsl(u.query, keep_blank_values=True))
            if u.path != CALLBACK or not params:
                writer.write(_NOT_FOUND)
                return
            body = _PAGE.encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            self._deliver(params)
        except (TimeoutError, OSError, UnicodeDecodeError):
            return
        finally:
            with contextlib.suppress(Exception):
                await writer.drain()
                writer.close()

    def _deliver(self, params: dict[str, str]) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(params)

    def _read_paste(self, loop: asyncio.AbstractEventLoop) -> None:
        """A daemon thread: a line on stdin that holds an authorization response."""
        for line in sys.stdin:
            params = parse_response(line)
            if params:
                loop.call_soon_threadsafe(self._deliver, params)
                return

    async def wait(self, timeout: float) -> dict[str, str]:
        assert self._answer is not None
        if self._paste:
            loop = asyncio.get_running_loop()
            threading.Thread(target=self._read_paste, args=(loop,), daemon=True).start()
        try:
            return await asyncio.wait_for(asyncio.shield(self._answer), timeout)
        except TimeoutError:
            raise AuthError(
                f"no authorization response within {timeout:.0f} s (MCPTASK_LOGIN_TIMEOUT)"
            ) from None


def login_timeout() -> float:
    import os

    raw = os.environ.get("MCPTASK_LOGIN_TIMEOUT", "").strip()
    if not raw:
        return 300.0
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"MCPTASK_LOGIN_TIMEOUT={raw!r} is not a number") from None
    # finite and bounded like every other number of seconds (session/env.py: auth may not
    # import session)
    if not value > 0 or value > 30 * 86400.0:
        raise UsageError(
            f"MCPTASK_LOGIN_TIMEOUT={raw!r} is out of range: give a number of seconds more than 0 "
            "and at most 2592000"
        )
    return value
