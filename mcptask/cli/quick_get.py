"""A plain `mcptask get ID`, read and run before Typer is imported.

`get` is the command scripts run most, once per task, and a third of its start-up went to
importing Typer and building the command's parameters (bench/startup.py). `parse` reads the
words of a line that is a quick command's and nothing else: the command word (options before
it moved after it, `argv_order.hoist`), options of the table given as `--name VALUE`,
`--name=VALUE` or `-n VALUE` (a flag alone), and one argument (after `--` too). Any other line
(help, a word it does not know, a value that begins with `-`, an option Typer converts or
checks, two arguments...) is None: Typer reads it as ever, and says what is wrong. The table
is made from the Typer app (`cli/completion_gen.py`), and
`tests/unit/test_quick_get.py` holds what `parse` reads to what Typer reads."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from mcptask.cli import completion_table

if TYPE_CHECKING:
    from mcptask.session.context import Context
    from mcptask.session.targets import GlobalOptions


def parse(words: list[str], environ: Mapping[str, str]) -> tuple[str, dict[str, Any]] | None:
    """(the command, its parameters by name, as Typer would pass them) when `words` are a
    plain line of one of the quick commands, else None."""
    from mcptask.cli.argv_order import hoist

    args = hoist(words, completion_table.COMMON_OPTIONS)
    if not args or args[0] not in completion_table.QUICK_COMMANDS:
        return None
    argument, options = completion_table.QUICK_COMMANDS[args[0]]
    values: dict[str, Any] = {}
    arguments: list[str] = []
    i = 1
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            arguments += args[i:]
            break
        if not word.startswith("-"):
            arguments.append(word)
            continue
        name, eq, attached = word.partition("=") if word.startswith("--") else (word, "", "")
        row = options.get(name)
        if row is None:
            return None  # help, a word Typer knows better (`-uURL`, `-`), or a mistake
        param, kind = row[0], row[1]
        if kind == "flag":
            if eq:
                return None  # `--trace=1`: Typer's error
            values[param] = True
            continue
        if kind not in ("text", "texts"):
            return None
        if eq:
            value = attached
        elif i < len(args) and not args[i].startswith("-"):
            value = args[i]
            i += 1
        else:
            return None  # no value, or one that begins with `-`: Typer's reading
        if kind == "texts":
            values.setdefault(param, []).append(value)
        else:
            values[param] = value  # given twice: the last, as Typer takes it
    if len(arguments) != 1:
        return None
    for param, _, default, envvar in options.values():
        if param not in values:
            # as Typer: a variable's value when it is set and not empty, else the default
            given = environ.get(envvar) if envvar is not None else None
            values[param] = given if given else default
    values[argument] = arguments[0]
    return args[0], values


def run(words: list[str], environ: Mapping[str, str]) -> int | None:
    """The exit status of a quick command's plain line, run; None for any other line."""
    parsed = parse(words, environ)
    if parsed is None:
        return None
    command, values = parsed
    from mcptask.session.targets import GlobalOptions

    options = completion_table.QUICK_COMMANDS[command][1]
    common = {options[word][0] for word in completion_table.COMMON_OPTIONS}
    g = GlobalOptions.from_params({name: values.pop(name) for name in common})
    return _RUNS[command](g, values)


def _get(g: GlobalOptions, values: dict[str, Any]) -> int:
    from mcptask.cli.runner import run_command

    return run_command(g, get_run(values["task_id"], values["history"]), command="get", **GET)


#: how `get` runs (`runner.run_command`'s settings): one request at a time, never waiting
GET: dict[str, Any] = {"one_at_a_time": True, "loop_free": True}


def get_run(task_id: str, history: int | None) -> Callable[[Context], Coroutine[Any, Any, int]]:
    """`mcptask get`'s run, given its context: what the Typer command and the quick path
    both run."""
    from mcptask.commands.get import GetOptions, run_get

    return lambda ctx: run_get(GetOptions(task_id, history=history), ctx)


#: what runs each of `completion_table.QUICK_COMMANDS`, given its own parameters
_RUNS = {"get": _get}
