"""Writes `cli/completion_table.py`, the options a TAB on a task id needs, from the Typer app.

`cli/quick_complete.py` answers a TAB before Typer is imported, so it cannot read the app's
parameters when it runs; it reads this module's output instead, made from the app itself:

    python -m mcptask.cli.completion_gen          # rewrite mcptask/cli/completion_table.py
    python -m mcptask.cli.completion_gen --check  # exit 1 when the file is not what it makes

`tests/unit/test_cli_options.py` fails while the file is out of date (a command's option added
and the table not made again), and `scripts/test` runs it, so no hand copy can drift.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TABLE = Path(__file__).with_name("completion_table.py")

#: the arguments that are task ids
TASK_ID_ARGUMENTS = ("task_id", "task_ids")


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
    return "\n".join(lines) + "\n"


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
