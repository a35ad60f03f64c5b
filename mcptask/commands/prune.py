"""`mcptask prune --older-than 7d`: drop from the task book the tasks not seen for so long
(with their history and kept results), and endpoints left empty that have not answered for
as long. The book also does this by itself after MCPTASK_BOOK_DAYS days (default 30)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcptask.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from mcptask.session.context import Context


@dataclass
class PruneOptions:
    older_than: str
    #: also drop the tasks last seen unfinished (kept by default: they may still end)
    unfinished: bool = False


UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str, flag: str = "--older-than") -> float:
    """`90s`, `30m`, `12h`, `7d`, `2w` -> seconds. A unit is required: a bare `0` would
    otherwise drop the whole book."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text)
    if m is None:
        raise UsageError(f"{flag} {text!r}: give an age like 7d, 12h, 30m or 2w")
    if not m.group(2):
        raise UsageError(
            f"{flag} {text!r} needs a unit: {m.group(1)}d (days), {m.group(1)}h, "
            f"{m.group(1)}m (minutes), {m.group(1)}s or {m.group(1)}w"
        )
    seconds = float(m.group(1)) * UNITS[m.group(2)]
    if not 0 <= seconds <= 100 * 365 * 86400:
        raise UsageError(f"{flag} {text!r}: out of range")
    return seconds


async def run_prune(opts: PruneOptions, ctx: Context) -> int:
    seconds = parse_age(opts.older_than)
    tasks, endpoints = ctx.book.prune(seconds, unfinished=opts.unfinished)
    if ctx.out.pretty:
        kept = "" if opts.unfinished else " (unfinished tasks kept: --unfinished drops them too)"
        ctx.out.console.print(
            f"pruned {tasks} task(s) and {endpoints} endpoint(s) not seen for "
            f"{opts.older_than}{kept}",
            markup=False,
        )
    else:
        ctx.out.line({"olderThan": seconds, "tasks": tasks, "endpoints": endpoints})
    return ExitCode.OK
