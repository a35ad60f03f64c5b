"""Help that teaches: every command's `--help` has a description and an `Examples:` section of
real command lines, placeholders are words (URL, TASK_ID), never Python types; `mcptask --help`
lists every command under its group with its whole summary."""

from __future__ import annotations

import re

import pytest
import typer

from mcptask.cli.app import app
from mcptask.cli.help_data import COMMANDS, GROUPS

from conftest import RunCli

#: what Typer shows when a parameter has no word: `<str>`, `<list[str]>`, `{task_id}`
PYTHON_TYPES = re.compile(r"<(str|int|float|bool|list|dict|path|text)\b|list\[|\{[a-z_]+\}")


def command_names() -> list[str]:
    """Every command `mcptask --help` lists (a command with subcommands, `auth`, too)."""
    names = [
        info.name or (info.callback.__name__ if info.callback else "")
        for info in app.registered_commands
    ]
    return names + [group_name(g) for g in app.registered_groups]


def group_name(group: typer.models.TyperInfo) -> str:
    return str(group.name or (group.typer_instance.info.name if group.typer_instance else ""))


def subcommand_names() -> list[str]:
    """`auth login` and the like."""
    return [
        f"{group_name(g)} {info.name}"
        for g in app.registered_groups
        if g.typer_instance
        for info in g.typer_instance.registered_commands
    ]


def test_every_command_is_described() -> None:
    assert set(command_names()) | set(subcommand_names()) <= set(COMMANDS)


@pytest.mark.parametrize("command", command_names() + subcommand_names())
def test_each_commands_help_teaches(run_cli: RunCli, command: str) -> None:
    r = run_cli(*command.split(), "--help", env={"COLUMNS": "100"})
    assert r.code == 0, r.stderr
    text = r.stdout
    assert not PYTHON_TYPES.search(text), PYTHON_TYPES.search(text)
    usage, _, rest = text.partition("\n\n")
    assert usage.startswith(f"Usage: mcptask {command} ")
    description = rest.split("\n\n")[0]
    assert len(description.split()) >= 15, description  # a paragraph, not a phrase
    assert "\nExamples:\n" in text
    examples = [ln.strip() for ln in text.split("\nExamples:\n")[1].splitlines()]
    lines = [ln[2:] for ln in examples if ln.startswith("$ ")]
    assert 2 <= len(lines) <= 5, examples
    assert all("mcptask " in ln for ln in lines), lines
    assert lines[0].startswith(f"mcptask {command}"), lines
    # placeholders are words
    for line in text.splitlines():
        m = re.match(r"  (?:-\w, )?--[\w-]+ (\S+) {2,}", line)
        if m:
            assert m.group(1).upper() == m.group(1), line


def test_the_root_help_groups_every_command_with_its_whole_summary(run_cli: RunCli) -> None:
    r = run_cli("--help", env={"COLUMNS": "80"})
    assert r.code == 0, r.stderr
    text = r.stdout
    found_groups = [g for g in GROUPS if f"\n{g}:\n" in text]
    assert found_groups[:3] == ["Follow tasks", "Start tasks", "Servers"]
    for name in command_names():
        summary = COMMANDS[name].summary
        assert re.search(rf"\n  {re.escape(name)} +{re.escape(summary)}\n", text), name
    commands = text.split("\nFollow tasks:\n")[1].split("\nExamples:\n")[0]
    assert "..." not in commands  # no summary cut short
    assert "\nExamples:\n" in text
    assert all(len(line) <= 80 for line in text.split("\nExamples:\n")[0].splitlines())


def test_the_placeholder_words(run_cli: RunCli) -> None:
    text = run_cli("watch", "--help-all").stdout
    for shown in (
        "-u, --url URL",
        "-s, --server NAME",
        "--config PATH",
        "-H, --header 'NAME: VALUE'",
        "--token-file PATH",
        "-o, --output MODE",
        "--interval SECONDS",
        "--until STATUS[,...]",
        "--jq EXPR",
        "[TASK_ID]...",
    ):
        assert shown in text, shown
    assert "Usage: mcptask get [OPTIONS] TASK_ID\n" in run_cli("get", "--help").stdout


def test_the_shared_options_have_their_own_panels_after_the_commands_own(run_cli: RunCli) -> None:
    out = run_cli("watch", "--help-all").stdout
    sections = [ln.rstrip(":") for ln in out.splitlines() if ln and not ln.startswith(" ")]
    body = sections[sections.index("Arguments") :]
    assert body[:5] == [
        "Arguments",
        "Options",
        "Target options",
        "Authentication options",
        "Output options",
    ]
    own = out.split("\nOptions:\n", 1)[1].split("\n\n", 1)[0]
    assert "--until" in own and "--bell" in own and "--url" not in own and "--jq" not in own


@pytest.mark.parametrize("command", ["watch", "get", "call", "push set", "list"])
def test_the_shared_options_fold_under_one_heading(run_cli: RunCli, command: str) -> None:
    """Issue 38: `--help` shows the command's own flags, then the shared ones folded (a line
    of names per panel), so at 80x24 the command's own options stay on the screen; the full
    list is a flag away (`--help-all`)."""
    out = run_cli(*command.split(), "--help", env={"COLUMNS": "80"}).stdout
    sections = [ln.rstrip(":") for ln in out.splitlines() if ln and not ln.startswith(" ")]
    folded = "Global options (every command's; `--help-all` explains them)"
    assert sections[-2:] == [folded, "Examples"], sections
    block = out.split(folded + ":\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(block) <= 6, block
    assert block[0].split()[:2] == ["Target", "-u/--url,"]
    assert any(ln.split()[0] == "Output" and "-o/--output" in ln for ln in block), block
    assert "Target options" not in out and "The endpoint:" not in out
    full = run_cli(*command.split(), "--help-all", env={"COLUMNS": "80"}).stdout
    assert "Target options:" in full and "Output options:" in full and folded not in full
    assert len(full.splitlines()) > len(out.splitlines()) + 20
    # watch at 80 columns: the command's own options and the examples in 60 lines or fewer
    assert len(out.splitlines()) <= 60, len(out.splitlines())


@pytest.mark.parametrize("sub", ["login", "logout", "status", "token"])
def test_auth_lists_only_what_applies(run_cli: RunCli, sub: str) -> None:
    out = run_cli("auth", sub, "--help-all").stdout
    for absent in ("--stdio", "--session", "--context-id", "--protocol", "--login", "agno", "A2A"):
        assert absent not in out, (absent, out)
    assert "--url URL" in out and "The MCP server's endpoint" in out
    folded = run_cli("auth", sub, "--help").stdout
    assert "-u/--url" in folded and "--stdio" not in folded


def test_send_does_not_say_agno_needs_a_context(run_cli: RunCli) -> None:
    out = run_cli("send", "--help").stdout
    assert "Agno agents need" not in out and "Agno requires" not in out


@pytest.mark.parametrize("width", ["60", "100", "160"])
@pytest.mark.parametrize("args", [["--help"], ["-h"], []])
def test_the_root_help_is_the_whole_apps_without_building_every_parameter(
    args: list[str], width: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`mcptask --help` lists the commands from stand-ins without their parameters (start-up:
    bench/startup.py); what it prints is exactly what the whole app prints."""
    from mcptask.cli.app import _app_for, _listing_app
    from mcptask.cli.framework import click_exceptions as click_exc

    monkeypatch.setenv("COLUMNS", width)
    monkeypatch.setenv("NO_COLOR", "1")
    assert _app_for(args) is not app

    def shown(which: typer.Typer) -> str:
        try:
            which(args=list(args), prog_name="mcptask", standalone_mode=False)
        except (click_exc.NoArgsIsHelpError, click_exc.UsageError) as exc:
            exc.show()
        out = capsys.readouterr()
        return out.out + out.err

    listed = shown(_listing_app())
    assert listed == shown(app)
    assert "Usage: mcptask" in listed and "watch" in listed
