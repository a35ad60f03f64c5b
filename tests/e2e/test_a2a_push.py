"""A2A push notifications end to end (issue 29), against the a2a-sdk 1.3.0 agent with push on
(its in-memory config store and sender; streaming off, so updates come only by webhook or by
polling) on A2A 1.0 and 0.3 over JSON-RPC and on A2A 1.0 over HTTP+JSON (`a2a-1.0-rest`, the
agent in `--rest-only` mode), and @a2a-js/sdk 1.3.0 over JSON-RPC: `push set|get|list|delete`,
`push listen` printing what the agent delivers and refusing what it must, `watch
--push-receiver` (`via: webhook`) and its configs deleted on every exit path (the end, a
timeout, SIGINT, SIGTERM)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator

from mcptask import schemas

from conftest import CliResult, RunCli, assert_one_line_error, clean_env, rest_of
from servers.a2a_plugin import A2AServerProcess
from servers.odd_server import OddServer

pytestmark = pytest.mark.timeout(120)
VERSIONS = ["a2a-1.0", "a2a-0.3"]
#: the agents with push on: a2a-sdk 1.3.0 (Python) and @a2a-js/sdk 1.3.0 (TypeScript)
AGENTS = ["a2a_push_server", "a2a_js_server"]


#: every agent with push on and every way it speaks: (agent fixture, protocol)
CASES = [
    pytest.param((agent, proto), id=f"{name}-{proto}")
    for agent, name in zip(AGENTS, ["a2a-sdk", "a2a-js"], strict=True)
    for proto in VERSIONS
] + [pytest.param(("a2a_rest_push_server", "a2a-1.0-rest"), id="a2a-sdk-a2a-1.0-rest")]
#: the a2a-sdk agent with push on, over JSON-RPC and over HTTP+JSON
BINDINGS = {"a2a-1.0": "a2a_push_server", "a2a-1.0-rest": "a2a_rest_push_server"}


@pytest.fixture(params=CASES)
def spoken(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(URL, protocol) of an agent with push on: each agent, each version, each binding."""
    agent, proto = request.param
    server: A2AServerProcess = request.getfixturevalue(agent)
    return server.url, proto


@pytest.fixture(params=list(BINDINGS))
def sdk_push(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(URL, protocol) of the a2a-sdk agent with push on, over JSON-RPC and over HTTP+JSON
    (its root: the card names the binding's base)."""
    server: A2AServerProcess = request.getfixturevalue(BINDINGS[request.param])
    return server.url, request.param


def valid(data: Any, name: str = "push") -> Any:
    validator = Draft202012Validator(schemas.bundle(name))
    errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(data)]
    assert not errors, errors
    return data


def ok(r: CliResult, code: int = 0) -> CliResult:
    assert r.code == code, f"exit {r.code}\nstdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr, r.stderr
    return r


def send(run_cli: RunCli, url: str, proto: str, text: str = "hello push") -> str:
    task_id: str = ok(run_cli("send", text, "-u", url, "-p", proto, "-o", "json")).json()["taskId"]
    return task_id


def configs(run_cli: RunCli, url: str, proto: str, task_id: str) -> list[dict[str, Any]]:
    r = ok(run_cli("push", "list", "-u", url, "-p", proto, "-o", "json", "--", task_id))
    listed: list[dict[str, Any]] = valid(r.json())["configs"]
    return listed


class Cli:
    """The real CLI as a long-running process, its stdout read line by line."""

    def __init__(self, state_dir: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcptask", *args],
            env=clean_env(state_dir, env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def line(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        text = self.proc.stdout.readline()
        assert text, (
            f"exit {self.proc.poll()}: {self.proc.stderr.read() if self.proc.stderr else ''}"
        )
        data: dict[str, Any] = json.loads(text)
        return data

    def until(self, want: Any) -> list[dict[str, Any]]:
        seen = []
        while True:
            line = self.line()
            seen.append(line)
            if want(line):
                return seen

    def stop(self, sig: int = signal.SIGINT) -> tuple[int, str, str]:
        self.proc.send_signal(sig)
        out, err = rest_of(self.proc, 30)
        return self.proc.returncode, out, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            rest_of(self.proc, 30)


@pytest.fixture
def cli(state_dir: Path) -> Iterator[Any]:
    started: list[Cli] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Cli:
        c = Cli(state_dir, *args, env=env)
        started.append(c)
        return c

    yield start
    for c in started:
        c.kill()


# -- push set | get | list | delete ------------------------------------------------------------


def test_push_config_round_trip(run_cli: RunCli, spoken: tuple[str, str], tmp_path: Path) -> None:
    url, proto = spoken
    task_id = send(run_cli, url, proto)
    hook = "http://127.0.0.1:9/hook?token=sekrit"
    # secrets from a file or the environment, never a flag's value (issue 38)
    (tmp_path / "token").write_text("tok-1\n")
    made = ok(
        run_cli(
            "push",
            "set",
            "-u",
            url,
            "-p",
            proto,
            "-o",
            "json",
            "--webhook",
            hook,
            "--webhook-token-file",
            str(tmp_path / "token"),
            "--auth-scheme",
            "Bearer",
            "--id",
            "c1",
            "--",
            task_id,
            env={"MCPTASK_WEBHOOK_CREDENTIALS": "cred-1"},
        )
    ).json()
    valid(made)
    assert made["id"] == "c1" and made["taskId"] == task_id
    assert made["tokenSet"] is True
    assert made["authentication"] == {"scheme": "Bearer", "credentialsSet": True}
    assert "sekrit" not in made["url"]
    r = ok(run_cli("push", "get", "-u", url, "-p", proto, "-o", "json", "--", task_id))
    assert valid(r.json()) == made  # the only config: no --id needed
    for secret in ("tok-1", "cred-1", "sekrit"):
        assert secret not in r.stdout
    assert [c["id"] for c in configs(run_cli, url, proto, task_id)] == ["c1"]
    ok(
        run_cli(
            "push", "set", "-u", url, "-p", proto, "--webhook", hook, "--id", "c2", "--", task_id
        )
    )
    r = run_cli("push", "get", "-u", url, "-p", proto, "--", task_id)
    assert r.code == 2 and "c1" in r.stderr and "c2" in r.stderr
    assert_one_line_error(r)
    gone = ok(
        run_cli("push", "delete", "-u", url, "-p", proto, "--id", "c1", "-o", "json", "--", task_id)
    )
    assert valid(gone.json()) == {"taskId": task_id, "id": "c1", "deleted": True}
    ok(run_cli("push", "delete", "-u", url, "-p", proto, "--id", "c2", "--", task_id))
    assert configs(run_cli, url, proto, task_id) == []


#: the a2a-sdk agent with push off, over JSON-RPC and over HTTP+JSON
NO_PUSH = [("a2a_server", "a2a-1.0"), ("a2a_rest_server", "a2a-1.0-rest")]


@pytest.mark.parametrize(("agent", "proto"), NO_PUSH, ids=["jsonrpc", "rest"])
def test_push_refused_by_an_agent_without_push(
    run_cli: RunCli, request: pytest.FixtureRequest, agent: str, proto: str
) -> None:
    url = request.getfixturevalue(agent).url
    task_id = send(run_cli, url, proto)
    for action in (["set", "--webhook", "http://127.0.0.1:9/"], ["list"]):
        r = run_cli("push", action[0], task_id, "-u", url, "-p", proto, *action[1:])
        assert r.code == 11
        assert_one_line_error(r)
        assert "pushNotifications: false" in r.stderr


def test_an_agent_that_refuses_the_url_is_named(run_cli: RunCli, sdk_push: tuple[str, str]) -> None:
    url, proto = sdk_push
    task_id = send(run_cli, url, proto)
    r = run_cli(
        "push", "set", "-u", url, "-p", proto, "--webhook", "http://10.1.2.3/h", "--", task_id
    )
    assert r.code == 4
    assert_one_line_error(r)
    assert "refused the push URL" in r.stderr


def test_an_unknown_task_or_config_is_not_found(run_cli: RunCli, sdk_push: tuple[str, str]) -> None:
    url, proto = sdk_push
    for args in (
        ["set", "no-such-task", "--webhook", "http://127.0.0.1:9/hook"],
        ["list", "no-such-task"],
        ["get", "no-such-task", "--id", "c1"],
        ["delete", "no-such-task", "--id", "c1"],
    ):
        r = run_cli("push", *args, "-u", url, "-p", proto)
        assert r.code == 9, (args, r.stderr)
        assert_one_line_error(r)
        assert "no-such-task" in r.stderr
    task_id = send(run_cli, url, proto)
    r = run_cli("push", "get", "-u", url, "-p", proto, "--id", "no-such-config", "--", task_id)
    assert r.code == 9
    assert_one_line_error(r)
    assert "or its push config" in r.stderr


def test_a_rest_agent_without_the_push_routes_is_refused_and_polled(run_cli: RunCli) -> None:
    """Its card says pushNotifications: true, but its binding has no config routes (404 HTML):
    `push` says so (exit 11) and a watch with a receiver polls, with a note."""
    with OddServer() as odd:
        url = odd.agent("1.0", rest_without_push=True, seconds=1.0)
        task_id = send(run_cli, url, "a2a-1.0-rest")
        for args in (["list", task_id], ["set", task_id, "--webhook", "http://127.0.0.1:9/h"]):
            r = run_cli("push", *args, "-u", url, "-p", "a2a-1.0-rest")
            assert r.code == 11, r.stderr
            assert_one_line_error(r)
            assert "does not serve push notification configs over HTTP+JSON" in r.stderr
            assert "pushNotificationConfigs answered HTTP 404" in r.stderr
        r = ok(
            run_cli(
                "send",
                "hi",
                "-u",
                url,
                "-p",
                "a2a-1.0-rest",
                "--watch",
                "--push-receiver",
                "-o",
                "ndjson",
            )
        )
        assert "does not serve push notification configs" in r.stderr
        lines = r.lines()
        assert lines[-1]["outcome"] == "completed"
        assert all(x.get("via") != "webhook" for x in lines)


def test_push_on_mcp_is_not_applicable(run_cli: RunCli, tmp_path: Path) -> None:
    r = run_cli("push", "list", "t1", "-u", "http://127.0.0.1:9/mcp", "-p", "mcp-2025-11-25")
    assert r.code == 11
    assert_one_line_error(r)


def test_push_set_needs_a_webhook_url(run_cli: RunCli) -> None:
    r = run_cli("push", "set", "t1", "-u", "http://127.0.0.1:9/", "-p", "a2a-1.0", "--webhook", "x")
    assert r.code == 2
    assert_one_line_error(r)


# -- push listen ---------------------------------------------------------------------------------


def test_push_listen_prints_what_the_agent_delivers(
    run_cli: RunCli, cli: Any, spoken: tuple[str, str]
) -> None:
    listen = cli("push", "listen", "-o", "ndjson", env={"MCPTASK_WEBHOOK_TOKEN": "listen-tok"})
    where = valid(listen.line())
    assert where["event"] == "listening" and where["host"] == "127.0.0.1"
    url, proto = spoken
    # a long task (20 steps): its config is in place well before it ends, however slow the
    # machine; once a step has been delivered it is cancelled, and that is delivered too
    task_id = send(run_cli, url, proto, "slow listen")
    # a token only (a2a-js sends the token only when no authentication is named)
    ok(
        run_cli(
            "push",
            "set",
            "-u",
            url,
            "-p",
            proto,
            "--webhook",
            where["url"],
            "--",
            task_id,
            env={"MCPTASK_WEBHOOK_TOKEN": "listen-tok"},
        )
    )
    seen = listen.until(lambda n: (n["message"] or "").startswith("step "))
    ok(run_cli("cancel", "-u", url, "-p", proto, "--", task_id))
    seen += listen.until(lambda n: n.get("status") == "cancelled")
    for n in seen:
        valid(n)
        assert n["taskId"] == task_id
        assert n["tokenMatched"] is True and n["accepted"] is True
    # 1.0: StreamResponse status updates; a2a-js over 0.3: the whole task each time
    assert {n["changed"] for n in seen} <= {"status", "task"}
    # one vocabulary (the task shape's status words) and ISO times, as every command prints
    assert seen[-1]["status"] == "cancelled" and "state" not in seen[-1]
    assert all(
        re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", n["receivedAt"]) for n in seen
    )
    code, out, err = listen.stop(signal.SIGINT)
    assert code == 0, err
    assert "Traceback" not in err and "listen-tok" not in out + err


def test_the_receiver_refuses_what_it_must(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "token").write_text("right\n")
    listen = cli(
        "push",
        "listen",
        "--webhook-token-file",
        str(tmp_path / "token"),
        "--max-body",
        "1000",
        "--task",
        "t-known",
        "-o",
        "ndjson",
    )
    url = valid(listen.line())["url"]
    body = {"statusUpdate": {"taskId": "t-known", "status": {"state": "TASK_STATE_WORKING"}}}
    good = {"X-A2A-Notification-Token": "right"}

    def post(**kw: Any) -> httpx.Response:
        return httpx.post(url, timeout=10, **kw)

    assert post(json=body).status_code == 401  # no token
    assert post(json=body, headers={"X-A2A-Notification-Token": "wrong"}).status_code == 401
    big = {"statusUpdate": {**body["statusUpdate"], "pad": "x" * 2000}}
    assert post(json=big, headers=good).status_code == 413
    assert post(content=b"hello", headers={**good, "Content-Type": "text/plain"}).status_code == 415
    assert (
        post(content=b"{nope", headers={**good, "Content-Type": "application/json"}).status_code
        == 400
    )
    other = {"statusUpdate": {"taskId": "t-other", "status": {"state": "TASK_STATE_WORKING"}}}
    assert post(json=other, headers=good).status_code == 404  # not a task it takes
    assert httpx.post(url + "x", json=body, headers=good).status_code == 404  # not its path
    assert httpx.get(url, headers=good).status_code == 405
    first = post(json=body, headers=good)
    again = post(json=body, headers=good)
    assert first.status_code == 200 and again.status_code == 200 and again.json()["duplicate"]
    reports = [valid(listen.line()) for _ in range(10)]
    assert [r["httpStatus"] for r in reports] == [401, 401, 413, 415, 400, 404, 404, 405, 200, 200]
    assert [r["tokenMatched"] for r in reports[:2]] == [None, False]
    assert reports[0]["refused"] == "no token" and reports[1]["refused"] == "the wrong token"
    assert reports[8]["accepted"] and not reports[8]["duplicate"]
    assert reports[8]["status"] == "working" and reports[8]["changed"] == "status"
    assert reports[9]["duplicate"] is True
    assert all("body" not in r for r in reports[:8])  # refused bodies are never passed on
    code, _, err = listen.stop(signal.SIGTERM)
    assert code == 0, err


@pytest.mark.parametrize(
    "args",
    [
        ("push", "listen", "--token", "s3cret"),
        ("push", "set", "t1", "-u", "http://127.0.0.1:9/", "--webhook", "http://h/",
         "--token", "s3cret"),
        ("push", "set", "t1", "-u", "http://127.0.0.1:9/", "--webhook", "http://h/",
         "--auth-scheme", "Bearer", "--auth-credentials", "s3cret"),
    ],
)  # fmt: skip
def test_a_secret_as_a_flags_value_is_refused_with_advice(
    run_cli: RunCli, args: tuple[str, ...]
) -> None:
    r = run_cli(*args)
    assert r.code == 2
    assert_one_line_error(r)
    assert "-file PATH or $MCPTASK_WEBHOOK_" in r.stderr and "s3cret" not in r.stderr


def test_push_listen_makes_up_a_token_and_listens_at_hook(cli: Any) -> None:
    listen = cli("push", "listen", "-o", "ndjson")
    url = valid(listen.line())["url"]
    assert url.endswith("/hook"), url
    code, _, err = listen.stop(signal.SIGTERM)
    assert code == 0
    token = re.search(r"token: (\S+)", err)
    assert token and len(token.group(1)) >= 16, err
    assert "MCPTASK_WEBHOOK_TOKEN" in err


def test_push_listen_count_and_bad_options(run_cli: RunCli) -> None:
    r = run_cli("push", "listen", "--port", "70000")
    assert r.code == 2
    assert_one_line_error(r)
    r = run_cli("push", "listen", "--max-body", "0")
    assert r.code == 2
    assert_one_line_error(r)


# -- watch --push-receiver ---------------------------------------------------------------------


def test_watch_receives_updates_by_webhook(run_cli: RunCli, spoken: tuple[str, str]) -> None:
    url, proto = spoken
    r = ok(
        run_cli(
            "send",
            "hello webhook",
            "-u",
            url,
            "-p",
            proto,
            "--watch",
            "--push-receiver",
            "-o",
            "ndjson",
            "--trace",
        )
    )
    lines = r.lines()
    for line in lines:
        valid(line, "watch-event")
    statuses = [x for x in lines if x.get("event") == "status"]
    assert any(x["via"] == "webhook" for x in statuses), statuses
    assert statuses[-1]["status"] == "completed"
    assert {x["protocol"] for x in statuses} == {proto}
    assert lines[-1]["event"] == "end" and lines[-1]["outcome"] == "completed"
    task_id = lines[-1]["taskId"]
    assert configs(run_cli, url, proto, task_id) == []  # deleted at the end
    assert "X-A2A-Notification-Token" not in r.stderr


def test_watch_with_push_receiver_deletes_configs_after_a_timeout(
    run_cli: RunCli, sdk_push: tuple[str, str]
) -> None:
    url, proto = sdk_push
    task_id = send(run_cli, url, proto, "slow timeout")
    r = run_cli(
        "watch",
        "-u",
        url,
        "-p",
        proto,
        "--push-receiver",
        "--timeout",
        "2",
        "-o",
        "ndjson",
        "--",
        task_id,
    )
    assert r.code == 7, r.stderr
    assert configs(run_cli, url, proto, task_id) == []
    run_cli("cancel", "-u", url, "-p", proto, "--", task_id)  # tidy up (it may have ended)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize(
    ("agent", "proto"),
    [
        ("a2a_push_server", "a2a-1.0"),
        ("a2a_js_server", "a2a-1.0"),
        ("a2a_rest_push_server", "a2a-1.0-rest"),
    ],
    ids=["a2a-sdk", "a2a-js", "a2a-sdk-rest"],
)
def test_a_signal_ends_the_watch_and_its_configs(
    run_cli: RunCli,
    cli: Any,
    request: pytest.FixtureRequest,
    agent: str,
    proto: str,
    sig: int,
    code: int,
) -> None:
    url = request.getfixturevalue(agent).url
    task_id = send(run_cli, url, proto, "slow signal")
    watch = cli("watch", "-u", url, "-p", proto, "--push-receiver", "-o", "ndjson", "--", task_id)
    watch.until(lambda x: x.get("via") == "webhook")  # its config is in place and used
    assert len(configs(run_cli, url, proto, task_id)) == 1
    got, out, err = watch.stop(sig)
    assert got == code, err
    assert json.loads(out.splitlines()[-1])["outcome"] == "interrupted"
    assert "Traceback" not in err
    assert configs(run_cli, url, proto, task_id) == []
    run_cli("cancel", "-u", url, "-p", proto, "--", task_id)  # tidy up (it may have ended)


@pytest.mark.parametrize(("agent", "proto"), NO_PUSH, ids=["jsonrpc", "rest"])
def test_push_receiver_on_an_agent_without_push_polls(
    run_cli: RunCli, request: pytest.FixtureRequest, agent: str, proto: str
) -> None:
    url = request.getfixturevalue(agent).url
    r = ok(
        run_cli(
            "send", "hello", "-u", url, "-p", proto, "--watch", "--push-receiver", "-o", "ndjson"
        )
    )
    assert "pushNotifications: false" in r.stderr
    assert r.lines()[-1]["outcome"] == "completed"


def test_push_receiver_options_are_checked(run_cli: RunCli) -> None:
    r = run_cli("send", "x", "-u", "http://127.0.0.1:9/", "--push-receiver")
    assert r.code == 2 and "--watch" in r.stderr
    assert_one_line_error(r)
    r = run_cli("watch", "t1", "-u", "http://127.0.0.1:9/", "--push-receiver", "--no-push")
    assert r.code == 2
    assert_one_line_error(r)
    r = run_cli(
        "watch", "t1", "-u", "http://127.0.0.1:9/", "--push-public-url", "ftp://x", "-p", "a2a-1.0"
    )
    assert r.code == 2
    assert_one_line_error(r)


# -- the watcher with two push channels (fake clock, no network) ---------------------------------


def _scenario_two_feeds() -> tuple[int, list[float], list[tuple[str, str]]]:
    import asyncio
    import random

    from mcptask.model.refs import TaskRef
    from mcptask.model.results import TaskResult
    from mcptask.model.task import Task
    from mcptask.protocols.base import Deliver, Health, PushFeed
    from mcptask.scheduler.watcher import WatchConfig, Watcher

    now = [0.0]
    polls: list[float] = []
    vias: list[tuple[str, str]] = []
    pushed = asyncio.Event()

    def task(status: str = "working", msg: str | None = None) -> Task:
        return Task(
            taskId="a",
            status=status,  # type: ignore[arg-type]
            statusMessage=msg,
            protocol="test",
            server="test",
            raw={},
        )

    async def sleep(seconds: float) -> None:
        await asyncio.sleep(0)
        if not pushed.is_set() and now[0] + seconds >= 3.0:
            now[0] = 3.0
            pushed.set()  # the webhook delivers the end at t = 3 s
            await asyncio.sleep(3600)  # woken by the push instead
        now[0] += seconds

    class Subscription(PushFeed):
        async def run(self, deliver: Deliver, health: Health) -> None:
            health(True)
            health(False)  # refused (streaming off): it ends at once

    class Webhook(PushFeed):
        via = "webhook"

        async def run(self, deliver: Deliver, health: Health) -> None:
            health(True)
            await pushed.wait()
            await deliver(task("completed", "done"))
            await asyncio.Event().wait()

    async def fetch(ref: TaskRef) -> Task:
        polls.append(now[0])
        return task("completed", "done") if pushed.is_set() else task()

    async def fetch_result(ref: TaskRef, t: Task) -> TaskResult:
        return TaskResult(task=t, payload={})

    class Events:
        def update(self, w: Any, via: str) -> None:
            vias.append((via, w.task.status))

        def retry(self, w: Any, error: str, delay: float) -> None:
            pass

        def end(self, w: Any) -> None:
            pass

    watcher = Watcher(
        fetch=fetch,
        fetch_result=fetch_result,
        config=WatchConfig(timeout=120),
        events=Events(),
        clock=lambda: now[0],
        sleep=sleep,
        rng=random.Random(0),
        feeds=[Webhook({"a"}), Subscription({"a"})],
    )
    watcher.add(TaskRef("a"))
    code = asyncio.run(watcher.run())
    return code, polls, vias


def test_a_failed_subscription_does_not_undo_a_live_webhook() -> None:
    code, polls, vias = _scenario_two_feeds()
    assert code == 0
    # the subscription's failure left the webhook feeding the watch: the end came by it
    assert vias[-1] == ("webhook", "completed")
    # polled at once, then at the server's pace while the webhook has said nothing of the task
    # (issue 27: a live but silent feed puts no poll off), up to the end it delivered at 3 s
    assert polls[0] == 0.0
    assert polls[:3] == [0.0, 1.0, 2.0] and all(p <= 3.0 for p in polls), polls


def test_watch_of_several_tasks_registers_and_deletes_one_config_each(
    run_cli: RunCli, sdk_push: tuple[str, str]
) -> None:
    url, proto = sdk_push
    ids = [send(run_cli, url, proto, f"slow many {i}") for i in range(3)]
    r = run_cli(
        "watch", *ids, "-u", url, "-p", proto, "--push-receiver", "--timeout", "4", "-o", "ndjson"
    )
    assert r.code == 7, r.stderr  # the slow tasks outlive the timeout
    by_webhook = {x["taskId"] for x in r.lines() if x.get("via") == "webhook"}
    assert by_webhook == set(ids)
    for task_id in ids:
        assert configs(run_cli, url, proto, task_id) == []
        run_cli("cancel", "-u", url, "-p", proto, "--", task_id)  # tidy up (it may have ended)


def test_an_agent_that_refuses_the_public_url_is_polled_and_named(
    run_cli: RunCli, sdk_push: tuple[str, str]
) -> None:
    url, proto = sdk_push
    r = ok(
        run_cli(
            "send",
            "hello tunnel",
            "-u",
            url,
            "-p",
            proto,
            "--watch",
            "-o",
            "ndjson",
            "--push-public-url",
            "http://10.1.2.3:8080/",
        )
    )
    assert "refused the push URL" in r.stderr and "loopback" in r.stderr
    assert "Traceback" not in r.stderr
    lines = r.lines()
    assert lines[-1]["outcome"] == "completed"
    assert all(x.get("via") != "webhook" for x in lines)


# -- README's push example, as printed (issue 38) ------------------------------------------------


def readme_push_block() -> list[str]:
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = text.split("## A2A push notifications", 1)[1].split("\n## ", 1)[0]
    block = re.findall(r"```\n(.*?)```", section, flags=re.S)[0]
    return [ln for ln in block.splitlines() if ln.strip()]


def test_the_readme_push_example_works_as_printed(
    run_cli: RunCli, cli: Any, a2a_push_server: A2AServerProcess
) -> None:
    """`export MCPTASK_WEBHOOK_TOKEN=...`, `push listen --port 8765`, `push set $ID --webhook
    http://127.0.0.1:8765/hook` as README prints them (a free port for 8765, the task the book
    knows for $ID): the agent's notifications reach the listener with the right token."""
    import shlex

    lines = readme_push_block()
    export = next(ln for ln in lines if ln.startswith("export "))
    listen = next(ln for ln in lines if ln.startswith("mcptask push listen"))
    push_set = next(ln for ln in lines if ln.startswith("mcptask push set"))
    name, _, value = shlex.split(export.split("  #", 1)[0])[1].partition("=")
    env = {name: value}
    port = free_port()
    listen_words = [w.replace("8765", str(port)) for w in shlex.split(listen.split("  #")[0])]
    receiver = cli(*listen_words[1:], "-o", "ndjson", env=env)
    where = valid(receiver.line())
    task_id = send(run_cli, a2a_push_server.url, "a2a-1.0", "slow readme")
    set_words = [
        task_id if w == "$ID" else w.replace("8765", str(port))
        for w in shlex.split(push_set.split("  #")[0])
    ]
    assert set_words[set_words.index("--webhook") + 1] == where["url"]
    ok(run_cli(*set_words[1:], env=env))  # the book knows where the task is
    seen = receiver.until(lambda n: n["taskId"] == task_id)
    assert seen[-1]["tokenMatched"] is True and seen[-1]["accepted"] is True, seen
    ok(run_cli("cancel", "-u", a2a_push_server.url, "-p", "a2a-1.0", "--", task_id))
    code, _, err = receiver.stop(signal.SIGINT)
    assert code == 0, err


def free_port() -> int:
    """A port free right now (the receiver binds it at once)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
