"""Pieces several commands share: one status look-up through the task book, the signal
handlers of commands that wait."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from mcptask.errors import ExitCode, McptaskError, SessionGone, TaskNotFound

if TYPE_CHECKING:
    from mcptask.model.refs import TaskRef
    from mcptask.model.task import Task
    from mcptask.protocols.base import TaskProtocol
    from mcptask.scheduler.watcher import Watcher
    from mcptask.session.context import Context


async def look_up(ctx: Context, proto: TaskProtocol, task_id: str) -> tuple[Task, TaskRef]:
    """One status fetch through the task book's reference; recorded; a task the book knew
    but the server does not is reported as expired."""
    from mcptask.protocols.base import read_status

    ref = ctx.places.ref(task_id)
    try:
        task = await read_status(proto, ref)
    except TaskNotFound as exc:
        raise gone(ctx, task_id, exc) from None
    except McptaskError as exc:
        if ctx.places.records and ctx.book.lookup(ctx.server, task_id) is not None:
            from mcptask.errors import is_transient
            from mcptask.model.events import EventKind
            from mcptask.text.command_line import command_line

            ctx.places.note(task_id, EventKind.ERROR, message=exc.message)
            if is_transient(exc):
                ctx.book.contact(ctx.server, ok=False)
                exc.hint = exc.hint or (
                    f"`{command_line('why', task_id)}` shows what the task book last knew of it"
                )
        raise
    ctx.places.remember(task, ref, via="poll")
    return task, ref


def in_book(ctx: Context, task_ids: list[str], what: str) -> list[tuple[Context, list[str]]]:
    """`locate_many` for commands that read only the task book (`forget`, `log`): an id the
    book does not know is not found there (exit 9), not a reason to give a target."""
    from mcptask.session.targets import NoTarget

    try:
        return ctx.places.locate_many(task_ids)
    except NoTarget as exc:
        from mcptask.state.taskbook import MIN_PREFIX

        unknown = [t for t in task_ids if not ctx.book.find(t)] or task_ids
        short = [t for t in unknown if len(t) < MIN_PREFIX]
        error = TaskNotFound(f"the task book has no {what} {', '.join(unknown)}")
        if short:
            error.hint = f"a prefix of a task id needs at least {MIN_PREFIX} characters"
        raise error from exc


def gone(ctx: Context, task_id: str, exc: TaskNotFound) -> TaskNotFound:
    """The error for a task the server does not know: expired when the book knew it (and
    whether `result` still has its result, or why not); else what to try next: the endpoint
    where the book has it (a config `default` may have shadowed it), or `list`."""
    import shlex

    from mcptask.text.command_line import command_line

    rec = ctx.book.lookup(ctx.server, task_id) if ctx.places.remembers else None
    created, ttl = (rec.get("createdAt"), rec.get("ttl")) if rec is not None else (None, None)
    session_gone = isinstance(exc, SessionGone)  # its session is gone, not the task
    if (
        not session_gone
        and isinstance(created, str)
        and isinstance(ttl, int)
        and not isinstance(ttl, bool)
    ):
        from mcptask.scheduler.watcher import lost_after

        lost = lost_after(task_id, created, ttl)
        if lost is not None:
            _expired(ctx, task_id, lost)
            return TaskNotFound(lost)
    if rec is not None:
        from mcptask.text.sanitize import one_line

        last = rec.get("status", "unknown")
        if session_gone:
            why = (
                f"the session that created it no longer exists on the server ({exc.reason}); "
                "its tasks cannot be reached"
            )
        else:
            why = "the server no longer knows it"
            if exc.reason:  # the server's own words, as they came, apart from mcptask's
                why += f" (the server said: {one_line(exc.reason, 120)})"
        message = f"task {task_id} has expired (last seen {last}): {why}"
        _expired(ctx, task_id, why)
        not_kept = rec.get("resultNotKept")
        if isinstance(not_kept, str):
            message += f"; its result was not kept ({not_kept})"
        elif "result" in rec:
            message += (
                f"; the task book kept its result: `{command_line('result', task_id)}` prints it"
            )
        return TaskNotFound(message)
    from mcptask.state.taskbook import MIN_PREFIX

    elsewhere = _elsewhere(ctx, task_id)
    if elsewhere:
        exc.hint = elsewhere
    elif len(task_id) < MIN_PREFIX:
        exc.hint = (
            f"a prefix of a task id needs at least {MIN_PREFIX} characters "
            "(the task book knows no task of that whole id)"
        )
    elif ctx.target.command is None and ctx.server:
        exc.hint = (
            f"`mcptask list --url {shlex.quote(ctx.server)}` shows the tasks the server lists; "
            "check the id, and that the task was made on this server"
        )
    return exc


def _expired(ctx: Context, task_id: str, why: str) -> None:
    """The log's `expired` event, once: the server no longer knows a task the book knew."""
    if not ctx.places.records:
        return
    from mcptask.model.events import EventKind

    told = ctx.book.events(ctx.server, task_id)
    if not told or told[-1]["kind"] != EventKind.EXPIRED:
        ctx.places.note(task_id, EventKind.EXPIRED, message=why)


def _elsewhere(ctx: Context, task_id: str) -> str | None:
    """Where else the task book has `task_id`, as what to type (the config's name for that
    server where it has one)."""
    import shlex

    from mcptask.state.endpoints import endpoint_key
    from mcptask.text.command_line import command_line

    if not ctx.places.remembers:
        return None
    here = endpoint_key(ctx.server) if ctx.server else ""
    # the id, or the one id a prefix stands for there
    hits = [(ep, tid) for ep, tid, _ in ctx.book.find(task_id) if ep != here]
    if not hits or len({tid for _, tid in hits}) > 1:
        return None
    endpoint, task_id = hits[0]
    name = _config_name(ctx, endpoint)
    flags = f"-s {shlex.quote(name)}" if name else f"--url {shlex.quote(endpoint)}"
    target = f"server {ctx.target.name!r}" if ctx.target.name else ctx.server
    # the flags before a `--` (an id that begins with -), else after the id
    again = (
        f"{command_line(f'get {flags}', task_id)}"
        if task_id.startswith("-")
        else f"{command_line('get', task_id)} {flags}"
    )
    return f"the task book has it on {endpoint}, not on {target}: `{again}`"


def _config_name(ctx: Context, endpoint: str) -> str | None:
    try:
        from mcptask.session import config
        from mcptask.state.endpoints import endpoint_key

        for name, entry in config.load(ctx.options.config).servers.items():
            if entry.url and endpoint_key(config.expanded(entry).url or "") == endpoint:
                return name
    except Exception:  # a broken config file: the URL will do
        return None
    return None


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
