"""`mcptask book`: the task book as an address book: each endpoint with its protocol, its
tasks (and how many are unfinished), its events, when it last answered and last failed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.errors import ExitCode

if TYPE_CHECKING:
    from mcptask.session.context import Context


@dataclass
class BookOptions:
    pass


async def run_book(opts: BookOptions, ctx: Context) -> int:
    from mcptask.model.times import iso

    book = ctx.book
    rows = book.summary()
    for row in rows:
        if row["protocol"] is None:
            # a stdio server's protocol is not kept for the endpoint (its tasks die with
            # it), but its tasks name it
            row["protocol"] = _tasks_protocol(ctx, row["endpoint"])
        for key in ("firstRecorded", "lastSeen", "lastContact", "lastFailure"):
            value = row.get(key)
            row[key] = iso(value) if isinstance(value, int | float) else None
    if not ctx.out.pretty:
        ctx.out.line({"path": str(book.path), "endpoints": rows})
        return ExitCode.OK
    _table(ctx, rows, str(book.path))
    return ExitCode.OK


def _tasks_protocol(ctx: Context, endpoint: str) -> str | None:
    """The protocol the endpoint's tasks were seen speaking, when they agree on one."""
    seen = {rec.get("protocol") for rec in ctx.book.tasks(endpoint).values()}
    seen.discard(None)
    (only,) = seen if len(seen) == 1 else (None,)
    return only if isinstance(only, str) else None


def _table(ctx: Context, rows: list[dict[str, Any]], path: str) -> None:
    import time

    from rich.table import Table

    from mcptask.commands._history import _epoch
    from mcptask.output.console import duration, safe

    if not rows:
        ctx.out.console.print(safe(f"the task book ({path}) is empty"))
        return
    now = time.time()

    def ago(stamp: Any) -> str:
        at = _epoch(stamp)
        return f"{duration(now - at)} ago" if at is not None else "never"

    table = Table(title=safe(path), title_justify="left", show_edge=False)
    widest = max(len(row["endpoint"]) for row in rows)
    table.add_column("endpoint", overflow="fold", min_width=min(widest, 40))
    failures = any(row["lastFailure"] for row in rows)
    for col in ("protocol", "tasks", "open", "events", "answered", "failed")[
        : 6 if failures else 5
    ]:
        table.add_column(col, overflow="fold")
    for row in rows:
        cells = [
            safe(row["endpoint"]),
            safe(row["protocol"] or "?"),
            str(row["tasks"]),
            str(row["unfinished"]),
            str(row["events"]),
            ago(row["lastContact"]),
        ]
        if failures:
            cells.append(ago(row["lastFailure"]) if row["lastFailure"] else "")
        table.add_row(*cells)
    ctx.out.console.print(table)
