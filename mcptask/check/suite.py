"""What every check suite shares: the check model, the recording transport (`--rpc`), lazily made
shared fixtures (one task serves many checks), skips, and small judging helpers."""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from mcptask.errors import (
    AuthError,
    ExitCode,
    McptaskError,
    RpcError,
    UsageError,
    is_transient,
)
from mcptask.pacing import poll_seconds
from mcptask.text import jsonsafe
from mcptask.text.sanitize import one_line
from mcptask.transports.rpc import FetchesUrls, HasSession, RpcClient, Transport

if TYPE_CHECKING:
    import httpx

PASS = "PASS"
WARN = "WARN"
FAIL = "FAIL"
INFO = "INFO"
SKIP = "SKIP"
VERDICTS = (PASS, WARN, FAIL, INFO, SKIP)

#: a SKIP's reason: the check does not apply to this target (never turns a run red) ...
NOT_APPLICABLE = "not-applicable"
#: ... or it applies but could not be exercised (the run is incomplete)
COULD_NOT_RUN = "could-not-run"

Outcome = tuple[str, str]
Exchange = dict[str, Any]


@dataclass(frozen=True)
class CheckDef:
    """A check's stable identity: `id` (`mcp2025.result.waits`), its category, the requirement
    in a few words and where the spec states it."""

    id: str
    category: str
    requirement: str
    spec: str


@dataclass
class CheckResult:
    check: CheckDef
    verdict: str
    observed: str
    skip_reason: str | None = None
    duration_ms: int = 0
    rpc: list[Exchange] = field(default_factory=list)

    def to_json(self, *, with_rpc: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.check.id,
            "category": self.check.category,
            "verdict": self.verdict,
            "requirement": self.check.requirement,
            "spec": self.check.spec,
            "observed": self.observed,
        }
        if self.skip_reason is not None:
            out["skipReason"] = self.skip_reason
        out["durationMs"] = self.duration_ms
        if with_rpc:
            out["rpc"] = self.rpc
        return out


class Skip(Exception):
    """Raised by a check (or a fixture it needs): the check gets SKIP with this reason."""

    def __init__(self, reason: str, text: str) -> None:
        super().__init__(text)
        self.reason = reason
        self.text = text


def not_applicable(text: str) -> Skip:
    return Skip(NOT_APPLICABLE, text)


def could_not_run(text: str) -> Skip:
    return Skip(COULD_NOT_RUN, text)


class BadAnswer(McptaskError):
    """The server answered something a check cannot use (the check that asked FAILs; the
    checks that needed the answer cannot run)."""

    exit_code = ExitCode.SERVER


# -- the recording transport ----------------------------------------------------------------


class Recorder:
    """Wraps the run's transport: every message sent and received is appended to the logs in
    `sinks` (the current check's, and a fixture's while one is being made)."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.url = inner.url
        self.sinks: list[list[Exchange]] = []
        #: the server has answered something in the protocol during this run (it was reached)
        self.answered = False

    @property
    def session_id(self) -> str | None:
        return self.inner.session_id if isinstance(self.inner, HasSession) else None

    def using_session(self, session_id: str | None) -> AbstractContextManager[None]:
        """`rpc.HasSession`: the run's transport in `session_id` inside the block."""
        if isinstance(self.inner, HasSession):
            return self.inner.using_session(session_id)
        return nullcontext()

    @property
    def http(self) -> bool:
        return self.url.startswith(("http://", "https://"))

    def _log(self, entry: Exchange) -> None:
        for sink in self.sinks:
            sink.append(entry)

    async def send(
        self,
        message: dict[str, Any],
        *,
        headers: Mapping[str, str] | None = None,
        url: str | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[dict[str, Any], None]:
        entry: Exchange = {"request": message}
        if headers:
            entry["headers"] = dict(headers)
        answers: list[dict[str, Any]] = []
        entry["answers"] = answers
        self._log(entry)
        stream = self.inner.send(message, headers=headers, url=url, timeout=timeout)
        try:
            async for incoming in stream:
                self.answered = True
                answers.append(incoming)
                yield incoming
        except RpcError as exc:
            self.answered = True
            entry["error"] = {"code": exc.code, "message": exc.rpc_message}
            if exc.data is not None:
                entry["error"]["data"] = exc.data
            if exc.http_status is not None:
                entry["httpStatus"] = exc.http_status
            raise
        except McptaskError as exc:
            entry["failure"] = exc.message
            raise
        finally:
            closer = getattr(stream, "aclose", None)
            if closer is not None:
                await closer()

    async def get(
        self, url: str, *, max_body: int | None = None, json_only: bool = False
    ) -> httpx.Response:
        if not isinstance(self.inner, FetchesUrls):
            raise McptaskError("this transport cannot fetch URLs")
        get = self.inner.get
        entry: Exchange = {"get": url}
        self._log(entry)
        response: httpx.Response = await get(url, max_body=max_body, json_only=json_only)
        entry["status"] = response.status_code
        try:
            entry["body"] = jsonsafe.loads(response.content)
        except ValueError:
            entry["body"] = response.text[:2000]
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()

    def redact(self, message: str) -> str:
        return self.inner.redact(message)


# -- shared fixtures --------------------------------------------------------------------------

T = TypeVar("T")


def unreachable(exc: BaseException | None) -> bool:
    """A failure that says the server could not be reached (or was down: 5xx, 429), not how
    it behaves: connection errors, timeouts, transient HTTP statuses."""
    return exc is not None and is_transient(exc)


class Lazy(Generic[T]):
    """A value several checks need (the session, the tool list, the task), made once by the
    first check that asks. A failure is remembered: later checks get SKIP could-not-run with
    it. Its exchanges are logged under the check that made it and kept for the others."""

    def __init__(self, recorder: Recorder, what: str, make: Callable[[], Awaitable[T]]) -> None:
        self.recorder = recorder
        self.what = what
        self.make = make
        self.exchanges: list[Exchange] = []
        self._done = False
        self._value: T | None = None
        self._error: BaseException | None = None
        self._lock = asyncio.Lock()

    async def attempt(self) -> tuple[T | None, BaseException | None]:
        async with self._lock:
            if not self._done:
                self.recorder.sinks.append(self.exchanges)
                try:
                    self._value = await self.make()
                except Exception as exc:  # remembered; `get` turns it into a skip
                    self._error = exc
                finally:
                    sinks = self.recorder.sinks  # by identity: equal logs are not the same log
                    for i in range(len(sinks) - 1, -1, -1):
                        if sinks[i] is self.exchanges:
                            del sinks[i]
                            break
                    self._done = True
        if unreachable(self._error):
            # unreachable (refused, reset, timed out, a proxy's 502/503) says nothing about
            # the spec: the check could not run, it did not fail
            assert self._error is not None
            raise self._error
        return self._value, self._error

    async def get(self) -> T:
        value, error = await self.attempt()
        if isinstance(error, (UsageError, AuthError)):
            raise error
        if isinstance(error, Skip):
            raise Skip(error.reason, error.text)
        if error is not None:
            raise could_not_run(f"{self.what} failed: {describe(error)}")
        assert value is not None
        return value

    def failed(self) -> BaseException | None:
        return self._error if self._done else None


# -- the suite --------------------------------------------------------------------------------

CheckFn = Callable[[], Awaitable[Outcome]]


@dataclass
class SuiteOptions:
    tool: str | None = None
    pairs: list[str] = field(default_factory=list)
    failing_tool: str | None = None
    failing_args: dict[str, Any] | None = None
    task_timeout: float = 60.0


class Suite:
    """One protocol's checks, in the order they run (the order is part of the design: one task
    is observed working, then waited for, then examined finished)."""

    protocol: str = ""

    def __init__(
        self, rpc: RpcClient, recorder: Recorder, opts: SuiteOptions, *, proto: Any = None
    ) -> None:
        self.rpc = rpc
        #: the protocol module the run detected (the A2A suite reads its version from it)
        self.proto = proto
        self.recorder = recorder
        self.opts = opts
        #: one-line remarks for stderr (a tool picked by its name, an incomplete run's cause)
        self.notes: list[str] = []
        #: facts for the report (`serverInfo`, the tool used)
        self.facts: dict[str, Any] = {}

    def plan(self) -> list[tuple[CheckDef, CheckFn]]:
        raise NotImplementedError

    def cite(self, *fixtures: Lazy[Any]) -> None:
        """Show a shared fixture's exchanges under the current check too (`--rpc`)."""
        if not self.recorder.sinks:
            return
        current = self.recorder.sinks[0]
        for fixture in fixtures:
            for entry in fixture.exchanges:
                if not any(e is entry for e in current):
                    current.append({**entry, "shared": True})

    def lazy(self, what: str, make: Callable[[], Awaitable[T]]) -> Lazy[T]:
        return Lazy(self.recorder, what, make)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    async def made(self, fixture: Lazy[T]) -> tuple[T, None] | tuple[None, BaseException]:
        """For the check that judges a fixture's making: (value, None), its exchanges cited;
        or (None, the error) when the server answered wrongly (the check FAILs with it). Any
        other failure is raised as the fixture's skip."""
        value, error = await fixture.attempt()
        if error is not None:
            if isinstance(error, RpcError | BadAnswer):
                return None, error
            await fixture.get()  # the fixture's skip, as it was raised
        assert value is not None
        self.cite(fixture)
        return value, None


class TaskTrack(Protocol):
    """One task as a run follows it."""

    @property
    def task_id(self) -> str: ...

    @property
    def state(self) -> str:
        """The task's last status, as the protocol words it."""
        ...

    @property
    def terminal(self) -> bool: ...


TrackT = TypeVar("TrackT", bound=TaskTrack)


class TaskSuite(Suite, Generic[TrackT]):
    """A suite that makes one main task (`main`) and waits for it to end (`main_done`); the
    protocol says how requests are sent, how a task is read again and how often."""

    def __init__(
        self, rpc: RpcClient, recorder: Recorder, opts: SuiteOptions, *, proto: Any = None
    ) -> None:
        super().__init__(rpc, recorder, opts, proto=proto)
        self.main = self.lazy("the task", self._make_main)
        self.main_done = self.lazy("waiting for the task to end", self._main_done)

    async def request(self, method: str, params: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def attempt(
        self, method: str, params: dict[str, Any], **kwargs: Any
    ) -> tuple[Any, RpcError | None]:
        try:
            return await self.request(method, params, **kwargs), None
        except RpcError as exc:
            return None, exc

    async def get_task(self, track: TrackT) -> dict[str, Any]:
        """Read the task again (and add what was read to the track)."""
        raise NotImplementedError

    def poll_after(self, track: TrackT) -> float:
        """Seconds to wait before reading the task again."""
        raise NotImplementedError

    async def wait_terminal(self, track: TrackT) -> None:
        clock = Clock()
        while not track.terminal:
            if clock.elapsed() > self.opts.task_timeout:
                raise could_not_run(
                    f"task {track.task_id} was still {track.state} after "
                    f"{self.opts.task_timeout:g} s (--task-timeout)"
                )
            await asyncio.sleep(self.poll_after(track))
            await self.get_task(track)

    async def _make_main(self) -> TrackT:
        raise NotImplementedError

    async def _main_done(self) -> TrackT:
        track = await self.main.get()
        await self.wait_terminal(track)
        return track


def check_table(suite: str, rows: Iterable[tuple[str, str, str, str]]) -> dict[str, CheckDef]:
    """A suite's checks by their id within it: each row is (id without the `suite.` prefix,
    category, requirement, spec section)."""
    return {
        name: CheckDef(f"{suite}.{name}", category, requirement, spec)
        for name, category, requirement, spec in rows
    }


# -- judging helpers --------------------------------------------------------------------------


def describe(exc: BaseException) -> str:
    if isinstance(exc, RpcError):
        return rpc_error_text(exc)
    if isinstance(exc, Skip):
        return exc.text
    if isinstance(exc, McptaskError):
        return exc.message
    return f"{type(exc).__name__}: {exc}"


def rpc_error_text(exc: RpcError) -> str:
    http = f" (HTTP {exc.http_status})" if exc.http_status else ""
    return f"error {exc.code} {short(exc.rpc_message, 120)!r}{http}"


def short(value: Any, limit: int = 160) -> str:
    """A value as a short one-line text for `observed`."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return one_line(text, limit)


def keys(value: Any) -> str:
    return ", ".join(sorted(str(k) for k in value)) if isinstance(value, dict) else "none"


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def timestamp(value: Any) -> tuple[datetime | None, str | None]:
    """An ISO 8601 (RFC 3339) timestamp: (parsed, None), or (None, what is wrong). A time
    without an offset parses but is reported (`"no UTC offset"`)."""
    if not isinstance(value, str):
        return None, "missing" if value is None else f"not a string ({type(value).__name__})"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None, f"not ISO 8601: {value!r}"
    if "T" not in value.upper():
        return None, f"not a date-time: {value!r}"
    if parsed.tzinfo is None:
        return parsed, "no UTC offset"
    return parsed, None


def entropy_bits(task_id: str) -> float:
    """A rough guess of how many random bits an id carries, from its length and alphabet."""
    if re.fullmatch(
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", task_id
    ):
        return 122.0
    if task_id.isdigit():
        alphabet = 10
    elif re.fullmatch(r"[0-9a-fA-F]+", task_id):
        alphabet = 16
    elif re.fullmatch(r"[0-9a-z]+", task_id) or re.fullmatch(r"[0-9A-Z]+", task_id):
        alphabet = 36
    elif re.fullmatch(r"[0-9A-Za-z]+", task_id):
        alphabet = 62
    else:
        alphabet = 64
    return len(task_id) * math.log2(alphabet)


def fill_arguments(schema: Any) -> dict[str, Any] | None:
    """Values for a tool's required arguments from its `inputSchema`: the default, an enum's
    first value, or a simple value ("test", 1, false). None when one cannot be filled."""
    from mcptask.protocols.tool_args import schema_types

    if not isinstance(schema, dict):
        return {}
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = schema.get("required")
    out: dict[str, Any] = {}
    for name in required if isinstance(required, list) else []:
        if not isinstance(name, str):
            continue
        prop = props.get(name)
        if isinstance(prop, dict) and "default" in prop:
            out[name] = prop["default"]
            continue
        if isinstance(prop, dict) and isinstance(prop.get("enum"), list) and prop["enum"]:
            out[name] = prop["enum"][0]
            continue
        types = schema_types(prop)
        if not types or "string" in types:
            out[name] = "test"
        elif "integer" in types or "number" in types:
            out[name] = 1
        elif "boolean" in types:
            out[name] = False
        else:
            return None
    return out


def build_arguments(
    schema: Any, pairs: list[str], args: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The required arguments filled from the schema, with the user's `k=v` / JSON on top."""
    from mcptask.protocols.tool_args import build

    base = fill_arguments(schema)
    given = build(pairs, None, schema if isinstance(schema, dict) else None) if pairs else {}
    if args:
        given = {**args, **given}
    if base is None:
        required = schema.get("required") if isinstance(schema, dict) else None
        missing = [r for r in required or [] if r not in given]
        if missing:
            return None
        base = {}
    return {**base, **given}


def squash(states: list[str]) -> list[str]:
    """The path a task took: its statuses in order, a repeated one once."""
    path: list[str] = []
    for state in states:
        if not path or path[-1] != state:
            path.append(state)
    return path


def looks_failing(name: str) -> bool:
    low = name.lower()
    return "fail" in low or "error" in low


def poll_interval(task: Any, default: float = 1.0) -> float:
    """The server's polling hint in seconds (ms fields `pollInterval` / `pollIntervalMs`),
    clamped as `watch` clamps it and at most 5 s, so a check neither hammers a server nor
    idles."""
    value: Any = None
    if isinstance(task, dict):
        value = task.get("pollInterval", task.get("pollIntervalMs"))
    if not is_number(value) or value <= 0:
        return default
    return min(poll_seconds(value, default), 5.0)


async def settle(job: asyncio.Future[Any]) -> None:
    """A background request a check started: cancelled when still running, and awaited, so
    that no path (the server dying, an error in the check) leaves it behind unretrieved."""
    if not job.done():
        job.cancel()
    await asyncio.gather(job, return_exceptions=True)


class Clock:
    def __init__(self) -> None:
        self.start = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start
