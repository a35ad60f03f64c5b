"""The session room: the environment's numbers read in one place, and the endpoint and auth
commands built from them (issue 23, defect 4)."""

from __future__ import annotations

import io

import pytest

from mcptask.commands.auth import _io
from mcptask.errors import UsageError
from mcptask.output.console import Output
from mcptask.session.context import Context
from mcptask.session.env import Limits
from mcptask.session.targets import GlobalOptions, Target
from mcptask.session.terminal import Environment


def _ctx() -> Context:
    out = Output(mode="json", stdout=io.StringIO(), stderr=io.StringIO())
    target = Target(url="http://127.0.0.1:9/mcp")
    return Context(GlobalOptions(), out, target=target, env=Environment())


def test_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPTASK_CONNECT_TIMEOUT", "1.5")
    monkeypatch.setenv("MCPTASK_READ_TIMEOUT", "2")
    monkeypatch.setenv("MCPTASK_MAX_BODY", "1_000")
    assert Limits.from_environment() == Limits(1.5, 2.0, 1000)


@pytest.mark.parametrize("raw", ["nan", "inf", "-1", "0", "soon"])
def test_a_timeout_that_is_no_bound_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv("MCPTASK_READ_TIMEOUT", raw)
    with pytest.raises(UsageError, match="MCPTASK_READ_TIMEOUT"):
        Limits.from_environment()


def test_auth_commands_use_the_connection_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """`auth login` once ignored MCPTASK_CONNECT_TIMEOUT: 11.4 s against a hung listener with a
    1 s timeout."""
    monkeypatch.setenv("MCPTASK_CONNECT_TIMEOUT", "1")
    monkeypatch.setenv("MCPTASK_READ_TIMEOUT", "3")
    io_ = _io(_ctx())
    assert (io_.connect_timeout, io_.read_timeout) == (1.0, 3.0)


def test_the_endpoint_reads_the_limits_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPTASK_CONNECT_TIMEOUT", "4")
    endpoint = _ctx().endpoint
    assert endpoint.limits.connect_timeout == 4.0
    monkeypatch.setenv("MCPTASK_CONNECT_TIMEOUT", "5")
    assert endpoint.limits.connect_timeout == 4.0
