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
from typing import IO, TYPE_CHECKING, Any

from .hints import command_line
from .model import Task
from .protocols.wire import result_text
from .textsafe import clean, one_line

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

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
}


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
    redactor: Callable[[str], str] = lambda s: s
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
        """One JSON document (json) or line (ndjson), flushed at once."""
        self.stdout.write(dumps(data) + "\n")
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
        return self.redactor(clean(message, multiline=False))

    # -- tasks --------------------------------------------------------------------------------

    def task(self, task: Task) -> None:
        if not self.pretty:
            self.line(task.to_json())
            return
        self.console.print(task_panel(task))

    def tasks(self, tasks: list[Task], *, title: str = "tasks") -> None:
        if not self.pretty:
            self.line({"tasks": [t.to_json() for t in tasks]})
            return
        if not tasks:
            self.console.print(safe(f"no {title}"))
            return
        from rich.table import Table

        table = Table(title=safe(title), title_justify="left", show_edge=False)
        for col in ("task", "status", "message", "updated"):
            table.add_column(col, overflow="fold" if col == "task" else "ellipsis")
        for t in tasks:
            table.add_row(
                safe(t.taskId),
                status_text(t.status),
                safe_line(t.statusMessage or ""),
                safe(t.lastUpdatedAt or ""),
            )
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
        self.console.print(result_renderable(result))


def _broken_pipe() -> None:
    raise BrokenPipeError


def seconds(ms: int) -> str:
    """A server's milliseconds as seconds; an absurd value must not overflow a float."""
    if abs(ms) >= 10**15:
        return "≥1e12" if ms > 0 else "≤-1e12"
    return f"{ms / 1000:g}"


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
        grid.add_row("ttl", f"{seconds(task.ttl)} s")
    if task.pollInterval is not None:
        grid.add_row("poll interval", f"{seconds(task.pollInterval)} s")
    if task.contextId:
        grid.add_row("context", safe(task.contextId))
    if task.inputRequests:
        grid.add_row("input requests", safe(dumps(task.inputRequests)))
    grid.add_row("protocol", task.protocol)
    grid.add_row("server", safe(task.server))
    return grid


def result_renderable(result: TaskResult) -> RenderableType:
    from rich.text import Text

    if result.error is not None:
        err = result.error
        return Text(f"error {err.get('code')}: {clean(str(err.get('message', '')))}", style="red")
    text, is_error = result_text(result.payload)
    return Text(clean(text), style="red" if is_error else "")


def elapsed(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"


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
        self.out.note(f"{w.task_id}: {error}; retrying in {delay:.1f} s")

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
        self.retrying[w.task_id] = f"retrying in {delay:.0f}s: {error}"

    def end(self, w: Watched) -> None:
        self.retrying.pop(w.task_id, None)

    def finish(self, watched: list[Watched], code: int) -> None:
        self.__exit__()
        if self.with_result:
            for w in watched:
                if w.result is not None:
                    if len(watched) > 1:
                        self.out.console.print(safe_line(f"── {w.task_id}"), style="bold")
                    self.out.console.print(result_renderable(w.result))
                elif w.result_error:
                    self.out.note(f"{w.task_id}: could not fetch the result: {w.result_error}")
        for w in watched:
            if w.outcome in ("error", "unknown") and w.last_error:
                self.out.note(f"{w.task_id}: {w.last_error}")
            elif w.outcome in ("input_required", "auth_required"):
                self.out.note(needs_input(self.out, w.task_id))

    def render(self) -> RenderableType:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        now = self.clock()
        table = Table(show_edge=False, title=self.title, title_justify="left", expand=False)
        table.add_column("task", no_wrap=True)
        if self.servers:
            table.add_column("server", no_wrap=True, overflow="ellipsis", max_width=24)
        table.add_column("status", no_wrap=True)
        table.add_column("message", overflow="ellipsis", no_wrap=True, max_width=60)
        show_progress = any(w.progress is not None for w in self.watched)
        if show_progress:
            table.add_column("progress", no_wrap=True)
        table.add_column("elapsed", justify="right")
        table.add_column("next poll", justify="right")
        table.add_column("ttl left", justify="right")
        table.add_column("via", style="dim")
        counts: dict[str, int] = {}
        for w in self.watched:
            shown = w.outcome if w.done and w.outcome else None
            shown = shown or (w.task.status if w.task else "submitted")
            counts[shown] = counts.get(shown, 0) + 1
        rows = self._rows_that_fit()
        for w in rows:
            shown = w.outcome if w.done and w.outcome else None
            shown = shown or (w.task.status if w.task else "submitted")
            message = self.retrying.get(w.task_id) or (w.task.statusMessage if w.task else "") or ""
            nxt = "" if w.done else elapsed(w.due - now) if w.due > now else "now"
            if w.asking and not w.done:
                nxt = "answering"
            ttl = ""
            if w.task is not None and w.task.ttl is not None and abs(w.task.ttl) >= 10**15:
                ttl = f"{seconds(w.task.ttl)}s"
            elif w.task is not None and w.task.ttl is not None:
                # the ttl runs from the terminal transition
                left = w.task.ttl / 1000
                if w.task.terminal and w.ended is not None:
                    left -= now - w.ended
                ttl = elapsed(left)
            short = w.task_id if len(w.task_id) <= 14 else w.task_id[:12] + "…"
            server = [safe_line(self.servers.get(w.task_id, ""), 24)] if self.servers else []
            extra = [progress_cell(w)] if show_progress else []
            table.add_row(
                safe_line(short),
                *server,
                status_text(shown),
                safe_line(message, 60),
                *extra,
                elapsed(now - w.started),
                nxt,
                ttl,
                w.via if w.done else ("push" if w.push_live else "poll"),
            )
        hidden = len(self.watched) - len(rows)
        summary = Text(
            "  ".join(f"{STYLE.get(k, ('', '·'))[1]} {v} {k}" for k, v in sorted(counts.items()))
            + (f"  (+{hidden} more rows; -o ndjson shows every task)" if hidden else ""),
            style="dim",
        )
        return Group(table, summary)

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


class _LiveView:
    def __init__(self, events: LiveEvents) -> None:
        self.events = events

    def __rich__(self) -> RenderableType:
        return self.events.render()
