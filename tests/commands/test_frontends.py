"""Flags -> options without running anything (gh's `NewCmdX(f, runF)` table tests): each
command's front-end in `cli/app.py` is invoked with a command line; `execute` is replaced by a
stand-in that keeps the `GlobalOptions`, the run settings and the options object the run
function was given (read from the coroutine it returned, which is then closed unrun)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from typer.testing import CliRunner

from mcptask.cli import app as app_module
from mcptask.cli.argv_order import hoist
from mcptask.commands._follow import FollowUp
from mcptask.commands.answer import AnswerOptions
from mcptask.commands.call import CallOptions, PlainAnswers
from mcptask.commands.cancel import CancelOptions
from mcptask.commands.check import CheckOptions
from mcptask.commands.get import GetOptions
from mcptask.commands.list import ListOptions
from mcptask.commands.result import ResultOptions
from mcptask.commands.send import SendOptions
from mcptask.commands.watch import WatchOptions
from mcptask.session.targets import GlobalOptions


@dataclass
class Captured:
    g: GlobalOptions | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    opts: Any = None
    runs: str | None = None


def parse(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> Captured:
    got = Captured()

    def execute(g: GlobalOptions, make: Any, **settings: Any) -> None:
        coro = make(object())
        got.g, got.settings = g, settings
        got.opts = coro.cr_frame.f_locals["opts"]
        got.runs = coro.cr_code.co_name
        coro.close()

    monkeypatch.setattr(app_module, "execute", execute)
    result = CliRunner().invoke(app_module.app, hoist(argv))
    assert result.exit_code == 0, result.output
    return got


CASES: list[tuple[list[str], Any, dict[str, Any]]] = [
    (["get", "T1"], GetOptions("T1"), {"one_at_a_time": True, "loop_free": True}),
    (["get", "T1", "--history", "3"], GetOptions("T1", history=3), {}),
    (["get", "--", "-dashed-id"], GetOptions("-dashed-id"), {}),
    (["watch", "A", "B"], WatchOptions(["A", "B"]), {"streaming": True}),
    (
        ["watch", "--all", "--until", "input_required", "--interval", "2", "--no-push"],
        WatchOptions([], interval=2.0, all_tasks=True, until="input_required", push=False),
        {},
    ),
    (
        ["watch", "A", "--result", "--timeout", "30"],
        WatchOptions(["A"], timeout=30.0, want_result=True),
        {},
    ),
    (["result", "T"], ResultOptions("T"), {"one_at_a_time": True}),
    (["result", "T", "--no-wait"], ResultOptions("T", wait=False), {}),
    (["list", "--local"], ListOptions(local=True), {"loop_free": True}),
    (["cancel", "T"], CancelOptions("T"), {"one_at_a_time": True}),
    (["answer", "T", "--json", '{"a": 1}'], AnswerOptions("T", json='{"a": 1}'), {}),
    (["answer", "T", "--text", "yes", "--key", "k"], AnswerOptions("T", text="yes", key="k"), {}),
    (["answer", "T", "--decline"], AnswerOptions("T", decline=True), {}),
    (
        ["call", "echo", "a=1", "b:=2"],
        CallOptions("echo", ["a=1", "b:=2"]),
        {"streaming": False},
    ),
    (
        ["call", "slow", "--watch", "--result", "--ttl", "60000", "--task"],
        CallOptions("slow", ttl=60000, task=True, then=FollowUp(watch=True, want_result=True)),
        {"streaming": True},
    ),
    (
        ["call", "ask", "--no-task", "--defaults"],
        CallOptions("ask", task=False, answers=PlainAnswers(defaults=True)),
        {},
    ),
    (["send", "hello", "--watch"], SendOptions("hello", then=FollowUp(watch=True)), {}),
    (
        ["check", "--check", "get", "--category", "cancel", "--task-timeout", "5"],
        CheckOptions(checks=["get"], categories=["cancel"], task_timeout=5.0),
        {},
    ),
]


@pytest.mark.parametrize(
    ("argv", "expected", "settings"), CASES, ids=[" ".join(c[0]) for c in CASES]
)
def test_flags_make_options(
    argv: list[str], expected: Any, settings: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    got = parse(argv, monkeypatch)
    assert got.opts == expected
    assert got.runs == f"run_{argv[0]}"
    for key, value in settings.items():
        assert got.settings.get(key, False) == value, key


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["get", "T"], GlobalOptions()),
        (
            ["--url", "http://h/mcp", "-o", "json", "get", "T", "--trace"],
            GlobalOptions(url="http://h/mcp", output="json", trace=True),
        ),
        (
            ["get", "T", "-s", "prod", "-p", "a2a-1.0", "-H", "X-A: 1", "-H", "X-B: 2"],
            GlobalOptions(server="prod", protocol="a2a-1.0", headers=["X-A: 1", "X-B: 2"]),
        ),
        (
            ["-uhttp://h/a2a", "get", "T", "--context-id", "c", "--jq", ".status"],
            GlobalOptions(url="http://h/a2a", context_id="c", jq=".status"),
        ),
        (
            ["get", "T", "--stdio", "srv --x", "--session", "s1", "--token-file", "tok"],
            GlobalOptions(stdio="srv --x", session="s1", token_file="tok"),
        ),
        (
            ["get", "T", "--login", "--client-id", "cid", "--client-secret-file", "sec"],
            GlobalOptions(login=True, client_id="cid", client_secret_file="sec"),
        ),
    ],
)
def test_flags_make_global_options(
    argv: list[str], expected: GlobalOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCPTASK_PROTOCOL", raising=False)
    monkeypatch.delenv("MCPTASK_OUTPUT", raising=False)
    assert parse(argv, monkeypatch).g == expected


def test_environment_defaults_reach_global_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPTASK_PROTOCOL", "mcp-2026-07-28")
    monkeypatch.setenv("MCPTASK_OUTPUT", "ndjson")
    g = parse(["get", "T"], monkeypatch).g
    assert g is not None and (g.protocol, g.output) == ("mcp-2026-07-28", "ndjson")
