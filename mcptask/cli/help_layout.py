"""How `--help` is laid out: words for placeholders (`--url URL`, `TASK_ID`), never Python
types; each command's description and `Examples:` (from `help_data`); `mcptask --help` lists
the commands by group with their whole summaries."""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from mcptask.cli.framework import Context, HelpFormatter
from mcptask.cli.help_data import COMMANDS, GROUPS, METAVARS, examples_text

#: `--help-all`: every option explained, the shared ones too (`main` sets it)
SHOW_ALL = [False]
#: the flag that shows them
HELP_ALL = "--help-all"


class WordArgument(TyperArgument):
    """An argument shown by its word alone: `TASK_ID`, `[TASK_ID]...`, no `<str>`."""

    def display_type_rich(self, ctx: Context) -> str | None:
        return None

    def _rich_display_name(self) -> str:
        return self.display_name_raw + ("..." if self.nargs != 1 else "")

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


class _HelpFlag(TyperOption):
    """`-h/--help` read as the flag it is. Typer reads a flag left out (None) through a pydantic
    adapter: the group's own help flag made every `mcptask COMMAND --help` import pydantic
    (half its start-up; bench/startup.py)."""

    def process_value(self, ctx: Context, value: Any) -> Any:
        return super().process_value(ctx, bool(value))


def _flag_help(option: TyperOption | None) -> TyperOption | None:
    if type(option) is TyperOption:
        option.__class__ = _HelpFlag
    return option


def write_examples(epilog: str | None, formatter: HelpFormatter) -> None:
    """The `Examples:` section, its lines as they are (Click would rewrap and indent them)."""
    if epilog:
        formatter.write_paragraph()
        for line in epilog.splitlines():
            formatter.write(line + "\n")


class HelpfulCommand(TyperCommand):
    """A command whose options and arguments show the placeholders of `help_data.METAVARS`,
    and whose examples keep their lines."""

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        write_examples(self.epilog, formatter)

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        from mcptask.cli.lean_params import lean

        lean(self.params)  # no pydantic adapter where none is needed (cli/lean_params.py)
        return super().parse_args(ctx, args)

    def get_help_option(self, ctx: Context) -> TyperOption | None:
        return _flag_help(super().get_help_option(ctx))

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        """The command's arguments and its own options first; then the options every command
        shares (Target, Authentication, Output), folded under one heading, a line of flag
        names per panel, with the full list a flag away (`--help-all`): at 80x24 a
        command's own options stay on the screen."""
        sections: dict[str, list[tuple[str, str]]] = {"Arguments": [], "Options": []}
        names: dict[str, list[str]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                sections["Arguments"].append(record)
            else:
                panel = getattr(param, "rich_help_panel", None) or "Options"
                sections.setdefault(panel, []).append(record)
                if panel != "Options":
                    opts = sorted(getattr(param, "opts", []), key=len)
                    names.setdefault(panel, []).append("/".join(opts))
        # -h/--help closes the command's own options (it is added last, after the shared ones)
        for name, rows in sections.items():
            if not rows or (name not in ("Arguments", "Options") and not SHOW_ALL[0]):
                continue
            with formatter.section(name if name in ("Arguments", "Options") else f"{name} options"):
                formatter.write_dl(rows)
        if names and not SHOW_ALL[0]:
            with formatter.section("Global options (every command's; `--help-all` explains them)"):
                _flag_lines(formatter, names)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            word = METAVARS.get(param.name or "")
            if isinstance(param, TyperArgument):
                param.__class__ = WordArgument
                param.metavar = param.metavar or word or (param.name or "").upper()
            elif isinstance(param, TyperOption) and not param.is_flag:
                # an option help_data does not name yet still shows a word, never `<str>`
                param.metavar = param.metavar or word or (param.name or "value").upper()


def _flag_lines(formatter: HelpFormatter, names: dict[str, list[str]]) -> None:
    """`Target  -u/--url, -s/--server, ...`: flag names packed into the width, never broken
    inside a flag (Click's wrapping breaks at hyphens)."""
    term = max(len(panel) for panel in names) + 2
    width = max(formatter.width - formatter.current_indent - term, 30)
    for panel, flags in names.items():
        lines: list[str] = []
        for i, flag in enumerate(flags):
            word = flag + ("," if i < len(flags) - 1 else "")
            if lines and len(lines[-1]) + 1 + len(word) <= width:
                lines[-1] += " " + word
            else:
                lines.append(word)
        for n, line in enumerate(lines):
            head = panel if n == 0 else ""
            formatter.write(f"{'':>{formatter.current_indent}}{head:<{term}}{line}\n")


def described(name: str) -> dict[str, Any]:
    """What `@app.command(...)` takes for command `name`: its help, summary and examples."""
    about = COMMANDS[name]
    return {
        "help": about.description,
        "short_help": about.summary,
        "epilog": examples_text(name),
        "cls": HelpfulCommand,
    }


class HelpfulGroup(TyperGroup):
    """A command with subcommands (`auth`): its examples keep their lines."""

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        write_examples(self.epilog, formatter)

    def get_help_option(self, ctx: Context) -> TyperOption | None:
        return _flag_help(super().get_help_option(ctx))


#: the group of a command `help_data` does not know
OTHER = "Other commands"


class GroupedHelp(TyperGroup):
    """`mcptask --help`: the commands under their groups, each summary whole."""

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        write_examples(self.epilog, formatter)

    def get_help_option(self, ctx: Context) -> TyperOption | None:
        return _flag_help(super().get_help_option(ctx))

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        groups: dict[str, list[tuple[str, str]]] = {g: [] for g in (*GROUPS, OTHER)}
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            about = COMMANDS.get(name)
            summary = about.summary if about else cmd.get_short_help_str(limit=200)
            groups[about.group if about else OTHER].append((name, summary))
        # one column width for every group, so the summaries line up
        width = max((len(n) for rows in groups.values() for n, _ in rows), default=0)
        for group, rows in groups.items():
            if rows:
                with formatter.section(group):
                    formatter.write_dl([(n.ljust(width), summary) for n, summary in rows])
