"""Issue 36: the webhook receiver and OAuth's loopback listener parse requests with h11
(transports/listener.py). Raw malformed requests, sent on a real socket, get 400 before the
token is looked at; a well-formed one still gets through."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcptask.auth.loopback import Loopback
from mcptask.transports.webhook import Delivery, WebhookReceiver

#: (name, request head after the request line): each malformed in its own way
MALFORMED = [
    ("conflicting Content-Length", "Content-Length: 999\r\nContent-Length: 15\r\n"),
    ("space before the colon", "Content-Type : application/json\r\nContent-Length: 15\r\n"),
    ("a header without a colon", "Content-Type application/json\r\nContent-Length: 15\r\n"),
    ("a control character in a value", "X-A: b\x01c\r\nContent-Length: 15\r\n"),
    ("a bad Content-Length", "Content-Length: 1_5\r\n"),
    ("a negative Content-Length", "Content-Length: -15\r\n"),
    ("both framings", "Content-Length: 15\r\nTransfer-Encoding: chunked\r\n"),
    ("a header name that is no token", "X/A: b\r\nContent-Length: 15\r\n"),
]


async def _raw(port: int, data: bytes) -> tuple[int, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    status = int(answer.split(b" ", 2)[1])
    return status, answer


def _post(path: str, head: str, token: str, body: bytes = b'{"taskId":"t1"}') -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A2A-Notification-Token: {token}\r\n"
        + head
        + "\r\n"
    ).encode("latin-1") + body


@pytest.mark.parametrize(("name", "head"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_the_webhook_refuses_malformed_requests_with_400_before_the_token(
    name: str, head: str
) -> None:
    deliveries: list[Delivery] = []

    async def main() -> tuple[int, bytes]:
        receiver = WebhookReceiver(
            task_of=lambda body: body.get("taskId"), on_delivery=deliveries.append
        )
        await receiver.start()
        try:
            return await _raw(receiver.port, _post(receiver.path, head, receiver.token))
        finally:
            await receiver.aclose()

    status, answer = asyncio.run(main())
    assert status == 400, answer
    assert b"Connection: close" in answer
    # refused before anything was read as a webhook: no token compared, no body kept
    assert len(deliveries) == 1
    assert deliveries[0].token_matched is None and deliveries[0].body is None
    assert deliveries[0].reason


def test_the_webhook_still_takes_a_well_formed_delivery_and_refuses_a_missing_host() -> None:
    deliveries: list[Delivery] = []

    async def main() -> list[int]:
        receiver = WebhookReceiver(
            task_of=lambda body: body.get("taskId"), on_delivery=deliveries.append
        )
        await receiver.start()
        try:
            good = "Content-Type: application/json\r\nContent-Length: 15\r\n"
            out = [(await _raw(receiver.port, _post(receiver.path, good, receiver.token)))[0]]
            out.append((await _raw(receiver.port, _post(receiver.path, good, "nope")))[0])
            no_host = _post(receiver.path, good, receiver.token).replace(
                b"Host: 127.0.0.1\r\n", b""
            )
            out.append((await _raw(receiver.port, no_host))[0])
            big = "Content-Type: application/json\r\nContent-Length: 99999999\r\n"
            out.append((await _raw(receiver.port, _post(receiver.path, big, receiver.token)))[0])
            return out
        finally:
            await receiver.aclose()

    assert asyncio.run(main()) == [200, 401, 400, 413]
    assert deliveries[0].accepted and deliveries[0].task_id == "t1"
    assert deliveries[1].token_matched is False


@pytest.mark.parametrize(("name", "head"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_the_loopback_refuses_malformed_requests_with_400(name: str, head: str) -> None:
    async def main() -> tuple[int, bool]:
        async with Loopback() as lb:
            line = "GET /callback?code=c&state=s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            status, _ = await _raw(lb.port, (line + head + "\r\n").encode("latin-1"))
            # the login still waits for its real redirect, which still gets through
            ok = "GET /callback?code=c&state=s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            waiting = asyncio.ensure_future(lb.wait(30, state="s"))
            good, _ = await _raw(lb.port, ok.encode())
            got: dict[str, Any] = await waiting
            return status, good == 200 and got == {"code": "c", "state": "s"}

    status, then_ok = asyncio.run(main())
    assert status == 400
    assert then_ok


def test_the_loopback_answers_a_slow_request_and_a_huge_head() -> None:
    async def main() -> list[int]:
        async with Loopback() as lb:
            huge = "GET /callback?x=1 HTTP/1.1\r\nHost: h\r\nX-Big: " + "a" * 20000 + "\r\n\r\n"
            first = (await _raw(lb.port, huge.encode()))[0]
            other = (await _raw(lb.port, b"GET /other?x=1 HTTP/1.1\r\nHost: h\r\n\r\n"))[0]
            post = (await _raw(lb.port, b"POST /callback?x=1 HTTP/1.1\r\nHost: h\r\n\r\n"))[0]
            return [first, other, post]

    assert asyncio.run(main()) == [400, 404, 400]  # a forged request: 400 (431 from h11)


def test_the_receiver_s_json_answer_says_why() -> None:
    async def main() -> bytes:
        receiver = WebhookReceiver()
        await receiver.start()
        try:
            return (await _raw(receiver.port, _post(receiver.path, MALFORMED[0][1], "x")))[1]
        finally:
            await receiver.aclose()

    answer = asyncio.run(main())
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert body["ok"] is False and "malformed" in body["error"]
