"""stdio transport: spawn an MCP server and speak newline-delimited JSON-RPC on its stdin/stdout.

The server is spawned on the first `send`, in its own session (process group), with a minimal
environment (`HOME LOGNAME PATH SHELL TERM USER`, as the official SDKs do) plus its entry's `env`.
One reader task routes every line from its stdout through the peer router it shares with the
legacy HTTP+SSE transport (transports/peer.py): responses go to the `send` waiting for that id;
pings are answered; requests and notifications from the server go to `on_unsolicited` when set,
else to the oldest open request's stream, else a request is refused (-32601) and a notification
kept in the bounded `notifications` queue. Non-JSON lines are
ignored (shown under `--trace`). The last lines of the server's stderr are kept and folded into
the error when the server cannot start or dies.

`aclose()` stops the server (close stdin, wait briefly, SIGTERM the group, wait, SIGKILL). A
SIGTERM, SIGHUP (the terminal closed: the server sits in its own session, so the terminal's
hang-up never reaches it) or SIGQUIT to mcptask while a server runs (outside `watch`, which
handles them itself) and interpreter exit all stop the group too, so no server outlives mcptask.

Descendants that leave the group (a daemon in a session of its own: `setsid`, a double fork)
are found by their environment: the server is started with `MCPTASK_STDIO_TAG=<tag>`, which
every descendant inherits, and after the group each process of this user whose environment
(as it was when it started, `/proc/PID/environ`) has the tag is stopped the same way. What
cannot be ended: a descendant that cleared its environment before `exec` (`env -i`), one that
runs as another user (setuid) or in another PID namespace, and any descendant where there is
no `/proc` (macOS, the BSDs: only the group is stopped there).

SIGKILL of mcptask runs none of this: for that, each server has a *reaper*, a small process
(`python -I -S -c REAPER`, in a session of its own, ignoring SIGINT and SIGHUP) that holds the
read end of a pipe only mcptask writes to. When mcptask ends however it ends, the pipe closes;
a reaper that was not told "stopped" first (one byte, written by `aclose`) stops the server's
group and everything carrying its tag, as above (SIGTERM, up to 1 s, SIGKILL).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcptask.errors import ProtocolError, TransportError
from mcptask.text import redact
from mcptask.text.sanitize import clean, one_line
from mcptask.transports.peer import PeerRouter, UnsolicitedHandler
from mcptask.transports.rpc import KeepsSession, Message, is_response

Tracer = Callable[[str], None]

#: what a spawned server inherits from mcptask's environment (as the official SDKs do)
INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
STDERR_LINES = 50
DEFAULT_MAX_LINE = 32 * 1024 * 1024
#: notifications kept while no request is open and no handler is set, at most
NOTIFICATION_QUEUE = 1000
#: seconds a server that has said nothing yet may keep the first request waiting before the
#: person is told mcptask is waiting for it
SILENCE = 3.0
#: after stdin is closed, how long the server gets to exit on its own; then after SIGTERM
CLOSE_GRACE = 0.5
TERM_GRACE = 2.0


class ServerExited(TransportError):
    """The stdio server could not start or has exited: retrying cannot help."""

    transient = False


@dataclass
class StdioOptions:
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    trace: Tracer | None = None
    cwd: str | None = None
    #: idle time allowed between messages of one request (None: wait for ever)
    read_timeout: float | None = None
    #: the longest line accepted from the server (MCPTASK_MAX_BODY)
    max_line: int = DEFAULT_MAX_LINE
    #: more values to scrub from traces and errors
    secrets: list[str] = field(default_factory=list)
    #: told once when a server that has said nothing yet keeps a request waiting SILENCE
    #: seconds (a person then knows mcptask is waiting for it, not hanging)
    on_silence: Callable[[str], None] | None = None


def child_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """The spawned server's environment: a few of ours, then the entry's own `env`."""
    env = {k: os.environ[k] for k in INHERITED_ENV if k in os.environ}
    env.update(extra)
    return env


# -- the safety net: no child outlives mcptask ----------------------------------------------------

#: process group ids of servers that are running
_LIVE: set[int] = set()
#: the environment variable that marks a server's descendants (see the module docstring)
TAG_ENV = "MCPTASK_STDIO_TAG"
#: tags of servers that are running (the safety net stops their descendants too)
_LIVE_TAGS: set[str] = set()


def tagged(tag: str) -> list[int]:
    """The processes (of this user) whose environment carries `TAG_ENV=tag`; [] without
    /proc."""
    needle = f"{TAG_ENV}={tag}".encode()
    me = os.getpid()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue  # gone, or not ours to read
        if needle in env.split(b"\0"):
            found.append(int(name))
    return found


#: the reaper's program (standard library only, no site: it starts in ~10 ms), see the module
#: docstring; argv: the server's process group id and tag
REAPER = r"""
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
pgid, needle = int(sys.argv[1]), ("MCPTASK_STDIO_TAG=" + sys.argv[2]).encode()
try:
    told = os.read(0, 1)
except OSError:
    told = b""
if told:
    sys.exit(0)
def tagged():
    found = []
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open("/proc/" + name + "/environ", "rb") as f:
                    if needle in f.read().split(b"\0"):
                        found.append(int(name))
            except OSError:
                pass
    return found
def send(sig):
    alive = False
    try:
        os.killpg(pgid, sig)
        alive = True
    except OSError:
        pass
    for pid in tagged():
        try:
            os.kill(pid, sig)
            alive = True
        except OSError:
            pass
    return alive
if send(signal.SIGTERM):
    end = time.monotonic() + 1
    while time.monotonic() < end and send(0):
        time.sleep(0.05)
    send(signal.SIGKILL)
"""


def start_reaper(pgid: int, tag: str) -> Any:
    """The reaper of a server (see the module docstring): a `subprocess.Popen` whose stdin
    mcptask holds; None where it cannot run."""
    import subprocess

    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", REAPER, str(pgid), tag],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={k: v for k, v in os.environ.items() if k != TAG_ENV},
            start_new_session=True,
        )
    except OSError:
        return None


def stop_reaper(reaper: Any, *, told: bool) -> None:
    """Close the reaper's pipe; `told`: the server was stopped (the reaper need not)."""
    if reaper is None or reaper.stdin is None:
        return
    with contextlib.suppress(OSError, ValueError):
        if told:
            reaper.stdin.write(b"x")
            reaper.stdin.flush()
        reaper.stdin.close()
    with contextlib.suppress(Exception):
        reaper.poll()


def _signal_tagged(tag: str, sig: int) -> bool:
    """Send `sig` to every process carrying `tag`; False when there is none."""
    alive = False
    for pid in tagged(tag):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
            alive = True
    return alive


def _kill_tagged_now(tag: str) -> None:
    """Synchronously stop what carries `tag`: SIGTERM, up to 1 s, then SIGKILL."""
    if not _signal_tagged(tag, signal.SIGTERM):
        return
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and tagged(tag):
        time.sleep(0.02)
    for _ in range(3):  # what a killed one left behind is tagged too
        if not _signal_tagged(tag, signal.SIGKILL):
            return
        time.sleep(0.02)


async def _stop_tagged(tag: str) -> None:
    """SIGTERM the descendants that carry `tag`, then SIGKILL what ignored it."""
    if not _signal_tagged(tag, signal.SIGTERM):
        return
    deadline = time.monotonic() + CLOSE_GRACE
    while time.monotonic() < deadline:
        await asyncio.sleep(0.02)
        if not tagged(tag):
            return
    for _ in range(3):
        if not _signal_tagged(tag, signal.SIGKILL):
            return
        await asyncio.sleep(0.02)


_ATEXIT = False


def _signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to a process group; False when nothing is left in it."""
    if not hasattr(os, "killpg"):
        return False
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _kill_groups_now() -> None:
    """Synchronously stop every live server group: SIGTERM, up to 1 s, then SIGKILL."""
    groups = list(_LIVE)
    if not groups and not _LIVE_TAGS:
        return
    for pgid in groups:
        _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        if not any(_signal_group(pgid, 0) for pgid in groups):
            break
        time.sleep(0.02)
    for pgid in groups:
        _signal_group(pgid, signal.SIGKILL)
        _LIVE.discard(pgid)
    for tag in list(_LIVE_TAGS):
        _kill_tagged_now(tag)
        _LIVE_TAGS.discard(tag)


#: signals that end mcptask at once by default (no `finally`, no atexit): the safety net stops
#: the servers first
FATAL_SIGNALS = ("SIGTERM", "SIGHUP", "SIGQUIT")


def _on_fatal(sig: int) -> None:
    """A fatal signal outside `watch`: stop the servers, then die of it as we would have."""
    _kill_groups_now()
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)


async def _stop_group(pgid: int) -> None:
    """SIGTERM what is left of a server's process group, then SIGKILL what ignored it."""
    if not _signal_group(pgid, signal.SIGTERM):
        return
    deadline = time.monotonic() + CLOSE_GRACE
    while time.monotonic() < deadline:
        await asyncio.sleep(0.02)
        if not _signal_group(pgid, 0):
            return
    _signal_group(pgid, signal.SIGKILL)


def _install_safety_net(loop: asyncio.AbstractEventLoop) -> None:
    global _ATEXIT
    if not _ATEXIT:
        atexit.register(_kill_groups_now)
        _ATEXIT = True
    if threading.current_thread() is not threading.main_thread() or sys.platform == "win32":
        return
    for name in FATAL_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) is signal.SIG_DFL:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, _on_fatal, sig)


# -- the transport --------------------------------------------------------------------------------


class StdioTransport(KeepsSession):
    """One spawned server; implements `rpc.Transport` (and `rpc.SharesOneStream`)."""

    #: `rpc.SharesOneStream`: what the server sends goes through `peer.PeerRouter`
    shares_one_stream = True

    def __init__(self, options: StdioOptions) -> None:
        if not options.command:
            raise ValueError("StdioOptions.command is empty")
        self.options = options
        self.url = "stdio:" + " ".join(options.command)
        self.session_id: str | None = None
        #: a `time.monotonic()` no request may outlast (`result --timeout`), or None
        self.deadline: float | None = None
        #: what the server sends, routed (transports/peer.py, shared with legacy SSE)
        self.router = PeerRouter(self._reply, trace=self._trace, kept=NOTIFICATION_QUEUE)
        #: notifications that arrived while no request was open and no handler was set
        self.notifications: asyncio.Queue[Message] = self.router.notifications
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_LINES)
        self._proc: asyncio.subprocess.Process | None = None
        self._pgid: int | None = None
        #: the process that stops the server if mcptask is killed (`start_reaper`)
        self._reaper: Any = None
        #: the mark in the server's environment that its descendants inherit (TAG_ENV)
        self._tag = f"{os.getpid()}-{os.urandom(6).hex()}"
        self._start_lock: asyncio.Lock | None = None
        self._write_lock: asyncio.Lock | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._handler_tasks: set[asyncio.Task[None]] = set()
        self._stderr_done: asyncio.Event | None = None
        self._eof: asyncio.Event | None = None
        self._dead: ServerExited | None = None
        self._closing = False
        #: the server has written a line on stdout; `on_silence` has been told
        self._heard = False
        self._told_silence = False
        self._secrets = [
            *(v for k, v in options.env.items() if redact.is_secret_name(k)),
            *options.secrets,
        ]
        redact.hold(self._secrets)

    @property
    def on_unsolicited(self) -> UnsolicitedHandler | None:
        """Server requests and notifications go here when set (push watch: tasks/status)."""
        return self.router.on_unsolicited

    @on_unsolicited.setter
    def on_unsolicited(self, handler: UnsolicitedHandler | None) -> None:
        self.router.on_unsolicited = handler

    @property
    def on_notification(self) -> Callable[[Message], None] | None:
        """Notifications (no id) go here first when set (push watch: tasks/status)."""
        return self.router.on_notification

    def notifications_to(
        self, handler: Callable[[Message], None], *, backlog: bool = False
    ) -> contextlib.AbstractContextManager[None]:
        """`rpc.HasNotifications`: notifications to `handler` inside the block."""
        return self.router.notifications_to(handler, backlog=backlog)

    def set_deadline(self, deadline: float | None) -> None:
        """`rpc.HasDeadline`: no request from now on outlasts `deadline`."""
        self.deadline = deadline

    # -- text -------------------------------------------------------------------------------------

    def redact(self, message: str) -> str:
        return redact.text(message, self._secrets)

    def _trace(self, line: str) -> None:
        if self.options.trace is not None:
            self.options.trace(self.redact(clean(line)))

    def trace(self, line: str) -> None:
        """A remark of mcptask's own on `--trace` (the MCP version agreed, say)."""
        self._trace(line)

    @property
    def _name(self) -> str:
        return os.path.basename(self.options.command[0])

    def _tail(self, lines: int = 8, limit: int = 600) -> str:
        """The last stderr lines folded into one line."""
        kept = [one_line(s, 300) for s in list(self.stderr_tail)[-lines:]]
        text = " | ".join(s for s in kept if s)
        if len(text) > limit:
            text = "…" + text[-(limit - 1) :]
        return self.redact(text)

    # -- starting ---------------------------------------------------------------------------------

    async def _ensure_started(self) -> asyncio.subprocess.Process:
        if self._dead is not None:
            raise self._dead
        if self._closing:
            raise ServerExited(f"the stdio server {self._name} has been stopped")
        if self._proc is not None:
            return self._proc
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._proc is None and self._dead is None:
                try:
                    await self._spawn()
                except ServerExited as exc:
                    self._dead = exc
                    raise
        if self._dead is not None:
            raise self._dead
        assert self._proc is not None
        return self._proc

    async def _spawn(self) -> None:
        o = self.options
        env = child_environment(o.env)
        where = f" (in {o.cwd})" if o.cwd else ""
        self._trace(f"> spawn {' '.join(o.command)}{where}; environment: {', '.join(sorted(env))}")
        env[TAG_ENV] = self._tag  # mcptask's own mark (not in the trace: not the user's)
        try:
            proc = await asyncio.create_subprocess_exec(
                *o.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=o.cwd,
                limit=o.max_line,
                start_new_session=sys.platform != "win32",
            )
        except FileNotFoundError as exc:
            missing = exc.filename if isinstance(exc.filename, str) else o.command[0]
            if o.cwd and missing == o.cwd:
                what = f"its working directory does not exist: {o.cwd}"
            else:
                what = f"command not found: {o.command[0]}"
            raise ServerExited(f"cannot start the stdio server: {what}") from None
        except PermissionError:
            raise ServerExited(
                f"cannot start the stdio server: permission denied: {o.command[0]}"
            ) from None
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise ServerExited(f"cannot start the stdio server {o.command[0]}: {reason}") from None
        self._proc = proc
        if sys.platform != "win32":
            self._pgid = proc.pid
            _LIVE.add(proc.pid)
            _LIVE_TAGS.add(self._tag)
            self._reaper = start_reaper(proc.pid, self._tag)
        loop = asyncio.get_running_loop()
        _install_safety_net(loop)
        self._eof = asyncio.Event()
        self._stderr_done = asyncio.Event()
        self._write_lock = asyncio.Lock()
        self._tasks = [
            loop.create_task(self._read_stdout(proc), name="mcptask-stdio-stdout"),
            loop.create_task(self._read_stderr(proc), name="mcptask-stdio-stderr"),
        ]

    # -- reading ----------------------------------------------------------------------------------

    async def _read_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        assert self._stderr_done is not None
        try:
            while True:
                try:
                    raw = await proc.stderr.readline()
                except ValueError:  # a line over the limit: its start is lost, go on
                    continue
                if not raw:
                    return
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                self.stderr_tail.append(line)
                self._trace(f"! stderr: {line}")
        except (OSError, asyncio.CancelledError):
            return
        finally:
            self._stderr_done.set()

    async def _read_stdout(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        try:
            while True:
                try:
                    raw = await proc.stdout.readline()
                except ValueError:
                    mib = self.options.max_line // (1024 * 1024)
                    self.router.fail(
                        ProtocolError(
                            f"the stdio server sent a message over the {mib} MiB limit "
                            "(MCPTASK_MAX_BODY)"
                        )
                    )
                    continue
                if not raw:
                    break
                self._line(raw)
        except asyncio.CancelledError:
            return
        except OSError:
            pass
        await self._on_eof(proc)

    def _refused(self, text: str, reason: str) -> None:
        """A line that is JSON mcptask cannot handle (too deep, a number past a double): the
        request it answers cannot be told, so whoever waits fails now with the reason."""
        self._trace(f"< (refused: {reason}) {text[:2000]}")
        self.router.fail(
            ProtocolError(f"the stdio server {self._name} sent JSON that mcptask refuses: {reason}")
        )

    def _line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            return
        self._heard = True
        from mcptask.text import jsonsafe

        try:
            parsed = jsonsafe.loads(text)
        except jsonsafe.Refused as exc:
            self._refused(text, str(exc))
            return
        except (ValueError, RecursionError):
            self._trace(f"< (not JSON, ignored) {text[:2000]}")
            return
        items = parsed if isinstance(parsed, list) else [parsed]
        if not all(isinstance(i, dict) for i in items):
            self._trace(f"< (not a JSON-RPC message, ignored) {text[:2000]}")
            return
        self._trace(f"< {json.dumps(redact.data(parsed), ensure_ascii=False)[:20000]}")
        for item in items:
            self.router.route(item)

    def _reply(self, message: Message) -> None:
        """An answer of ours to the server (a ping's, a refusal), written without waiting."""
        task = asyncio.ensure_future(self._write_quietly(message))
        self._handler_tasks.add(task)
        task.add_done_callback(self._handler_tasks.discard)

    async def _write_quietly(self, message: Message) -> None:
        with contextlib.suppress(TransportError, OSError):
            await self._write(message)

    async def _on_eof(self, proc: asyncio.subprocess.Process) -> None:
        """stdout closed: the server is gone (or going). Fail whoever still waits."""
        assert self._eof is not None
        if self._stderr_done is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stderr_done.wait(), 1.0)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), 1.0)
        self._dead = self._exit_error(proc.returncode)
        self._eof.set()
        self.router.fail(self._dead)

    def _exit_error(self, status: int | None, doing: str = "") -> ServerExited:
        if self._closing:
            return ServerExited(f"the stdio server {self._name} has been stopped")
        if status is None:
            how = "closed its stdout"
        elif status < 0:
            try:
                how = f"was killed by {signal.Signals(-status).name}"
            except ValueError:
                how = f"was killed by signal {-status}"
        else:
            how = f"exited with status {status}"
        tail = self._tail()
        text = f"the stdio server {self._name} {how}{doing}"
        text += f"; its last stderr lines: {tail}" if tail else " (it wrote nothing on stderr)"
        return ServerExited(text)

    # -- writing ----------------------------------------------------------------------------------

    async def _write(self, message: Message) -> None:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and self._write_lock is not None
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        async with self._write_lock:
            self._trace(f"> {json.dumps(redact.data(message), ensure_ascii=False)[:20000]}")
            try:
                proc.stdin.write(data.encode())
                await proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError, RuntimeError, OSError):
                await self._wait_dead()
                raise self._dead or ServerExited(
                    f"the stdio server {self._name} stopped reading its stdin"
                ) from None

    async def _wait_dead(self) -> None:
        if self._eof is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._eof.wait(), 3.0)

    # -- the one operation ------------------------------------------------------------------------

    async def send(
        self,
        message: Message,
        *,
        headers: Mapping[str, str] | None = None,
        url: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[Message]:
        """Write one message; for a request, yield what arrives for it up to its answer."""
        await self._ensure_started()
        is_request = "method" in message and "id" in message
        if not is_request:
            await self._write(message)
            return
        req_id = message["id"]
        method = message.get("method")
        queue = self.router.open(req_id)
        try:
            await self._write(message)
            wait = timeout if timeout is not None else self.options.read_timeout
            while True:
                try:
                    item = await self._next(queue, self._time_left(wait), method)
                except TimeoutError:
                    raise TransportError(
                        f"timed out waiting for the stdio server {self._name} to answer {method}"
                    ) from None
                if isinstance(item, BaseException):
                    raise item
                yield item
                if is_response(item):
                    return
        finally:
            self.router.close(req_id)

    async def _next(
        self, queue: asyncio.Queue[Message | BaseException], wait: float | None, method: Any
    ) -> Message | BaseException:
        """The next item for a request within `wait`; while the server has said nothing at
        all, `on_silence` hears after SILENCE seconds that mcptask is waiting for it."""
        if self._heard or self._told_silence or self.options.on_silence is None:
            return await asyncio.wait_for(queue.get(), wait)
        if wait is not None and wait <= SILENCE:
            return await asyncio.wait_for(queue.get(), wait)
        getter = asyncio.ensure_future(queue.get())
        try:
            done, _ = await asyncio.wait({getter}, timeout=SILENCE)
            if not done and not self._heard:
                self._told_silence = True
                said = f" (its stderr: {self._tail(2, 200)})" if self.stderr_tail else ""
                self.options.on_silence(
                    f"waiting for the stdio server {self._name} to answer {method}: it has "
                    f"said nothing for {SILENCE:g}s{said}"
                )
            return await asyncio.wait_for(getter, None if wait is None else wait - SILENCE)
        finally:
            getter.cancel()

    def _time_left(self, wait: float | None) -> float | None:
        """A request's wait under `deadline`: what is left of it, when that is sooner."""
        if self.deadline is None:
            return wait
        left = max(0.01, self.deadline - time.monotonic())
        return left if wait is None else min(wait, left)

    # -- stopping ---------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop the server: close stdin, wait briefly, SIGTERM, wait, SIGKILL."""
        self._closing = True
        proc = self._proc
        if proc is None:
            return
        try:
            await self._stop(proc)
        except BaseException:
            self._kill(proc)  # cancelled or interrupted while stopping: no waiting now
            raise
        finally:
            for task in [*self._tasks, *self._handler_tasks, *self.router.tasks]:
                task.cancel()
            if self._pgid is not None:
                _LIVE.discard(self._pgid)
            reaper, self._reaper = self._reaper, None
            stop_reaper(reaper, told=proc.returncode is not None)
            self.router.fail(ServerExited(f"the stdio server {self._name} has been stopped"))

    async def _stop(self, proc: asyncio.subprocess.Process) -> None:
        if proc.returncode is None and proc.stdin is not None:
            with contextlib.suppress(OSError, RuntimeError):
                proc.stdin.close()
            if not await self._waited(proc, CLOSE_GRACE):
                self._trace("> the server did not exit when its stdin closed: SIGTERM")
                self._signal(proc, signal.SIGTERM)
                if not await self._waited(proc, TERM_GRACE):
                    self._trace("> the server ignored SIGTERM: SIGKILL")
                    self._signal(proc, signal.SIGKILL)
                    await self._waited(proc, TERM_GRACE)
        # whatever it left in its group (a wrapper's children) goes too, and what left the
        # group but carries its tag (a daemon in a session of its own)
        if self._pgid is not None:
            await _stop_group(self._pgid)
            await _stop_tagged(self._tag)
            _LIVE_TAGS.discard(self._tag)
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=1.0)

    @staticmethod
    async def _waited(proc: asyncio.subprocess.Process, seconds: float) -> bool:
        try:
            await asyncio.wait_for(proc.wait(), seconds)
        except TimeoutError:
            return False
        return True

    def _signal(self, proc: asyncio.subprocess.Process, sig: int) -> None:
        if self._pgid is not None and _signal_group(self._pgid, sig):
            return
        with contextlib.suppress(ProcessLookupError, OSError):
            proc.send_signal(sig)

    def _kill(self, proc: asyncio.subprocess.Process) -> None:
        self._signal(proc, signal.SIGKILL)
        if self._pgid is not None:
            _kill_tagged_now(self._tag)
            _LIVE_TAGS.discard(self._tag)
