"""The watch's views: ndjson and JSON event sinks and the live table (Rich), fed by the
scheduler."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcptask.text.command_line import command_line

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

    from mcptask.scheduler.watcher import Watched

from mcptask.output.console import (
    MAX_DAYS,
    STYLE,
    UNSEEN,
    Output,
    cell_width,
    delay_text,
    duration,
    duration_ms,
    fit_columns,
    result_renderable,
    safe_line,
    status_text,
)


def end_record(w: Watched, *, with_result: bool) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "event": "end",
        "taskId": w.task_id,
        "outcome": w.outcome,
        "exitCode": w.exit_code,
    }
    if with_result and w.result is not None:
        rec["result"] = w.result.to_json()
    if w.last_error and w.outcome in ("error", "unknown"):
        rec["error"] = w.last_error
    if w.result_error:
        rec["resultError"] = w.result_error
    return rec


def input_hints(out: Output, watched: list[Watched]) -> None:
    """One line on stderr per task that ended waiting for input, naming `answer`."""
    for w in watched:
        if w.outcome in ("input_required", "auth_required"):
            out.note(needs_input(out, w.task_id))


def needs_input(out: Output, task_id: str) -> str:
    """How a task that waits for input can be answered. Over stdio the task ends with the
    server when mcptask exits, so only this run can answer it: on a terminal."""
    if out.stdio:
        return (
            f"{task_id} needs input, and over stdio the task ends with the server when "
            f"mcptask exits (`{command_line('answer', task_id)}` from another process cannot "
            "reach it): run the command on a terminal, where watch asks the question itself"
        )
    return f"{task_id} needs input: answer it with `{command_line('answer', task_id)}`"


class NdjsonEvents:
    def __init__(self, out: Output, *, with_result: bool) -> None:
        self.out = out
        self.with_result = with_result

    def update(self, w: Watched, via: str) -> None:
        if w.task is not None:
            self.out.line({**w.task.to_json(), "event": "status", "via": via})

    def retry(self, w: Watched, error: str, delay: float) -> None:
        self.out.note(f"{w.task_id}: {error}; retrying in {delay_text(delay)}")

    def progress(self, w: Watched) -> None:
        if w.progress is not None:
            self.out.line({**w.progress.to_json(), "taskId": w.task_id})

    def end(self, w: Watched) -> None:
        self.out.line(end_record(w, with_result=self.with_result))

    def finish(self, watched: list[Watched], code: int) -> None:
        if len(watched) > 1:
            outcomes: dict[str, int] = {}
            for w in watched:
                outcomes[w.outcome or "unknown"] = outcomes.get(w.outcome or "unknown", 0) + 1
            self.out.line({"event": "done", "exitCode": code, "outcomes": outcomes})
        input_hints(self.out, watched)


class JsonEvents:
    """Collects everything; prints one object at the end."""

    def __init__(self, out: Output, *, with_result: bool) -> None:
        self.out = out
        self.with_result = with_result

    def update(self, w: Watched, via: str) -> None:
        pass

    def retry(self, w: Watched, error: str, delay: float) -> None:
        pass

    def end(self, w: Watched) -> None:
        pass

    def finish(self, watched: list[Watched], code: int) -> None:
        tasks = []
        for w in watched:
            rec: dict[str, Any] = w.task.to_json() if w.task is not None else {"taskId": w.task_id}
            rec.update({"outcome": w.outcome, "exitCode": w.exit_code})
            if self.with_result and w.result is not None:
                rec["result"] = w.result.to_json()
            if w.last_error and w.outcome in ("error", "unknown"):
                rec["error"] = w.last_error
            if w.result_error:
                rec["resultError"] = w.result_error
            tasks.append(rec)
        self.out.line({"exitCode": code, "tasks": tasks})
        input_hints(self.out, watched)


class LiveEvents:
    """The Rich live view: one row per task, a summary line, at most ten redraws a second."""

    def __init__(
        self,
        out: Output,
        *,
        with_result: bool,
        clock: Callable[[], float] = time.monotonic,
        title: str | None = None,
    ) -> None:
        self.out = out
        self.with_result = with_result
        self.clock = clock
        self.title = title
        self.watched: list[Watched] = []
        self.retrying: dict[str, str] = {}
        #: task id -> a short name of its server, when the watch spans servers (a column then)
        self.servers: dict[str, str] = {}
        self._live: Any = None
        #: the width each fixed column has needed so far (`_layout`: widths only grow)
        self._widths: dict[int, int] = {}

    def __enter__(self) -> LiveEvents:
        from rich.live import Live

        self._live = Live(
            _LiveView(self),
            console=self.out.console,
            # at most ten redraws a second; fewer for big watches (each redraw lays out a table)
            refresh_per_second=10 if len(self.watched) <= 100 else 4,
            transient=False,
        )
        self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.refresh()
            self._live.__exit__(None, None, None)
            self._live = None

    def pause(self) -> None:
        """Stop redrawing (its last frame stays) while a form asks on the terminal."""
        if self._live is not None and self._live.is_started:
            self._live.stop()

    def resume(self) -> None:
        if self._live is not None and not self._live.is_started:
            self._live.start(refresh=True)

    def track(self, watched: list[Watched]) -> None:
        self.watched = watched

    def update(self, w: Watched, via: str) -> None:
        self.retrying.pop(w.task_id, None)

    def retry(self, w: Watched, error: str, delay: float) -> None:
        self.retrying[w.task_id] = f"retrying in {delay_text(delay)}: {error}"

    def end(self, w: Watched) -> None:
        self.retrying.pop(w.task_id, None)

    def finish(self, watched: list[Watched], code: int) -> None:
        self.__exit__()
        if self.with_result:
            for w in watched:
                if w.result is not None:
                    if len(watched) > 1:
                        self.out.console.print(safe_line(f"── {w.task_id}"), style="bold")
                    self.out.console.print(result_renderable(self.out.scrubbed_result(w.result)))
                elif w.result_error:
                    self.out.note(f"{w.task_id}: could not fetch the result: {w.result_error}")
        for w in watched:
            if w.outcome in ("error", "unknown") and w.last_error:
                self.out.note(f"{w.task_id}: {w.last_error}")
            elif w.outcome in ("input_required", "auth_required"):
                self.out.note(needs_input(self.out, w.task_id))

    def render(self, width: int | None = None) -> RenderableType:
        """One frame, laid out for `width` columns (the console's by default)."""
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        now = self.clock()
        counts: dict[str, int] = {}
        for w in self.watched:
            shown = shown_status(w)
            counts[shown] = counts.get(shown, 0) + 1
        rows = self._rows_that_fit()
        cells = [[col.cell(self, w, now) for col in LIVE_COLUMNS] for w in rows]
        layout = self._layout(width or self.out.console.width, cells)
        table = Table(show_edge=False, title=self.title, title_justify="left", expand=False)
        for i, col_width in layout:
            col = LIVE_COLUMNS[i]
            table.add_column(
                col.header,
                width=col_width,
                no_wrap=True,
                overflow="ellipsis",
                justify=col.justify,
                style=col.style,
            )
        for row in cells:
            table.add_row(*(row[i] for i, _ in layout))
        hidden = len(self.watched) - len(rows)
        summary = Text(
            "  ".join(f"{STYLE.get(k, ('', '·'))[1]} {v} {k}" for k, v in sorted(counts.items()))
            + (f"  (+{hidden} more rows; -o ndjson shows every task)" if hidden else ""),
            style="dim",
        )
        return Group(table, summary)

    def _layout(self, width: int, cells: list[list[Any]]) -> list[tuple[int, int]]:
        """Which columns to draw and how wide: each column but the message as wide as its
        header and the widest cell it has shown so far (widths only grow, so the frame does not
        jump as messages change), the message what is left (`fit_columns`)."""
        for row in cells:
            for i, col in enumerate(LIVE_COLUMNS):
                if i != MESSAGE:
                    need = max(cell_width(col.header), cell_width(col.reserve), cell_width(row[i]))
                    need = min(need, col.most) if col.most else need
                    self._widths[i] = max(self._widths.get(i, 0), need)
        needs = [self._widths.get(i, cell_width(c.header)) for i, c in enumerate(LIVE_COLUMNS)]
        return fit_columns(
            width,
            needs,
            [c.drop for c in LIVE_COLUMNS],
            flexible=MESSAGE,
            least=MESSAGE_MIN,
            most=MESSAGE_MAX,
            hidden={i for i, c in enumerate(LIVE_COLUMNS) if c.when and not c.when(self)},
        )

    def _rows_that_fit(self) -> list[Watched]:
        """Only what fits the terminal is drawn (a thousand rows would cost a thousand rows of
        layout ten times a second): the unfinished tasks first, then the latest to end."""
        room = max(3, self.out.console.size.height - 7)
        if len(self.watched) <= room:
            return self.watched
        running = [w for w in self.watched if not w.done]
        ended = sorted((w for w in self.watched if w.done), key=lambda w: -(w.ended or 0.0))
        return (running + ended)[:room]


def count_text(progress: float, total: float | None) -> str:
    """`3/4`, or `3` without a total (numbers as short as they are)."""
    done = f"{progress:g}"
    return f"{done}/{total:g}" if total is not None else done


def progress_cell(w: Watched, width: int = 10) -> str:
    """`███░░░ 3/4` (a bar where the total is known), `3` without one, empty before any."""
    p = w.progress
    if p is None:
        return ""
    count = count_text(p.progress, p.total)
    if not p.total or p.total <= 0:
        return count
    filled = round(width * min(max(p.progress / p.total, 0.0), 1.0))
    return "█" * filled + "░" * (width - filled) + " " + count


def shown_status(w: Watched) -> str:
    """The word a row shows: the outcome once the task ended, else its last status."""
    if w.done and w.outcome:
        return w.outcome
    return w.task.status if w.task else UNSEEN


@dataclass(frozen=True)
class LiveColumn:
    """One column of the live view. `cell` makes a row's cell (a Rich Text or a plain str of
    clean text); `drop` orders the columns that give way on a narrow terminal (the highest goes
    first; None: never dropped). Every column is as wide as it has needed so far, but the
    message column (MESSAGE), which takes what the others leave."""

    header: str
    cell: Callable[[LiveEvents, Watched, float], Any]
    drop: int | None = None
    justify: Literal["left", "right"] = "left"
    style: str = ""
    #: a cell the column keeps room for from the first frame (so it need not widen later)
    reserve: str = ""
    #: at most this wide (longer cells are cut with an ellipsis); None: as wide as they are
    most: int | None = None
    #: the column is drawn only while this says so (None: always)
    when: Callable[[LiveEvents], bool] | None = None


def _task_cell(view: LiveEvents, w: Watched, now: float) -> Any:
    short = w.task_id if len(w.task_id) <= TASK_ID_SHOWN else w.task_id[: TASK_ID_SHOWN - 1] + "…"
    return safe_line(short)


def _server_cell(view: LiveEvents, w: Watched, now: float) -> Any:
    return safe_line(view.servers.get(w.task_id, ""), 100)


def _status_cell(view: LiveEvents, w: Watched, now: float) -> Any:
    return status_text(shown_status(w))


def _message_cell(view: LiveEvents, w: Watched, now: float) -> Any:
    return safe_line(shown_message(w, view.retrying), 500)


def shown_message(w: Watched, retrying: dict[str, str]) -> str:
    """The live view's message: the retry under way, else why the task ended in error (or
    why its result is missing), else the task's own message."""
    if not w.done and w.task_id in retrying:
        return retrying[w.task_id]
    if w.done and w.outcome in ("error", "unknown") and w.last_error:
        return w.last_error
    if w.done and w.result_error:
        return f"result not fetched: {w.result_error}"
    return (w.task.statusMessage if w.task else "") or ""


def _progress_cell(view: LiveEvents, w: Watched, now: float) -> str:
    return progress_cell(w)


def _elapsed_cell(view: LiveEvents, w: Watched, now: float) -> str:
    # a finished row's clock stops when the task ended
    return duration((w.ended if w.done and w.ended is not None else now) - w.started)


def _next_poll_cell(view: LiveEvents, w: Watched, now: float) -> str:
    if w.done:
        return ""
    if w.asking:
        return "answering"
    return duration(w.due - now) if w.due > now else "now"


def _ttl_cell(view: LiveEvents, w: Watched, now: float) -> str:
    if w.task is None or w.task.ttl is None:
        return ""
    left = duration_ms(w.task.ttl)
    if w.task.terminal and w.ended is not None:
        # the ttl runs from the terminal transition
        left = duration(min(w.task.ttl, MAX_DAYS * 86_400_000) / 1000 - (now - w.ended))
    return left


def _via_cell(view: LiveEvents, w: Watched, now: float) -> str:
    if w.done:
        return w.via
    if not w.push_live:
        return "poll"
    return "webhook" if w.live_via == {"webhook"} else "push"


#: the live view's columns, left to right (a new column: one entry here, with its `drop` rank)
LIVE_COLUMNS: tuple[LiveColumn, ...] = (
    LiveColumn("task", _task_cell),
    # a watch that spans servers says which task is where
    LiveColumn("server", _server_cell, drop=1, most=24, when=lambda view: bool(view.servers)),
    # room for the words most tasks end with: the column keeps its width when they end
    LiveColumn("status", _status_cell, reserve="✔ completed"),
    LiveColumn("message", _message_cell),
    # progress the server pushes for a task: a column once a task has some
    LiveColumn(
        "progress",
        _progress_cell,
        drop=3,
        when=lambda view: any(w.progress is not None for w in view.watched),
    ),
    LiveColumn("elapsed", _elapsed_cell, drop=2, justify="right"),
    LiveColumn("next poll", _next_poll_cell, drop=5, justify="right"),
    LiveColumn("ttl left", _ttl_cell, drop=4, justify="right"),
    LiveColumn("via", _via_cell, drop=6, style="dim"),
)
#: the column that takes the room the others leave
MESSAGE = next(i for i, c in enumerate(LIVE_COLUMNS) if c.header == "message")
#: the message column gets at least this many cells before a droppable column goes, and at most
#: MESSAGE_MAX (a very wide terminal need not stretch the table)
MESSAGE_MIN = 12
MESSAGE_MAX = 80
#: task ids longer than this are shown cut, with an ellipsis
TASK_ID_SHOWN = 13


class _LiveView:
    def __init__(self, events: LiveEvents) -> None:
        self.events = events

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.events.render(options.max_width)
