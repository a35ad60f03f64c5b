"""Completion of values (`-o`, `-p`, `--category`, `--check`, `--until`, `schema NAME`, tool names
for `call`), through the real CLI as bash asks; tool names come from the task book, else from
one quick `tools/list` of server-everything, then kept."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from mcptask.check.engine import categories
from mcptask.cli.complete import OUTPUT_MODES
from mcptask.output.console import MODES
from mcptask.protocols.registry import CHOICES
from mcptask.state.taskbook import MAX_TOOLS_KEPT, TaskBook

from conftest import RunCli
from servers.common import ServerProcess


def test_the_task_book_keeps_an_endpoints_tools(tmp_path: Path) -> None:
    book = TaskBook(tmp_path / "tasks.json")
    assert book.tools("http://127.0.0.1:1/mcp") == []
    book.remember_tools("http://127.0.0.1:1/mcp/", [("echo", "forbidden"), ("slow", "optional")])
    assert book.tools("http://127.0.0.1:1/mcp") == [("echo", "forbidden"), ("slow", "optional")]
    book.remember_tools("http://127.0.0.1:1/mcp", [(f"t{i}", "") for i in range(600)])
    assert len(book.tools("http://127.0.0.1:1/mcp")) == MAX_TOOLS_KEPT


# -- through the real CLI, as bash asks --------------------------------------------------------


def complete(run_cli: RunCli, line: str, env: dict[str, str] | None = None) -> list[str]:
    words = shlex.split(line) + ([""] if line.endswith(" ") else [])
    r = run_cli(
        env={
            "_MCPTASK_COMPLETE": "complete_bash",
            "COMP_WORDS": line,
            "COMP_CWORD": str(len(words) - 1),
            **(env or {}),
        }
    )
    assert r.code == 0 and r.stderr == "", r.stderr
    return [w for w in r.stdout.splitlines() if w]


@pytest.mark.parametrize("command", ["get", "watch", "list", "check"])
def test_output_modes_complete(run_cli: RunCli, command: str) -> None:
    assert complete(run_cli, f"mcptask {command} -o ") == ["auto", "pretty", "json", "ndjson"]
    assert complete(run_cli, f"mcptask {command} --output nd") == ["ndjson"]


def test_the_offered_modes_are_the_renderers() -> None:
    assert tuple(OUTPUT_MODES) == MODES


def test_protocols_categories_checks_statuses_and_schemas_complete(run_cli: RunCli) -> None:
    assert complete(run_cli, "mcptask list -p mcp") == ["mcp-2025-11-25", "mcp-2026-07-28"]
    assert set(complete(run_cli, "mcptask list -p ")) == set(CHOICES)
    assert set(complete(run_cli, "mcptask check --category ")) == set(categories())
    assert complete(run_cli, "mcptask check --category ca") == ["capability", "cancel", "card"]
    assert "mcp2025.result.waits" in complete(run_cli, "mcptask check --check mcp2025.res")
    assert complete(run_cli, "mcptask watch --until input") == ["input_required"]
    assert complete(run_cli, "mcptask watch --until working,c") == [
        "working,cancelled",
        "working,completed",
    ]
    assert complete(run_cli, "mcptask schema watch") == ["watch-event", "watch-summary"]


def test_tool_names_complete_for_call(
    run_cli: RunCli, everything_server: ServerProcess, state_dir: Path
) -> None:
    url = everything_server.url
    assert complete(run_cli, "mcptask call ") == []  # no target: nothing to ask
    # the first TAB asks the server once and keeps the answer in the task book
    offered = complete(run_cli, f"mcptask call --url {url} ")
    assert "echo" in offered and "simulate-research-query" in offered
    assert ("simulate-research-query", "required") in TaskBook(state_dir / "tasks.json").tools(url)
    assert complete(run_cli, f"mcptask call --url {url} simulate") == ["simulate-research-query"]
    # an unreachable target offers nothing, quickly
    assert complete(run_cli, "mcptask call --url http://127.0.0.1:9/mcp ") == []


# -- TAB on a task id, answered before Typer (mcptask/cli/quick_complete.py) -------------------


LINES = [
    "mcptask get ",
    "mcptask get a",
    "mcptask watch alpha-222 ",
    "mcptask watch --interval 2 --result b",
    "mcptask result --url http://127.0.0.1:3001/mcp ",
    "mcptask get -o json --trace ",
    "mcptask get -o ",
    "mcptask get --url ",
    "mcptask get -",
    "mcptask get alpha-111 ",
    "mcptask cancel -- ",
    "mcptask answer --text 'hi there' al",
    "mcptask list ",
    "mcptask ",
    "mcptask get --nope ",
    "mcptask get 'unclosed ",
]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish-get-args", "fish-is-args"])
def test_the_quick_path_answers_as_typer_does(
    shell: str, state_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcptask.cli import main, quick_complete

    def rec(status: str, seen: str) -> dict[str, str]:
        return {"status": status, "firstSeenAt": seen, "lastSeenAt": seen}

    local = "http://127.0.0.1:3001/mcp"
    data = {
        "version": 1,
        "endpoints": {
            local: {
                "tasks": {
                    "alpha-111": rec("working", "2026-01-01T10:00:00Z"),
                    "alpha-222": rec("completed", "2026-01-01T12:00:00Z"),
                }
            },
            "http://127.0.0.1:3002/": {"tasks": {"beta-333": rec("failed", "2026-01-01T11:00")}},
        },
    }
    (state_dir / "tasks.json").write_text(json.dumps(data))
    for name in [k for k in os.environ if k.startswith("MCPTASK_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("MCPTASK_STATE_DIR", str(state_dir))
    monkeypatch.setenv("MCPTASK_CONFIG", str(state_dir / "no-config.toml"))
    name, _, action = shell.partition("-")
    monkeypatch.setenv("_MCPTASK_COMPLETE", f"complete_{name}")
    if action:
        monkeypatch.setenv("_TYPER_COMPLETE_FISH_ACTION", action)
    answered = 0
    for line in LINES:
        if name == "bash":
            words = shlex.split(line.replace("'unclosed ", "unclosed")) + (
                [""] if line.endswith(" ") else []
            )
            monkeypatch.setenv("COMP_WORDS", line)
            monkeypatch.setenv("COMP_CWORD", str(len(words) - 1))
        else:
            monkeypatch.setenv("_TYPER_COMPLETE_ARGS", line)
        quick = quick_complete.answer()
        answered += quick is not None

        def typer_says() -> tuple[str, int]:
            with monkeypatch.context() as m:
                m.setattr(quick_complete, "answer", lambda *a, **k: None)
                try:
                    code = main([])
                except SystemExit as exc:  # fish is-args exits from inside Typer
                    code = int(exc.code or 0)
            return capsys.readouterr().out, code

        capsys.readouterr()
        expected = typer_says()
        if quick is not None:
            text, code = quick
            assert ((text + "\n") if text is not None else "", code) == expected, line
        # and through main, whichever path answers
        try:
            code = main([])
        except SystemExit as exc:
            code = int(exc.code or 0)
        assert (capsys.readouterr().out, code) == expected, line
    assert answered >= 6  # the task-id lines were answered quickly


def test_task_id_candidates_are_capped_most_recent_first(run_cli: RunCli, state_dir: Path) -> None:
    from mcptask.cli.quick_complete import MAX_CANDIDATES

    url = "http://127.0.0.1:3001/mcp"
    tasks = {
        f"t{i:04d}": {
            "status": "working",
            "lastSeenAt": f"2026-01-01T10:{i // 60:02d}:{i % 60:02d}Z",
        }
        for i in range(MAX_CANDIDATES + 50)
    }
    data = {"version": 1, "endpoints": {url: {"tasks": tasks}}}
    (state_dir / "tasks.json").write_text(json.dumps(data))
    offered = complete(run_cli, "mcptask watch ")
    newest = sorted(tasks, reverse=True)
    assert offered == newest[:MAX_CANDIDATES]
    assert complete(run_cli, "mcptask get t000") == [f"t000{i}" for i in range(9, -1, -1)]


# -- through a real bash in a real terminal (tmux) ----------------------------------------------


@pytest.mark.timeout(120)
def test_bash_completes_after_a_url_with_colons(
    run_cli: RunCli, everything_server: ServerProcess, state_dir: Path, tmp_path: Path
) -> None:
    """bash splits words at `:` (COMP_WORDBREAKS): the script joins them again, so a tool name
    completes after `--url http://127.0.0.1:PORT/mcp` (issue 28, item 11)."""
    import stat
    import sys

    from test_live_view_layout import ROOT, Tmux, wait_screen

    from conftest import clean_env

    url = everything_server.url
    assert "get-sum" in complete(run_cli, f"mcptask call --url {url} get-s")  # fed whole words
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "mcptask"
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m mcptask "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    tmux = Tmux(120)
    try:
        config = tmp_path / "config.toml"
        config.write_text(f'[servers."prod:eu"]\nurl = "{url}"\n[servers.other]\nurl = "{url}"\n')
        env = clean_env(state_dir, {"PYTHONPATH": str(ROOT), "MCPTASK_CONFIG": str(config)})
        tmux.start(["bash", "--norc", "--noprofile"], env)
        script = ROOT / "completions" / "mcptask.bash"
        setup = f"PS1='$ '; PATH={bin_dir}:$PATH; source {script}; echo ready:$COMP_WORDBREAKS"
        tmux.run("send-keys", "-t", "t", setup, "Enter")
        wait_screen(tmux, lambda s: any(ln.startswith("ready:") and ":" in ln for ln in s), "ready")
        tmux.run("send-keys", "-t", "t", f"mcptask call --url {url} get-su", "Tab")
        line = f"mcptask call --url {url} get-sum "
        wait_screen(tmux, lambda s: any(ln.endswith(line.rstrip()) for ln in s), "completed", 60)
        # a word with a `:` in it: bash keeps what comes before its last `:`, the candidate
        # brings only the rest (never `-s prod:prod:eu`)
        tmux.run("send-keys", "-t", "t", "C-u", "mcptask get -s prod:e", "Tab")
        done = "mcptask get -s prod:eu"
        wait_screen(tmux, lambda s: any(ln.rstrip().endswith(done) for ln in s), "ltrim", 60)
        assert not any("prod:prod" in ln for ln in tmux.screen())
    finally:
        tmux.stop()
