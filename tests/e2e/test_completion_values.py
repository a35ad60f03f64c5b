"""Completion of values (`-o`, `-p`, `--category`, `--check`, `--until`, `schema NAME`, tool names
for `call`), through the real CLI as bash asks; tool names come from the task book, else from
one quick `tools/list` of server-everything, then kept."""

from __future__ import annotations

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
