"""What a plain (non-task) `call` prints while the tool runs and when it ends.

- ndjson: one line per `notifications/progress` (`{"event": "progress", "progress", "total",
  "message"}`) and per log message (`{"event": "log", "level", "logger", "data"}`), then
  `{"event": "end", "outcome", "exitCode", "result"}` (`"error"` instead of `"result"` when the
  server answered with a JSON-RPC error).
- json: the result alone, as `result` prints it; log messages go to stderr.
- pretty: a Rich progress bar (spinner, message, bar, `n/total`, elapsed) while the call runs,
  log lines above it, then the result as `result` shows it. Server text is cleaned first.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from mcptask.errors import ExitCode
from mcptask.output.console import Output, result_renderable
from mcptask.output.live import count_text
from mcptask.protocols.base import LogMessage, Progress
from mcptask.text.sanitize import one_line

#: exit status by a plain call's outcome
CALL_EXIT = {
    "completed": ExitCode.OK,
    "failed": ExitCode.FAILED,
    "error": ExitCode.SERVER,
    "interrupted": ExitCode.INTERRUPTED,
}


def outcome_of(result: Any) -> str:
    """`failed` for a `CallToolResult` with `isError: true`, else `completed`."""
    return "failed" if isinstance(result, dict) and result.get("isError") is True else "completed"


def log_text(log: LogMessage) -> str:
    data = log.data if isinstance(log.data, str) else json.dumps(log.data, ensure_ascii=False)
    where = f" {log.logger}" if log.logger else ""
    return one_line(f"[{log.level}]{where}: {data}", 500)


class CallEvents:
    """The base: what every output mode does with a plain call's events."""

    def __init__(self, out: Output, tool: str) -> None:
        self.out = out
        self.tool = tool

    def __enter__(self) -> CallEvents:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def progress(self, progress: Progress) -> None:
        pass

    def log(self, log: LogMessage) -> None:
        self.out.note(f"log {log_text(log)}")

    @contextlib.asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """Around a form on the terminal (nothing to pause off a live display)."""
        yield

    def end(self, outcome: str, result: Any = None, error: dict[str, Any] | None = None) -> int:
        """Print the outcome; the exit status."""
        code = CALL_EXIT.get(outcome, ExitCode.INTERNAL)
        if error is None and outcome != "interrupted":
            self.out.line(result)
        return code


class NdjsonCallEvents(CallEvents):
    def progress(self, progress: Progress) -> None:
        self.out.line(progress.to_json())

    def log(self, log: LogMessage) -> None:
        self.out.line(log.to_json())

    def end(self, outcome: str, result: Any = None, error: dict[str, Any] | None = None) -> int:
        code = CALL_EXIT.get(outcome, ExitCode.INTERNAL)
        line: dict[str, Any] = {"event": "end", "outcome": outcome, "exitCode": code}
        if error is not None:
            line["error"] = error
        elif outcome != "interrupted":
            line["result"] = result
        self.out.line(line)
        return code


class LiveCallEvents(CallEvents):
    """A Rich progress bar on the terminal while the call runs."""

    def __init__(self, out: Output, tool: str) -> None:
        super().__init__(out, tool)
        self._bar: Any = None
        self._row: Any = None

    def __enter__(self) -> LiveCallEvents:
        from rich.progress import (
            BarColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self._bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            TextColumn("{task.fields[count]}", markup=False),
            TimeElapsedColumn(),
            console=self.out.console,
            transient=True,
        )
        self._row = self._bar.add_task(self._label(None), total=None, count="")
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _label(self, message: str | None) -> str:
        text = f"{self.tool}: {message}" if message else f"calling {self.tool}"
        return one_line(text, 60)

    def progress(self, progress: Progress) -> None:
        if self._bar is None:
            return
        self._bar.update(
            self._row,
            completed=progress.progress,
            total=progress.total,
            description=self._label(progress.message),
            count=count_text(progress.progress, progress.total),
        )

    def log(self, log: LogMessage) -> None:
        from rich.text import Text

        style = {"error": "red", "critical": "red", "alert": "red", "emergency": "red"}.get(
            log.level, "dim" if log.level == "debug" else ""
        )
        self.out.console.print(Text(log_text(log), style=style))

    @contextlib.asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        if self._bar is not None:
            self._bar.stop()
        try:
            yield
        finally:
            if self._bar is not None:
                self._bar.start()

    def end(self, outcome: str, result: Any = None, error: dict[str, Any] | None = None) -> int:
        from mcptask.model.results import TaskResult
        from mcptask.model.task import Task

        self.__exit__()
        code = CALL_EXIT.get(outcome, ExitCode.INTERNAL)
        if outcome == "interrupted":
            return code
        placeholder = Task(taskId="-", status="completed", protocol="?", server="-", raw={})
        shown = TaskResult(task=placeholder, payload=result, error=error)
        self.out.console.print(result_renderable(shown))
        return code


def call_events(out: Output, tool: str) -> CallEvents:
    """The events for the output mode (`auto` was resolved already)."""
    if out.mode == "pretty":
        return LiveCallEvents(out, tool)
    if out.mode == "ndjson":
        return NdjsonCallEvents(out, tool)
    return CallEvents(out, tool)
