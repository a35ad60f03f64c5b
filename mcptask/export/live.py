"""`watch --otlp` (and `MCPTASK_OTLP=1`): each task's story exported as the watch sees it end.

A thread of its own with its own connection to the task book: the watch hands it a task once
the book holds the task's end (`TaskBook.after_writes`), and it reads the story, makes the spans
(`export.spans`) and sends them in batches, never on the watch's event loop. A backend that
does not take a batch costs one warning at the end of the watch, and no more tries (`mcptask
export` sends the stories later: the book marks what was sent)."""

from __future__ import annotations

import threading
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcptask.export.otlp import FileSink, HttpSink
    from mcptask.state.taskbook import TaskBook

#: seconds the thread waits for more ended tasks before it sends what it has
GATHER = 0.5
#: seconds at most that the gathering of a burst of ends goes on
QUIET_MAX = 5.0
#: tasks read and sent in one go
BATCH_TASKS = 200


class LiveExport:
    def __init__(
        self, book_path: Path, sink: HttpSink | FileSink, *, content: bool = False
    ) -> None:
        self.book_path = book_path
        self.sink = sink
        self.content = content
        self._queue: deque[tuple[str, str]] = deque()
        self._cond = threading.Condition()
        self._stop = False
        #: the one warning (the first failure), said by the watch when it ends
        self.warning: str | None = None
        self.exported = 0
        self.spans = 0
        # what a first export imports and builds, done before the watch polls: an import on
        # the thread when the first tasks end would hold the interpreter through their ends
        from mcptask.export import otlp, spans  # noqa: F401

        otlp.warm()
        self._resource = otlp.resource()
        self._thread = threading.Thread(target=self._run, name="mcptask-otlp", daemon=True)
        self._thread.start()

    def ended_many(self, endpoint: str, task_ids: list[str]) -> None:
        """Tasks whose end is in the book (called from any thread)."""
        with self._cond:
            self._queue.extend((endpoint, task_id) for task_id in task_ids)
            self._cond.notify()

    def close(self, timeout: float) -> None:
        """Send what is queued (within `timeout` seconds), then stop the thread."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        self._thread.join(max(0.0, deadline - time.monotonic()))
        if self._thread.is_alive():  # a backend slower than the timeout: its retries end
            self.sink.close()
            self._thread.join(1.0)
            if self.warning is None:
                self.warning = f"export to {self.sink.shown} did not finish in {timeout:g}s"
        else:
            self.sink.close()

    def _run(self) -> None:
        from mcptask.state.taskbook import TaskBook

        book = TaskBook(self.book_path)
        try:
            while True:
                with self._cond:
                    while not self._queue and not self._stop:
                        self._cond.wait()
                    if not self._queue and self._stop:
                        return
                    # the tasks ending beside it, until none came for GATHER seconds (at most
                    # QUIET_MAX): a watch's many ends come in bursts, and spans are built
                    # after the burst, not on its way
                    began = time.monotonic()
                    while not self._stop and time.monotonic() - began < QUIET_MAX:
                        had = len(self._queue)
                        self._cond.wait(GATHER)
                        if len(self._queue) == had:
                            break
                    batch = [
                        self._queue.popleft() for _ in range(min(BATCH_TASKS, len(self._queue)))
                    ]
                if self.warning is None:
                    self._send(book, batch)
        finally:
            book.close()

    def _send(self, book: TaskBook, batch: list[tuple[str, str]]) -> None:
        from mcptask.errors import McptaskError
        from mcptask.export.otlp import BATCH_SPANS, book_trace, send_traces
        from mcptask.export.spans import TaskTrace

        traces: list[TaskTrace] = []
        per_request = max(1, BATCH_SPANS // 4)  # a task is a few spans
        try:
            for endpoint, task_id in dict.fromkeys(batch):
                time.sleep(0)  # the watch's thread goes first: a task's spans are ~1 ms of CPU
                record = book.lookup(endpoint, task_id)
                if record is None:
                    continue
                kept = book.endpoint(endpoint).get("clockSkew")
                skew = float(kept) if isinstance(kept, int | float) else 0.0
                trace = book_trace(book, endpoint, task_id, record, skew, content=self.content)
                if trace is not None:
                    traces.append(trace)
            for i in range(0, len(traces), per_request):
                part = traces[i : i + per_request]
                send_traces(book, self.sink, part, self._resource)
                self.exported += len(part)
                self.spans += sum(len(t.spans) for t in part)
        except McptaskError as exc:
            self.warning = str(exc)
        except Exception as exc:  # the watch goes on whatever the export meets
            self.warning = f"export to {self.sink.shown} failed: {type(exc).__name__}: {exc}"
