"""`--jq EXPR`: filter what a command prints as JSON through a jq program, as gh does.

The program runs on each JSON document mcptask would print (the one object of `-o json`, each
line of `-o ndjson`); each value it yields is printed on a line of its own, strings as plain
text (gh's convention, like `jq -r`), anything else as compact JSON. The filter is jq itself
(the `jq` package's bindings to libjq), imported only when `--jq` is given."""

from __future__ import annotations

from typing import Any

from mcptask.errors import UsageError
from mcptask.text import jsonsafe


class JqFilter:
    def __init__(self, expression: str) -> None:
        import jq

        self.expression = expression
        try:
            self._program = jq.compile(expression)
        except ValueError as exc:
            raise UsageError(f"--jq: {_first_line(exc)}") from None

    def apply(self, data: Any) -> list[Any]:
        """Every value the program yields for `data`; a jq error is a usage error (exit 2)."""
        try:
            values: list[Any] = self._program.input_value(data).all()
        except ValueError as exc:
            raise UsageError(f"--jq {self.expression}: {_first_line(exc)}") from None
        return values

    def lines(self, data: Any) -> list[str]:
        """What is printed for `data`, one string per line (without the newline)."""
        return [
            value if isinstance(value, str) else jsonsafe.dumps(value, ensure_ascii=False)
            for value in self.apply(data)
        ]


def _first_line(exc: Exception) -> str:
    """libjq's message without its `jq: error:` prefix and the caret lines under it."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else "invalid program"
    return first.removeprefix("jq: error: ").removeprefix("jq: ").rstrip(":")
