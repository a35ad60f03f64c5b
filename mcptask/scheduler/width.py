"""How many polls of one endpoint a watch keeps in flight at once, and how late they run.

A watch starts with `start` polls in flight at most. Each poll that goes out records how late
it went (the clock at its start minus when it was due), each answer how long it took. Once a
`WINDOW` of the clock has passed: when polls ran late (median over `LATE`), some waited for a
free place, and the width cannot carry the polls that were due at the answers' pace (width /
median answer time), the width doubles, up to `cap` (more kept-alive connections; the server's
pace is never outrun: a poll still goes out only when it is due). Polls on time let it shrink
back towards `start`, an eighth a window. An HTTP 429, a `Retry-After` or a
refused connection halves it at once and holds it there until the server's wait is over (and
at least one more `WINDOW`). When the width is at its cap and polls still run late (median over
`TOO_LATE`), `late()` says how late and why, once per watch, for the caller to show. While
the watch keeps to the pace of a server that answered 429 (`scheduler/rate.py`) and the width
carries that pace (width / median answer time), lateness is the pace's, which more places
would not help: the width does not widen, and polls late over `TOO_LATE` are said with that
reason; a width that cannot carry the pace widens as above.

Pure logic on an injected clock: no I/O, no sleeping but the wait for a free place.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

#: seconds of the clock over which lateness is judged
WINDOW = 1.0
#: polls whose median lateness in a window is over this (seconds) widen the watch
LATE = 0.05
#: at the cap, a median lateness over this (seconds) is said (`late`)
TOO_LATE = 0.25
#: the default cap of polls in flight per endpoint (`MCPTASK_MAX_IN_FLIGHT`)
DEFAULT_CAP = 64
#: the highest cap that may be asked for (the poll pool keeps at most 100 connections)
MOST = 100


def _pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile of values (not empty)."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))]


@dataclass(frozen=True)
class Lateness:
    """Polls run late with the width at its cap, or held to the pace of a server that answers
    HTTP 429 (`paced`): how late, and why."""

    p50: float
    p99: float
    width: int
    cap: int
    #: the median seconds an answer took
    answer: float
    #: the endpoint (set by the caller that knows it)
    server: str | None = None
    #: requests a second the watch keeps to after the server's 429s (`scheduler/rate.py`)
    paced: float | None = None

    def line(self) -> str:
        where = f"{self.server}: " if self.server else ""
        if self.paced is not None:
            return where + (
                f"polls run {self.p50:.1f} s late (p99 {self.p99:.1f} s): the server answers "
                f"HTTP 429 (too many requests) past about {self.paced:.0f} requests a second, "
                "and mcptask keeps to that pace"
            )
        return where + (
            f"polls run {self.p50:.1f} s late (p99 {self.p99:.1f} s): the server takes "
            f"{self.answer * 1000:.0f} ms an answer and at most {self.cap} polls are in "
            "flight (MCPTASK_MAX_IN_FLIGHT)"
        )

    def to_json(self) -> dict[str, object]:
        return {
            **({"server": self.server} if self.server else {}),
            "lateMs": {"p50": round(self.p50 * 1000), "p99": round(self.p99 * 1000)},
            "inFlight": self.width,
            "cap": self.cap,
            "answerMs": round(self.answer * 1000),
            **({"pacedPerSecond": round(self.paced, 1)} if self.paced is not None else {}),
        }


class Width:
    """The polls in flight of one watcher: a gate that widens with lateness (see the module)."""

    def __init__(self, start: int, cap: int, clock: Callable[[], float]) -> None:
        self.cap = max(1, min(cap, MOST))
        self.limit = self.start = max(1, min(start, self.cap))
        self.clock = clock
        self.busy = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._late: list[float] = []
        self._answers: list[float] = []
        #: polls that waited for a free place in this window
        self._waited = 0
        self._window = clock()
        #: no widening before this clock time (after a narrowing); the last narrowing
        self._calm_until = -math.inf
        self._narrowed = -math.inf
        #: said once: polls run late at the cap
        self.said: Lateness | None = None
        #: the pace the last poll kept to (`started`)
        self._paced: float | None = None

    async def acquire(self) -> None:
        """Wait for a free place (first come, first served)."""
        if self.busy < self.limit and not self._waiters:
            self.busy += 1
            return
        self._waited += 1
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.release()  # given a place, then cancelled: it passes on
            else:
                self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        self.busy -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.busy < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.busy += 1
                waiter.set_result(None)

    def started(self, late: float, paced: float | None = None) -> Lateness | None:
        """A poll went out `late` seconds after it was due; what to say, once (see `late`).
        `paced`: the requests a second the watch keeps to after a 429, if any (polls late for
        that are not helped by more places: the width stays, and the pace is said)."""
        self._late.append(max(0.0, late))
        self._paced = paced
        return self._judge()

    def answered(self, seconds: float) -> None:
        """A poll's answer took `seconds`."""
        self._answers.append(max(0.0, seconds))

    def narrow(self, wait: float = 0.0) -> None:
        """The server asked for less (429, `Retry-After`, a refused connection): half the
        width at once, at most once a window (the refusals of the polls that were in flight
        together are one), no widening for `wait` seconds and one more window."""
        now = self.clock()
        if now - self._narrowed >= WINDOW:
            self.limit = max(1, self.limit // 2)
            self._narrowed = now
        self._calm_until = max(self._calm_until, now + max(0.0, wait) + WINDOW)

    def _judge(self) -> Lateness | None:
        now = self.clock()
        elapsed = now - self._window
        if elapsed < WINDOW:
            return None
        late, answers, waited = self._late, self._answers, self._waited
        self._late, self._answers, self._waited = [], [], 0
        self._window = now
        if not late:
            return None
        p50 = _pct(late, 50)
        answer = _pct(answers, 50) if answers else 0.0
        # the polls this width can carry a second, against those that were due: more in
        # flight helps only where slow answers hold the places (a burst of polls due at once,
        # or a busy machine, makes polls late that more places would not speed up)
        carried = self.limit / max(answer, 1e-3)
        if self._paced is not None and carried >= self._paced:
            # late for the pace, which more places would not help: said, not widened
            if p50 <= TOO_LATE or self.said is not None:
                return None
            self.said = Lateness(
                p50=p50,
                p99=_pct(late, 99),
                width=self.limit,
                cap=self.cap,
                answer=answer,
                paced=self._paced,
            )
            return self.said
        wanted = (len(late) + len(self._waiters)) / max(elapsed, 1e-3)
        if p50 <= LATE or waited == 0 or carried >= wanted * 1.25:
            if p50 <= LATE and self.limit > self.start and now >= self._calm_until:
                self.limit = max(self.start, self.limit - max(1, self.limit // 8))
            return None
        if self.limit < self.cap:
            if now >= self._calm_until:
                self.limit = min(self.cap, self.limit * 2)
                self._wake()
            return None
        if p50 <= TOO_LATE or self.said is not None:
            return None
        self.said = Lateness(
            p50=p50, p99=_pct(late, 99), width=self.limit, cap=self.cap, answer=answer
        )
        return self.said
