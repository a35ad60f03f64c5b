"""A2A agents seen in the field (issue 25, items 7-9): `-p` with an agent's origin or card URL
reads the card for the endpoint (the real a2a-sdk agents and a scripted one whose endpoint is
elsewhere); a question that lives only in the task's history; a refused answer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from test_answer import Terminal
from test_answer import terminal as terminal  # the fixture

from conftest import CliResult, RunCli
from servers.a2a_plugin import A2AServerProcess
from servers.odd_server import OddServer

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def odd() -> Iterator[OddServer]:
    with OddServer() as server:
        yield server


def _ok(r: CliResult, code: int = 0) -> CliResult:
    assert r.code == code, f"exit {r.code}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    assert "Traceback" not in r.stderr, r.stderr
    return r


def _send(run_cli: RunCli, url: str, text: str, *extra: str) -> dict[str, Any]:
    task: dict[str, Any] = _ok(run_cli("send", text, "-u", url, "-o", "json", *extra)).json()
    return task


# -- 7. `-p` with the origin or the card URL -----------------------------------------------------


def test_forced_protocol_reads_the_card_of_an_origin(run_cli: RunCli, odd: OddServer) -> None:
    url = odd.agent("1.0", endpoint_elsewhere=True)
    r = _ok(run_cli("send", "hello", "-u", url, "-p", "a2a-1.0", "-o", "json", "--trace"))
    assert r.json()["protocol"] == "a2a-1.0"
    assert f"the agent card names the endpoint {url}rpc" in r.stderr
    tid = r.json()["taskId"]
    got = _ok(run_cli("get", "-u", url, "-p", "a2a-1.0", "-o", "json", "--", tid))
    assert got.json()["taskId"] == tid
    # the 0.3 agent the same way
    url03 = odd.agent("0.3", endpoint_elsewhere=True)
    assert _send(run_cli, url03, "hello", "-p", "a2a-0.3")["protocol"] == "a2a-0.3"


def test_forced_protocol_with_a_card_url(
    run_cli: RunCli, a2a_server: A2AServerProcess, a2a_rest_server: A2AServerProcess
) -> None:
    r = _ok(
        run_cli("send", "hi", "-u", a2a_server.card_url, "-p", "a2a-1.0", "-o", "json", "--trace")
    )
    assert "> POST" not in r.stderr.split("agent card names the endpoint")[0]  # card first
    assert r.json()["protocol"] == "a2a-1.0"
    rest = _send(run_cli, a2a_rest_server.base_url, "hi", "-p", "a2a-1.0-rest")
    assert rest["protocol"] == "a2a-1.0-rest" and rest["taskId"]
    card = _send(run_cli, a2a_rest_server.card_url, "hi", "-p", "a2a-1.0-rest")
    assert card["taskId"]


# -- 9. the question in the task's history --------------------------------------------------------


def test_a_question_only_in_the_history_is_shown(run_cli: RunCli, odd: OddServer) -> None:
    url = odd.agent("1.0", question_in_history=True)
    tid = _send(run_cli, url, "ask the weather")["taskId"]
    got = _ok(run_cli("get", "-u", url, "-o", "json", "--", tid)).json()
    assert got["status"] == "input_required" and got["statusMessage"] == "Which city?"
    pretty = _ok(run_cli("get", "-u", url, "-o", "pretty", "--", tid))
    assert "Which city?" in pretty.stdout and "sent no message" not in pretty.stdout
    watched = _ok(run_cli("watch", "-u", url, "-o", "ndjson", "--", tid), 6)
    statuses = [ln for ln in watched.lines() if ln.get("event") == "status"]
    assert statuses[-1]["statusMessage"] == "Which city?"
    answered = _ok(run_cli("answer", "-u", url, "--text", "Oslo", "-o", "json", "--", tid))
    assert "asks: Which city?" in answered.stderr
    assert "sent no message" not in answered.stderr


# -- 8. an answer the agent refuses, in `watch`'s form -------------------------------------------


def _answer_in_form(t: Terminal, text: str) -> None:
    t.expect("text: ")
    t.type(text + "\n")
    t.expect("send this answer? [Y]es, [e]dit: ")  # confirmed like an MCP form (issue 38)
    t.type("y\n")


def test_a_refused_answer_stays_on_screen_and_the_form_asks_again(
    terminal: Callable[..., Terminal], run_cli: RunCli, odd: OddServer
) -> None:
    url = odd.agent("1.0", refuse_unknown_city=True)
    tid = _send(run_cli, url, "ask the weather")["taskId"]
    t = terminal("watch", "--url", url, "--", tid)
    t.expect("Which city?")
    _answer_in_form(t, "Atlantis")
    t.expect("the server refused the answer: unknown city 'Atlantis'")
    t.expect("asking again")
    _answer_in_form(t, "Paris")
    assert t.wait() == 0, t.screen
    assert odd.scenario(url).answers[-1] == [{"text": "Paris"}]


def test_answers_refused_every_time_end_naming_the_refusal(
    terminal: Callable[..., Terminal], run_cli: RunCli, odd: OddServer
) -> None:
    url = odd.agent("1.0", refuse_unknown_city=True)
    tid = _send(run_cli, url, "ask the weather")["taskId"]
    t = terminal("watch", "--url", url, "--", tid)
    for city in ("Atlantis", "Eldorado", "Shangri-La"):
        _answer_in_form(t, city)
    assert t.wait() == 6, t.screen
    assert "refused the answer 3 times (last: unknown city 'Shangri-La'" in t.screen


def test_an_a2a_answer_can_be_typed_again_before_it_is_sent(
    terminal: Callable[..., Terminal], run_cli: RunCli, odd: OddServer
) -> None:
    """`e` at the confirmation asks again; nothing reaches the agent before `y`."""
    url = odd.agent("1.0")
    tid = _send(run_cli, url, "ask the weather")["taskId"]
    t = terminal("watch", "--url", url, "--", tid)
    t.expect("Which city?")
    t.expect("text: ")
    t.type("Pariss\n")
    t.expect("send this answer? [Y]es, [e]dit: ")
    t.type("e\n")
    t.expect("text: ")
    assert odd.scenario(url).answers == []  # nothing sent yet
    t.type("Paris\n")
    t.expect("send this answer? [Y]es, [e]dit: ")
    t.type("\n")  # Enter: yes
    assert t.wait() == 0, t.screen
    assert odd.scenario(url).answers == [[{"text": "Paris"}]]
