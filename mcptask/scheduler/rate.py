"""How fast a watch sends to an endpoint that has said "too many requests" (HTTP 429).

Until the first 429 there is no limit: each task is polled when it is due (the server's pace,
`width.py` bounding the polls in flight). A 429 sets a limit from what the server answered in
the last `WINDOW`: `RELIEF` times that (it refused more), and requests go out at most that
many a second, evenly spaced, instead of all at once when the server's wait is over (a burst
it refuses again). A watch that sent fewer than `FLOOR` a second is not paced: the hold and
backoff of each refusal are enough for it. While limited, another 429 cuts the limit by `CUT`
(at most once a `WINDOW`: a burst of refusals is one refusal), and each `WINDOW` without one
in which the watch used the limit (`USED`) raises it by `GROW`, to find the server's limit
again as it moves; after `CALM` seconds without a refusal the limit is lifted. The limit only
ever slows a poll down: a task is never polled sooner than its server asks.

Pure logic on an injected clock: `reserve` says how long a request waits for its place, the
caller sleeps.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable

#: seconds over which the server's answers are counted
WINDOW = 1.0
#: the first limit, as a share of the answers of the last window
RELIEF = 0.8
#: what another refusal leaves of the limit
CUT = 0.7
#: what each window without a refusal multiplies the limit by
GROW = 1.05
#: the share of the limit a window's answers must reach for the limit to be raised (a limit
#: the watch does not use is not raised: it would let a burst through later)
USED = 0.9
#: requests a second below which a watch is not paced
FLOOR = 20.0
#: seconds without a refusal after which the limit is lifted
CALM = 30.0


class Rate:
    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        #: requests a second at most (None: no limit)
        self.limit: float | None = None
        #: when the answers of the last window came
        self._answers: deque[float] = deque()
        #: the earliest time the next request may go
        self._next = -math.inf
        #: when the limit was last set or cut, last raised; when the last refusal came
        self._cut = -math.inf
        self._raised = -math.inf
        self._refused = -math.inf

    def _count(self, now: float) -> int:
        answers = self._answers
        while answers and answers[0] <= now - WINDOW:
            answers.popleft()
        return len(answers)

    def answered(self) -> None:
        """An answer came (not a refusal)."""
        now = self.clock()
        self._answers.append(now)
        served = self._count(now)
        if self.limit is None or now - max(self._cut, self._raised) < WINDOW:
            return
        if now - self._refused >= CALM:
            self.limit = None
            return
        if served >= USED * self.limit * WINDOW:  # raised only while it is what holds polls back
            self.limit *= GROW
            self._raised = now

    def refused(self) -> float | None:
        """The server said "too many requests": the limit from now on (None: not paced)."""
        now = self.clock()
        self._refused = now
        if self.limit is None:
            served = self._count(now) / WINDOW
            if served >= FLOOR:
                self.limit = served * RELIEF
                self._cut = now
        elif now - self._cut >= WINDOW:
            self.limit = min(self.limit, max(FLOOR, self.limit * CUT))
            self._cut = now
        return self.limit

    def reserve(self, not_before: float = -math.inf) -> float:
        """Take the next place for a request, not before `not_before` (the origin's hold
        after a 429): the seconds it waits for it (0: go now)."""
        now = self.clock()
        slot = max(now, not_before)
        if self.limit is None:
            return slot - now
        slot = max(self._next, slot)
        self._next = slot + 1.0 / self.limit
        return slot - now
