"""The watch's views: ndjson and JSON event sinks and the live table (Rich), fed by the
scheduler."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcptask.model.times import epoch
from mcptask.text.command_line import command_line
from mcptask.text.sanitize import one_line

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

    from mcptask.protocols.artifacts import ArtifactUpdate
    from mcptask.scheduler.watcher import Watched
    from mcptask.scheduler.width import Lateness


from mcptask.output.console import (
    MAX_DAYS,
    RETRYING,
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
    traced,
    unique_id_prefix,
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


#: seconds within which the same failure of other tasks is counted, not said again
RETRY_QUIET = 1.0


def _retries(n: int) -> str:
    return "retry" if n == 1 else "retries"


class NdjsonEvents:
    def __init__(
        self, out: Output, *, with_result: bool, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.out = out
        self.with_result = with_result
        self.clock = clock
        #: the retry line last said: its failure, when, and the tasks that failed alike since
        self._retry_said: tuple[str, float] = ("", -math.inf)
        self._retries_unsaid = 0

    def update(self, w: Watched, via: str) -> None:
        if w.task is not None:
            shown = traced(w.task.to_json(), w.ref.trace)
            self.out.line({**shown, "event": "status", "via": via})

    def retry(self, w: Watched, error: str, delay: float) -> None:
        """One line on stderr per retry; but the same failure of many tasks (a server that
        says "too many requests" to a big watch) once a second, with how many more had it."""
        now = self.clock()
        said, when = self._retry_said
        if error == said and now - when < RETRY_QUIET:
            self._retries_unsaid += 1
            return
        if error != said:
            self._retries_left()
        more = self._retries_unsaid
        also = f" ({more} more {_retries(more)} like it since the last such line)"
        self.out.note(
            f"{w.task_id}: {error}; retrying in {delay_text(delay)}{also if more else ''}"
        )
        self._retry_said, self._retries_unsaid = (error, now), 0

    def _retries_left(self) -> None:
        """The retries counted and not said yet, said (another failure comes, or the end)."""
        if self._retries_unsaid:
            more = self._retries_unsaid
            said = self._retry_said[0]
            self.out.note(f"{more} more {_retries(more)} like it since the last such line: {said}")
            self._retries_unsaid = 0

    def progress(self, w: Watched) -> None:
        if w.progress is not None:
            self.out.line({**w.progress.to_json(), "taskId": w.task_id})

    def artifact(self, w: Watched, update: ArtifactUpdate) -> None:
        self.out.line(update.to_json())

    def saved(self, manifest: dict[str, Any]) -> None:
        """`watch --result --save DIR`: what was written for a task, before `done`."""
        self.out.line({"event": "saved", **manifest})

    def end(self, w: Watched) -> None:
        self.out.line(end_record(w, with_result=self.with_result))

    def late(self, note: Lateness) -> None:
        """Polls run late at the cap of polls in flight (scheduler/width.py): one line on
        stderr and one in the output."""
        self.out.note(note.line())
        self.out.line({"event": "late", **note.to_json(), "reason": note.line()})

    def finish(self, watched: list[Watched], code: int) -> None:
        self._retries_left()
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
        #: task id -> what `--save` wrote for it
        self._saved: dict[str, dict[str, Any]] = {}

    def update(self, w: Watched, via: str) -> None:
        pass

    def retry(self, w: Watched, error: str, delay: float) -> None:
        pass

    def end(self, w: Watched) -> None:
        pass

    def saved(self, manifest: dict[str, Any]) -> None:
        self._saved[manifest["taskId"]] = manifest

    def late(self, note: Lateness) -> None:
        """Polls run late at the cap of polls in flight: one line on stderr."""
        self.out.note(note.line())

    def finish(self, watched: list[Watched], code: int) -> None:
        tasks = []
        for w in watched:
            rec: dict[str, Any] = (
                traced(w.task.to_json(), w.ref.trace)
                if w.task is not None
                else {"taskId": w.task_id}
            )
            rec.update({"outcome": w.outcome, "exitCode": w.exit_code})
            if self.with_result and w.result is not None:
                rec["result"] = w.result.to_json()
            if w.task_id in self._saved:
                rec["saved"] = self._saved[w.task_id]
            if w.last_error and w.outcome in ("error", "unknown"):
                rec["error"] = w.last_error
            if w.result_error:
                rec["resultError"] = w.result_error
            tasks.append(rec)
        self.out.line({"exitCode": code, "tasks": tasks})
        input_hints(self.out, watched)


class LiveEvents:
    """The Rich live view: one row per task, a summary line, at most ten redraws a second.

    Every frame is drawn on the thread that owns the watch's state (the event loop): Rich's
    own refresh thread is off (`auto_refresh=False`) and a ticker on the loop redraws, so a
    frame never reads the tasks or the retry table while the loop changes them. Each redraw
    is wrapped in synchronized output (DEC mode 2026: a terminal that knows it shows the frame
    whole, others ignore it). The columns are chosen once per terminal width."""

    def __init__(
        self,
        out: Output,
        *,
        with_result: bool,
        clock: Callable[[], float] = time.monotonic,
        title: str | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.out = out
        self.with_result = with_result
        self.clock = clock
        #: the wall clock (a task's age counts from its `createdAt`)
        self.wall = wall
        self.title = title
        self.watched: list[Watched] = []
        #: task id -> the error its last poll failed with (while a retry is due)
        self.retrying: dict[str, str] = {}
        #: task id -> a short name of its server, when the watch spans servers (a column then)
        self.servers: dict[str, str] = {}
        #: task id -> the status the task book last saw (a row not answered yet in this watch,
        #: whose server is down, shows it rather than `checking`)
        self.last_seen: dict[str, str] = {}
        self._live: Any = None
        self._ticker: asyncio.Task[None] | None = None
        #: the width each fixed column has needed so far (`_layout`: widths only grow)
        self._widths: dict[int, int] = {}
        #: (terminal width, which optional columns apply) -> the columns drawn and the cells
        #: of the task column (a whole id, or a unique prefix of this many)
        self._layouts: dict[tuple[int, frozenset[int]], tuple[list[int], int]] = {}
        #: the terminal width the last frame was drawn for (a terminal that narrows reflows it:
        #: the next redraw starts from a clean screen)
        self._drawn_width = 0
        #: task id -> when it was created, in wall-clock seconds (None: no usable createdAt)
        self._created: dict[str, float | None] = {}
        #: task id -> the message it last had while it ran (a task that ends with it unchanged
        #: says how it ended instead)
        self._running_message: dict[str, str] = {}
        #: the message column's width in the last frame (a progress bar where there is room)
        self.message_width = 0
        #: polls run late at the cap of polls in flight (a line under the summary, and on
        #: stderr once the view is gone)
        self.lateness: list[Lateness] = []

    def __enter__(self) -> LiveEvents:
        self._start()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            self._ticker = loop.create_task(self._tick())
        return self

    def _start(self) -> None:
        from rich.live import Live

        self._live = Live(
            _LiveView(self),
            console=self.out.console,
            auto_refresh=False,  # redrawn by `_tick` on the loop, never from another thread
            transient=False,
        )
        self._drawn_width = 0
        self._live.start()
        self.refresh()

    async def _tick(self) -> None:
        # at most ten redraws a second; fewer for big watches (each redraw lays out a table)
        pause = 0.1 if len(self.watched) <= 100 else 0.25
        while True:
            await asyncio.sleep(pause)
            self.refresh()

    def refresh(self) -> None:
        """Draw a frame now (on the calling thread: the one that owns the state)."""
        live = self._live
        if live is None or not live.is_started:
            return
        console = self.out.console
        sync = console.is_terminal and console.is_interactive and not console.is_dumb_terminal
        width = console.width
        narrowed = sync and self._drawn_width and width < self._drawn_width
        if sync:
            console.file.write(SYNC_BEGIN)
        if narrowed:
            # the terminal narrowed and reflowed the last frame over more rows than Rich knows
            # (how many is the terminal's own business): a stale header would stay behind.
            # Start from a clean screen (terminals keep what it held in their scrollback)
            console.file.write(CLEAR_SCREEN)
            live._live_render._shape = None  # Rich's record of the last frame: none now
        try:
            live.refresh()
        finally:
            if sync:
                console.file.write(SYNC_END)
                console.file.flush()

    def __exit__(self, *exc: object) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._live is not None:
            self.refresh()
            self._live.stop()
            self._live = None
            for note in self.lateness:  # the one line, where it stays
                self.out.note(note.line())

    def pause(self) -> None:
        """Take the frame off the terminal while a form asks there (`resume` draws afresh
        below the form, so neither a stale frame nor the form's last lines are overwritten)."""
        if self._live is not None and self._live.is_started:
            self._live.transient = True
            self._live.stop()

    def resume(self) -> None:
        if self._live is not None and not self._live.is_started:
            self._start()

    def track(self, watched: list[Watched]) -> None:
        self.watched = watched

    def update(self, w: Watched, via: str) -> None:
        self.retrying.pop(w.task_id, None)
        if w.task is not None and not w.task.terminal:
            self._running_message[w.task_id] = w.task.statusMessage or ""

    def working_message(self, w: Watched) -> str | None:
        return self._running_message.get(w.task_id)

    def retry(self, w: Watched, error: str, delay: float) -> None:
        self.retrying[w.task_id] = error

    def end(self, w: Watched) -> None:
        self.retrying.pop(w.task_id, None)

    def artifact(self, w: Watched, update: ArtifactUpdate) -> None:
        pass  # drawn from `Watched.artifact_news` with the next frame (`artifact_lines`)

    def saved(self, manifest: dict[str, Any]) -> None:
        """`watch --result --save DIR`: a line a file, on stderr, once the view is left."""
        for line in manifest_lines(manifest):
            self.out.note(line)

    def status(self, w: Watched) -> str:
        """The word a row shows (`shown_status`), with the task book's last status for a task
        this watch has not heard of yet while its polls fail."""
        if w.task is None and not w.done and w.task_id in self.retrying:
            last = self.last_seen.get(w.task_id)
            if last in STYLE:
                return last
        return shown_status(w, self.retrying)

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
        else:
            # the watch showed how it ended, not what it made: say how to have it
            done = [w.task_id for w in watched if w.outcome == "completed"]
            if len(done) == 1:
                self.out.note(f"its result: `{command_line('result', done[0])}`")
            elif done:
                self.out.note(f"their results: `{command_line('result', 'ID')}` for each")
        for w in watched:
            if w.outcome in ("error", "unknown") and w.last_error:
                self.out.note(f"{w.task_id}: {w.last_error}")
            elif w.outcome in ("input_required", "auth_required"):
                if w.last_error:  # an answer the server refused (the form in `watch`)
                    self.out.note(f"{w.task_id}: {w.last_error}")
                self.out.note(needs_input(self.out, w.task_id))

    def created(self, w: Watched) -> float | None:
        """When the task was created (wall-clock seconds), from its `createdAt`."""
        if w.task_id not in self._created or (
            self._created[w.task_id] is None and w.task is not None
        ):
            self._created[w.task_id] = epoch(w.task.createdAt if w.task else None)
        return self._created[w.task_id]

    def render(self, width: int | None = None) -> RenderableType:
        """One frame, laid out for `width` columns (the console's by default)."""
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        now = self.clock()
        counts: dict[str, int] = {}
        for w in self.watched:
            shown = self.status(w)
            counts[shown] = counts.get(shown, 0) + 1
        rows = self._rows_that_fit()
        cells = [
            [col.cell(self, w, now) if i != MESSAGE else "" for i, col in enumerate(LIVE_COLUMNS)]
            for w in rows
        ]
        layout = self._layout(width or self.out.console.width, cells)
        self.message_width = dict(layout)[MESSAGE]
        for row, w in zip(cells, rows, strict=True):
            row[MESSAGE] = LIVE_COLUMNS[MESSAGE].cell(self, w, now)
        table = Table(show_edge=False, title=self.title, title_justify="left", expand=False)
        for i, col_width in layout:
            col = LIVE_COLUMNS[i]
            table.add_column(
                col.header,
                width=col_width,
                no_wrap=True,
                overflow="crop" if i == TASK else "ellipsis",
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
        extra = list(artifact_lines(rows, width or self.out.console.width))
        if self.lateness:
            extra.append(Text("\n".join(n.line() for n in self.lateness), style="yellow"))
        return Group(table, summary, *extra)

    def late(self, note: Lateness) -> None:
        self.lateness.append(note)

    def _layout(self, width: int, cells: list[list[Any]]) -> list[tuple[int, int]]:
        """Which columns to draw and how wide. The columns are chosen once per terminal width
        (they do not come and go as tasks change); each column but the message is as wide as
        its header, its `reserve` and the widest cell it has shown so far (widths only grow, so
        the frame does not jump as messages change); the message gets what is left. A task id
        is never wrapped or cut short of unique: whole where it fits, else the shortest unique
        prefix (which every command takes)."""
        for row in cells:
            for i, col in enumerate(LIVE_COLUMNS):
                if i not in (MESSAGE, TASK):
                    need = max(cell_width(col.header), cell_width(col.reserve), cell_width(row[i]))
                    need = min(need, col.most) if col.most else need
                    self._widths[i] = max(self._widths.get(i, 0), need)
        applies = frozenset(i for i, c in enumerate(LIVE_COLUMNS) if c.when is None or c.when(self))
        key = (width, applies)
        if key not in self._layouts:
            self._layouts[key] = self._choose(width, applies)
        shown, id_width = self._layouts[key]
        widths = {i: self._widths.get(i, cell_width(c.header)) for i, c in enumerate(LIVE_COLUMNS)}
        widths[TASK] = id_width
        fixed = sum(widths[i] for i in shown if i != MESSAGE)
        rest = width - fixed - 3 * len(shown) + 1
        widths[MESSAGE] = max(cell_width(LIVE_COLUMNS[MESSAGE].header), min(rest, MESSAGE_MAX))
        return [(i, widths[i]) for i in shown]

    def _choose(self, width: int, applies: frozenset[int]) -> tuple[list[int], int]:
        ids = [w.task_id for w in self.watched]
        whole = max((cell_width(safe_line(t, 500)) for t in ids), default=4)
        hidden = {i for i in range(len(LIVE_COLUMNS)) if i not in applies}
        drops = [c.drop for c in LIVE_COLUMNS]
        for id_width in (max(whole, 4), max(unique_id_prefix(ids), 4)):
            needs = [
                max(self._widths.get(i, 0), cell_width(c.header), cell_width(c.reserve))
                for i, c in enumerate(LIVE_COLUMNS)
            ]
            needs[TASK] = id_width
            needs[MESSAGE] = cell_width(LIVE_COLUMNS[MESSAGE].header)
            layout = fit_columns(
                width,
                needs,
                drops,
                flexible=MESSAGE,
                least=MESSAGE_MIN,
                most=MESSAGE_MAX,
                hidden=hidden,
            )
            rest = dict(layout)[MESSAGE]
            if rest >= MESSAGE_MIN or id_width <= unique_id_prefix(ids):
                return [i for i, _ in layout], id_width
        raise AssertionError("unreachable")  # pragma: no cover

    def _rows_that_fit(self) -> list[Watched]:
        """Only what fits the terminal is drawn (a thousand rows would cost a thousand rows of
        layout ten times a second): the unfinished tasks first, then the latest to end."""
        room = max(3, self.out.console.size.height - 7)
        if len(self.watched) <= room:
            return self.watched
        running = [w for w in self.watched if not w.done]
        ended = sorted((w for w in self.watched if w.done), key=lambda w: -(w.ended or 0.0))
        return (running + ended)[:room]


#: the live view shows the artifacts of at most this many tasks, and this many of each
ARTIFACT_TASKS = 3
ARTIFACTS_EACH = 2


def artifact_lines(rows: list[Watched], width: int) -> list[Any]:
    """A line under the table for each artifact that grew while the watch ran (the latest
    two of the first three tasks that have some): its name, parts so far, size, and the last
    line of its text."""
    lines: list[Any] = []
    with_news = [w for w in rows if w.artifact_news][:ARTIFACT_TASKS]
    for w in with_news:
        for update in list(w.artifact_news.values())[-ARTIFACTS_EACH:]:
            name = update.name or update.artifact_id
            parts = f"{update.total_parts} part{'s' if update.total_parts != 1 else ''}"
            done = " ✔" if update.last_chunk else ""
            who = f"{w.task_id[:8]} " if len(rows) > 1 else ""
            head = f"↳ {who}{name}: {parts}, {size_text(update.size)}{done}"
            tail = f"  {update.tail}" if update.tail else ""
            line = safe_line(head + tail, max(width - 1, 20))
            line.stylize("cyan")
            line.no_wrap = True
            lines.append(line)
    return lines


def size_text(size: int) -> str:
    """`812 B`, `4.0 KiB`, `1.5 MiB`."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def manifest_lines(manifest: dict[str, Any]) -> list[str]:
    """The manifest for a person: one line a file."""
    lines = []
    for f in manifest["files"]:
        if f["path"] is None:
            url = one_line(str(f["url"]), 300)
            lines.append(f"listed {url} (not downloaded: --download fetches it)")
        else:
            lines.append(f"wrote {one_line(f['path'], 300)} ({size_text(f['bytes'])})")
    return lines or [f"task {manifest['taskId']}: nothing to save (no artifacts or content)"]


#: the cursor home, the screen cleared
CLEAR_SCREEN = "\x1b[H\x1b[2J"
#: synchronized output (DEC private mode 2026): the terminal holds the screen from BEGIN to END
SYNC_BEGIN = "\x1b[?2026h"
SYNC_END = "\x1b[?2026l"


def count_text(progress: float, total: float | None) -> str:
    """`3/4`, or `3` without a total (numbers as short as they are)."""
    done = f"{progress:g}"
    return f"{done}/{total:g}" if total is not None else done


def progress_cell(w: Watched, width: int = 10) -> str:
    """`███░░░ 3/4` (a bar of `width` where the total is known; 0: none), `3` without a
    total, empty before any."""
    p = w.progress
    if p is None:
        return ""
    count = count_text(p.progress, p.total)
    if not p.total or p.total <= 0 or width <= 0:
        return count
    filled = round(width * min(max(p.progress / p.total, 0.0), 1.0))
    return "█" * filled + "░" * (width - filled) + " " + count


def shown_status(w: Watched, retrying: dict[str, str] | None = None) -> str:
    """The word a row shows: the outcome once the task ended, else its last status (while a
    retry is due for a task never seen: `retrying`)."""
    if w.done and w.outcome:
        return w.outcome
    if w.task is not None:
        return w.task.status
    return RETRYING if retrying and w.task_id in retrying else UNSEEN


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
    # the whole id (the layout may keep only a unique prefix of it: never an ellipsis)
    return safe_line(w.task_id, 500)


def _server_cell(view: LiveEvents, w: Watched, now: float) -> Any:
    return safe_line(view.servers.get(w.task_id, ""), 100)


def _status_cell(view: LiveEvents, w: Watched, now: float) -> Any:
    return status_text(view.status(w))


def _message_cell(view: LiveEvents, w: Watched, now: float) -> Any:
    from rich.text import Text

    message = safe_line(shown_message(w, view.retrying, now, view.working_message(w)), 500)
    bar = progress_cell(w, 6 if view.message_width >= 40 else 0)
    if not bar or w.done:
        return message
    return Text.assemble((bar, "cyan"), "  " if message.plain else "", message)


def shown_message(
    w: Watched, retrying: dict[str, str], now: float | None = None, stale: str | None = None
) -> str:
    """The live view's message: the retry under way (counting down to the same moment as the
    next poll column), else why the task ended in error (or why its result is missing), else
    the task's own message. A task that ended with the message it had while it ran (`stale`:
    many servers leave `Generating ...` in place) shows how it ended instead."""
    if not w.done and w.task_id in retrying:
        left = max(w.due - now, 0.0) if now is not None else 0.0
        return f"retrying in {delay_text(left)}: {retrying[w.task_id]}"
    if w.done and w.outcome in ("error", "unknown") and w.last_error:
        return w.last_error
    if w.done and w.result_error:
        return f"result not fetched: {w.result_error}"
    message = (w.task.statusMessage if w.task else "") or ""
    if w.done and (not message or message == stale):
        return ended_message(w) or message
    return message


def ended_message(w: Watched) -> str:
    """What a row says of a task that ended without a message of its own: the first line of
    its result, else how it ended."""
    if w.outcome == "completed" and w.result is not None and w.result.error is None:
        from mcptask.protocols.wire import result_text

        text, is_error = result_text(w.result.payload)
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        if first:
            return f"error: {first}" if is_error else f"result: {first}"
    if w.outcome in ("input_required", "auth_required"):
        return "" if w.task is None else (w.task.statusMessage or "")
    return {
        "completed": "done",
        "failed": "failed",
        "cancelled": "cancelled",
        "rejected": "rejected",
        "expired": "expired",
    }.get(w.outcome or "", "")


def _age_cell(view: LiveEvents, w: Watched, now: float) -> str:
    """The task's age: from its `createdAt` (else from when this watch first saw it); a
    finished row's clock stops when the task ended."""
    end = w.ended if w.done and w.ended is not None else now
    created = view.created(w)
    if created is None:
        return duration(end - w.started)
    return duration(view.wall() - (now - end) - created)


def _next_poll_cell(view: LiveEvents, w: Watched, now: float) -> str:
    if w.done:
        return ""
    if w.asking:
        return "answering"
    if w.task_id in view.retrying:  # the same countdown as the message's
        return delay_text(max(w.due - now, 0.0))
    return duration(w.due - now) if w.due > now else "now"


def _ttl_cell(view: LiveEvents, w: Watched, now: float) -> str:
    """How long the server keeps the task once it ends: `5m00s after` while it runs (the
    ttl counts from the end), then the countdown, `4m12s left`."""
    if w.task is None or w.task.ttl is None:
        return ""
    if w.task.terminal and w.ended is not None:
        left = min(w.task.ttl, MAX_DAYS * 86_400_000) / 1000 - (now - w.ended)
        return f"{duration(left)} left"
    return f"{duration_ms(w.task.ttl)} after"


def _any_ttl(view: LiveEvents) -> bool:
    """The `kept` column applies unless every task has been seen without a ttl."""
    return not view.watched or any(w.task is None or w.task.ttl is not None for w in view.watched)


def _via_cell(view: LiveEvents, w: Watched, now: float) -> str:
    if w.done:
        return w.via
    if not w.push_live:
        return "poll"
    return "webhook" if w.live_via == {"webhook"} else "push"


#: the live view's columns, left to right (a new column: one entry here, with its `drop` rank).
#: The message comes first: the others give way (the highest `drop` first) until it has
#: MESSAGE_MIN cells; pushed progress is drawn inside it (`3/6 Drafting report`), so no column
#: stays empty for a server that pushes none
LIVE_COLUMNS: tuple[LiveColumn, ...] = (
    LiveColumn("task", _task_cell),
    # a watch that spans servers says which task is where
    LiveColumn("server", _server_cell, drop=1, most=24, when=lambda view: bool(view.servers)),
    # room for the words most tasks end with: the column keeps its width when they end
    LiveColumn("status", _status_cell, reserve="✔ completed"),
    LiveColumn("message", _message_cell),
    LiveColumn("age", _age_cell, drop=3, justify="right", reserve="1m00s"),
    LiveColumn("via", _via_cell, drop=4, style="dim", reserve="push"),
    LiveColumn("next poll", _next_poll_cell, drop=5, justify="right", reserve="1m00s"),
    # how long the server keeps a task: not drawn once every task is known to have no ttl
    LiveColumn("kept", _ttl_cell, drop=6, justify="right", reserve="5m00s after", when=_any_ttl),
)
#: the task column (a whole id, else a unique prefix)
TASK = 0
#: the column that takes the room the others leave
MESSAGE = next(i for i, c in enumerate(LIVE_COLUMNS) if c.header == "message")
#: the message column gets at least this many cells before a droppable column goes (and before a
#: whole id gives way to its unique prefix), and at most MESSAGE_MAX (a very wide terminal need
#: not stretch the table)
MESSAGE_MIN = 36
MESSAGE_MAX = 80


class _LiveView:
    def __init__(self, events: LiveEvents) -> None:
        self.events = events

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # the width it is drawn for: a terminal that narrows reflows it (`LiveEvents.refresh`)
        self.events._drawn_width = options.max_width
        yield self.events.render(options.max_width)
