"""Issue 23, defect 5: whether a failure is transient is decided once (`errors.is_transient`),
from fields set where the error is made; nobody reads a detail back out of a message."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import httpx
import pytest

from mcptask.check.suite import unreachable
from mcptask.errors import (
    TOO_MANY_REQUESTS,
    HttpStatusError,
    McptaskError,
    ProtocolError,
    RpcError,
    TaskNotFound,
    TransportError,
    UsageError,
    is_transient,
)
from mcptask.model.refs import TaskRef
from mcptask.protocols.agno import Agno
from mcptask.scheduler.watcher import _retryable
from mcptask.transports.http import HttpOptions, HttpTransport
from mcptask.transports.rpc import RpcClient
from mcptask.transports.stdio import ServerExited

PACKAGE = Path(__file__).resolve().parents[2] / "mcptask"

CASES: list[tuple[McptaskError, bool]] = [
    (TransportError("timed out"), True),
    (ServerExited("the stdio server exited"), False),
    (HttpStatusError("HTTP 503", status=503), True),
    (HttpStatusError("HTTP 429", status=429, retry_after=2.0), True),
    (HttpStatusError("HTTP 404", status=404), False),
    (RpcError(TOO_MANY_REQUESTS, "slow down"), True),
    # a JSON-RPC error body on an HTTP 5xx or 429: the status says the server is in trouble
    (RpcError(-32603, "overloaded", http_status=503), True),
    (RpcError(-32000, "rate limited", http_status=429), True),
    (RpcError(-32602, "bad params", http_status=400), False),
    (RpcError(-32602, "bad params"), False),
    (ProtocolError("not JSON-RPC"), False),
    (UsageError("bad flag"), False),
]


@pytest.mark.parametrize(("exc", "transient"), CASES)
def test_one_answer_to_is_it_transient(exc: McptaskError, transient: bool) -> None:
    assert is_transient(exc) is transient
    # `check` calls a transient failure "could not reach the server"
    assert unreachable(exc) is transient
    # the scheduler retries the transient ones (and answers that are not the protocol)
    assert _retryable(exc) is (transient or isinstance(exc, ProtocolError))


def http_error(status: int, body: object, headers: dict[str, str] | None = None) -> BaseException:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json=body, headers=headers or {})

    async def main() -> BaseException:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        transport = HttpTransport(HttpOptions(url="http://127.0.0.1:9/mcp"), client=client)
        try:
            await RpcClient(transport).request("tasks/get", {"taskId": "t"})
        except BaseException as exc:
            return exc
        finally:
            await client.aclose()
        raise AssertionError("no error")

    return asyncio.run(main())


def test_the_http_transport_sets_the_fields() -> None:
    exc = http_error(404, {"detail": "Task not found: t"}, {"retry-after": "3"})
    assert isinstance(exc, HttpStatusError)
    assert (exc.http_status, exc.detail, exc.retry_after) == (404, "Task not found: t", 3.0)
    exc = http_error(503, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}})
    assert isinstance(exc, RpcError) and exc.http_status == 503 and is_transient(exc)


def test_agno_reads_the_detail_not_the_message() -> None:
    """A message with a colon of its own (the origin's port) no longer hides the detail."""
    agno = Agno(RpcClient.__new__(RpcClient), "http://127.0.0.1:7777/a2a/agents/x")
    exc = HttpStatusError(
        "http://127.0.0.1:7777 answered HTTP 404 Not Found: Task not found",
        status=404,
        detail="Task not found",
    )
    found = agno._error(exc, "tasks:get", TaskRef("t1", context_id="c"))
    assert isinstance(found, TaskNotFound)
    exc.detail = None
    assert agno._error(exc, "tasks:get", TaskRef("t1", context_id="c")) is exc


def test_no_message_is_parsed() -> None:
    """A detail is a field of the error, never a piece of its message (nor of an OS error's)."""
    pattern = re.compile(
        r"\.message\.(split|partition|rpartition|startswith|endswith|lower|find)\b"
        r"|\bin str\((exc|err|error|cause|e)\)"
        r"|str\((exc|err|error|cause|e)\)\.(lower|split|startswith)"
    )
    offenders = [
        f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}"
        for path in PACKAGE.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not offenders, offenders


def test_json_dumps_of_fields_is_plain() -> None:
    exc = HttpStatusError("HTTP 502", status=502, retry_after=1.5, detail="upstream")
    json.dumps({"status": exc.http_status, "retryAfter": exc.retry_after, "detail": exc.detail})


@pytest.mark.parametrize(
    ("reason", "said"),
    [(b"", "HTTP 502 Bad Gateway: "), (b"Upstream Gone", "HTTP 502 Upstream Gone: ")],
)
def test_an_http_error_names_the_standard_reason_when_the_server_gave_none(
    reason: bytes, said: str
) -> None:
    transport = HttpTransport(HttpOptions(url="http://127.0.0.1:9/mcp"))
    request = httpx.Request("POST", "http://127.0.0.1:9/mcp")
    response = httpx.Response(
        502, text="down", request=request, extensions={"reason_phrase": reason}
    )
    error = transport.error_for_status(response, b"down")
    assert said in error.message and "  " not in error.message, error.message


class _CtrlCWhileNamed:
    """A descriptor Ctrl-C interrupts while its class is made (as `functools.cached_property`
    can be, while a module imports): Python 3.11 raises a RuntimeError caused by it."""

    def __set_name__(self, owner: type, name: str) -> None:
        raise KeyboardInterrupt


def test_ctrl_c_wrapped_while_a_class_is_made_is_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import mcptask.cli as cli
    from mcptask.errors import ExitCode, ctrl_c_inside, exit_code_for

    def interrupted_at_import(argv: list[str] | None = None) -> int:
        type("Imported", (), {"named": _CtrlCWhileNamed()})
        return 0

    monkeypatch.setattr(cli, "_main", interrupted_at_import)
    assert cli.main([]) == ExitCode.INTERRUPTED
    assert capsys.readouterr().err == ""
    try:
        interrupted_at_import()
    except BaseException as exc:  # RuntimeError on 3.11, the KeyboardInterrupt itself later
        assert ctrl_c_inside(exc) and exit_code_for(exc) == ExitCode.INTERRUPTED

    def a_bug(argv: list[str] | None = None) -> int:
        raise RuntimeError("a bug, not Ctrl-C")

    monkeypatch.setattr(cli, "_main", a_bug)
    with pytest.raises(RuntimeError):
        cli.main([])
    assert exit_code_for(RuntimeError("x")) == ExitCode.INTERNAL
    try:  # a bug met while handling Ctrl-C is still a bug
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise OSError("while cleaning up") from None
    except OSError as exc:
        assert not ctrl_c_inside(exc) and exit_code_for(exc) == ExitCode.INTERNAL


def test_a_bad_descriptor_that_is_not_stdout_s_is_a_bug(capsys: pytest.CaptureFixture[str]) -> None:
    """EBADF is an output error only when stdout itself cannot be written; one from another
    descriptor (a bug) is reported as one: exit 1, `internal error`."""
    import os

    from mcptask.cli.runner import output_failure, run_command
    from mcptask.session.targets import GlobalOptions

    async def bug(_ctx: object) -> int:
        r, w = os.pipe()
        os.close(r)
        os.close(w)
        os.read(r, 1)
        return 0

    assert run_command(GlobalOptions(output="json"), bug, command="x") == 1
    assert "internal error: OSError" in capsys.readouterr().err
    assert output_failure(OSError(28, "No space left on device"))
    assert not output_failure(OSError(13, "Permission denied"))
