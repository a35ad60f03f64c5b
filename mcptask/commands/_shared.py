"""Pieces several commands share: one status look-up through the task book, the signal
handlers of commands that wait."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from mcptask.errors import ExitCode, McptaskError, TaskNotFound

if TYPE_CHECKING:
    from mcptask.model import Task
    from mcptask.protocols.base import TaskProtocol, TaskRef
    from mcptask.scheduler.watcher import Watcher
    from mcptask.session.context import Context


async def look_up(ctx: Context, proto: TaskProtocol, task_id: str) -> tuple[Task, TaskRef]:
    """One status fetch through the task book's reference; recorded; a task the book knew
    but the server does not is reported as expired."""
    ref = ctx.places.ref(task_id)
    try:
        task = await proto.get(ref)
    except TaskNotFound as exc:
        raise gone(ctx, task_id, exc) from None
    except McptaskError as exc:
        if ctx.places.records and ctx.book.lookup(ctx.server, task_id) is not None:
            from mcptask.state.events import ERROR

            ctx.places.note(task_id, ERROR, message=exc.message)
        raise
    ctx.places.remember(task, ref, via="poll")
    return task, ref


def gone(ctx: Context, task_id: str, exc: TaskNotFound) -> TaskNotFound:
    """The error for a task the server does not know: expired when the book knew it (and
    why its result is not there, when it was too big to keep)."""
    rec = ctx.book.lookup(ctx.server, task_id) if ctx.places.remembers else None
    created, ttl = (rec.get("createdAt"), rec.get("ttl")) if rec is not None else (None, None)
    session_gone = "session" in exc.message  # its session is gone, not the task: said as is
    if (
        not session_gone
        and isinstance(created, str)
        and isinstance(ttl, int)
        and not isinstance(ttl, bool)
    ):
        from mcptask.scheduler.watcher import lost_after

        lost = lost_after(task_id, created, ttl)
        if lost is not None:
            return TaskNotFound(lost)
    if rec is not None:
        last = rec.get("status", "unknown")
        message = f"task {task_id} has expired (last seen {last}): {exc.message}"
        not_kept = rec.get("resultNotKept")
        if isinstance(not_kept, str):
            message += f"; its result was not kept ({not_kept})"
        return TaskNotFound(message)
    return exc


#: the signals that end a command that waits, each with its exit status: every one of them
#: ends the watch cleanly (end lines, the live view closed and the cursor shown again, a stdio
#: server stopped)
ENDING_SIGNALS = (
    ("SIGINT", ExitCode.INTERRUPTED),
    ("SIGTERM", ExitCode.TERMINATED),
    ("SIGHUP", ExitCode.HANGUP),
    ("SIGQUIT", ExitCode.QUIT),
)


class Ending:
    """The watchers an ending signal ends. A watcher added after a signal came is ended at
    once; a signal that comes before any watcher exists ends the command (`Interrupted`)."""

    def __init__(self, watchers: tuple[Watcher, ...]) -> None:
        import asyncio

        self.watchers = list(watchers)
        self.code: int | None = None
        self._owner = asyncio.current_task()

    def add(self, watcher: Watcher) -> None:
        self.watchers.append(watcher)
        if self.code is not None:
            watcher.interrupt(self.code)

    def __call__(self, code: int) -> None:
        self.code = code
        for watcher in self.watchers:
            watcher.interrupt(code)
        if not self.watchers and self._owner is not None:
            self._owner.cancel()


@contextlib.contextmanager
def signals(*watchers: Watcher) -> Iterator[Ending]:
    """Ctrl-C (130), SIGTERM (143), SIGHUP (129: the terminal closed) and SIGQUIT (131) end
    the watch cleanly: every task of every watcher gets its end event. Installed before the
    first event is printed (watchers made inside are `add`ed), so no signal can skip the end
    lines."""
    import asyncio
    import signal

    from mcptask.errors import Interrupted

    loop = asyncio.get_running_loop()
    ending = Ending(watchers)
    installed = []
    for name, code in ENDING_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        try:
            loop.add_signal_handler(sig, ending, code)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    try:
        yield ending
    except asyncio.CancelledError:
        if ending.code is None or ending.watchers:
            raise
        raise Interrupted(exit_code=ending.code) from None
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
