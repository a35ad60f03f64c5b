"""TAB on a task id, answered before Typer is imported.

The shell runs mcptask on every TAB. Through Typer that costs about what a whole `get` costs
(importing Typer, building the command's parameters), most of it for nothing when the word to
complete is a task id: the answer comes from the task book alone. `answer()` reads the words the
shell sends (bash, zsh, fish), and when they put the cursor on a command's task id it answers
in the shell's format; anything else (an option, its value, another command, a word it does
not know) returns None and Typer completes as usual. The options it knows are made from the
Typer app (`cli/completion_gen.py`); `tests/e2e/test_completion_values.py` keeps the answers
equal to Typer's.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.cli import completion_table

if TYPE_CHECKING:
    from mcptask.session.targets import GlobalOptions


@dataclass(frozen=True)
class TaskIdCommand:
    #: task ids it takes: 1, or None for any number
    ids: int | None
    #: its own options that take a value, and those that do not (the common ones aside)
    values: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()


#: the common options (name -> takes a value) and the commands that take task ids, made from
#: the Typer app by `cli/completion_gen.py` (a TAB must not import Typer)
COMMON_OPTIONS: dict[str, bool] = completion_table.COMMON_OPTIONS
TASK_ID_COMMANDS: dict[str, TaskIdCommand] = {
    name: TaskIdCommand(ids, frozenset(values), frozenset(flags))
    for name, (ids, values, flags) in completion_table.TASK_ID_COMMANDS.items()
}

SHELLS = ("bash", "zsh", "fish")

#: task ids offered at most on one TAB (the most recently seen): type more of an id for others
MAX_CANDIDATES = 100


def url_for(p: Mapping[str, Any]) -> str | None:
    """`completion_url` from the target options given (`url`, `stdio`, `server`, `config`)."""
    from types import SimpleNamespace
    from typing import cast

    from mcptask.session.targets import choose, pick

    names = ("url", "stdio", "server", "config")
    opts = cast("GlobalOptions", SimpleNamespace(**{name: p.get(name) for name in names}))
    try:
        kind, value, _ = choose(opts)
        if kind == "server":
            return pick(opts, value).url or ""
    except Exception:  # no target yet, or a broken config file: every endpoint's ids
        return None
    return value if kind == "url" else ""


def book_candidates(url: str | None, typed: set[str], incomplete: str) -> list[tuple[str, str]]:
    """The task book's ids that start with `incomplete` (those on `url` when it is not None),
    not among `typed`, most recently seen first, at most MAX_CANDIDATES: (id, "status on
    endpoint"). The one place completion reads the task book: one indexed query, whatever the
    book's size."""
    from mcptask.state.taskbook import TaskBook

    if url == "":  # a stdio server named by --stdio or -s: its command line is its key
        return []
    book = TaskBook()
    if not book.exists():
        return []
    found = book.complete(incomplete, url, exclude=typed, limit=MAX_CANDIDATES)
    return [(task_id, f"{status} on {key}") for task_id, status, key in found]


def _split(line: str) -> list[str]:
    """The shell's words as Click splits them (an unclosed quote keeps what came so far)."""
    lex = shlex.shlex(line, posix=True)
    lex.whitespace_split = True
    lex.commenters = ""
    out: list[str] = []
    try:
        for token in lex:
            out.append(token)
    except ValueError:
        out.append(lex.token)
    return out


def _words(shell: str, environ: Mapping[str, str]) -> tuple[list[str], str] | None:
    """(the words before the cursor, the word being completed), as Typer's classes read them."""
    if shell == "bash":
        try:
            cwords = _split(environ["COMP_WORDS"])
            cword = int(environ["COMP_CWORD"])
        except (KeyError, ValueError):
            return None
        return cwords[1:cword], cwords[cword] if cword < len(cwords) else ""
    line = environ.get("_TYPER_COMPLETE_ARGS", "")
    args = _split(line)[1:]
    if args and not line.endswith(" "):
        return args[:-1], args[-1]
    return args, ""


@dataclass
class _Found:
    command: str
    typed: list[str]
    params: dict[str, str]


def _task_id_position(args: list[str], incomplete: str) -> _Found | None:
    """The command and what was given, when the word being completed is one of its task ids."""
    command: TaskIdCommand | None = None
    name = ""
    typed: list[str] = []
    params: dict[str, str] = {}
    positional_only = False
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if positional_only or not word.startswith("-") or word == "-":
            if command is None:
                name = word
                command = TASK_ID_COMMANDS.get(word)
                if command is None:
                    return None
            else:
                typed.append(word)
            continue
        if word == "--":
            if command is None:
                return None
            positional_only = True
            continue
        option, eq, value = word.partition("=")
        values = {k for k, v in COMMON_OPTIONS.items() if v}
        flags = {k for k, v in COMMON_OPTIONS.items() if not v}
        if command is not None:
            values |= command.values
            flags |= command.flags
        if option in values:
            if not eq:
                if i >= len(args):
                    return None  # the cursor is on this option's value
                value = args[i]
                i += 1
            params[option] = value
        elif option in flags and not eq:
            continue
        else:
            return None  # --help, a typo, a short option with its value attached
    if command is None or (incomplete.startswith("-") and not positional_only):
        return None
    if command.ids == 1 and typed:
        return None
    return _Found(name, typed, params)


def _target_params(params: dict[str, str]) -> dict[str, str | None]:
    def last(*names: str) -> str | None:
        for n in names:
            if n in params:
                return params[n]
        return None

    return {
        "url": last("--url", "-u"),
        "stdio": last("--stdio"),
        "server": last("--server", "-s"),
        "config": last("--config"),
    }


_ZSH_ESCAPES = str.maketrans({'"': '""', "'": "''", "$": "\\$", "`": "\\`", ":": "\\\\:"})
#: Typer runs completion help through Rich's markup: text that could hold markup goes to Typer
_MARKUP = re.compile(r"\[")
_SPACE = re.compile(r"\s")


def answer(environ: Mapping[str, str] | None = None) -> tuple[str | None, int] | None:
    """(what to print, or None for nothing; the exit status) for a TAB on a task id, or None:
    let Typer complete."""
    env = os.environ if environ is None else environ
    mode = env.get("_MCPTASK_COMPLETE", "")
    shell = mode.removeprefix("complete_")
    if not mode.startswith("complete_") or shell not in SHELLS:
        return None
    fish_action = env.get("_TYPER_COMPLETE_FISH_ACTION", "")
    if shell == "fish" and fish_action not in ("get-args", "is-args"):
        return None
    words = _words(shell, env)
    if words is None:
        return None
    found = _task_id_position(*words)
    if found is None:
        return None
    incomplete = words[1]
    items = book_candidates(url_for(_target_params(found.params)), set(found.typed), incomplete)
    if shell != "bash" and any(_MARKUP.search(what) for _, what in items):
        return None
    if shell == "bash":
        return "\n".join(value for value, _ in items), 0
    if shell == "zsh":
        if not items:
            return "_files", 0
        lines = [
            f'"{value.translate(_ZSH_ESCAPES)}":"{what.translate(_ZSH_ESCAPES)}"'
            if what
            else f'"{value.translate(_ZSH_ESCAPES)}"'
            for value, what in items
        ]
        return "_arguments '*: :((" + "\n".join(lines) + "))'", 0
    shown = [f"{value}\t{_SPACE.sub(' ', what)}" if what else value for value, what in items]
    if fish_action == "is-args":
        return None, 0 if shown else 1  # Typer exits at once: nothing printed
    return "\n".join(shown), 0
