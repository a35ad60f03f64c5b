"""Issue 23, defect 10: the global options are declared once, as Typer parameters
(`cli/options.py`); the flags the argv reordering moves (`options.COMMON_OPTIONS`) are made from
them, and `GlobalOptions` (in `session`, which cannot import the CLI) is tied to them here.
And the private Typer/Click names mcptask keeps are pinned here: an upgrade that moves one
fails this file (and pyproject bounds typer below the next minor release)."""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from pathlib import Path

import typer

from mcptask.cli import options
from mcptask.cli.options import COMMON_OPTIONS
from mcptask.session.targets import GlobalOptions

ROOT = Path(__file__).resolve().parents[2]


def _declared() -> dict[str, tuple[list[str], bool]]:
    """Each common parameter of `@with_target`: its flags, and whether it takes a value."""
    out = {}
    for param in options._COMMON:
        base, *extras = typing.get_args(param.annotation)
        info = next(e for e in extras if isinstance(e, typer.models.OptionInfo))
        flags = [info.default, *info.param_decls] if isinstance(info.default, str) else []
        flags = [f for f in (*flags, *info.param_decls) if isinstance(f, str)]
        out[param.name] = (list(dict.fromkeys(flags)), base is not bool)
    return out


def test_typer_s_options_and_the_argv_table_name_the_same_flags() -> None:
    declared = _declared()
    table = {flag: takes for flags, takes in declared.values() for flag in flags}
    assert table == COMMON_OPTIONS
    # the flags that were listed by hand before (issue 23): all there, each as it was
    assert {"--url", "-u", "-s", "--stdio", "-H", "-o", "--jq"} <= set(COMMON_OPTIONS)
    assert COMMON_OPTIONS["--trace"] is False and COMMON_OPTIONS["--login"] is False
    assert COMMON_OPTIONS["--client-metadata-url"] is True


def test_typer_s_options_fill_global_options() -> None:
    fields = {f.name for f in dataclasses.fields(GlobalOptions)}
    names = {("headers" if n == "header" else n) for n in _declared()}
    assert names == fields
    # the defaults agree too
    defaults = {p.name: p.default for p in options._COMMON}
    g = GlobalOptions()
    for name, default in defaults.items():
        got = getattr(g, "headers" if name == "header" else name)
        assert got == (default if default is not None or name != "header" else [])


def test_with_target_gives_a_command_every_common_option() -> None:
    @options.with_target
    def cmd(task_id: str, g: GlobalOptions) -> GlobalOptions:
        return g

    params = inspect.signature(cmd).parameters
    assert next(iter(params)) == "task_id"
    assert set(params) == {"task_id", *(p.name for p in options._COMMON)}
    g = cmd(task_id="t", **{p.name: p.default for p in options._COMMON})
    assert isinstance(g, GlobalOptions) and g.headers == []


def test_the_private_typer_api_mcptask_keeps() -> None:
    """`cli/framework.py` is the one module that names Typer's vendored Click (`typer._click`);
    `cli/help_layout.py` overrides TyperArgument's private display methods; `with_target` sets
    `__signature__`, which Typer reads through `inspect.signature`."""
    from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

    from mcptask.cli import framework

    for name in framework.__all__:
        assert getattr(framework, name) is not None, name
    exceptions = framework.click_exceptions
    for name in ("ClickException", "NoSuchOption", "NoArgsIsHelpError", "UsageError"):
        assert hasattr(exceptions, name), name
    assert issubclass(framework.MissingParameter, exceptions.UsageError)
    # the current Click context is the one Typer gives a command (typer.Context is Click's)
    assert issubclass(typer.Context, framework.Context)
    for method in ("_rich_display_name", "_usage_display_name", "display_type_rich"):
        assert callable(getattr(TyperArgument, method, None)), method
    for cls in (TyperCommand, TyperGroup):
        assert callable(getattr(cls, "format_epilog", None))
    assert callable(getattr(TyperGroup, "format_commands", None))
    assert TyperOption is not None

    app = typer.Typer()

    @app.command()
    @options.with_target
    def probe(g: GlobalOptions) -> None:
        print(g.url)

    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["--url", "http://x.test/mcp"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "http://x.test/mcp"


def test_typer_is_bounded_in_pyproject() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    spec = re.search(r'"typer>=([\d.]+),<([\d.]+)"', text)
    assert spec, "typer needs an upper bound: the private names above may move"
    low, high = (tuple(int(x) for x in v.split(".")) for v in spec.groups())
    have = tuple(int(x) for x in typer.__version__.split(".")[:2])
    assert low[:2] <= have < high[:2]


def test_the_quick_completion_s_table_is_made_from_the_app() -> None:
    """A TAB on a task id is answered before Typer is imported, from `completion_table.py`,
    which `completion_gen` makes from the Typer app: the file is what it makes now (else:
    `python -m mcptask.cli.completion_gen`)."""
    from mcptask.cli import completion_gen, quick_complete

    assert completion_gen.main(["--check"]) == 0
    assert quick_complete.COMMON_OPTIONS == COMMON_OPTIONS
    _, commands = completion_gen.tables()
    assert set(quick_complete.TASK_ID_COMMANDS) == set(commands)
    for name, (ids, values, flags) in commands.items():
        spec = quick_complete.TASK_ID_COMMANDS[name]
        assert (spec.ids, spec.values, spec.flags) == (ids, set(values), set(flags)), name
