"""Issue 41: how fast a watch sends once the server has said "too many requests"
(scheduler/rate.py), on a fake clock."""

from __future__ import annotations

import pytest

from mcptask.scheduler import rate
from mcptask.scheduler.rate import Rate


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _answers(r: Rate, clock: Clock, count: int, over: float) -> None:
    for _ in range(count):
        clock.now += over / count
        r.answered()


def test_no_limit_until_the_server_refuses() -> None:
    clock = Clock()
    r = Rate(clock)
    _answers(r, clock, 500, 1.0)
    assert r.limit is None
    assert [r.reserve() for _ in range(100)] == [0.0] * 100


def test_a_refusal_limits_to_less_than_what_the_server_answered_and_spaces_requests() -> None:
    clock = Clock()
    r = Rate(clock)
    _answers(r, clock, 300, 1.0)
    assert r.refused() == pytest.approx(300 * rate.RELIEF)
    waits = [r.reserve() for _ in range(5)]
    assert waits == pytest.approx([k / (300 * rate.RELIEF) for k in range(5)])


def test_a_small_watch_is_not_paced() -> None:
    """Fewer than FLOOR answers a second: the hold and backoff of a refusal are enough."""
    clock = Clock()
    r = Rate(clock)
    _answers(r, clock, 5, 1.0)
    assert r.refused() is None
    assert r.reserve() == 0.0


def test_a_burst_of_refusals_cuts_once_a_window() -> None:
    clock = Clock()
    r = Rate(clock)
    _answers(r, clock, 200, 1.0)
    first = r.refused()
    assert first is not None
    for _ in range(50):  # the polls that were in flight
        clock.now += 0.001
        assert r.refused() == first
    clock.now += rate.WINDOW
    assert r.refused() == pytest.approx(first * rate.CUT)


def test_the_limit_grows_only_while_used_and_is_lifted_after_calm() -> None:
    clock = Clock()
    r = Rate(clock)
    _answers(r, clock, 100, 1.0)
    limit = r.refused()
    assert limit == pytest.approx(80.0)
    _answers(r, clock, 10, 1.5)  # far below the limit: not raised
    assert r.limit == pytest.approx(80.0)
    _answers(r, clock, 80, 1.0)  # at the limit: raised
    assert r.limit == pytest.approx(80.0 * rate.GROW)
    _answers(r, clock, 40, rate.CALM)
    assert r.limit is None
    assert r.reserve() == 0.0


def test_a_cut_never_raises_a_limit_below_the_floor() -> None:
    """A first limit under FLOOR (0.8x a watch just over it): a later cut keeps it, not
    FLOOR."""
    clock = Clock()
    r = Rate(clock)
    _answers(r, clock, 21, 1.0)
    first = r.refused()
    assert first is not None and first < rate.FLOOR
    clock.now += rate.WINDOW
    assert r.refused() == first


def test_a_place_is_not_before_the_origins_hold() -> None:
    clock = Clock()
    r = Rate(clock)
    assert r.reserve(not_before=clock.now + 2.0) == 2.0  # no limit: the hold only
    _answers(r, clock, 100, 1.0)
    limit = r.refused()
    assert limit is not None
    hold = clock.now + 1.0
    waits = [r.reserve(not_before=hold) for _ in range(3)]
    assert waits == pytest.approx([1.0, 1.0 + 1 / limit, 1.0 + 2 / limit])
