"""A task's history on a terminal: `log`'s timeline lines and `get`'s "why is it stuck" rows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcptask.output.console import delay_text, duration, duration_ms, safe_line
from mcptask.text.command_line import command_line

if TYPE_CHECKING:
    from mcptask.output.console import Output


def details(line: dict[str, Any]) -> str:
    """An event's particulars in words (its message, a retry's delay, a result's size...)."""
    data = line.get("data") or {}
    kind = line["kind"]
    message = line.get("message") or ""
    parts: list[str] = []
    if kind == "retry":
        delay = data.get("delay")
        what = "rate limited" if data.get("rateLimited") else "failed"
        if isinstance(delay, int | float):
            what += f", retry in {delay_text(float(delay))}"
        parts.append(f"{what}: {message}")
    elif kind == "result":
        size = data.get("bytes")
        parts.append(f"{size} bytes" if isinstance(size, int) else "not kept")
        if data.get("broken"):
            parts.append("an error")
    elif kind == "progress":
        p, total = data.get("progress"), data.get("total")
        if isinstance(p, int | float):
            parts.append(f"{p:g}/{total:g}" if isinstance(total, int | float) else f"{p:g}")
        if message:
            parts.append(message)
    elif kind == "question":
        keys = data.get("keys") or sorted((data.get("requests") or {}).keys())
        parts.append("asks: " + ", ".join(str(k) for k in keys))
    elif kind == "end":
        parts.append(f"watch ended: {data.get('outcome')} (exit {data.get('exitCode')})")
    elif kind == "pace":
        pace = data.get("pollInterval")
        if isinstance(pace, int):
            parts.append(f"poll interval {duration_ms(pace)}")
    elif message:
        parts.append(message)
    for key in ("keys", "answered"):
        if kind == "answer" and data.get(key):
            parts.append(f"{key}: {', '.join(str(k) for k in data[key])}")
    return "; ".join(p for p in parts if p)


def log_line(out: Output, line: dict[str, Any]) -> None:
    """One event on a terminal: time since creation, gap, kind, status, via, particulars."""
    from rich.text import Text

    from mcptask.output.console import STYLE

    status = line.get("status") or ""
    colour = STYLE.get(status, ("white", ""))[0] if line["kind"] in ("created", "status") else ""
    gap = f"+{duration(line['gap'])}" if line["n"] and line["gap"] >= 1 else ""
    text = Text()
    text.append(f"{duration(line['sinceCreated']):>7} ", style="dim")
    text.append(f"{gap:>7} ", style="dim")
    text.append(f"{line['kind']:<9} ", style="bold")
    text.append(f"{status:<15} ", style=colour)
    text.append(f"{line.get('via') or '':<6} ", style="cyan")
    text.append_text(safe_line(details(line), 300))
    out.console.print(text, soft_wrap=True)


def stuck_rows(info: dict[str, Any], task_id: str) -> list[tuple[str, str]]:
    """`get`'s rows about the history: since when nothing moved, and what may explain it."""
    rows: list[tuple[str, str]] = []
    if info.get("sinceChange") is not None:
        rows.append(
            ("unchanged for", f"{duration(info['sinceChange'])} (since {info['statusSince']})")
        )
    if info.get("sinceMessage") is not None:
        rows.append(("last message", f"{duration(info['sinceMessage'])} ago"))
    paces = info.get("paceHistory") or []
    if info.get("pollInterval") is not None:
        moved = ""
        if len(paces) > 1:
            moved = " (was " + ", ".join(duration_ms(p) for p in paces[:-1][-4:]) + ")"
        rows.append(("pace", f"poll every {duration_ms(info['pollInterval'])}{moved}"))
    if info.get("watchedElsewhere"):
        push = "push live" if info.get("pushLive") else "polling"
        nxt = info.get("nextPoll")
        when = f"; next poll in {duration(nxt)}" if isinstance(nxt, int | float) else ""
        rows.append(("watch", f"a watch follows it ({push}){when}"))
    else:
        rows.append(("watch", "no watch follows it now"))
    if info.get("retries") or info.get("lastError"):
        last = info.get("lastError") or ""
        rows.append(
            ("retries", f"{info.get('retries', 0)} since the last change; last error: {last}")
        )
    question = info.get("pendingQuestion")
    if question:
        keys = ", ".join(question.get("keys") or []) or "?"
        waiting = question.get("waiting")
        since = f" for {duration(waiting)}" if isinstance(waiting, int | float) else ""
        hint = command_line("answer", task_id)
        rows.append(("waiting on", f"an answer ({keys}){since}: `{hint}`"))
    if info.get("purgeAt"):
        rows.append(("purged at", str(info["purgeAt"])))
    return rows


def print_stuck(out: Output, info: dict[str, Any], task_id: str) -> None:
    from rich.table import Table

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for name, value in stuck_rows(info, task_id):
        grid.add_row(name, safe_line(value, 300))
    out.console.print(grid)
