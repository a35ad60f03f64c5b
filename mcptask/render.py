"""Everything mcptask prints. JSON modes print the exact data; pretty mode (Rich) never shows
raw control characters or escape sequences from a server. Rich is imported only for pretty
output."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Literal

from . import redact
from .hints import command_line
from .model import Task
from .protocols.wire import result_text
from .textsafe import clean, one_line

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

    from .jqfilter import JqFilter
    from .protocols.base import TaskResult, Tool
    from .watch import Watched

MODES = ("auto", "pretty", "json", "ndjson")
#: a path: pretty output is recorded (100 columns, colours on, no live redraws) and saved there as
#: an SVG when the command ends (`scripts/screenshot` makes docs/demo.svg with it)
RECORD_SVG_ENV = "MCPTASK_RECORD_SVG"

STYLE = {
    "submitted": ("cyan", "◌"),
    "working": ("blue", "●"),
    "input_required": ("yellow", "?"),
    "auth_required": ("yellow", "⚿"),
    "completed": ("green", "✔"),
    "failed": ("red", "✖"),
    "cancelled": ("magenta", "⊘"),
    "rejected": ("magenta", "⊘"),
    "expired": ("bright_black", "⌛"),
    "timeout": ("yellow", "⏱"),
    "interrupted": ("yellow", "■"),
    "error": ("red", "!"),
    "unknown": ("red", "?"),
    #: the live view's word for a task no answer has shown yet
    "unseen": ("bright_black", "…"),
}
UNSEEN = "unseen"


def resolve_mode(mode: str, terminal: bool, *, streaming: bool = False) -> str:
    """`auto`: pretty on a terminal; else ndjson for streaming commands, json for the rest."""
    if mode == "auto":
        if terminal:
            return "pretty"
        return "ndjson" if streaming else "json"
    return mode


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


@dataclass
class Output:
    """Where and how a command prints. Tests pass StringIO streams."""

    mode: str = "json"
    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    #: removes secrets from text (the transport's, set by the context); every secret the
    #: process holds is scrubbed as well (`redact.scrub`)
    redactor: Callable[[str], str] = redact.scrub_text
    #: `--jq EXPR`: every JSON document printed goes through it
    jq: JqFilter | None = None
    #: the target is a stdio server (its tasks end with the process): changes input hints
    stdio: bool = False
    _console: Console | None = None

    @property
    def pretty(self) -> bool:
        return self.mode == "pretty"

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            if os.environ.get(RECORD_SVG_ENV):
                # not interactive: a live view draws only its final frame, so the recording
                # holds what the terminal shows at the end rather than every redraw
                self._console = Console(
                    file=self.stdout,
                    highlight=False,
                    soft_wrap=False,
                    record=True,
                    force_terminal=True,
                    force_interactive=False,
                    width=100,
                )
            else:
                self._console = Console(file=self.stdout, highlight=False, soft_wrap=False)
            # the reader went away (`| head -1`): Rich would exit 1; the CLI exits quietly, 0
            self._console.on_broken_pipe = _broken_pipe  # type: ignore[method-assign]
        return self._console

    def save_recording(self) -> None:
        """With MCPTASK_RECORD_SVG set, save what the console printed as an SVG there."""
        path = os.environ.get(RECORD_SVG_ENV)
        if path and self._console is not None and self._console.record:
            self._console.save_svg(path, title="mcptask")

    def err_console(self) -> Console:
        from rich.console import Console

        return Console(file=self.stderr, highlight=False)

    # -- plain lines --------------------------------------------------------------------------

    def line(self, data: Any) -> None:
        """One JSON document (json) or line (ndjson), flushed at once; with `--jq`, what the
        filter makes of it (strings that reach a terminal cleaned, as server text always is).
        Never a secret the process holds (a server may echo one)."""
        data = redact.scrub(data)
        if self.jq is None:
            self.stdout.write(dumps(data) + "\n")
        else:
            terminal = self.stdout.isatty()
            for text in self.jq.lines(data):
                self.stdout.write((clean(text) if terminal else text) + "\n")
        self.stdout.flush()

    def note(self, message: str) -> None:
        """A one-line remark on stderr (never part of the data on stdout)."""
        self.stderr.write(f"mcptask: {one_line(self._redacted(message), 500)}\n")
        self.stderr.flush()

    def error(self, message: str) -> None:
        self.stderr.write(f"mcptask: error: {one_line(self._redacted(message), 1000)}\n")
        self.stderr.flush()

    def _redacted(self, message: str) -> str:
        # clean first: a secret split by escape sequences must still be found and redacted
        return redact.scrub_text(self.redactor(clean(message, multiline=False)))

    def scrubbed(self, task: Task) -> Task:
        """`task` without any secret the process holds (for pretty output)."""
        if not redact.held():
            return task
        return Task.model_validate(redact.scrub(task.model_dump()))

    def scrubbed_result(self, result: TaskResult) -> TaskResult:
        from dataclasses import replace

        if not redact.held():
            return result
        return replace(
            result,
            task=self.scrubbed(result.task),
            payload=redact.scrub(result.payload),
            error=redact.scrub(result.error),
        )

    # -- tasks --------------------------------------------------------------------------------

    def task(self, task: Task) -> None:
        if not self.pretty:
            self.line(task.to_json())
            return
        self.console.print(task_panel(self.scrubbed(task)))

    def tasks(self, tasks: list[Task], *, title: str = "tasks") -> None:
        if self.mode == "ndjson":
            for t in tasks:  # one task per line, as `watch` prints its events
                self.line(t.to_json())
            return
        if not self.pretty:
            self.line({"tasks": [t.to_json() for t in tasks]})
            return
        if not tasks:
            self.console.print(safe(f"no {title}"))
            return
        from rich.table import Table

        rows = [
            (safe(t.taskId), status_text(t.status), safe_line(t.statusMessage or ""), age(t))
            for t in tasks
        ]
        headers = ("task", "status", "message", "updated")
        needs = [
            max(cell_width(h), *(cell_width(r[i]) for r in rows)) for i, h in enumerate(headers)
        ]
        needs[0] = min(needs[0], LIST_ID_WIDTH)  # a longer id folds onto a second line
        most = min(needs[2], 80)
        needs[2] = cell_width(headers[2])
        # status words and headers are never cut: the message gives way (it wraps), the time
        # goes first
        layout = fit_columns(
            self.console.width, needs, [None, None, None, 1], flexible=2, least=12, most=most
        )
        table = Table(title=safe(title), title_justify="left", show_edge=False, expand=False)
        for i, col_width in layout:
            fold = i in (0, 2)  # a long id or message goes on over more lines
            table.add_column(
                headers[i],
                width=col_width,
                no_wrap=not fold,
                overflow="fold" if fold else "ellipsis",
            )
        for row in rows:
            table.add_row(*(row[i] for i, _ in layout))
        self.console.print(table)

    def tools(self, tools: list[Tool]) -> None:
        """`tools`: `{"tools": [...]}`, or a table: name, task support, the required
        arguments, a one-line description."""
        if not self.pretty:
            self.line({"tools": [t.to_json() for t in tools]})
            return
        if not tools:
            self.console.print("no tools")
            return
        from rich.table import Table

        table = Table(show_edge=False)
        table.add_column("tool", no_wrap=True)
        table.add_column("task", no_wrap=True, min_width=9)
        table.add_column("required", overflow="fold", min_width=8, max_width=30)
        table.add_column("description", overflow="ellipsis", no_wrap=True, max_width=60)
        for t in tools:
            table.add_row(
                safe_line(t.name, 60),
                support_text(t.taskSupport),
                safe_line(", ".join(t.required), 200),
                safe_line(t.description or t.title or "", 200),
            )
        self.console.print(table)

    def result(self, result: TaskResult) -> None:
        if not self.pretty:
            self.line(result.to_json())
            return
        self.console.print(result_renderable(self.scrubbed_result(result)))


def delay_text(seconds: float) -> str:
    """A retry's delay, to a tenth of a second while it is short (`0.3s`, `2.5s`, `1m05s`)."""
    return duration_ms(round(seconds * 10) * 100)


#: the list's task column: longer ids fold onto more lines
LIST_ID_WIDTH = 20


def age(task: Task, now: float | None = None) -> str:
    """How long ago the task was last updated (`1m05s ago`); the server's text when it is not
    an ISO 8601 time."""
    from datetime import datetime

    stamp = task.lastUpdatedAt or ""
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        if then.tzinfo is None:
            return one_line(stamp, 40)
        return duration((time.time() if now is None else now) - then.timestamp()) + " ago"
    except (ValueError, OverflowError, OSError):
        return one_line(stamp, 40)


def cell_width(cell: Any) -> int:
    """The terminal cells a Rich Text or a str takes."""
    from rich.cells import cell_len

    return int(cell.cell_len) if hasattr(cell, "cell_len") else cell_len(str(cell))


def fit_columns(
    width: int,
    needs: list[int],
    drops: list[int | None],
    *,
    flexible: int,
    least: int,
    most: int,
    hidden: set[int] | None = None,
) -> list[tuple[int, int]]:
    """Lay out a table of `width` cells: (column, width) for the columns to draw. Every column
    but `flexible` gets its need; `flexible` gets what is left, at most `most`. While that is
    under `least`, the droppable column with the highest rank in `drops` (None: never) goes.
    Columns in `hidden` are not drawn at all.
    Rich's table draws one cell of padding each side of a cell and a rule between columns."""
    shown = [i for i in range(len(needs)) if i not in (hidden or set())]
    while True:
        fixed = sum(needs[i] for i in shown if i != flexible)
        rest = width - fixed - 3 * len(shown) + 1
        droppable = [i for i in shown if drops[i] is not None]
        if rest >= least or not droppable:
            break
        shown.remove(max(droppable, key=lambda i: drops[i] or 0))
    rest = max(needs[flexible], min(rest, most))
    return [(i, rest if i == flexible else needs[i]) for i in shown]


def _broken_pipe() -> None:
    raise BrokenPipeError


def safe(text: str) -> Any:
    """Server text as a Rich Text (never markup), cleaned of escapes."""
    from rich.text import Text

    return Text(clean(text))


def safe_line(text: str, limit: int = 200) -> Any:
    from rich.text import Text

    return Text(one_line(text, limit))


def status_text(status: str) -> Any:
    from rich.text import Text

    colour, symbol = STYLE.get(status, ("white", "·"))
    return Text(f"{symbol} {status}", style=colour)


def support_text(support: str) -> Any:
    from rich.text import Text

    style = {"required": "cyan", "optional": "blue", "forbidden": "dim"}.get(support, "")
    return Text(support, style=style)


def task_panel(task: Task) -> RenderableType:
    from rich.table import Table

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    grid.add_row("task", safe(task.taskId))
    grid.add_row("status", status_text(task.status))
    if task.statusMessage:
        grid.add_row("message", safe(task.statusMessage))
    if task.createdAt:
        grid.add_row("created", safe(task.createdAt))
    if task.lastUpdatedAt:
        grid.add_row("updated", safe(task.lastUpdatedAt))
    if task.ttl is not None:
        grid.add_row("ttl", duration_ms(task.ttl))
    if task.pollInterval is not None:
        grid.add_row("poll interval", duration_ms(task.pollInterval))
    if task.contextId:
        grid.add_row("context", safe(task.contextId))
    if task.inputRequests:
        grid.add_row("input requests", safe(dumps(task.inputRequests)))
    grid.add_row("protocol", task.protocol)
    grid.add_row("server", safe(task.server))
    return grid


def error_text(error: Any) -> str:
    """A JSON-RPC error object (or whatever a damaged task book holds instead) as one text."""
    if isinstance(error, dict):
        code, message = error.get("code"), error.get("message", "")
    else:
        code, message = None, error
    text = clean(message if isinstance(message, str) else dumps(message))
    return f"error {code}: {text}" if code is not None else f"error: {text}"


def result_renderable(result: TaskResult) -> RenderableType:
    from rich.text import Text

    if result.error is not None:
        return Text(error_text(result.error), style="red")
    text, is_error = result_text(result.payload)
    return Text(clean(text), style="red" if is_error else "")


def duration(seconds: float) -> str:
    """The one way mcptask shows a span of time: `45s`, `1m05s`, `2h03m`, `3d04h`. Rounded to
    the second (sub-second spans of a server's own milliseconds: `duration_ms`); negative is 0."""
    if seconds != seconds or seconds <= 0:  # NaN, or a countdown that ran out
        return "0s"
    if seconds >= MAX_DAYS * 86400:
        return f"≥{MAX_DAYS}d"
    n = round(seconds)
    if n < 60:
        return f"{n}s"
    if n < 3600:
        return f"{n // 60}m{n % 60:02d}s"
    if n < 100 * 3600:
        return f"{n // 3600}h{n % 3600 // 60:02d}m"
    return f"{n // 86400}d{n % 86400 // 3600:02d}h"


#: spans beyond this many days read `≥1000d` (a server's absurd ttl must not print 20 digits)
MAX_DAYS = 1000


def duration_ms(ms: int) -> str:
    """A server's milliseconds (ttl, pollInterval) in `duration`'s format; under ten seconds
    a fraction is kept (`0.25s`, `1.5s`), since that is what a server's hint says."""
    ms = min(max(ms, 0), MAX_DAYS * 86_400_000)  # a huge integer must not overflow a float
    if 0 < ms < 10_000 and ms % 1000:
        return f"{ms / 1000:g}s"
    return duration(ms / 1000)


# -- watch events -----------------------------------------------------------------------------


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
    return w.via if w.done else ("push" if w.push_live else "poll")


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
