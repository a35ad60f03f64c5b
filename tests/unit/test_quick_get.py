"""A plain `mcptask get` runs before Typer is imported (`cli/quick_get.py`): whatever line it
takes, it must read as Typer reads it, and every other line is left to Typer."""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mcptask import cli
from mcptask.cli import completion_table, quick_get, runner

OPTIONS = completion_table.QUICK_COMMANDS["get"][1]
ENVVARS = sorted({row[3] for row in OPTIONS.values() if row[3] is not None})
Reading = tuple[dict[str, Any], Any, dict[str, Any]]


@contextmanager
def environment(values: dict[str, str | None]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def reading(words: list[str], *, quick: bool) -> Reading | None:
    """What `get` is run with for `words` (None: not run; a usage error or help), read
    through Typer (`quick` False) or as `main` would: the options, the options object its
    run function is given, the run settings and the command's name."""
    seen: list[Reading] = []

    real = runner.run_command

    def run_command(g: Any, make: Any, **settings: Any) -> int:
        coro = make(object())
        bound = inspect.signature(real).bind(g, make, **settings)
        bound.apply_defaults()
        given = {k: v for k, v in bound.arguments.items() if k not in ("g", "make")}
        seen.append((vars(g), coro.cr_frame.f_locals["opts"], given))
        coro.close()
        return 0

    runner.run_command = run_command
    try:
        cli._main(list(words), quick=quick)
    finally:
        runner.run_command = real
    assert len(seen) <= 1
    return seen[0] if seen else None


def both(words: list[str], env: dict[str, str | None]) -> tuple[Reading | None, Reading | None]:
    """(Typer's reading, the quick path's), where the quick path takes the line; else (Typer's,
    None)."""
    with environment(env):
        typer_reading = reading(words, quick=False)
        if quick_get.parse(words, os.environ) is None:
            return typer_reading, None
        return typer_reading, reading(words, quick=True)


VALUES = st.sampled_from(
    ["http://127.0.0.1:1/mcp", "", "json", "ndjson", "a b", "é", "=x", "-", "-v", "--url", "--"]
)
TAKE_VALUE = sorted(w for w, row in OPTIONS.items() if row[1] != "flag")
FLAGS = sorted(w for w, row in OPTIONS.items() if row[1] == "flag")
NOISE = st.one_of(
    st.sampled_from(
        [
            *("--help", "-h", "--help-all", "--", "-", "-uhttp://h/mcp", "--url=", "--url=a=b"),
            *("--trace=1", "--nope", "-x", "-ojson", "--histor", "3", "T1", "-T2", "get"),
        ]
    ),
    VALUES,
    st.text(min_size=0, max_size=4),
)
ENVS = st.fixed_dictionaries({name: st.sampled_from([None, "", "json", " x"]) for name in ENVVARS})


@st.composite
def get_lines(draw: st.DrawFn) -> list[str]:
    """Mostly lines Typer takes (options with values, flags, one task id, `--`), some with a
    word that makes them another kind of line."""
    pairs = draw(
        st.lists(st.tuples(st.sampled_from(sorted(completion_table.COMMON_OPTIONS)), VALUES))
    )
    words = [w for pair in pairs for w in pair] + ["get"]
    pieces: list[list[str]] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["pair", "pair", "joined", "flag", "noise"]))
        if kind == "pair":
            pieces.append([draw(st.sampled_from(TAKE_VALUE)), draw(VALUES)])
        elif kind == "joined":
            word = draw(st.sampled_from([w for w in TAKE_VALUE if w.startswith("--")]))
            pieces.append([f"{word}={draw(VALUES)}"])
        elif kind == "flag":
            pieces.append([draw(st.sampled_from(FLAGS))])
        else:
            pieces.append([draw(NOISE)])
    task_id = draw(st.sampled_from(["T1", "-T2", "", "t 3", "--x"]))
    at = draw(st.integers(0, len(pieces)))
    if draw(st.booleans()):
        pieces.append(["--", task_id])
    else:
        pieces.insert(at, [task_id])
    return words + [w for piece in pieces for w in piece]


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(words=get_lines(), env=ENVS)
@example(words=["get", "T1"], env={})
@example(words=["--url", "http://h/mcp", "get", "-o", "json", "--", "-T2"], env={})
@example(
    words=[
        "get",
        "--url=http://h/mcp",
        "-H",
        "A: b",
        "--header",
        "C: d",
        "--trace",
        "--login",
        "T1",
    ],
    env={"MCPTASK_OUTPUT": "json", "MCPTASK_PROTOCOL": ""},
)
@example(words=["get", "-s", "one", "-s", "two", "T1", "-p", "a2a"], env={})
def test_a_line_the_quick_path_takes_is_read_as_typer_reads_it(
    words: list[str], env: dict[str, str | None]
) -> None:
    typer_reading, quick_reading = both(words, env)
    if quick_reading is not None:
        assert quick_reading == typer_reading, words


@pytest.mark.parametrize(
    ("words", "env"),
    [
        (["get", "T1"], {}),
        (["--url", "http://h/mcp", "get", "-o", "json", "--", "-T2"], {}),
        (["get", "--url=http://h/mcp", "-H", "A: b", "-H", "C: d", "--trace", "T1"], {}),
        (["-s", "one", "get", "T1", "--session", "S", "--context-id="], {"MCPTASK_OUTPUT": "json"}),
    ],
)
def test_plain_lines_are_taken(words: list[str], env: dict[str, str | None]) -> None:
    typer_reading, quick_reading = both(words, env)
    assert quick_reading is not None and typer_reading is not None
    assert quick_reading == typer_reading


@pytest.mark.parametrize(
    "words",
    [
        ["get"],
        ["get", "T1", "T2"],
        ["get", "--help"],
        ["get", "-h", "T1"],
        ["get", "--history", "3", "T1"],
        ["get", "-uhttp://h/mcp", "T1"],
        ["get", "--url", "-T1"],
        ["get", "--trace=yes", "T1"],
        ["get", "-", "T1"],
        ["get", "--nope", "T1"],
        ["list"],
        ["--url", "U", "auth", "login"],
        ["--version"],
    ],
)
def test_other_lines_are_left_to_typer(words: list[str]) -> None:
    assert quick_get.parse(words, {}) is None


def _one_get_app(**option: Any) -> Any:
    """A Typer app whose `get` takes a task id and one more option, `--extra`."""
    import typer

    one = typer.Typer(context_settings={"help_option_names": ["-h", "--help"]})
    annotation, default = option.pop("annotation"), option.pop("default")

    def get(task_id: str, extra: Any = None) -> None:
        pass

    get.__annotations__["extra"] = Annotated[annotation, typer.Option("--extra", **option)]
    get.__defaults__ = (default,)
    one.command()(get)

    def root() -> None:
        pass

    one.callback()(root)  # a group, as mcptask's app is
    return one


@pytest.mark.parametrize(
    "option",
    [
        {"annotation": bool, "default": False, "envvar": "MCPTASK_EXTRA"},  # "0" would be text
        {"annotation": list[str] | None, "default": None, "envvar": "MCPTASK_EXTRA"},
        {"annotation": int, "default": 7},  # left out, Typer gives 7 as it converts it
        {"annotation": str | None, "default": None, "callback": lambda v: v},
        {"annotation": int | None, "default": None, "callback": lambda v: v},
    ],
)
def test_the_table_is_not_made_for_a_command_typer_would_read_otherwise(
    monkeypatch: pytest.MonkeyPatch, option: dict[str, Any]
) -> None:
    """A left-out parameter reaches the command as Typer makes it: the quick path only gives
    a default or a variable's text as they are, and runs nothing. A command with a parameter
    Typer converts or calls back for even when the line does not name it is refused."""
    from mcptask.cli import app as app_module
    from mcptask.cli import completion_gen

    one = _one_get_app(**option)
    monkeypatch.setattr(app_module, "_app_for", lambda _: one)
    monkeypatch.setattr(app_module, "app", one)
    with pytest.raises(completion_gen.NotQuick):
        completion_gen.quick_tables()


def test_the_table_of_a_plain_command_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcptask.cli import app as app_module
    from mcptask.cli import completion_gen

    one = _one_get_app(annotation=str, default="auto", envvar="MCPTASK_EXTRA")
    monkeypatch.setattr(app_module, "_app_for", lambda _: one)
    monkeypatch.setattr(app_module, "app", one)
    assert completion_gen.quick_tables() == {
        "get": ("task_id", {"--extra": ("extra", "text", "auto", "MCPTASK_EXTRA")})
    }
