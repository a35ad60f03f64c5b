"""A2A 1.0 over gRPC, end to end against the real a2a-sdk 1.3.0 agent whose card offers only the
gRPC binding (`a2a_grpc_server`, served by the SDK's `GrpcHandler`): detection picks the binding
from the card, and send, get, watch (the stream, artifacts as they grow), result (and --save),
list with filters, cancel, answer and push configs all go over gRPC. The grpc extra is part of
mcptask's test environment (`mcptask[grpc]` in the `test` extra): nothing here is skipped."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcptask.errors import UsageError
from mcptask.protocols import a2a_grpc

from conftest import CliResult, RunCli, assert_one_line_error
from servers.a2a_plugin import A2AServerProcess
from servers.a2a_report import REPORT_CHUNKS, REPORT_FILE

pytestmark = pytest.mark.timeout(240)


def _ok(r: CliResult, code: int = 0) -> CliResult:
    assert r.code == code, f"exit {r.code}\nstdout: {r.stdout[-3000:]}\nstderr: {r.stderr}"
    assert "Traceback" not in r.stderr, r.stderr
    return r


def test_a_grpc_only_agent_end_to_end(
    run_cli: RunCli, a2a_grpc_server: A2AServerProcess, tmp_path: Path
) -> None:
    url = ("-u", a2a_grpc_server.url)
    # detection: the card offers gRPC alone; the protocol is remembered for the endpoint
    r = _ok(run_cli("send", "report over grpc", *url, "--watch", "-o", "ndjson", "--trace"))
    assert f"gRPC interface {a2a_grpc_server.grpc_target}" in r.stderr
    lines = r.lines()
    task_id = lines[0]["taskId"]
    assert lines[0]["protocol"] == "a2a-1.0-grpc"
    kinds = [line.get("event") for line in lines]
    completed = next(i for i, line in enumerate(lines) if line.get("status") == "completed")
    report = [
        i for i, k in enumerate(kinds) if k == "artifact" and lines[i]["artifactId"] == "report"
    ]
    assert report and report[0] < completed  # the artifact grew while the task ran
    assert kinds[-1] == "end" and lines[-1]["outcome"] == "completed"

    got = _ok(run_cli("get", "-o", "json", "--", task_id)).json()  # the book knows the endpoint
    assert got["status"] == "completed" and got["protocol"] == "a2a-1.0-grpc"
    out = tmp_path / "out"
    _ok(run_cli("result", "--save", str(out), "-o", "json", "--", task_id))
    assert (out / "data.bin").read_bytes() == REPORT_FILE
    assert (out / "report.md").read_text() == "".join(REPORT_CHUNKS)

    # -p forces the binding; list filters go to ListTasks over gRPC
    forced = ("-p", "a2a-1.0-grpc", *url)
    listed = _ok(run_cli("list", *forced, "--status", "completed", "-o", "json")).json()["tasks"]
    assert task_id in {t["taskId"] for t in listed}
    assert {t["status"] for t in listed} == {"completed"}
    one = _ok(run_cli("list", *forced, "--context", got["contextId"], "-o", "json")).json()
    assert [t["taskId"] for t in one["tasks"]] == [task_id]

    missing = run_cli("get", "no-such-task", *url)
    assert missing.code == 9
    assert_one_line_error(missing)
    # `check` does not test this binding yet, and says so
    check = run_cli("check", *url)
    assert check.code == 11
    assert_one_line_error(check)


def test_answer_cancel_and_push_configs_over_grpc(
    run_cli: RunCli, a2a_grpc_server: A2AServerProcess
) -> None:
    url = ("-u", a2a_grpc_server.url)
    ask = _ok(run_cli("send", "ask over grpc", *url, "-o", "json")).json()
    _ok(run_cli("watch", "--until", "input_required", "-o", "json", "--", ask["taskId"]))
    _ok(run_cli("answer", "--text", "forty-two", "-o", "json", "--", ask["taskId"]))
    result = _ok(run_cli("result", "-o", "json", "--", ask["taskId"])).json()
    assert result["text"] == "answer: forty-two"

    # running until cancelled below, however long the steps between take on a loaded machine
    slow = _ok(run_cli("send", "hold over grpc", *url, "-o", "json")).json()["taskId"]
    made = _ok(
        run_cli(
            "push",
            "set",
            "--webhook",
            "http://127.0.0.1:9/hook",
            "--id",
            "c1",
            "-o",
            "json",
            "--",
            slow,
            env={"MCPTASK_WEBHOOK_TOKEN": "secret"},  # a secret never as a flag (issue 38)
        )
    ).json()
    assert made["id"] == "c1" and made["tokenSet"] is True
    configs = _ok(run_cli("push", "list", "-o", "json", "--", slow)).json()["configs"]
    assert [c["id"] for c in configs] == ["c1"]
    assert _ok(run_cli("push", "get", "--id", "c1", "-o", "json", "--", slow)).json()["url"] == (
        "http://127.0.0.1:9/hook"
    )
    _ok(run_cli("push", "delete", "--id", "c1", "-o", "json", "--", slow))
    assert _ok(run_cli("push", "list", "-o", "json", "--", slow)).json()["configs"] == []
    refused = run_cli("push", "set", "--webhook", "http://10.1.2.3/hook", "--", slow)
    assert refused.code == 4
    assert_one_line_error(refused)

    # a watch whose updates come by webhook: the configs it makes go over gRPC
    hooked = _ok(run_cli("send", "hello hook", *url, "--watch", "--push-receiver", "-o", "ndjson"))
    assert any(line.get("via") == "webhook" for line in hooked.lines()), hooked.stdout
    assert hooked.lines()[-1]["outcome"] == "completed"

    cancelled = _ok(run_cli("cancel", "-o", "json", "--", slow)).json()
    assert cancelled["status"] == "cancelled"
    again = run_cli("cancel", "--", slow)
    assert again.code == 11
    assert_one_line_error(again)


def test_without_the_extra_a_one_line_hint(
    monkeypatch: pytest.MonkeyPatch,
    run_cli: RunCli,
    a2a_grpc_server: A2AServerProcess,
    tmp_path: Path,
) -> None:
    monkeypatch.setitem(sys.modules, "grpc", None)  # `import grpc` fails as if not installed
    with pytest.raises(UsageError, match=r"pip install 'mcptask\[grpc\]'"):
        a2a_grpc._sdk()
    # the real CLI, where `import grpc` fails: the card is read, then one line says what to do
    blocked = tmp_path / "blocked"
    (blocked / "grpc").mkdir(parents=True)
    (blocked / "grpc" / "__init__.py").write_text("raise ImportError('not installed')\n")
    r = run_cli("send", "hi", "-u", a2a_grpc_server.url, env={"PYTHONPATH": str(blocked)})
    assert r.code == 2, r.stderr
    assert_one_line_error(r)
    assert "pip install 'mcptask[grpc]'" in r.stderr


@pytest.mark.parametrize(
    ("typed", "named", "expected"),
    [
        ("http://127.0.0.1:8000/", "127.0.0.1:50051", ("127.0.0.1:50051", False)),
        ("http://agent.example/", "localhost:50051", ("agent.example:50051", False)),
        ("https://agent.example/", "agent:8443", ("agent.example:8443", True)),
        ("http://h/", "grpcs://inner:9000", ("h:9000", True)),
        ("http://[::1]:80/", "[::1]:7000", ("[::1]:7000", False)),
    ],
)
def test_the_grpc_target(typed: str, named: str, expected: tuple[str, bool]) -> None:
    assert a2a_grpc.grpc_target(typed, named) == expected


def test_credentials_go_as_metadata_to_the_typed_host_only() -> None:
    """The endpoint's token and `-H` headers (what its HTTP transport sends to its own origin)
    are the gRPC calls' metadata, keys lower-cased; the channel is on the typed host."""
    from mcptask.transports.http import HttpOptions, HttpTransport
    from mcptask.transports.rpc import RpcClient

    transport = HttpTransport(
        HttpOptions(url="http://agent.test:8000/", token="t0k", headers={"X-Team": "blue"})
    )
    proto = a2a_grpc.A2AGrpc(RpcClient(transport), "http://agent.test:8000/")
    metadata = dict(proto._credentials())
    assert metadata["authorization"] == "Bearer t0k"
    assert metadata["x-team"] == "blue"
    assert metadata["a2a-version"] == "1.0"
    assert a2a_grpc.grpc_target(transport.url, "elsewhere.example:50051") == (
        "agent.test:50051",
        False,
    )
