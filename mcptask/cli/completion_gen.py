"""Writes `cli/completion_table.py` from the Typer app: the options a TAB on a task id needs,
and the parameters of the commands `cli/quick_get.py` runs without Typer.

`cli/quick_complete.py` answers a TAB, and `cli/quick_get.py` reads a plain `get`'s words,
before Typer is imported, so neither can read the app's parameters when it runs; they read this
module's output instead, made from the app itself:

    python -m mcptask.cli.completion_gen          # rewrite mcptask/cli/completion_table.py
    python -m mcptask.cli.completion_gen --check  # exit 1 when the file is not what it makes

`tests/unit/test_cli_options.py` fails while the file is out of date (a command's option added
and the table not made again), and `scripts/test` runs it, so no hand copy can drift.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

TABLE = Path(__file__).with_name("completion_table.py")

#: the arguments that are task ids
TASK_ID_ARGUMENTS = ("task_id", "task_ids")

#: the commands `cli/quick_get.py` may run before Typer is imported
QUICK_COMMANDS = ("get",)

#: how `cli/quick_get.py` reads a parameter: `text` (one word, kept as given), `texts` (a word
#: each time the option is given, in order), `flag` (True when given), `other` (anything
#: Typer converts or checks: the quick path leaves such a line to Typer)
QuickParams = dict[str, tuple[str, str, Any, str | None]]


class NotQuick(ValueError):
    """A command of `QUICK_COMMANDS` has something `cli/quick_get.py` cannot do as Typer does
    when the line does not name it (a callback, a prompt, a default Typer converts...): the
    table is not made, and the command must leave the list, or the quick path learn it."""


def quick_tables() -> dict[str, tuple[str, QuickParams]]:
    """For each of `QUICK_COMMANDS`: (its one argument, a word; each option word -> (the
    parameter's name, how it is read, its default, the environment variable Typer reads it
    from or None)). `NotQuick` for a command whose line Typer may read otherwise even where
    the quick path takes it: a parameter left out must come to the command as its default,
    or as its variable's text, untouched, with nothing run for it."""
    from typer.main import get_command

    from mcptask.cli.app import _app_for, app

    if set(app.info.context_settings or {}) - {"help_option_names"}:
        raise NotQuick(f"the app's context settings: {sorted(app.info.context_settings or {})}")
    out: dict[str, tuple[str, QuickParams]] = {}
    for name in QUICK_COMMANDS:
        command = get_command(_app_for([name])).commands[name]  # type: ignore[attr-defined]
        if command.deprecated or command.context_settings:
            raise NotQuick(f"{name}: deprecated, or context settings of its own")
        arguments = [p for p in command.params if p.param_type_name == "argument"]
        if not (
            len(arguments) == 1
            and arguments[0].nargs == 1
            and arguments[0].required
            and arguments[0].name is not None
            and _kind(arguments[0]) == "text"
        ):
            raise NotQuick(f"{name}: not one required word of text for its argument")
        options: QuickParams = {}
        for p in command.params:
            if p.param_type_name == "argument":
                continue
            kind = _kind(p)
            envvar = p.envvar if isinstance(p.envvar, str) else None
            if p.name is None or p.secondary_opts or (p.envvar is not None and envvar is None):
                raise NotQuick(f"{name}: {p.opts}: no name, a secondary flag or many variables")
            if envvar is not None and kind != "text":
                raise NotQuick(f"{name}: {p.opts}: a variable Typer would convert ({envvar})")
            if kind == "other" and (
                p.default is not None or not _left_alone(p) or getattr(p, "prompt", None)
            ):
                raise NotQuick(f"{name}: {p.opts}: Typer does something when it is left out")
            for word in p.opts:
                options[word] = (p.name, kind, p.default, envvar)
        out[name] = (arguments[0].name, options)
    return out


def _left_alone(p: Any) -> bool:
    """Nothing is run for the parameter before the command (no callback, not eager, not
    required) and it reaches the command."""
    return p.callback is None and not p.is_eager and not p.required and p.expose_value


def _plain(p: Any) -> bool:
    """Typer passes the word on as it is: text of no parser or type of its own, no callback,
    nothing done before the command runs."""
    info = p.type_descriptor.parameter_info
    return (
        info.parser is None
        and getattr(info, "click_type", None) is None
        and p.callback is None
        and not p.is_eager
        and p.expose_value
        and not getattr(p, "prompt", None)
    )


def _kind(p: Any) -> str:
    annotation = p.type_descriptor.annotation
    if not _plain(p):
        return "other"
    if getattr(p, "is_flag", False):
        flag = annotation is bool and p.default is False and not getattr(p, "count", False)
        return "flag" if flag else "other"
    if p.multiple and annotation == list[str] and p.default is None and p.nargs == 1:
        return "texts"
    if not p.multiple and annotation is str and p.nargs == 1 and isinstance(p.default, str | None):
        return "text"
    return "other"


def tables() -> tuple[dict[str, bool], dict[str, tuple[int | None, list[str], list[str]]]]:
    """(the common options, name -> takes a value; each command that takes task ids -> (how
    many, None for any; its own options that take a value; those that do not))."""
    from typer.main import get_command

    from mcptask.cli.app import _app_for, app
    from mcptask.cli.options import COMMON_OPTIONS

    common = set(COMMON_OPTIONS)
    commands: dict[str, tuple[int | None, list[str], list[str]]] = {}
    for info in app.registered_commands:
        name = info.name or (info.callback.__name__ if info.callback else "")
        command = get_command(_app_for([name])).commands[name]  # type: ignore[attr-defined]
        values: set[str] = set()
        flags: set[str] = set()
        ids: int | None = 0
        for p in command.params:
            if p.param_type_name == "argument":
                if p.name in TASK_ID_ARGUMENTS:
                    ids = None if p.nargs == -1 else p.nargs
                continue
            names = set(p.opts) | set(p.secondary_opts)
            (flags if p.is_flag else values).update(names - common)
        if ids != 0:
            commands[name] = (ids, sorted(values), sorted(flags))
    return dict(COMMON_OPTIONS), commands


def render() -> str:
    """The module's text, as `ruff format` leaves it."""
    common, commands = tables()
    q = json.dumps
    lines = [
        '"""Made by `python -m mcptask.cli.completion_gen` from the Typer app: do not edit.',
        "",
        "What `cli/quick_complete.py` needs to answer a TAB on a task id without Typer: the common",
        "options (name -> takes a value) and, for each command that takes task ids, how many (None:",
        'any), its own options that take a value and those that do not."""',
        "",
        "COMMON_OPTIONS: dict[str, bool] = {",
        *(f"    {q(k)}: {v!r}," for k, v in common.items()),
        "}",
        "",
        "TASK_ID_COMMANDS: dict[str, tuple[int | None, tuple[str, ...], tuple[str, ...]]] = {",
    ]
    for name, (ids, values, flags) in commands.items():
        lines += [f"    {q(name)}: (", f"        {ids!r},"]
        for group in (values, flags):
            if len(group) > 1:
                lines += ["        (", *(f"            {q(x)}," for x in group), "        ),"]
            else:
                lines.append("        (" + "".join(f"{q(x)}," for x in group) + "),")
        lines.append("    ),")
    lines.append("}")
    lines += [
        "",
        "#: for each command `cli/quick_get.py` runs before Typer: (its one argument; each option",
        "#: word -> (its parameter, how it is read, its default, the environment variable Typer",
        "#: reads it from))",
        "QuickRow = tuple[str, str, str | bool | None, str | None]",
        "QUICK_COMMANDS: dict[str, tuple[str, dict[str, QuickRow]]] = {",
    ]
    for name, (argument, options) in quick_tables().items():
        lines += [f"    {q(name)}: (", f"        {q(argument)},", "        {"]
        for word, (param, kind, default, envvar) in options.items():
            row = ", ".join(_literal(x) for x in (param, kind, default, envvar))
            lines.append(f"            {q(word)}: ({row}),")
        lines += ["        },", "    ),"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _literal(value: Any) -> str:
    """A Python literal of `value`, as `ruff format` writes it (text in double quotes)."""
    return json.dumps(value) if isinstance(value, str) else repr(value)


def main(argv: list[str]) -> int:
    """Write the table (`--check`: only compare; exit 1, said on stderr, when it differs)."""
    from mcptask.errors import ExitCode

    text = render()
    if "--check" in argv:
        if TABLE.read_text(encoding="utf-8") != text:
            sys.stderr.write(
                f"{TABLE} is out of date: run `python -m mcptask.cli.completion_gen`\n"
            )
            return ExitCode.INTERNAL
        return ExitCode.OK
    TABLE.write_text(text, encoding="utf-8")
    return ExitCode.OK


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
