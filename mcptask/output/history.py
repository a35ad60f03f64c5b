"""A task's history on a terminal: `log`'s timeline lines and `get`'s "why is it stuck" rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcptask.model.events import EventKind
from mcptask.output.console import delay_text, duration, duration_ms, safe_line
from mcptask.text.command_line import command_line
from mcptask.text.sanitize import one_line

if TYPE_CHECKING:
    from mcptask.output.console import Output


#: kinds whose time is the server's to give: one mcptask saw instead is marked `~`
SERVER_KINDS = frozenset(
    (
        EventKind.CREATED,
        EventKind.STATUS,
        EventKind.MESSAGE,
        EventKind.PACE,
        EventKind.QUESTION,
        EventKind.HISTORY,
    )
)
#: commands that follow a task: lines they recorded are not marked with their name
FOLLOWERS = frozenset(("watch", "log", "call", "send", "demo"))


def details(line: dict[str, Any]) -> str:
    """An event's particulars in words (its message, a retry's delay, a result's size...)."""
    data = line.get("data") or {}
    kind = line["kind"]
    message = line.get("message") or ""
    parts: list[str] = []
    if kind == EventKind.RETRY:
        delay = data.get("delay")
        what = "rate limited" if data.get("rateLimited") else "failed"
        if isinstance(delay, int | float):
            what += f", retry in {delay_text(float(delay))}"
        parts.append(f"{what}: {message}")
    elif kind == EventKind.RESULT:
        size = data.get("bytes")
        parts.append(f"{size} bytes" if isinstance(size, int) else "not kept")
        if data.get("broken"):
            parts.append("an error")
    elif kind == EventKind.PROGRESS:
        p, total = data.get("progress"), data.get("total")
        if isinstance(p, int | float):
            parts.append(f"{p:g}/{total:g}" if isinstance(total, int | float) else f"{p:g}")
        if message:
            parts.append(message)
    elif kind == EventKind.QUESTION:
        keys = data.get("keys") or sorted((data.get("requests") or {}).keys())
        asked = data.get("message") or message
        if asked:
            parts.append(f"asks: {asked}")
        if keys:
            parts.append("fields: " + ", ".join(str(k) for k in keys))
    elif kind == EventKind.ANSWER:
        parts.append(_answer_words(data))
    elif kind == EventKind.END:
        parts.append(f"watch ended: {data.get('outcome')} (exit {data.get('exitCode')})")
    elif kind == EventKind.PACE:
        pace = data.get("pollInterval")
        if isinstance(pace, int):
            parts.append(f"poll interval {duration_ms(pace)}")
    elif kind == EventKind.CREATED and data.get("firstSeen"):
        parts.append("created on the server (first seen later)")
    elif kind == EventKind.PUSH_CONFIG:
        what = data.get("action") or "changed"
        parts.append(f"push config {what}: {data.get('configId') or '?'} {data.get('url') or ''}")
    elif kind == EventKind.HISTORY:
        parts.append(f"{data.get('role') or 'message'}: {message}")
    elif kind == EventKind.ARTIFACT:
        name = data.get("name") or data.get("artifactId") or "?"
        size = data.get("bytes")
        last = "; the last chunk" if data.get("lastChunk") else ""
        so_far = f", {size} bytes so far" if isinstance(size, int) else ""
        parts.append(f"artifact {name}{so_far}{last}")
        if message:
            parts.append(message)
    elif kind == EventKind.HISTORY_GAP:
        parts.append(message or "messages the server no longer holds")
    elif kind == EventKind.PUSH_OPEN and data.get("resumed"):
        parts.append("push resumed")
    elif kind == EventKind.PUSH_LOST:
        from mcptask.model.status import TERMINAL

        ended = line.get("status") in TERMINAL
        parts.append("push stream closed (the task ended)" if ended else "push stream lost")
    elif message:
        parts.append(message)
    return "; ".join(p for p in parts if p)


def _answer_words(data: dict[str, Any]) -> str:
    action = data.get("action") or "accept"
    words = "answered" if action == "accept" else f"answered {action}"
    keys = data.get("keys") or []
    if keys:
        words += " (" + ", ".join(str(k) for k in keys) + ")"
    if isinstance(data.get("text"), str):
        words += f": {data['text']}"
    if data.get("confirmed") is False:
        words += "; the server did not take it"
    elif data.get("confirmed"):
        words += "; taken"
    return words


def log_time(seconds: float) -> str:
    """A time in the log: tenths of a second within the first minute, else `duration`."""
    if seconds < 59.95:
        return f"{max(seconds, 0.0):.1f}s"
    return duration(seconds)


HEADINGS = f"{'since':>7} {'gap':>7} {'event':<9} {'status':<15} {'via':<7} details"


def log_cells(line: dict[str, Any]) -> list[tuple[str, str]]:
    """One event's cells, each (text, style): time since creation (`~`: when mcptask saw it,
    the server gave no time), gap, kind, status, via, particulars, how late it was seen,
    and which command recorded it when that was not one following the task."""
    from mcptask.output.console import STYLE

    status = line.get("status") or ""
    colour = (
        STYLE.get(status, ("white", ""))[0]
        if line["kind"] in (EventKind.CREATED, EventKind.STATUS)
        else ""
    )
    guessed = line.get("clock") == "local" and line["kind"] in SERVER_KINDS
    since = ("~" if guessed else "") + log_time(line["sinceCreated"])
    gap = f"+{log_time(line['gap'])}" if line["gap"] >= 0.05 else ""
    cells = [
        (f"{since:>7} {gap:>7} ", "dim"),
        (f"{line['kind']:<9} ", "bold"),
        (f"{status:<15} ", colour),
        (f"{line.get('via') or '':<7} ", "cyan"),
        (one_line(details(line), 300), ""),
    ]
    late = line.get("late")
    if isinstance(late, int | float) and late >= 1.0:
        cells.append((f" (seen {duration(late)} later)", "dim"))
    command = line.get("command")
    if isinstance(command, str) and command not in FOLLOWERS:
        cells.append((f" · by {one_line(command, 20)}", "dim"))
    return cells


def print_log(out: Output, lines: list[dict[str, Any]], *, header: str | None = None) -> None:
    """Events on a terminal. Each cell's style is made into escape codes once, and a
    screenful is written at a time: a Rich `print` per line costs more than the line (a
    console that records, for screenshots, goes Rich's way)."""
    from rich.text import Text

    console = out.console
    if header is not None:
        console.print(safe_line(header, 500))
        console.print(Text(HEADINGS, style="dim"))
        if any(x.get("clock") == "local" and x["kind"] in SERVER_KINDS for x in lines):
            console.print(
                Text("        ~: when mcptask saw it (the server gave no time)", style="dim")
            )
    if console.record:
        for line in lines:
            console.print(Text.assemble(*log_cells(line)), soft_wrap=True)
        return
    codes = _codes(console)
    page: list[str] = []
    for line in lines:
        page.append("".join(codes(style, text) for text, style in log_cells(line)))
        if len(page) >= PAGE:
            console.file.write("\n".join(page) + "\n")
            page = []
    if page:
        console.file.write("\n".join(page) + "\n")
    console.file.flush()


#: log lines written at once
PAGE = 200


def _codes(console: Any) -> Callable[[str, str], str]:
    """Text in a style as the console's colour system writes it (plain without colour)."""
    from rich.color import ColorSystem
    from rich.style import Style

    system = {
        "standard": ColorSystem.STANDARD,
        "256": ColorSystem.EIGHT_BIT,
        "truecolor": ColorSystem.TRUECOLOR,
        "windows": ColorSystem.WINDOWS,
    }.get(console.color_system or "")
    if system is None or console.no_color:
        return lambda _style, text: text
    made: dict[str, tuple[str, str]] = {}

    def styled(style: str, text: str) -> str:
        if not style:
            return text
        codes = made.get(style)
        if codes is None:
            before, _, after = Style.parse(style).render("\0", color_system=system).partition("\0")
            codes = made[style] = (before, after)
        return codes[0] + text + codes[1]

    return styled


def stuck_rows(info: dict[str, Any], task_id: str) -> list[tuple[str, str]]:
    """`get`'s and `why`'s rows about the history: the likely reasons first, since when
    nothing moved (the server's time where it said), and what may explain it."""
    rows: list[tuple[str, str]] = []
    for n, reason in enumerate(info.get("reasons") or []):
        rows.append(("why" if n == 0 else "", reason))
    if info.get("sinceChange") is not None:
        clock = "" if info.get("statusSinceClock") == "server" else ", when mcptask saw it"
        rows.append(
            (
                "unchanged for",
                f"{duration(info['sinceChange'])} (since {info['statusSince']}{clock})",
            )
        )
    if info.get("sinceMessage") is not None:
        said = info.get("lastMessage")
        what = f": {said}" if isinstance(said, str) and said else ""
        rows.append(("last message", f"{duration(info['sinceMessage'])} ago{what}"))
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
        keys = ", ".join(question.get("keys") or [])
        asked = question.get("message")
        what = f"{asked}" if asked else "an answer"
        if keys:
            what += f" ({keys})"
        waiting = question.get("waiting")
        since = f" for {duration(waiting)}" if isinstance(waiting, int | float) else ""
        if question.get("formOpenIn"):
            how = f"answer it in the form that `{question['formOpenIn']}` shows"
        elif question.get("status") == "auth_required":
            how = "mcptask cannot give it: authenticate with the agent"
        else:
            how = f"`{command_line('answer', task_id)}`"
        rows.append(("waiting on", f"{what}{since}: {how}"))
    if info.get("purgeAt"):
        rows.append(("purged at", str(info["purgeAt"])))
    skew = info.get("clockSkew")
    if isinstance(skew, int | float) and abs(skew) >= 1.0:
        way = "ahead of" if skew > 0 else "behind"
        rows.append(("clock", f"the server's clock is {duration(abs(skew))} {way} this machine's"))
    return rows


def print_stuck(out: Output, info: dict[str, Any], task_id: str) -> None:
    from rich.table import Table

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for name, value in stuck_rows(info, task_id):
        grid.add_row(name, safe_line(value, 300))
    out.console.print(grid)
