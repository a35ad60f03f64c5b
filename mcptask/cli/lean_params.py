"""Parameters read without Typer's pydantic adapters where none is needed.

Typer coerces every parameter of the command it runs through a pydantic `TypeAdapter` built for
it on first use (about 2 ms each, and the first imports Typer's adapter module): `mcptask get`
has 17 parameters, most of them left out (None) or text given as text. Neither needs an
adapter: a value left out is None (an empty tuple for one that repeats), exactly what Typer's
coercion returns for it before it would consult the adapter or a parser of the parameter's own
(building that adapter imports Typer's adapter module and pydantic: `log`'s `--timeout`), a
flag's bool is that bool, and text for a `str` parameter without a parser of its own is that
text, a number's default (of no range) that number, and words given for a repeated text
parameter (`watch ID ID...`) the list of them.
Everything else (numbers, paths, choices, other lists, none given for a repeated parameter,
bools Typer does not already skip) goes through Typer as before (bench/startup.py)."""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperOption

from mcptask.cli.framework import Context, MissingParameter, Parameter

_LEAN: dict[type[Parameter], type[Parameter]] = {}
_MADE: set[type[Parameter]] = set()


def _process_value(me: Any, ctx: Context, value: Any) -> Any:
    """A lean parameter's `process_value` (its class is made by `lean`)."""
    desc = me.type_descriptor
    info = desc.parameter_info
    plain = info.parser is None and getattr(info, "click_type", None) is None
    if value is None:  # Typer's coercion returns this for None, parser or not
        value = () if (me.multiple or me.nargs == -1) else None
    elif desc.annotation is bool and type(value) is bool:
        pass  # a flag's own value: Typer skips coercion for it too
    elif plain and type(value) in (int, float) and type(value) is desc.annotation:
        if desc.is_ranged:  # Typer checks it against its range
            return me._typer_process_value(ctx, value)
        # a number's default (`--push-port`'s 0): a number already, as Typer's would be
    elif plain and desc.annotation == _TEXTS and _texts(value):
        value = list(value)  # words given (`watch ID ID...`, `--tag T --tag T`): as Typer's
    elif not (plain and desc.annotation is str and type(value) is str):
        return me._typer_process_value(ctx, value)
    if me.required and me.value_is_missing(value):
        raise MissingParameter(ctx=ctx, param=me)
    if me.callback is not None:
        value = me.callback(ctx, me, value)
    return value


#: a parameter that repeats, of text: Typer's coercion makes the words given a list of them
_TEXTS = list[str]


def _texts(value: Any) -> bool:
    """Words given for a repeated text parameter (an empty one goes through Typer: None or
    its default, as it says)."""
    return type(value) in (tuple, list) and bool(value) and all(type(v) is str for v in value)


def lean(params: list[Parameter]) -> None:
    """Give each of a command's Typer parameters its lean class (a subclass of its own, with
    `_process_value`)."""
    for param in params:
        cls = type(param)
        if not issubclass(cls, TyperOption | TyperArgument) or cls in _MADE:
            continue
        lean_cls = _LEAN.get(cls)
        if lean_cls is None:
            lean_cls = _LEAN[cls] = type(
                f"Lean{cls.__name__}",
                (cls,),
                {"process_value": _process_value, "_typer_process_value": cls.process_value},
            )
            _MADE.add(lean_cls)
        param.__class__ = lean_cls
