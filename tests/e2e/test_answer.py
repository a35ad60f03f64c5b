"""`answer` and the inline form in `watch`: answering tasks that wait for input.

Real servers through the real CLI, each step in its own process (the task book carries the
session, context and answered keys between them): server-everything (MCP 2025-11-25, the question
on the `tasks/result` stream), fastmcp 4 (MCP 2026-07-28 `inputRequests` / `tasks/update`) and the
a2a-sdk agent. The terminal form is driven through a pseudo-terminal. A scripted 2026-07-28 server
(in this module) asks what the real ones do not: a form with every field kind, several requests
at once, a server that ignores answers, a sampling request, hostile text. The MCP 2025-11-25 edge
cases (ids 0, questions for other tasks, stale and sampling requests, stopping the read) run on a
scripted transport, and the scheduler's `on_input` on a fake clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mcptask.errors import NotApplicable, TaskEnded, UsageError
from mcptask.model.inputs import TEXT_FORM, InputRequest
from mcptask.model.refs import TaskRef
from mcptask.model.task import Task
from mcptask.output import forms
from mcptask.protocols import mcp2025
from mcptask.protocols.mcp2025 import Mcp2025
from mcptask.protocols.mcp2026 import Mcp2026
from mcptask.scheduler.watcher import WatchConfig, Watched, Watcher
from mcptask.text.command_line import command_line
from mcptask.transports.rpc import RpcClient

from conftest import CliResult, RunCli, assert_one_line_error, clean_env
from servers.common import ServerProcess

P2026 = ("-p", "mcp-2026-07-28")


def _ok(r: CliResult) -> CliResult:
    assert r.code == 0, (r.code, r.stdout, r.stderr)
    return r


def _book(state_dir: Path) -> dict[str, Any]:
    from mcptask.state.taskbook import TaskBook

    return {"endpoints": TaskBook(state_dir / "tasks.db").all_endpoints()}


def _wait_for(run_cli: RunCli, url: str, tid: str, status: str, *extra: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        task: dict[str, Any] = _ok(
            run_cli("get", "--url", url, "-o", "json", *extra, "--", tid)
        ).json()
        if task["status"] == status or time.monotonic() > deadline:
            assert task["status"] == status, task
            return task
        time.sleep(0.5)


# -- MCP 2025-11-25: server-everything -------------------------------------------------------------


def test_everything_answer_from_another_process(
    run_cli: RunCli, everything_server: ServerProcess, state_dir: Path
) -> None:
    url = everything_server.url
    created = _ok(
        run_cli(
            "call",
            "simulate-research-query",
            "topic=python",
            "ambiguous=true",
            "--url",
            url,
            "-o",
            "json",
        )
    ).json()
    tid = created["taskId"]

    # a separate watch cannot answer: exit 6, the end line, a hint naming `answer`
    watched = run_cli("watch", "--url", url, "-o", "ndjson", "--", tid)
    assert watched.code == 6, watched.stderr
    assert watched.lines()[-1] == {
        "event": "end",
        "taskId": tid,
        "outcome": "input_required",
        "exitCode": 6,
    }
    assert f"answer it with `mcptask answer {tid}`" in watched.stderr
    as_json = run_cli("watch", "--url", url, "-o", "json", "--", tid)
    assert as_json.code == 6 and as_json.json()["tasks"][0]["outcome"] == "input_required"
    assert f"mcptask answer {tid}" in as_json.stderr

    # no terminal and no answer: a usage error that says how, and the question is not read
    bare = run_cli("answer", "--url", url, "--", tid)
    assert bare.code == 2
    assert_one_line_error(bare)
    assert "--json CONTENT, --decline or --cancel" in bare.stderr
    for bad in ("not json", "[1, 2]"):
        r = run_cli("answer", "--url", url, "--json", bad, "--", tid)
        assert r.code == 2 and "--json" in r.stderr
    both = run_cli("answer", "--url", url, "--decline", "--cancel", "--", tid)
    assert both.code == 2 and "cannot go together" in both.stderr

    # the real schema: interpretation is a oneOf of programming / snake / comedy
    r = run_cli(
        "answer", "--url", url, "--json", '{"interpretation": "snake"}', "-o", "json", "--", tid
    )
    _ok(r)
    assert 'asks: The research query "python" could have multiple interpretations' in r.stderr
    assert "took the answer (accept)" in r.stderr
    after = r.json()
    assert after["taskId"] == tid and after["status"] in ("working", "completed")
    assert _book(state_dir)["endpoints"][url]["tasks"][tid]["answered"] == ["0"]  # id 0

    result = _ok(run_cli("result", "--url", url, "-o", "json", "--", tid)).json()
    text = result["content"][0]["text"]
    assert "Research Report: python (snake)" in text and "Clarification**: snake" in text

    done = run_cli("answer", "--url", url, "--json", '{"interpretation": "snake"}', "--", tid)
    assert done.code == 11 and "not waiting for input: it is completed" in done.stderr
    unknown = run_cli("answer", "--url", url, "--json", "{}", "--", "no-such-task")
    assert unknown.code == 9


def test_everything_answer_that_does_not_fit_is_held_and_checked_locally(
    run_cli: RunCli, everything_server: ServerProcess
) -> None:
    """A question read from a 2025-11-25 server cannot be put back, but it need not be lost
    (issue 38): an answer that does not fit its form sends nothing (not `cancel`: a typo
    must not change what the server does), the task book holds the question, the next
    answer is checked against it before anything is sent, and a fitting one goes to the same
    request id."""
    url = everything_server.url
    tid = _ok(
        run_cli(
            "call",
            "simulate-research-query",
            "topic=python",
            "ambiguous=true",
            "--url",
            url,
            "-o",
            "json",
        )
    ).json()["taskId"]
    _wait_for(run_cli, url, tid, "input_required")
    r = run_cli("answer", "--url", url, "--json", '{"interpretation": "snakes"}', "--", tid)
    assert r.code == 2 and "Traceback" not in r.stderr
    assert "snakes is not one of programming, snake, comedy" in r.stderr
    assert "cancel sent" not in r.stderr and "nothing was sent" in r.stderr
    # still waiting, and a second bad answer is refused here, before anything is sent
    assert _ok(run_cli("get", "--url", url, "-o", "json", "--", tid)).json()["status"] == (
        "input_required"
    )
    again = run_cli("answer", "--url", url, "--json", '{"interpretation": "snek"}', "--", tid)
    assert again.code == 2 and "snek is not one of" in again.stderr
    assert "asks: The research query" in again.stderr  # the held question, from the book
    done = _ok(run_cli("answer", "--url", url, "--json", '{"interpretation": "snake"}', "--", tid))
    assert "took the answer (accept)" in done.stderr
    result = _ok(run_cli("result", "--url", url, "-o", "json", "--", tid)).json()
    text = result["content"][0]["text"]
    assert "Clarification**: snake" in text and "User cancelled" not in text


# -- MCP 2026-07-28: fastmcp 4 ---------------------------------------------------------------------


def test_fastmcp4_answer_json(run_cli: RunCli, fastmcp4_server: ServerProcess) -> None:
    url = fastmcp4_server.url
    tid = _ok(run_cli("call", "ask_name", "--url", url, "-o", "json")).json()["taskId"]
    watched = run_cli("watch", "--url", url, "-o", "ndjson", "--", tid)
    assert watched.code == 6, watched.stderr
    end = watched.lines()[-1]
    assert end["outcome"] == "input_required" and end["exitCode"] == 6
    status = watched.lines()[-2]
    assert status["status"] == "input_required" and len(status["inputRequests"]) == 1
    assert command_line("answer", tid) in watched.stderr  # `--` before an id that starts with -

    # 2026 shows the question up front: the usage error names it and its field
    bare = run_cli("answer", "--url", url, "--", tid)
    assert bare.code == 2
    assert_one_line_error(bare)
    assert "asks: What is your name? (the form: name* (text))" in bare.stderr
    wrong = run_cli("answer", "--url", url, "--json", '{"nom": "Ann"}', "--", tid)
    assert wrong.code == 2 and "unknown field 'nom'" in wrong.stderr
    missing = run_cli("answer", "--url", url, "--json", "{}", "--", tid)
    assert missing.code == 2 and "missing required field name" in missing.stderr
    wrong_key = run_cli("answer", "--url", url, "--key", "nope", "--json", "{}", "--", tid)
    assert wrong_key.code == 2 and "has no pending input request with that key" in wrong_key.stderr
    # nothing was sent: it still waits
    assert _wait_for(run_cli, url, tid, "input_required")["inputRequests"]

    r = _ok(run_cli("answer", "--url", url, "--json", '{"name": "Ann"}', "-o", "json", "--", tid))
    # the server may still be finishing when the answer's own look comes (a loaded machine)
    assert r.json()["status"] in ("working", "completed"), r.stdout
    _wait_for(run_cli, url, tid, "completed")
    result = _ok(run_cli("result", "--url", url, "-o", "json", "--", tid)).json()
    assert result["content"][0]["text"] == "Hello, Ann!"

    done = run_cli("answer", "--url", url, "--json", '{"name": "Ann"}', "--", tid)
    assert done.code == 11 and "not waiting for input: it is completed" in done.stderr
    assert_one_line_error(done)
    unknown = run_cli("answer", "--url", url, "--json", "{}", "--", "no-such-task")
    assert unknown.code == 9


def test_fastmcp4_text_and_decline(run_cli: RunCli, fastmcp4_server: ServerProcess) -> None:
    url = fastmcp4_server.url
    first = _ok(run_cli("call", "ask_name", "--url", url, "-o", "json")).json()["taskId"]
    second = _ok(run_cli("call", "ask_name", "--url", url, "-o", "json")).json()["taskId"]
    _wait_for(run_cli, url, first, "input_required")
    _wait_for(run_cli, url, second, "input_required")
    _ok(run_cli("answer", "--url", url, "--text", "Bo", "--", first))  # a one-field form
    declined = _ok(run_cli("answer", "--url", url, "--decline", "--", second))
    assert "took the answer (decline)" in declined.stderr
    r1 = _ok(run_cli("result", "--url", url, "-o", "json", "--", first)).json()
    r2 = _ok(run_cli("result", "--url", url, "-o", "json", "--", second)).json()
    assert r1["content"][0]["text"] == "Hello, Bo!"
    assert r2["content"][0]["text"] == "No name given (decline)."


# -- A2A: a2a-sdk ----------------------------------------------------------------------------------


def test_a2a_answer_text(run_cli: RunCli, a2a_server: Any) -> None:
    url = a2a_server.url
    tid = _ok(run_cli("send", "ask something", "--url", url, "-o", "json")).json()["taskId"]
    task = _wait_for(run_cli, url, tid, "input_required")
    assert task["statusMessage"] == "What is your answer?"
    decline = run_cli("answer", "--url", url, "--decline", "--", tid)
    assert decline.code == 2 and "takes an answer (--text TEXT)" in decline.stderr
    r = _ok(run_cli("answer", "--url", url, "--text", "blue", "-o", "json", "--", tid))
    assert "asks: What is your answer?" in r.stderr
    assert r.json()["status"] in ("working", "completed")
    result = _ok(run_cli("result", "--url", url, "-o", "json", "--", tid)).json()
    assert "answer: blue" in result["text"]
    again = run_cli("answer", "--url", url, "--text", "blue", "--", tid)
    assert again.code == 11


def test_a2a_0_3_answer_text(run_cli: RunCli, a2a_server: Any) -> None:
    url, p = a2a_server.url, ("-p", "a2a-0.3")
    tid = _ok(run_cli("send", "ask again", "--url", url, *p, "-o", "json")).json()["taskId"]
    _wait_for(run_cli, url, tid, "input_required", *p)
    _ok(run_cli("answer", "--url", url, *p, "--text", "green", "--", tid))
    result = _ok(run_cli("result", "--url", url, *p, "-o", "json", "--", tid)).json()
    assert "answer: green" in result["text"]


# -- a scripted MCP 2026-07-28 server --------------------------------------------------------------

RICH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2},
        "size": {
            "type": "string",
            "title": "Size",
            "enum": ["s", "m", "l"],
            "enumNames": ["Small", "Medium", "Large"],
            "default": "m",
        },
        "copies": {"type": "integer", "title": "Copies", "minimum": 1, "maximum": 5},
        "urgent": {"type": "boolean", "title": "Urgent", "default": False},
        "colour": {
            "type": "string",
            "title": "Colour",
            "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}],
        },
        "tags": {
            "type": "array",
            "title": "Tags",
            "items": {"anyOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]},
        },
        "note": {"type": "string", "title": "Note", "description": "optional"},
    },
    "required": ["name", "colour", "copies"],
}


def _elicit(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }


@dataclass
class FakeTask:
    pending: dict[str, Any]
    #: updates before the server takes an answer (0: the first)
    ignore: int = 0
    updates: list[dict[str, Any]] = field(default_factory=list)
    answers: dict[str, Any] = field(default_factory=dict)

    def wire(self, tid: str) -> dict[str, Any]:
        base = {
            "taskId": tid,
            "createdAt": "2026-11-30T00:00:00Z",
            "ttlMs": 60000,
            "pollIntervalMs": 250,
            "resultType": "complete",
        }
        if self.pending:
            return {**base, "status": "input_required", "inputRequests": self.pending}
        result = {"content": [{"type": "text", "text": json.dumps(self.answers, sort_keys=True)}]}
        return {**base, "status": "completed", "result": result}


class Fake2026(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.tasks: dict[str, FakeTask] = {}
        self.url = f"http://127.0.0.1:{self.server_address[1]}/mcp"


class _Handler(BaseHTTPRequestHandler):
    server: Fake2026

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        params = body.get("params") or {}
        task = self.server.tasks.get(str(params.get("taskId")))
        if task is None:
            return self._send(
                400,
                {
                    "jsonrpc": "2.0",
                    "id": body["id"],
                    "error": {"code": -32602, "message": "Task not found"},
                },
            )
        if body["method"] == "tasks/update":
            responses = params.get("inputResponses") or {}
            task.updates.append(responses)
            if len(task.updates) > task.ignore:
                for key, response in responses.items():
                    if key in task.pending:
                        task.pending.pop(key)
                        task.answers[key] = response
            result: dict[str, Any] = {"resultType": "complete"}
        else:
            result = task.wire(params["taskId"])
        self._send(200, {"jsonrpc": "2.0", "id": body["id"], "result": result})

    def _send(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def fake2026() -> Iterator[Fake2026]:
    server = Fake2026()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_several_requests_need_a_key(run_cli: RunCli, fake2026: Fake2026) -> None:
    name = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    fake2026.tasks["two"] = FakeTask(
        {"k1": _elicit("first?", name), "k2": _elicit("second?", name)}
    )
    url = fake2026.url
    r = run_cli("answer", "--url", url, *P2026, "--json", '{"name": "x"}', "--", "two")
    assert r.code == 2 and "asks 2 questions: pick one with --key (keys: k1, k2)" in r.stderr
    assert not fake2026.tasks["two"].updates
    _ok(
        run_cli(
            "answer", "--url", url, *P2026, "--key", "k2", "--json", '{"name": "x"}', "--", "two"
        )
    )
    assert fake2026.tasks["two"].updates == [{"k2": {"action": "accept", "content": {"name": "x"}}}]
    # one left: no --key needed; --cancel applies to it
    _ok(run_cli("answer", "--url", url, *P2026, "--cancel", "--", "two"))
    assert fake2026.tasks["two"].updates[-1] == {"k1": {"action": "cancel"}}


def test_an_ignored_answer_is_not_sent_twice(
    run_cli: RunCli, fake2026: Fake2026, state_dir: Path
) -> None:
    """Servers acknowledge answers they ignore: exit 6 when the task still waits; the key is
    kept in the task book and not sent again unless --key asks for it."""
    fake2026.tasks["deaf"] = FakeTask({"k": _elicit("hello?", TEXT_FORM)}, ignore=1)
    url = fake2026.url
    started = time.monotonic()
    r = run_cli("answer", "--url", url, *P2026, "--text", "hi", "--", "deaf")
    assert r.code == 6 and "the server did not take it" in r.stderr, r.stderr
    # polled for CONFIRM_SECONDS (the upper bound only says it did not wait for ever: a loaded
    # machine may take long to start the process)
    assert 4 < time.monotonic() - started < 60
    assert _book(state_dir)["endpoints"][url]["tasks"]["deaf"]["answered"] == ["k"]
    again = run_cli("answer", "--url", url, *P2026, "--text", "hi", "--", "deaf")
    assert again.code == 6 and "already sent (k)" in again.stderr and "--key" in again.stderr
    assert len(fake2026.tasks["deaf"].updates) == 1
    _ok(run_cli("answer", "--url", url, *P2026, "--key", "k", "--text", "hi", "--", "deaf"))
    assert len(fake2026.tasks["deaf"].updates) == 2


def test_requests_mcptask_cannot_answer(run_cli: RunCli, fake2026: Fake2026) -> None:
    sampling = {"method": "sampling/createMessage", "params": {"messages": []}}
    fake2026.tasks["llm"] = FakeTask({"s": sampling})
    r = run_cli("answer", "--url", fake2026.url, *P2026, "--json", "{}", "--", "llm")
    assert r.code == 11 and "asks for sampling/createMessage" in r.stderr
    assert not fake2026.tasks["llm"].updates


# -- the terminal form, through a pseudo-terminal --------------------------------------------------

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-Za-z]|\r")


class Terminal:
    """The real CLI on a pseudo-terminal (stdin and stdout are ttys; Ctrl-C and Ctrl-D work)."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 140, 0, 0))

        def controlling_terminal() -> None:
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcptask", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**env, "TERM": "xterm"},
            close_fds=True,
            preexec_fn=controlling_terminal,
        )
        os.close(slave)
        self.raw = b""
        self.pos = 0

    @property
    def screen(self) -> str:
        return _ANSI.sub(b"", self.raw).decode("utf-8", "replace")

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:
            return False
        self.raw += chunk
        return bool(chunk)

    def expect(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.screen.find(text, self.pos)
            if found >= 0:
                self.pos = found + len(text)
                return
            if not self._read(0.1) and self.proc.poll() is not None:
                break
        raise AssertionError(f"{text!r} did not appear; the screen:\n{self.screen[-3000:]}")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def wait(self, timeout: float = 60) -> int:
        """The exit status, once everything the program wrote has been read."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._read(0.1):
            pass  # reading ends with EIO when the program has exited and its output is read
        return self.proc.wait(timeout=5)


@pytest.fixture
def terminal(state_dir: Path) -> Iterator[Callable[..., Terminal]]:
    started: list[Terminal] = []

    def start(*args: str) -> Terminal:
        t = Terminal(list(args), clean_env(state_dir))
        started.append(t)
        return t

    yield start
    for t in started:
        if t.proc.poll() is None:
            t.proc.kill()
            t.proc.wait()
        with contextlib.suppress(OSError):
            os.close(t.master)


def test_form_with_every_field_kind(terminal: Callable[..., Terminal], fake2026: Fake2026) -> None:
    hostile = "Configure the \x1b[31mrun\x1b[0m\x07 please"
    fake2026.tasks["rich"] = FakeTask({"form": _elicit(hostile, RICH_SCHEMA)})
    t = terminal("answer", "--url", fake2026.url, *P2026, "--", "rich")
    t.expect("asks:")
    t.expect("Configure the run please")
    t.expect("Name (name) *")
    t.expect("text (≥ 2 characters): ")
    t.type("\n")
    t.expect("this field is required")  # a required field left empty is asked again
    t.type("A\n")
    t.expect("must be at least 2 characters")
    t.type("Ann\n")
    t.expect("3) Large  [l]")
    t.expect("choose 1-3 (default: Medium): ")  # balanced, the title
    t.type("\n")  # the default
    t.expect("Copies (copies) *")
    t.type("9\n")
    t.expect("must be at most 5")
    t.type("two\n")
    t.expect("type a whole number")
    t.type("2\n")
    t.expect("y/n (default: n): ")
    t.type("maybe\n")
    t.expect("answer y or n")
    t.type("y\n")
    t.expect("2) Green  [g]")
    t.type("green\n")  # a choice by its title
    t.expect("separated by commas")
    t.type("1, 2\n")
    t.expect("optional")
    t.type("\n")  # an optional field left empty is left out
    t.expect("send this answer?")
    t.type("\n")
    assert t.wait() == 0, t.screen
    assert b"\x1b[31mrun" not in t.raw and b"\x07 please" not in t.raw
    assert fake2026.tasks["rich"].updates == [
        {
            "form": {
                "action": "accept",
                "content": {
                    "name": "Ann",
                    "size": "m",
                    "copies": 2,
                    "urgent": True,
                    "colour": "g",
                    "tags": ["a", "b"],
                },
            }
        }
    ]


def test_form_on_server_everything_enum(
    terminal: Callable[..., Terminal], run_cli: RunCli, everything_server: ServerProcess
) -> None:
    url = everything_server.url
    tid = _ok(
        run_cli(
            "call",
            "simulate-research-query",
            "topic=python",
            "ambiguous=true",
            "--url",
            url,
            "-o",
            "json",
        )
    ).json()["taskId"]
    _wait_for(run_cli, url, tid, "input_required")
    t = terminal("answer", "--url", url, "--", tid)
    t.expect("Clarification (interpretation) *")
    t.expect("3) Monty Python comedy group  [comedy]")
    t.type("\n")
    t.expect("this field is required")
    t.type("4\n")
    t.expect("choose a number from 1 to 3")
    t.type("3\n")
    t.expect("send this answer?")
    t.type("y\n")
    t.expect("took the answer (accept)")
    assert t.wait() == 0, t.screen
    result = _ok(run_cli("result", "--url", url, "-o", "json", "--", tid)).json()
    assert "Research Report: python (comedy)" in result["content"][0]["text"]


def test_form_dismissed_sends_nothing(
    terminal: Callable[..., Terminal], run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    url = fastmcp4_server.url
    tid = _ok(run_cli("call", "ask_name", "--url", url, "-o", "json")).json()["taskId"]
    _wait_for(run_cli, url, tid, "input_required")
    t = terminal("answer", "--url", url, "--", tid)
    t.expect("What is your name?")
    t.expect("text: ")
    t.type("\x03")  # Ctrl-C
    assert t.wait() == 130, t.screen
    assert "interrupted" in t.screen and "Traceback" not in t.screen
    t = terminal("answer", "--url", url, "--", tid)
    t.expect("text: ")
    t.type("\x04")  # Ctrl-D: end of input
    assert t.wait() == 6, t.screen
    assert "dismissed; nothing was sent" in t.screen
    assert _wait_for(run_cli, url, tid, "input_required")["inputRequests"]  # still waits
    t = terminal("answer", "--url", url, "--", tid)
    t.expect("text: ")
    t.type("Cy\n")
    t.expect("send this answer?")
    t.type("d\n")  # decline, from the form
    assert t.wait() == 0, t.screen
    result = _ok(run_cli("result", "--url", url, "-o", "json", "--", tid)).json()
    assert result["content"][0]["text"] == "No name given (decline)."


def test_watch_asks_inline_and_keeps_polling_the_others(
    terminal: Callable[..., Terminal], run_cli: RunCli, fastmcp4_server: ServerProcess
) -> None:
    url = fastmcp4_server.url
    asks = _ok(run_cli("call", "ask_name", "--url", url, "-o", "json")).json()["taskId"]
    slow = _ok(run_cli("call", "slow_echo", "text=hi", "seconds=2", "--url", url, "-o", "json"))
    other = slow.json()["taskId"]
    t = terminal("watch", "--url", url, "--result", "--", asks, other)
    t.expect("What is your name?")
    t.expect("text: ")
    # the other task goes on being polled while the form waits
    _wait_for(run_cli, url, other, "completed")
    time.sleep(1.5)
    t.type("Di\n")
    t.expect("send this answer?")
    t.type("\n")
    assert t.wait() == 0, t.screen
    t.expect("Hello, Di!")
    t.expect("echo: hi")
    assert "✔ 2 completed" in t.screen


def test_watch_inline_on_server_everything(
    terminal: Callable[..., Terminal], everything_server: ServerProcess
) -> None:
    t = terminal(
        "call",
        "simulate-research-query",
        "topic=python",
        "ambiguous=true",
        "--watch",
        "--result",
        "--url",
        everything_server.url,
    )
    t.expect("choose 1-3")
    t.type("programming\n")
    t.expect("send this answer?")
    t.type("\n")
    assert t.wait() == 0, t.screen
    t.expect("Research Report: python (programming)")


# -- MCP 2025-11-25 on a scripted transport --------------------------------------------------------

SESSION = "s-1"


def _question(req_id: Any, task_id: str | None, message: str = "which?") -> dict[str, Any]:
    params: dict[str, Any] = {"message": message, "requestedSchema": TEXT_FORM}
    if task_id is not None:
        params["_meta"] = {mcp2025.RELATED_TASK: {"taskId": task_id}}
    return {"jsonrpc": "2.0", "id": req_id, "method": "elicitation/create", "params": params}


def _wire(status: str) -> dict[str, Any]:
    return {"taskId": "t1", "status": status, "pollInterval": 500}


class ScriptedTransport:
    """Answers `tasks/get` with `statuses` (the last repeats) and `tasks/result` with `stream`,
    recording what mcptask sent and what it read."""

    url = "http://scripted/mcp"

    def __init__(self, stream: list[dict[str, Any]], statuses: list[str] | None = None) -> None:
        self.headers: dict[str, str] = {}
        self.session_id: str | None = None
        self.stream = stream
        self.statuses = statuses or ["input_required"]
        self.sent: list[tuple[dict[str, Any], dict[str, str]]] = []
        self.read: list[dict[str, Any]] = []
        self.block = asyncio.Event()

    def responses(self) -> list[dict[str, Any]]:
        return [m for m, _ in self.sent if "method" not in m]

    async def send(
        self,
        message: dict[str, Any],
        *,
        headers: Mapping[str, str] | None = None,
        url: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        self.sent.append((message, dict(headers or {})))
        method = message.get("method")
        if method == "tasks/get":
            status = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
            yield {"jsonrpc": "2.0", "id": message["id"], "result": _wire(status)}
        elif method == "tasks/result":
            for item in self.stream:
                self.read.append(item)
                yield item if "method" in item else {**item, "id": message["id"]}
            await self.block.wait()  # like the server: hold the answer until the task ends
        elif method is not None:
            yield {"jsonrpc": "2.0", "id": message["id"], "result": {"resultType": "complete"}}

    async def aclose(self) -> None:
        pass

    def redact(self, text: str) -> str:
        return text


def _proto(transport: ScriptedTransport) -> Mcp2025:
    return Mcp2025(RpcClient(transport), transport.url, session=SESSION)


def _task(status: str = "input_required") -> Task:
    return mcp2025.normalize(_wire(status), protocol="mcp-2025-11-25", server="x")


def test_2025_answer_skips_what_is_not_ours_and_stops_reading() -> None:
    sampling = {"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage", "params": {}}
    ping = {"jsonrpc": "2.0", "id": "p", "method": "ping"}
    later = _question(5, "t1", "a later question")
    transport = ScriptedTransport(
        [
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {}},
            _question(3, "t-other"),  # another task's
            sampling,
            ping,
            _question(1, "t1", "answered before"),  # stale: the book says it was answered
            _question(0, "t1", "your colour?"),  # ids start at 0
            later,
        ]
    )
    asked: list[InputRequest] = []

    async def responder(req: InputRequest) -> dict[str, Any]:
        asked.append(req)
        return {"action": "accept", "content": {"text": "red"}}

    async def go() -> Any:
        proto = _proto(transport)
        return await proto.answer(
            TaskRef("t1", session=SESSION), _task(), responder, answered=frozenset({"1"})
        )

    done = asyncio.run(go())
    assert [r.message for r in asked] == ["your colour?"]
    assert done.keys == ["0"] and not done.dismissed
    assert later not in transport.read  # left queued for the next reader
    responses = transport.responses()
    # refused as stdio's router refuses a request nobody handles (transports/peer.py)
    assert responses[0] == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32601, "message": "Method not found: sampling/createMessage"},
    }
    assert responses[1] == {"jsonrpc": "2.0", "id": "p", "result": {}}
    assert responses[2] == {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {"action": "accept", "content": {"text": "red"}},
    }
    assert len(responses) == 3  # nothing for the other task's question nor the stale one
    assert all(h.get("Mcp-Session-Id") == SESSION for m, h in transport.sent if "method" not in m)
    assert any("task t-other" in n for n in done.notes)
    assert any("answered before" in n for n in done.notes)
    assert any("sampling/createMessage" in n for n in done.notes)


def test_2025_a_dismissed_answer_sends_cancel_and_a_bad_one_is_held() -> None:
    from mcptask.protocols.server_requests import HeldQuestion

    async def dismissed(req: InputRequest) -> dict[str, Any] | None:
        return None

    async def bad(req: InputRequest) -> dict[str, Any] | None:
        raise UsageError("--json: no")

    t1 = ScriptedTransport([_question(0, "t1")])
    done = asyncio.run(_proto(t1).answer(TaskRef("t1", session=SESSION), _task(), dismissed))
    assert done.dismissed and t1.responses()[-1]["result"] == {"action": "cancel"}

    # an answer that does not fit: nothing is sent (issue 38), the question is held
    t2 = ScriptedTransport([_question(0, None)])  # no related-task: the stream is ours
    with pytest.raises(HeldQuestion) as err:
        asyncio.run(_proto(t2).answer(TaskRef("t1", session=SESSION), _task(), bad))
    assert t2.responses() == []
    assert err.value.request_id == 0 and "requestedSchema" in err.value.params
    # ... and answered later, to the same request id
    asyncio.run(_proto(t2).answer_held(TaskRef("t1", session=SESSION), 0, {"action": "accept"}))
    assert t2.responses()[-1] == {"jsonrpc": "2.0", "id": 0, "result": {"action": "accept"}}


def test_2025_no_question_or_a_task_that_moved_on(monkeypatch: pytest.MonkeyPatch) -> None:
    async def never(req: InputRequest) -> dict[str, Any]:
        raise AssertionError("no question was expected")

    monkeypatch.setattr(mcp2025, "QUESTION_WAIT", 0.6)
    silent = ScriptedTransport([])
    with pytest.raises(TaskEnded) as ended:
        asyncio.run(_proto(silent).answer(TaskRef("t1", session=SESSION), _task(), never))
    assert ended.value.exit_code == 6 and "delivered no question" in ended.value.message

    moved = ScriptedTransport([], statuses=["working"])
    with pytest.raises(NotApplicable, match="no longer waits for input: it is working"):
        asyncio.run(_proto(moved).answer(TaskRef("t1", session=SESSION), _task(), never))


def test_2025_result_skips_a_stale_question() -> None:
    final = {"jsonrpc": "2.0", "result": {"content": [{"type": "text", "text": "done"}]}}
    transport = ScriptedTransport([_question(0, "t1"), final])
    result = asyncio.run(
        _proto(transport).result(TaskRef("t1", session=SESSION), _task("completed"))
    )
    assert result.payload == {"content": [{"type": "text", "text": "done"}]}
    assert transport.responses() == []  # the stale question is skipped, not answered


def test_2026_keys_already_answered_are_not_sent_twice() -> None:
    transport = ScriptedTransport([])
    proto = Mcp2026(RpcClient(transport), transport.url)
    task = Task(
        taskId="t1",
        status="input_required",
        protocol="mcp-2026-07-28",
        server="x",
        inputRequests={"a": _elicit("a?", TEXT_FORM), "b": _elicit("b?", TEXT_FORM)},
        raw={},
    )

    async def responder(req: InputRequest) -> dict[str, Any]:
        return {"action": "accept", "content": {"text": req.message}}

    done = asyncio.run(proto.answer(TaskRef("t1"), task, responder, answered=frozenset({"a"})))
    assert done.keys == ["b"]
    update = [m for m, _ in transport.sent if m.get("method") == "tasks/update"][-1]
    assert update["params"]["inputResponses"] == {
        "b": {"action": "accept", "content": {"text": "b?"}}
    }
    with pytest.raises(TaskEnded):
        asyncio.run(proto.answer(TaskRef("t1"), task, responder, answered=frozenset({"a", "b"})))


# -- the scheduler's on_input, on a fake clock -----------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


def _t(tid: str, status: str) -> Task:
    return Task(
        taskId=tid,
        status=status,  # type: ignore[arg-type]
        pollInterval=1000,
        protocol="test",
        server="test",
        raw={},
    )


class _Events:
    def __init__(self) -> None:
        self.ends: list[tuple[str, str | None]] = []

    def update(self, w: Watched, via: str) -> None:
        pass

    def retry(self, w: Watched, error: str, delay: float) -> None:
        pass

    def end(self, w: Watched) -> None:
        self.ends.append((w.task_id, w.outcome))


def _watcher(
    answers: dict[str, list[str]], on_input: Any, timeout: float | None = None
) -> tuple[Watcher, dict[str, list[float]], _Events]:
    clock = FakeClock()
    polls: dict[str, list[float]] = {k: [] for k in answers}

    async def fetch(ref: TaskRef) -> Task:
        polls[ref.task_id].append(clock.now)
        queue = answers[ref.task_id]
        return _t(ref.task_id, queue.pop(0) if len(queue) > 1 else queue[0])

    async def fetch_result(ref: TaskRef, task: Task) -> Any:
        raise AssertionError

    events = _Events()
    w = Watcher(
        fetch=fetch,
        fetch_result=fetch_result,
        config=WatchConfig(on_input=on_input, timeout=timeout),
        events=events,
        clock=clock,
        sleep=clock.sleep,
    )
    for tid in answers:
        w.add(TaskRef(tid))
    return w, polls, events


def test_on_input_does_not_hold_up_the_other_tasks() -> None:
    other_done = asyncio.Event()
    asked: list[str] = []

    async def on_input(w: Watched) -> Task | None:
        asked.append(w.task_id)
        await other_done.wait()  # a person at the form
        return _t(w.task_id, "completed")

    watcher, polls, events = _watcher(
        {"asks": ["input_required"], "other": ["working", "working", "working", "completed"]},
        on_input,
    )
    original_end = events.end

    def end(w: Watched) -> None:
        original_end(w)
        if w.task_id == "other":
            other_done.set()

    events.end = end  # type: ignore[method-assign]
    code = asyncio.run(watcher.run())
    assert code == 0 and asked == ["asks"]
    assert events.ends == [("other", "completed"), ("asks", "completed")]
    assert len(polls["asks"]) == 1 and len(polls["other"]) == 4  # not polled while asking


def test_on_input_not_answered_ends_input_required() -> None:
    async def on_input(w: Watched) -> Task | None:
        return None

    watcher, _, events = _watcher({"asks": ["input_required"]}, on_input)
    assert asyncio.run(watcher.run()) == 6
    assert events.ends == [("asks", "input_required")]


def test_timeout_while_asking_cancels_the_form() -> None:
    cancelled = asyncio.Event()

    async def on_input(w: Watched) -> Task | None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return None

    watcher, _, events = _watcher(
        {"asks": ["input_required"], "other": ["working"]}, on_input, timeout=5
    )
    assert asyncio.run(watcher.run()) == 7
    assert sorted(events.ends) == [("asks", "timeout"), ("other", "timeout")]
    assert cancelled.is_set()


# -- forms, without a terminal ---------------------------------------------------------------------


def test_validate_json_against_the_form() -> None:
    ok = forms.validate(RICH_SCHEMA, {"name": "Ann", "colour": "r", "copies": 3.0, "tags": ["b"]})
    assert ok["copies"] == 3 and isinstance(ok["copies"], int)
    bad = [
        ({"name": "Ann", "colour": "x", "copies": 1}, "colour: x is not one of r, g"),
        ({"name": "Ann", "colour": "r"}, "missing required field copies"),
        ({"name": "A", "colour": "r", "copies": 1}, "name: must be at least 2 characters"),
        ({"name": "Ann", "colour": "r", "copies": 1, "urgent": "yes"}, "urgent: must be true"),
        ({"name": "Ann", "colour": "r", "copies": 1.5}, "copies: must be a whole number"),
        ({"name": "Ann", "colour": "r", "copies": True}, "copies: must be a whole number"),
        ({"name": "Ann", "colour": "r", "copies": 1, "tags": ["c"]}, "tags: c is not one of"),
        ({"name": "Ann", "colour": "r", "copies": 1, "extra": 1}, "unknown field 'extra'"),
    ]
    for content, message in bad:
        with pytest.raises(forms.Invalid, match=re.escape(message)):
            forms.validate(RICH_SCHEMA, content)
    with pytest.raises(forms.Invalid):
        forms.validate(RICH_SCHEMA, ["not", "an", "object"])
    assert forms.text_content(TEXT_FORM, "blue") == {"text": "blue"}
    with pytest.raises(forms.Invalid, match="one text field"):
        forms.text_content(RICH_SCHEMA, "blue")


def test_hostile_schemas_are_read_leniently() -> None:
    schemas: list[Any] = [
        None,
        [],
        {"properties": []},
        {"properties": {"a": 5}, "required": "a"},
        {"properties": {"a": {"type": "string", "minLength": -1, "enum": "x"}}},
    ]
    for schema in schemas:
        form = forms.fields(schema)
        assert all(isinstance(f, forms.Field) for f in form)
    huge = {"properties": {"n": {"type": "number", "maximum": 10**400}}}
    (f,) = forms.fields(huge)
    assert forms.parse(f, "5") == 5
    with pytest.raises(forms.Invalid):
        forms.parse(f, "nan")
