"""Issue 26, item 9: a login waits without holding up the event loop, and a paste-mode login
stops reading stdin once the redirect arrives (takes nothing after it)."""

from __future__ import annotations

import asyncio
import os
import threading
import urllib.request

from mcptask.auth.loopback import Loopback
from mcptask.auth.provider import run_apart


def test_a_login_runs_apart_while_the_loop_goes_on() -> None:
    go = threading.Event()

    async def login() -> object:
        for _ in range(1000):  # at most 10 s: a loop held up would never set `go`
            if go.is_set():
                return "creds"
            await asyncio.sleep(0.01)
        raise AssertionError("the command's loop was held up during the login")

    async def main() -> object:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while ticks < 3:
                await asyncio.sleep(0.01)
                ticks += 1
            go.set()

        task = asyncio.ensure_future(ticker())
        got = await run_apart(login)  # type: ignore[arg-type]
        await task
        return got

    assert asyncio.run(main()) == "creds"


def test_paste_reading_stops_when_the_redirect_reaches_the_listener() -> None:
    read_end, write_end = os.pipe()

    async def main() -> dict[str, str]:
        async with Loopback(paste=True, stdin_fd=read_end) as lb:
            url = f"{lb.redirect_uri}?code=c1&state=s1"
            waiting = asyncio.ensure_future(lb.wait(10, "s1"))
            await asyncio.sleep(0)
            wrong = f"{lb.redirect_uri}?code=c0&state=other"
            try:
                await asyncio.to_thread(urllib.request.urlopen, wrong, timeout=5)
            except Exception as exc:  # the 400 of a response that is not this login's
                assert "400" in str(exc)
            await asyncio.to_thread(urllib.request.urlopen, url, timeout=5)
            params = await waiting
            assert lb.paste_thread is not None
            await asyncio.to_thread(lb.paste_thread.join, 5)
            assert not lb.paste_thread.is_alive()
            return params

    try:
        assert asyncio.run(main())["code"] == "c1"
        os.write(write_end, b"http://127.0.0.1/callback?code=later&state=s1\n")
        assert os.read(read_end, 100).startswith(b"http://")  # stdin left to its owner
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_success_answer_that_cannot_be_read_is_never_shown() -> None:
    """A token endpoint's 200 whose body mcptask cannot read may hold the very tokens: the
    error says what happened, not what came (a 4xx body is shown, scrubbed)."""
    from mcptask.auth.flows import _refusal

    body = '{"access_token": "at-SECRET", "expires_in": 1e999'
    error = _refusal("authorization code", 200, None, body)
    assert "at-SECRET" not in error.message and "not shown" in error.message
    assert "boom" in _refusal("authorization code", 400, None, "boom").message
