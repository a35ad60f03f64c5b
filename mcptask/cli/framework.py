"""The one door to the Click that Typer carries inside it.

Typer 0.26 and later vendor Click as `typer._click` and no longer depend on the `click`
package; the exceptions a command line raises (`NoSuchOption`, `MissingParameter`, ...), the
`HelpFormatter` a help page is written with and the current Click context are its objects,
and Typer re-exports none of them. mcptask needs them for its one-line usage errors, its help
layout and its lean parameters, so it names them here and nowhere else: a Typer that moves
them breaks this module alone, which is why `pyproject.toml` pins `typer<0.30` (the versions
tested) and `tests/unit/test_cli_options.py` checks every name below."""

from __future__ import annotations

from typer._click import Context, HelpFormatter
from typer._click import exceptions as click_exceptions
from typer._click.core import Parameter
from typer._click.exceptions import MissingParameter
from typer._click.globals import get_current_context

__all__ = [
    "Context",
    "HelpFormatter",
    "MissingParameter",
    "Parameter",
    "click_exceptions",
    "get_current_context",
]
