"""Everything mcptask prints: the output modes, tables and panels. JSON modes print the exact
data; pretty mode (Rich) never shows raw control characters or escape sequences from a server.
Rich is imported only for pretty output."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from mcptask.model.times import epoch
from mcptask.protocols.wire import result_text
from mcptask.text import jsonsafe, redact
from mcptask.text.sanitize import clean, one_line

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from mcptask.model.results import TaskResult
    from mcptask.model.task import Task
    from mcptask.model.tools import Tool
    from mcptask.output.jq import JqFilter
    from mcptask.protocols.trace_context import TaskTrace

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
    #: the live view's word for a task no answer has shown yet (its first poll is under way)
    "checking": ("bright_black", "…"),
    #: a task no answer has shown yet, whose polls fail (the server is down): retried
    "retrying": ("yellow", "↻"),
}
UNSEEN = "checking"
RETRYING = "retrying"


def resolve_mode(mode: str, terminal: bool, *, streaming: bool = False) -> str:
    """`auto`: pretty on a terminal; else ndjson for streaming commands, json for the rest."""
    if mode == "auto":
        if terminal:
            return "pretty"
        return "ndjson" if streaming else "json"
    return mode


def dumps(data: Any) -> str:
    """Strict JSON (never NaN or Infinity: `jsonsafe.Refused`), always UTF-8 text: a lone
    surrogate is written as U+FFFD (`jsonsafe.text_safe`, the one Unicode policy)."""
    return jsonsafe.text_safe(jsonsafe.dumps(data, ensure_ascii=False))


def _unprintable(exc: jsonsafe.Refused) -> Exception:
    """Only a value not from a server can be refused here (a task book written before
    mcptask refused such JSON at the door): never print JSON that is not JSON."""
    from mcptask.errors import ProtocolError

    return ProtocolError(f"cannot print this as strict JSON: {exc}")


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
    #: what Ctrl-C did, said in place of `error: interrupted` (a plain call: whether the
    #: server was told to cancel)
    interrupted: str | None = None
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
        if self.jq is None:
            self._lines([data])
            return
        try:  # streamed as jq yields it; Ctrl-C ends it at once (output/jq.py)
            self.jq.write(redact.scrub(data), self.stdout, self.stdout.isatty())
        except jsonsafe.Refused as exc:
            raise _unprintable(exc) from None
        self.stdout.flush()

    def _lines(self, docs: list[Any]) -> None:
        """JSON documents, a line each, in one write (no `--jq`)."""
        try:
            text = jsonsafe.lines(docs)
            if redact.may_hold(text):  # a held secret or a URL password in it, maybe
                text = jsonsafe.lines([redact.scrub(data) for data in docs])
        except jsonsafe.Refused as exc:
            raise _unprintable(exc) from None
        self.stdout.write(text)
        self.stdout.flush()

    def note(self, message: str) -> None:
        """A one-line remark on stderr (never part of the data on stdout); on a terminal
        narrower than it, wrapped at word boundaries (a terminal wraps mid-word)."""
        self.stderr.write(self._wrapped(f"mcptask: {one_line(self._redacted(message), 500)}"))
        self.stderr.flush()

    def error(self, message: str) -> None:
        line = f"mcptask: error: {one_line(self._redacted(message), 1000)}"
        self.stderr.write(self._wrapped(line))
        self.stderr.flush()

    def _wrapped(self, line: str) -> str:
        """`line` and its newline; on a terminal, folded between words to its width (the
        lines after the first indented), never inside a word, a URL or a command."""
        width = _terminal_width(self.stderr)
        if width is None or len(line) <= width:
            return line + "\n"
        import re
        import textwrap

        # a command in backticks stays whole on one line (to copy it)
        held = re.sub(r"`[^`]{1,80}`", lambda m: m.group(0).replace(" ", "\0"), line)
        folded = textwrap.fill(
            held,
            width=width,
            subsequent_indent="  ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        return folded.replace("\0", " ") + "\n"

    def _redacted(self, message: str) -> str:
        # clean first: a secret split by escape sequences must still be found and redacted
        return redact.scrub_text(self.redactor(clean(message, multiline=False)))

    def scrubbed(self, task: Task) -> Task:
        """`task` without any secret the process holds (for pretty output)."""
        if not redact.held():
            return task
        from mcptask.model.task import Task

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

    def task(self, task: Task, *, trace: TaskTrace | None = None) -> None:
        """A task; `trace`: its trace, shown with it (`traceId`, `spanId`; a `trace` row)."""
        if not self.pretty:
            self.line(traced(task.to_json(), trace))
            return
        self.console.print(task_panel(self.scrubbed(task), trace))

    def tasks(self, tasks: list[Task], *, title: str = "tasks") -> None:
        if self.mode == "ndjson":
            if self.jq is None:  # one task per line, as `watch` prints its events; one write
                self._lines([t.json_view() for t in tasks])  # encoded at once: no copies
                return
            for t in tasks:
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
            [
                safe_line(t.taskId, 500),
                status_text(t.status),
                safe_line("; ".join(x for x in (t.bookNote, t.statusMessage) if x)),
                age(t),
            ]
            for t in tasks[:PRETTY_ROWS]
        ]
        headers = ("task", "status", "message", "updated")
        needs = [
            max(cell_width(h), *(cell_width(r[i]) for r in rows)) for i, h in enumerate(headers)
        ]
        most = min(needs[2], 80)
        needs[2] = cell_width(headers[2])
        width = self.console.width
        # a task id is never wrapped or cut: whole ids while the message keeps some room (the
        # time goes first), else the shortest unique prefix (which every command takes)
        least = min(12, max(most, cell_width(headers[2])))  # empty messages need no room
        layout = fit_columns(
            width, needs, [None, None, None, 1], flexible=2, least=least, most=most
        )
        if table_width(layout) > width:
            shown = tasks[:PRETTY_ROWS]
            short = unique_id_prefix([t.taskId for t in shown])
            for row, t in zip(rows, shown, strict=True):
                row[0] = safe_line(t.taskId[:short], 500)
            needs[0] = max(cell_width(headers[0]), short)
            layout = fit_columns(
                width, needs, [None, None, None, 1], flexible=2, least=least, most=most
            )
        table = Table(title=safe(title), title_justify="left", show_edge=False, expand=False)
        for i, col_width in layout:
            fold = i == 2  # a long message goes on over more lines
            table.add_column(
                headers[i],
                width=col_width,
                no_wrap=not fold,
                overflow="fold" if fold else ("crop" if i == 0 else "ellipsis"),
            )
        for row in rows:
            table.add_row(*(row[i] for i, _ in layout))
        self.console.print(table)
        self._not_shown(len(tasks), "tasks")

    def tools(
        self, tools: list[Tool], *, version: str | None = None, via: str | None = None
    ) -> None:
        """`tools`: `{"tools": [...]}` (with the MCP `protocolVersion` in use when known), or
        a table: name, task support, the required arguments, a one-line description, under
        the version."""
        if not self.pretty:
            out: dict[str, Any] = {"tools": [t.to_json() for t in tools]}
            if version:
                out["protocolVersion"] = version
            self.line(out)
            return
        caption = f"MCP {safe_line(version, 40)}" if version else None
        if caption and via:
            caption += f" over {via}"
        if not tools:
            self.console.print("no tools" + (f" ({caption})" if caption else ""))
            return
        from rich.table import Table

        headers = ("tool", "task", "required", "description")
        rows = [
            [
                safe_line(t.name, 500),
                support_text(t.taskSupport),
                safe_line(", ".join(t.required), 500),
                safe_line(t.description or t.title or "", 500),
            ]
            for t in tools[:PRETTY_ROWS]
        ]
        needs = [
            max(cell_width(h), *(cell_width(r[i]) for r in rows)) for i, h in enumerate(headers)
        ]
        # the required arguments may go on over lines, between names: never narrower than the
        # longest name, at most REQUIRED_MOST unless a name is longer
        longest_arg = max((cell_width(a) for t in tools for a in t.required), default=0)
        needs[2] = max(min(needs[2], REQUIRED_MOST), longest_arg, cell_width(headers[2]))
        most = needs[3]
        needs[3] = cell_width(headers[3])
        # names whole and required arguments shown: the description gives way (cut with an
        # ellipsis), then the task-support column
        layout = fit_columns(
            self.console.width, needs, [None, 1, None, None], flexible=3, least=12, most=most
        )
        table = Table(show_edge=False, expand=False, caption=caption, caption_justify="left")
        for i, col_width in layout:
            table.add_column(
                headers[i],
                width=col_width,
                no_wrap=i != 2,
                overflow="fold" if i == 2 else "ellipsis",
            )
        for r in rows:
            table.add_row(*(r[i] for i, _ in layout))
        self.console.print(table)
        self._not_shown(len(tools), "tools")

    def _not_shown(self, total: int, what: str) -> None:
        """A pretty table stops at PRETTY_ROWS rows (Rich lays a table out whole, in memory:
        100,000 rows took 52 s and 541 MB); it says so, and how to see every row."""
        if total > PRETTY_ROWS:
            self.console.print(
                f"… and {total - PRETTY_ROWS:,} more {what} not shown: a table shows the first "
                f"{PRETTY_ROWS:,} of {total:,} (-o json lists them all)"
            )

    def result(self, result: TaskResult) -> None:
        if not self.pretty:
            self.line(result.to_json())
            return
        self.console.print(result_renderable(self.scrubbed_result(result)))


def _terminal_width(stream: Any) -> int | None:
    """The width of the terminal `stream` writes to; None when it is not a terminal."""
    import os

    try:
        if not stream.isatty():
            return None
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return None
    # a terminal that does not say its size (0: a bare pty) is left to wrap as it does
    return max(columns, 20) if columns > 0 else None


def delay_text(seconds: float) -> str:
    """A retry's delay, to a tenth of a second while it is short (`0.3s`, `2.5s`, `1m05s`)."""
    return duration_ms(round(seconds * 10) * 100)


#: the most rows a pretty table shows (the rest are counted below it)
PRETTY_ROWS = 1000
#: the tools table's required column wraps (between names) beyond this many cells
REQUIRED_MOST = 30


def table_width(layout: list[tuple[int, int]]) -> int:
    """The cells a table laid out by `fit_columns` takes (padding and rules included)."""
    return sum(w for _, w in layout) + 3 * len(layout) - 1


def unique_id_prefix(ids: list[str], least: int = 8) -> int:
    """The shortest prefix length (at least `least`) that tells every id in `ids` apart."""
    import itertools

    if not ids:
        return least
    ordered = sorted(set(ids))
    need = least
    for a, b in itertools.pairwise(ordered):
        common = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            common += 1
        need = max(need, common + 1)
    return min(need, max(len(t) for t in ordered))


def age(task: Task, now: float | None = None) -> str:
    """How long ago the task was last updated (`1m05s ago`); the server's text when it is not
    an ISO 8601 time."""
    stamp = task.lastUpdatedAt or ""
    then = epoch(stamp)
    if then is None:
        return one_line(stamp, 40)
    return duration((time.time() if now is None else now) - then) + " ago"


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


def traced(shown: dict[str, Any], trace: TaskTrace | None) -> dict[str, Any]:
    """A task's JSON (`Task.to_json`, changed in place) with its trace's `traceId` and
    `spanId` (what a trace backend finds it by), before `raw`, which stays last."""
    if trace is None:
        return shown
    raw = shown.pop("raw", None)
    shown["traceId"] = trace.ids.trace_id
    shown["spanId"] = trace.ids.span_id
    if raw is not None:
        shown["raw"] = raw
    return shown


def task_panel(task: Task, trace: TaskTrace | None = None) -> RenderableType:
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
    if trace is not None:
        grid.add_row("trace", f"{trace.ids.trace_id} (span {trace.ids.span_id})")
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
