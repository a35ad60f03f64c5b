"""Everything mcptask prints, on StringIO streams: the JSON modes print the exact data, pretty
mode prints server text cleaned, and the watch events (ndjson, json, the live view) have their
documented shapes."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.live import Live
from rich.text import Text

from mcptask.model.refs import TaskRef
from mcptask.model.results import TaskResult
from mcptask.model.task import Task
from mcptask.output.console import (
    MODES,
    RECORD_SVG_ENV,
    Output,
    duration,
    duration_ms,
    resolve_mode,
    result_renderable,
)
from mcptask.output.live import JsonEvents, LiveEvents, NdjsonEvents, end_record
from mcptask.scheduler.watcher import Watched

SERVER = "http://127.0.0.1:8000/mcp"
#: what a hostile server puts in its text: clear screen, a window title, a hidden link, a bell,
#: 8-bit CSI, a backspace trick and a right-to-left override
HOSTILE = (
    "ok\x1b[2J\x1b]0;owned\x07 \x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\\x07\x9b31m\x08\u202e"
)
#: what must never reach a terminal from a server
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def task(task_id: str = "t1", status: str = "working", **fields: Any) -> Task:
    return Task.model_validate(
        {"taskId": task_id, "status": status, "protocol": "mcp-2025-11-25", "server": SERVER}
        | {"raw": {"taskId": task_id, "status": status}}
        | fields
    )


def text_console(width: int = 100, height: int = 40) -> Console:
    """A console that writes plain text (no styles): any escape in its output came from a
    server."""
    return Console(
        file=io.StringIO(), width=width, height=height, color_system=None, highlight=False
    )


def output(mode: str, console: Console | None = None) -> Output:
    return Output(mode=mode, stdout=io.StringIO(), stderr=io.StringIO(), _console=console)


def stdout(out: Output) -> str:
    assert isinstance(out.stdout, io.StringIO)
    return out.stdout.getvalue()


def stderr(out: Output) -> str:
    assert isinstance(out.stderr, io.StringIO)
    return out.stderr.getvalue()


def printed(out: Output) -> str:
    file = out.console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def words(line: str) -> list[str]:
    """A table row's words, without the column rules."""
    return line.replace("┃", " ").replace("│", " ").split()


def watched(
    task_id: str = "t1",
    current: Task | None = None,
    *,
    outcome: str | None = None,
    exit_code: int | None = None,
    **fields: Any,
) -> Watched:
    w = Watched(ref=TaskRef(task_id), task=current, outcome=outcome, exit_code=exit_code)
    for name, value in fields.items():
        setattr(w, name, value)
    return w


# -- modes ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "terminal", "streaming", "resolved"),
    [
        ("auto", True, False, "pretty"),
        ("auto", True, True, "pretty"),
        ("auto", False, False, "json"),
        ("auto", False, True, "ndjson"),
        ("json", True, True, "json"),
        ("ndjson", True, False, "ndjson"),
        ("pretty", False, False, "pretty"),
    ],
)
def test_resolve_mode(mode: str, terminal: bool, streaming: bool, resolved: str) -> None:
    assert resolve_mode(mode, terminal, streaming=streaming) == resolved


def test_the_modes() -> None:
    assert MODES == ("auto", "pretty", "json", "ndjson")
    assert output("pretty").pretty and not output("json").pretty


# -- JSON modes: the exact data -------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["json", "ndjson"])
def test_a_task_is_one_json_line_with_the_exact_data(mode: str) -> None:
    out = output(mode)
    t = task(statusMessage=HOSTILE + " café", ttl=60000, pollInterval=5000)
    out.task(t)
    text = stdout(out)
    assert text.endswith("\n") and text.count("\n") == 1
    assert "café" in text  # not \u-escaped
    data = json.loads(text)
    assert data == t.to_json()
    assert data["statusMessage"] == HOSTILE + " café"
    assert list(data)[-1] == "raw"
    assert "inputRequests" not in data
    assert stderr(out) == ""


def test_tasks_are_one_object_in_json() -> None:
    out = output("json")
    out.tasks([task("a"), task("b", "completed")])
    data = json.loads(stdout(out))
    assert [t["taskId"] for t in data["tasks"]] == ["a", "b"]
    assert data["tasks"][1]["status"] == "completed"
    out2 = output("json")
    out2.tasks([])
    assert json.loads(stdout(out2)) == {"tasks": []}


def test_a_result_prints_its_payload_or_its_error() -> None:
    payload = {"content": [{"type": "text", "text": "done"}], "isError": False}
    out = output("json")
    out.result(TaskResult(task=task(status="completed"), payload=payload))
    out.result(TaskResult(task=task(status="failed"), error={"code": -32000, "message": "boom"}))
    first, second = (json.loads(line) for line in stdout(out).splitlines())
    assert first == payload
    assert second == {"error": {"code": -32000, "message": "boom"}}


def test_ndjson_lines_follow_each_other() -> None:
    out = output("ndjson")
    for i in range(3):
        out.line({"n": i})
    assert [json.loads(line) for line in stdout(out).splitlines()] == [{"n": 0}, {"n": 1}, {"n": 2}]


# -- remarks on stderr ------------------------------------------------------------------------


def test_note_and_error_are_one_clean_line_on_stderr() -> None:
    out = output("json")
    out.note("first\nsecond " + HOSTILE)
    out.error("it\r\nbroke\t" + HOSTILE)
    note, error = stderr(out).splitlines()
    assert note.startswith("mcptask: first second ok")
    assert error.startswith("mcptask: error: it broke ok")
    assert not UNSAFE.search(stderr(out).replace("\n", ""))
    assert "owned" not in stderr(out) and "evil" not in stderr(out)
    assert stdout(out) == ""


def test_long_remarks_are_cut() -> None:
    out = output("json")
    out.note("n" * 2000)
    out.error("e" * 2000)
    note, error = stderr(out).splitlines()
    assert note == "mcptask: " + "n" * 499 + "…"
    assert error == "mcptask: error: " + "e" * 999 + "…"


def test_remarks_are_redacted_after_cleaning() -> None:
    """A secret split by an escape sequence is still found."""
    out = Output(
        mode="json",
        stdout=io.StringIO(),
        stderr=io.StringIO(),
        redactor=lambda s: s.replace("hunter22", "[redacted]"),
    )
    out.error("bad token hun\x1b[0mter22 given")
    assert stderr(out) == "mcptask: error: bad token [redacted] given\n"


# -- pretty mode ------------------------------------------------------------------------------


def test_a_task_panel_shows_every_field() -> None:
    out = output("pretty", text_console())
    out.task(
        task(
            "t-42",
            "input_required",
            statusMessage="waiting for you",
            createdAt="2026-01-01T00:00:00Z",
            lastUpdatedAt="2026-01-01T00:01:00Z",
            ttl=60000,
            pollInterval=1500,
            contextId="ctx-1",
            inputRequests={"r1": {"method": "elicitation/create"}},
        )
    )
    lines = [" ".join(line.split()) for line in printed(out).splitlines()]
    assert lines == [
        "task t-42",
        "status ? input_required",
        "message waiting for you",
        "created 2026-01-01T00:00:00Z",
        "updated 2026-01-01T00:01:00Z",
        "ttl 1m00s",
        "poll interval 1.5s",
        "context ctx-1",
        'input requests {"r1": {"method": "elicitation/create"}}',
        "protocol mcp-2025-11-25",
        f"server {SERVER}",
    ]
    assert stdout(out) == ""  # the console given writes elsewhere


def test_input_requests_are_shown_as_escaped_json() -> None:
    out = output("pretty", text_console(width=200))
    out.task(task(inputRequests={"r1": {"message": "a\x1b[2Jb"}}))
    assert 'input requests  {"r1": {"message": "a\\u001b[2Jb"}}' in printed(out)


def test_a_task_panel_leaves_out_what_the_task_lacks() -> None:
    out = output("pretty", text_console())
    out.task(task())
    labels = [line.split()[0] for line in printed(out).splitlines()]
    assert labels == ["task", "status", "protocol", "server"]


def test_a_tasks_table() -> None:
    out = output("pretty", text_console(width=120))
    out.tasks(
        [
            task("a", statusMessage="line one\nline two", lastUpdatedAt="2026-01-01T00:00:00Z"),
            task("b", "completed"),
        ],
        title="answers",
    )
    lines = printed(out).splitlines()
    assert lines[0].strip() == "answers"
    assert words(lines[1]) == ["task", "status", "message", "updated"]
    assert words(lines[3])[:7] == ["a", "●", "working", "line", "one", "line", "two"]
    # the time as an age, in the one duration format (the JSON keeps the server's timestamp)
    assert re.fullmatch(r"(\d+d\d\dh|≥1000d) ago", " ".join(words(lines[3])[7:]))
    assert words(lines[4]) == ["b", "✔", "completed"]


@pytest.mark.parametrize("title", ["tasks", "answers"])
def test_an_empty_tasks_table_says_so(title: str) -> None:
    out = output("pretty", text_console())
    out.tasks([], title=title)
    assert printed(out) == f"no {title}\n"


def test_a_result_in_pretty_mode_is_its_text() -> None:
    payload = {"content": [{"type": "text", "text": "the answer\nis 42"}]}
    out = output("pretty", text_console())
    out.result(TaskResult(task=task(status="completed"), payload=payload))
    assert printed(out) == "the answer\nis 42\n"


def test_result_renderables_mark_errors_red() -> None:
    ok = result_renderable(TaskResult(task=task(), payload={"content": [], "text": "fine"}))
    bad = result_renderable(
        TaskResult(
            task=task(), payload={"content": [{"type": "text", "text": "no"}], "isError": True}
        )
    )
    err = result_renderable(TaskResult(task=task(), error={"code": -32000, "message": "boom"}))
    assert isinstance(ok, Text) and isinstance(bad, Text) and isinstance(err, Text)
    assert (ok.plain, ok.style) == ("fine", "")
    assert (bad.plain, bad.style) == ("no", "red")
    assert (err.plain, err.style) == ("error -32000: boom", "red")


def _pretty_everything(out: Output) -> None:
    hostile_task = task(
        "t" + HOSTILE,
        statusMessage=HOSTILE,
        createdAt=HOSTILE,
        contextId=HOSTILE,
        server=SERVER + HOSTILE,
    )
    out.task(hostile_task)
    out.tasks([hostile_task], title="tasks")
    out.result(
        TaskResult(task=hostile_task, payload={"content": [{"type": "text", "text": HOSTILE}]})
    )
    out.result(TaskResult(task=hostile_task, error={"code": 1, "message": HOSTILE}))


def test_pretty_output_never_carries_a_server_escape() -> None:
    out = output("pretty", text_console())
    _pretty_everything(out)
    text = printed(out)
    assert "ok" in text
    assert not UNSAFE.search(text.replace("\n", "")), repr(text)
    assert "owned" not in text and "evil" not in text


def test_a_colour_terminal_gets_only_rich_styling() -> None:
    console = Console(
        file=io.StringIO(), width=100, force_terminal=True, color_system="truecolor", record=True
    )
    out = output("pretty", console)
    _pretty_everything(out)
    raw = printed(out)
    assert "\x1b[" in raw  # Rich's own styles are there
    assert not UNSAFE.search(re.sub(r"\x1b\[[0-9;]*m", "", raw).replace("\n", ""))
    assert "owned" not in console.export_text()


def test_the_default_console_writes_to_stdout_and_ends_quietly_on_a_broken_pipe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(RECORD_SVG_ENV, raising=False)
    out = Output(mode="pretty", stdout=io.StringIO(), stderr=io.StringIO())
    assert out.console is out.console
    assert out.console.file is out.stdout and not out.console.record
    with pytest.raises(BrokenPipeError):
        out.console.on_broken_pipe()
    out.console.print("hello")
    assert stdout(out) == "hello\n"
    out.err_console().print("to stderr")
    assert stderr(out) == "to stderr\n"
    out.save_recording()  # nothing recorded, nothing saved


def test_a_recording_is_saved_as_svg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    svg = tmp_path / "out.svg"
    monkeypatch.setenv(RECORD_SVG_ENV, str(svg))
    out = Output(mode="pretty", stdout=io.StringIO(), stderr=io.StringIO())
    assert out.console.record and out.console.width == 100
    out.task(task())
    out.save_recording()
    text = svg.read_text(encoding="utf-8")
    assert text.startswith("<svg") and "mcptask" in text


@pytest.mark.parametrize(
    ("ms", "shown"),
    [
        (0, "0s"),
        (250, "0.25s"),
        (1500, "1.5s"),
        (60000, "1m00s"),
        (-2000, "0s"),
        (10**15, "≥1000d"),
        (-(10**15), "0s"),
    ],
)
def test_duration_ms(ms: int, shown: str) -> None:
    assert duration_ms(ms) == shown


@pytest.mark.parametrize(
    ("secs", "shown"),
    [(-5, "0s"), (0, "0s"), (59.4, "59s"), (65, "1m05s"), (3599, "59m59s"), (3660, "1h01m")],
)
def test_duration(secs: float, shown: str) -> None:
    assert duration(secs) == shown


# -- watch events: ndjson ---------------------------------------------------------------------


def test_ndjson_retry_lines_of_one_failure_of_many_tasks_are_said_once_a_second() -> None:
    """A rate-limited server refuses a 1,000-task watch: not a line per task per retry (4,000
    lines in 18 s) but one a second, with how many more had the same answer; another failure
    is said at once, after the count of the first one; what was counted is said at the end."""
    now = [0.0]
    out = output("ndjson")
    events = NdjsonEvents(out, with_result=False, clock=lambda: now[0])
    busy = "http://x/mcp answered HTTP 429 Too Many Requests: slow down"
    for i in range(50):
        now[0] = i * 0.05  # 2.45 s in all
        events.retry(watched(f"t{i}"), busy, 1.0)
    events.retry(watched("u"), "cannot connect to http://x", 2.0)
    events.retry(watched("v"), "cannot connect to http://x", 2.0)
    events.finish([watched("u")], 4)
    lines = stderr(out).splitlines()
    assert lines == [
        f"mcptask: t0: {busy}; retrying in 1s",
        f"mcptask: t20: {busy}; retrying in 1s (19 more retries like it since the last such line)",
        f"mcptask: t40: {busy}; retrying in 1s (19 more retries like it since the last such line)",
        f"mcptask: 9 more retries like it since the last such line: {busy}",
        "mcptask: u: cannot connect to http://x; retrying in 2s",
        "mcptask: 1 more retry like it since the last such line: cannot connect to http://x",
    ]


def test_ndjson_events_print_each_change_and_end() -> None:
    out = output("ndjson")
    events = NdjsonEvents(out, with_result=True)
    w = watched("t1")
    events.update(w, "poll")  # nothing known yet: nothing printed
    w.task = task(statusMessage="half way")
    events.update(w, "push")
    events.retry(w, "server error -32603: busy", 1.25)
    w.task = task(status="completed")
    w.outcome, w.exit_code = "completed", 0
    w.result = TaskResult(task=w.task, payload={"content": [{"type": "text", "text": "hi"}]})
    events.end(w)
    events.finish([w], 0)
    status, end = (json.loads(line) for line in stdout(out).splitlines())
    assert status == {**task(statusMessage="half way").to_json(), "event": "status", "via": "push"}
    assert end == {
        "event": "end",
        "taskId": "t1",
        "outcome": "completed",
        "exitCode": 0,
        "result": {"content": [{"type": "text", "text": "hi"}]},
    }
    assert stderr(out) == "mcptask: t1: server error -32603: busy; retrying in 1.2s\n"


def test_ndjson_end_records_carry_errors() -> None:
    w = watched("t1", outcome="error", exit_code=4, last_error="cannot connect")
    w.result_error = "no result"
    assert end_record(w, with_result=True) == {
        "event": "end",
        "taskId": "t1",
        "outcome": "error",
        "exitCode": 4,
        "error": "cannot connect",
        "resultError": "no result",
    }
    # an error from an earlier poll is not the end's when the task ended well
    done = watched("t2", task(status="completed"), outcome="completed", exit_code=0)
    done.last_error = "a passing failure"
    done.result = TaskResult(task=task(status="completed"), payload={"x": 1})
    assert end_record(done, with_result=False) == {
        "event": "end",
        "taskId": "t2",
        "outcome": "completed",
        "exitCode": 0,
    }


def test_ndjson_finish_of_several_counts_outcomes_and_names_answer() -> None:
    out = output("ndjson")
    events = NdjsonEvents(out, with_result=False)
    ws = [
        watched("a", outcome="completed", exit_code=0),
        watched("b", outcome="completed", exit_code=0),
        watched("c", outcome="input_required", exit_code=10),
        watched("d"),
    ]
    events.finish(ws, 10)
    assert json.loads(stdout(out)) == {
        "event": "done",
        "exitCode": 10,
        "outcomes": {"completed": 2, "input_required": 1, "unknown": 1},
    }
    assert stderr(out) == "mcptask: c needs input: answer it with `mcptask answer c`\n"


# -- watch events: json -----------------------------------------------------------------------


def test_json_events_print_one_object_at_the_end() -> None:
    out = output("json")
    events = JsonEvents(out, with_result=True)
    done = watched("a", task("a", "completed"), outcome="completed", exit_code=0)
    done.result = TaskResult(task=task("a", "completed"), payload={"x": 1})
    lost = watched("b", outcome="error", exit_code=4, last_error="cannot connect")
    asks = watched("c", task("c", "auth_required"), outcome="auth_required", exit_code=10)
    for w in (done, lost, asks):
        events.update(w, "poll")
        events.retry(w, "busy", 1.0)
        events.end(w)
    assert stdout(out) == "" and stderr(out) == ""
    events.finish([done, lost, asks], 4)
    data = json.loads(stdout(out))
    assert data["exitCode"] == 4
    a, b, c = data["tasks"]
    assert a == {
        **task("a", "completed").to_json(),
        "outcome": "completed",
        "exitCode": 0,
        "result": {"x": 1},
    }
    assert b == {"taskId": "b", "outcome": "error", "exitCode": 4, "error": "cannot connect"}
    assert c["outcome"] == "auth_required" and "result" not in c and "error" not in c
    assert stderr(out) == "mcptask: c needs input: answer it with `mcptask answer c`\n"


def test_json_events_leave_results_out_unless_asked() -> None:
    out = output("json")
    done = watched("a", task("a", "completed"), outcome="completed", exit_code=0)
    done.result = TaskResult(task=task("a", "completed"), payload={"x": 1})
    JsonEvents(out, with_result=False).finish([done], 0)
    assert "result" not in json.loads(stdout(out))["tasks"][0]


# -- the live view ----------------------------------------------------------------------------

NOW = 100.0


def recording_console(height: int = 40) -> Console:
    """What the terminal shows at the end (a live view draws its last frame once)."""
    return Console(
        file=io.StringIO(),
        width=120,
        height=height,
        record=True,
        force_terminal=True,
        force_interactive=False,
        color_system="truecolor",
    )


def frame(events: LiveEvents) -> list[str]:
    console = Console(file=io.StringIO(), width=120, height=40, record=True, color_system=None)
    console.print(events.render())
    return [" ".join(line.split()) for line in console.export_text().splitlines()]


def live_tasks() -> list[Watched]:
    running = watched(
        "run-1", task("run-1", statusMessage="half way", ttl=600_000), started=NOW - 65, due=NOW + 4
    )
    due = watched("due-2", task("due-2"), started=NOW - 5, due=NOW - 1, push_live=True)
    asking = watched(
        "ask-3", task("ask-3", "input_required"), started=NOW - 1, due=NOW + 1, asking=True
    )
    ended = watched(
        "a-very-long-task-id-indeed",
        task("a-very-long-task-id-indeed", "completed", ttl=60_000),
        outcome="completed",
        exit_code=0,
        started=NOW - 30,
        ended=NOW - 20,
        via="push",
    )
    forever = watched("inf-5", task("inf-5", ttl=10**15), started=NOW, due=NOW)
    unknown = watched("new-6", started=NOW - 2, due=NOW + 2)
    return [running, due, asking, ended, forever, unknown]


def test_a_live_frame_has_one_row_per_task_and_a_summary() -> None:
    events = LiveEvents(output("pretty", recording_console()), with_result=False, clock=lambda: NOW)
    events.title = "watching 6 tasks"
    events.track(live_tasks())
    lines = frame(events)
    assert lines[0] == "watching 6 tasks"
    # the message first: `kept` gives way at 120 columns
    assert words(lines[1]) == ["task", "status", "message", "age", "via", "next", "poll"]
    rows = [" ".join(words(line)) for line in lines[3:]]
    assert rows[:6] == [
        "run-1 ● working half way 1m05s poll 4s",
        "due-2 ● working 5s push now",
        "ask-3 ? input_required 1s poll answering",
        # its whole id; its clock stopped; no message of its own: how it ended
        "a-very-long-task-id-indeed ✔ completed done 10s push",
        "inf-5 ● working 0s poll now",
        "new-6 … checking 2s poll 2s",  # no answer yet: not "submitted" (issue 20), no jargon
    ]
    assert rows[6] == "… 1 checking ✔ 1 completed ? 1 input_required ● 3 working"


def test_a_retry_shows_in_the_message_until_the_next_update() -> None:
    events = LiveEvents(output("pretty", recording_console()), with_result=False, clock=lambda: NOW)
    w = watched("t1", task(statusMessage="working on it"), started=NOW, due=NOW + 2.6)
    events.track([w])
    events.retry(w, "server error -32603: busy", 2.6)
    assert any("retrying in 2.6s: server error -32603: busy" in line for line in frame(events))
    events.update(w, "poll")
    assert any("working on it" in line for line in frame(events))
    events.retry(w, "busy", 1)
    events.end(w)
    assert not any("retrying" in line for line in frame(events))


def test_a_live_frame_cleans_server_text() -> None:
    console = recording_console()
    events = LiveEvents(output("pretty", console), with_result=False, clock=lambda: NOW)
    w = watched("t" + HOSTILE, task("t" + HOSTILE, statusMessage=HOSTILE), started=NOW)
    events.track([w])
    console.print(events.render())
    raw = printed(events.out)
    assert not UNSAFE.search(re.sub(r"\x1b\[[0-9;]*m", "", raw).replace("\n", ""))
    assert "owned" not in console.export_text()
    events.retry(w, HOSTILE, 1.0)
    assert not any(UNSAFE.search(line) for line in frame(events))


def finished_with_text(task_id: str, text: str) -> Watched:
    done = task(task_id, "completed")
    w = watched(task_id, done, outcome="completed", exit_code=0, started=NOW)
    w.result = TaskResult(task=done, payload={"content": [{"type": "text", "text": text}]})
    return w


def test_the_live_view_draws_its_last_frame_and_the_results() -> None:
    console = recording_console()
    out = output("pretty", console)
    with LiveEvents(out, with_result=True, clock=lambda: NOW) as events:
        a = finished_with_text("a", "A!")
        b = watched("b", task("b", "failed"), outcome="failed", exit_code=5, started=NOW)
        b.result_error = "gone"
        c = watched("c", outcome="error", exit_code=4, last_error="cannot connect", started=NOW)
        d = watched("d", task("d", "input_required"), outcome="input_required", started=NOW)
        events.track([a, b, c, d])
        events.finish([a, b, c, d], 5)
    text = console.export_text()
    assert "✔ completed" in text and "✖ failed" in text and "! error" in text
    assert text.count("✔ completed") == 1  # one final frame, not every redraw
    assert text.endswith("── a\nA!\n")
    assert stderr(out).splitlines() == [
        "mcptask: b: could not fetch the result: gone",
        "mcptask: c: cannot connect",
        "mcptask: d needs input: answer it with `mcptask answer d`",
    ]


def test_one_task_s_result_has_no_header() -> None:
    console = recording_console()
    out = output("pretty", console)
    with LiveEvents(out, with_result=True, clock=lambda: NOW) as events:
        a = finished_with_text("a", "A!")
        events.track([a])
        events.finish([a], 0)
    text = console.export_text()
    assert text.endswith("completed\nA!\n") and "──" not in text


def test_an_exception_inside_the_live_view_ends_it() -> None:
    console = recording_console()
    out = output("pretty", console)
    with pytest.raises(RuntimeError), LiveEvents(out, with_result=False, clock=lambda: NOW) as ev:
        ev.track([watched("t1", task(), started=NOW)])
        raise RuntimeError("boom")
    # the console is free again: another live display may start
    with Live(Text("next"), console=console):
        pass
    assert "t1" in console.export_text()


def test_pause_and_resume_stop_and_restart_the_redraws() -> None:
    console = recording_console()
    out = output("pretty", console)
    with LiveEvents(out, with_result=False, clock=lambda: NOW) as events:
        events.track([watched("t1", task(), started=NOW)])
        events.pause()
        events.pause()  # twice is harmless
        with Live(Text("a form"), console=console):  # the console is free while paused
            pass
        events.resume()
        events.resume()
    assert "a form" in console.export_text()
    events.pause()  # after the end: nothing to do
    events.resume()


def test_a_watch_across_servers_has_a_server_column() -> None:
    events = LiveEvents(output("pretty", recording_console()), with_result=False, clock=lambda: NOW)
    a = watched("a", task("a"), started=NOW, due=NOW + 1)
    b = watched("b", task("b"), started=NOW, due=NOW + 1)
    events.track([a, b])
    assert "server" not in words(frame(events)[0])
    events.servers = {"a": "local", "b": "a-very-long-server-name.example.com:8443" + HOSTILE}
    lines = frame(events)
    assert words(lines[0])[:3] == ["task", "server", "status"]
    assert words(lines[2])[:3] == ["a", "local", "●"]
    row_b = " ".join(words(lines[3]))
    assert row_b.startswith("b a-very-long-server-nam")  # cut to the column's 24 characters
    assert "owned" not in row_b and not UNSAFE.search(row_b)


@pytest.mark.parametrize(
    ("task_id", "hint"),
    [
        ("t1", "mcptask answer t1"),
        ("-x1", "mcptask answer -- -x1"),
        ("a b", "mcptask answer 'a b'"),
    ],
)
def test_the_input_hint_is_a_command_that_works_when_pasted(task_id: str, hint: str) -> None:
    for events in (
        NdjsonEvents(output("ndjson"), with_result=False),
        JsonEvents(output("json"), with_result=False),
        LiveEvents(output("pretty", recording_console()), with_result=False),
    ):
        events.finish([watched(task_id, outcome="input_required", exit_code=10)], 10)
        assert stderr(events.out) == (f"mcptask: {task_id} needs input: answer it with `{hint}`\n")


def test_a_task_not_heard_of_yet_whose_server_is_down() -> None:
    """Its row shows the status the task book last saw (not `unseen`), and the message and
    `next poll` count down to the same moment."""
    events = LiveEvents(output("pretty", recording_console()), with_result=False, clock=lambda: NOW)
    known = watched("t1", started=NOW, due=NOW + 2.5)
    new = watched("t2", started=NOW, due=NOW + 2.5)
    events.track([known, new])
    events.last_seen = {"t1": "working"}
    events.retry(known, "cannot connect to http://127.0.0.1:1", 2.5)
    events.retry(new, "cannot connect to http://127.0.0.1:1", 2.5)
    rows = [" ".join(words(line)) for line in frame(events)[2:4]]
    assert rows[0].startswith("t1 ● working retrying in 2.5s: cannot connect")
    assert rows[1].startswith("t2 ↻ retrying retrying in 2.5s: cannot connect")
    assert all(row.endswith(" poll 2.5s") for row in rows)  # next poll: the same countdown
