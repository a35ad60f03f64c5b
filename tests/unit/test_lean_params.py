"""`cli/lean_params.py`: a command's parameters read without pydantic adapters where none is
needed give the values Typer's own coercion gives, and errors stay Typer's."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from mcptask.cli import lean_params
from mcptask.cli.app import _app_for
from mcptask.cli.framework import click_exceptions

ClickUsageError = click_exceptions.UsageError


def _parse(words: list[str], *, lean: bool) -> dict[str, Any] | str:
    app = _app_for(words)
    group = typer.main.get_command(app)
    command = group.get_command(None, words[0])  # type: ignore[attr-defined]
    assert command is not None
    if not lean:
        command.parse_args = command.__class__.__mro__[1].parse_args.__get__(command)
    try:
        ctx = command.make_context(words[0], list(words[1:]), resilient_parsing=False)
    except ClickUsageError as exc:
        return f"{type(exc).__name__}: {exc.format_message()}"
    finally:
        made = any(type(p).__name__.startswith("Lean") for p in command.params)
        assert made == lean
    return dict(ctx.params)


@pytest.mark.parametrize(
    "words",
    [
        ["get", "abc", "--url", "http://x/mcp", "-o", "json"],
        ["get", "abc", "--session", "s", "-H", "A: b", "-H", "C: d"],
        ["watch", "a", "b", "--interval", "2", "--timeout", "3", "--until", "completed"],
        ["watch", "a", "--timeout", "soon"],
        ["list", "--local"],
        ["result", "abc", "--wait"],
        ["get"],
    ],
)
def test_lean_parameters_read_what_typer_reads(words: list[str]) -> None:
    typer_way = _parse(words, lean=False)
    lean_way = _parse(words, lean=True)
    assert lean_way == typer_way


def test_a_parameter_is_made_lean_once() -> None:
    command = typer.main.get_command(_app_for(["get"])).get_command(None, "get")  # type: ignore[attr-defined]
    lean_params.lean(command.params)
    classes = [type(p) for p in command.params]
    lean_params.lean(command.params)
    assert [type(p) for p in command.params] == classes
    assert all(
        c.__name__.startswith("Lean") for c in classes if c.__module__ != "typer._click.core"
    )


def _commands() -> list[str]:
    from mcptask.cli.app import app

    group = typer.main.get_command(app)
    return sorted(
        name
        for name, command in group.commands.items()  # type: ignore[attr-defined]
        if not hasattr(command, "commands") and command.params  # groups: their commands'
    )


def _typed(parsed: dict[str, Any] | str) -> Any:
    if isinstance(parsed, str):
        return parsed
    return {k: (type(v).__name__, v) for k, v in parsed.items()}


@pytest.mark.parametrize("command", _commands())
def test_every_command_s_defaults_are_read_as_typer_reads_them(command: str) -> None:
    """Each command with nothing given but what it needs: every default (numbers too: an
    int stays an int) and the words of a repeated text parameter, of the same type."""
    for words in ([command], [command, "abc"], [command, "abc", "def", "-H", "A: b"]):
        assert _typed(_parse(words, lean=True)) == _typed(_parse(words, lean=False)), words


@pytest.mark.parametrize(
    "words",
    [
        ["watch", "a", "b", "c"],
        ["watch", "--all"],
        ["watch", "a", "--push-port", "8080"],
        ["watch", "a", "--push-port", "99999999"],
        ["list", "--status", "working", "--status", "failed"],
        ["call", "tool", "a=1", "b=2"],
    ],
)
def test_repeated_words_and_numbers_are_read_as_typer_reads_them(words: list[str]) -> None:
    assert _typed(_parse(words, lean=True)) == _typed(_parse(words, lean=False))
