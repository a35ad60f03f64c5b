"""The live view fits the terminal: whole headers and status words at 80 and 60 columns, the
message column takes the rest (cut with an ellipsis), low-value columns give way first, widths
stay put as messages change, one duration format, a finished row's clock stops. The last tests
run the real CLI in a real tmux terminal of 80 and 60 columns (`mcptask demo`, the embedded task
server)."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from mcptask.model.refs import TaskRef
from mcptask.model.task import Task
from mcptask.output.console import Output, duration, duration_ms, task_panel
from mcptask.output.jq import JqFilter
from mcptask.output.live import LiveEvents
from mcptask.scheduler.watcher import Watched

from conftest import clean_env

ROOT = Path(__file__).resolve().parents[2]
HEADERS = ("task", "status", "message", "age", "via", "next poll", "kept")
#: columns drawn only where they apply (pushed progress, a watch across servers)
SOMETIMES = ("progress", "server")


def watched(tid: str, status: str, message: str, *, ended: float | None = None) -> Watched:
    w = Watched(ref=TaskRef(tid), started=0.0, due=70.0)
    w.task = Task(
        taskId=tid,
        status=status,  # type: ignore[arg-type]
        statusMessage=message,
        pollInterval=1000,
        ttl=300_000,
        protocol="test",
        server="test",
        raw={},
    )
    if ended is not None:
        w.outcome, w.exit_code, w.ended = status, 0, ended
    return w


def frame(events: LiveEvents, width: int) -> list[str]:
    buf = io.StringIO()
    Console(file=buf, width=width, height=40, color_system=None).print(events.render(width))
    return buf.getvalue().splitlines()


def view(*rows: Watched, now: float = 65.0) -> LiveEvents:
    out = Output(mode="pretty", stdout=io.StringIO())
    events = LiveEvents(out, with_result=False, clock=lambda: now)
    events.track(list(rows))
    return events


def header_of(lines: list[str]) -> list[str]:
    line = next(ln for ln in lines if "┃" in ln)
    return [cell.strip() for cell in line.split("┃")]


ROWS = (
    ("8488be63b6d99b9f312f717804759bc8", "working", "Gathering sources " * 6),
    ("eqURHTIYobV5FAMSFSduR6sXxIM2arsuvpRQCEYupRw", "input_required", "What is your name?"),
)


@pytest.mark.parametrize(
    ("width", "columns"),
    [
        # the message first: kept and next poll give way to whole ids and 36 message cells
        (120, ["task", "status", "message", "age", "via"]),
        (160, list(HEADERS)),
        # no room for whole ids and the message: a unique prefix (every command takes it),
        # never an ellipsis
        (80, ["task", "status", "message", "age"]),
        (60, ["task", "status", "message"]),
    ],
)
def test_whole_headers_and_status_words_at_any_width(width: int, columns: list[str]) -> None:
    lines = frame(view(*(watched(*r) for r in ROWS)), width)
    assert header_of(lines) == columns  # kept goes first, then next poll, via, age
    ids = [ln.split("│")[0].strip() for ln in lines if "│" in ln]
    message = next(ln for ln in lines if "┃" in ln).split("┃")[2]
    assert len(message) >= min(38, width - 30), lines  # the message gets its room first
    if width >= 120:
        assert ids == [r[0] for r in ROWS]
    else:
        assert ids == [r[0][:8] for r in ROWS]
    assert all(len(ln) <= width for ln in lines)
    body = "\n".join(lines)
    assert "● working" in body and "? input_required" in body
    assert "Gathering s" in body and "…" in body  # the long message is cut, visibly


def test_widths_stay_put_as_messages_change() -> None:
    row = watched("a1b2c3d4", "working", "short")
    events = view(row)
    first = frame(events, 80)
    for message in ("a much longer message than before, " * 4, "", "mid-length message"):
        assert row.task is not None
        row.task = row.task.model_copy(update={"statusMessage": message})
        again = frame(events, 80)
        assert again[0] == first[0]  # the header line: same columns at the same places
        assert len(again[2]) == len(first[2])
    # a task ending as most do (completed) keeps the status column as it was
    row.outcome, row.exit_code, row.ended = "completed", 0, 60.0
    assert frame(events, 80)[0] == first[0]


def test_a_finished_rows_clock_stops_at_its_end() -> None:
    ended = watched("t-1", "cancelled", "", ended=5.0)
    running = watched("t-2", "working", "")
    for now, elapsed_running in ((65.0, "1m05s"), (125.0, "2m05s")):
        lines = frame(view(ended, running, now=now), 120)
        row1 = next(ln for ln in lines if "t-1" in ln)
        row2 = next(ln for ln in lines if "t-2" in ln)
        assert " 5s " in row1
        assert f" {elapsed_running} " in row2


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (-3, "0s"),
        (44.6, "45s"),
        (59.6, "1m00s"),
        (65, "1m05s"),
        (3599.5, "1h00m"),
        (86_399, "23h59m"),
        (360_000, "4d04h"),
        (float("inf"), "≥1000d"),
    ],
)
def test_one_duration_format(seconds: float, text: str) -> None:
    assert duration(seconds) == text


@pytest.mark.parametrize(
    ("ms", "text"),
    [(250, "0.25s"), (1000, "1s"), (1500, "1.5s"), (60_000, "1m00s"), (300_000, "5m00s")],
)
def test_a_servers_milliseconds_read_the_same_way(ms: int, text: str) -> None:
    assert duration_ms(ms) == text
    assert duration_ms(10**400) == "≥1000d"  # no float overflow


def test_the_task_panel_uses_the_same_durations() -> None:
    task = watched("t", "working", "m").task
    assert task is not None
    buf = io.StringIO()
    Console(file=buf, width=100, color_system=None).print(task_panel(task))
    text = buf.getvalue()
    assert "5m00s" in text and "1s" in text and " s\n" not in text


def test_list_as_ndjson_prints_one_task_per_line() -> None:
    out = Output(mode="ndjson", stdout=io.StringIO())
    tasks = [t for t in (watched(*r).task for r in ROWS) if t is not None]
    out.tasks(tasks)
    lines = out.stdout.getvalue().splitlines()  # type: ignore[attr-defined]
    assert [Task.model_validate_json(ln).taskId for ln in lines] == [t.taskId for t in tasks]
    empty = Output(mode="ndjson", stdout=io.StringIO())
    empty.tasks([])
    assert empty.stdout.getvalue() == ""  # type: ignore[attr-defined]


def test_the_list_table_fits_80_columns() -> None:
    out = Output(mode="pretty", stdout=io.StringIO())
    buf = io.StringIO()
    out._console = Console(file=buf, width=80, color_system=None)
    out.tasks([t for t in (watched(*r).task for r in ROWS) if t is not None])
    lines = buf.getvalue().splitlines()
    # whole ids: the time gives way first (the message keeps some room)
    assert header_of(lines) == ["task", "status", "message"]
    ids = [ln.split("│")[0].strip() for ln in lines if "│" in ln]
    assert [i for i in ids if i] == [r[0] for r in ROWS]  # (a long message folds)
    assert all(len(ln) <= 80 for ln in lines)
    assert "? input_required" in buf.getvalue()


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_jq_filters_each_document() -> None:
    out = Output(mode="json", stdout=io.StringIO())
    out.jq = JqFilter(".tasks[] | .status, {id: .taskId}")
    out.line({"tasks": [{"status": "working", "taskId": "a"}]})
    assert out.stdout.getvalue() == 'working\n{"id": "a"}\n'  # type: ignore[attr-defined]
    # server text a filter prints raw is cleaned before a terminal
    tty = Output(mode="json", stdout=Tty())
    tty.jq = JqFilter(".m")
    tty.line({"m": "evil\x1b]0;title\x07\x1b[2Jtext"})
    assert tty.stdout.getvalue() == "eviltext\n"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("expression", "message"),
    [(".a[", "--jq: syntax error"), ('error("boom")', "boom"), (".a[]", "Cannot iterate")],
)
def test_a_bad_jq_program_is_a_usage_error(expression: str, message: str) -> None:
    from mcptask.errors import UsageError

    with pytest.raises(UsageError, match=message.replace("[", r"\[")) as info:
        JqFilter(expression).apply({"a": 1})
    assert "\n" not in info.value.message


# -- a real terminal ----------------------------------------------------------------------------


class Tmux:
    """A tmux server of our own (its own socket), one window of the given size."""

    def __init__(self, width: int, height: int = 24) -> None:
        assert shutil.which("tmux"), "tmux is needed (scripts/test installs it)"
        self.socket = f"mcptask-test-{uuid.uuid4().hex[:8]}"
        self.width, self.height = width, height

    def run(self, *args: str) -> str:
        proc = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return proc.stdout

    def start(self, command: list[str], env: dict[str, str]) -> None:
        setenv = [f"{k}={v}" for k, v in env.items() if k.startswith(("MCPTASK_", "PYTHON"))]
        # the terminal's own size, not a COLUMNS a parent process left behind
        unset = ["-u", "COLUMNS", "-u", "LINES"]
        line = " ".join(["env", *unset, *map(_quote, setenv), *map(_quote, command)])
        self.run(
            "new-session", "-d", "-x", str(self.width), "-y", str(self.height), "-s", "t",
            f"{line}; echo __END__ $?; sleep 600",
        )  # fmt: skip

    def screen(self) -> list[str]:
        return self.run("capture-pane", "-p", "-t", "t").splitlines()

    def stop(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def _quote(word: str) -> str:
    import shlex

    return shlex.quote(word)


@pytest.fixture
def tmux_at(request: pytest.FixtureRequest) -> Iterator[Tmux]:
    t = Tmux(request.param)
    try:
        yield t
    finally:
        t.stop()


def frames_until_end(tmux: Tmux, deadline_s: float = 90) -> list[list[str]]:
    """Every screen that shows a table, until the command has ended (the last is final)."""
    frames: list[list[str]] = []
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        screen = tmux.screen()
        if any("┃" in ln for ln in screen):
            frames.append(screen)
        if any(ln.startswith("__END__") for ln in screen):
            return frames or [screen]
        time.sleep(0.3)
    raise AssertionError("the command did not end:\n" + "\n".join(tmux.screen()))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tmux_at", [120, 80, 60], indirect=True)
def test_the_live_view_in_a_real_terminal(tmux_at: Tmux, state_dir: Path) -> None:
    env = clean_env(state_dir, {"PYTHONPATH": str(ROOT)})
    tmux_at.start([sys.executable, "-m", "mcptask", "demo", "--seconds", "4"], env)
    frames = frames_until_end(tmux_at)
    final = frames[-1]  # drawn for good: the command has ended
    assert "__END__ 0" in final, "\n".join(final)
    header = header_of(final)
    assert [h for h in header if h not in SOMETIMES][:3] == ["task", "status", "message"]
    assert set(header) <= {*HEADERS, *SOMETIMES}
    # the message first (issue 38): no empty column takes its room; pushed progress is drawn
    # inside it; whole ids where they fit beside 36 cells of message, else a unique prefix
    assert "progress" not in header and "kept" not in header
    cut = next(ln for ln in final if "╇" in ln).split("╇")
    assert len(cut[header.index("message")]) >= min(38, tmux_at.width - 27), final
    row = next(ln for ln in final if "✔ completed" in ln)
    shown_id = row.split("│")[0].strip()
    created = next(ln for ln in final if ln.startswith("mcptask: task "))
    task_id = created.split()[2]
    assert shown_id == (task_id if tmux_at.width >= 120 else task_id[:8]), final
    if tmux_at.width >= 80:
        assert "age" in header and "Report ready" in row
    if tmux_at.width >= 120:  # the demo pushes its stages: progress beside the message
        assert "via" in header and "push" in row
    assert any(re.search(r"[0-9]/6  \w", ln) for f in frames for ln in f), frames
    # a capture may catch a redraw halfway; every whole frame has the same columns, from the
    # first to the last (chosen once for the width: none comes or goes while watching)
    whole = [f for f in frames if set(header_of(f)) <= {*HEADERS, *SOMETIMES} and summary(f)]
    running = [f for f in whole if any("● working" in ln for ln in f)]
    assert running, frames
    assert {tuple(header_of(f)) for f in whole} == {tuple(header)}
    for f in whole:
        assert all(len(ln) <= tmux_at.width for ln in f)
        assert sum(1 for ln in f if "┃" in ln) == 1, f  # one header: nothing stale above
        rows = [ln for ln in f if "│" in ln]
        assert rows and all(("● working" in ln) or ("✔ completed" in ln) for ln in rows), f


def summary(screen: list[str]) -> bool:
    return any(ln.strip() in ("● 1 working", "✔ 1 completed") for ln in screen)


def test_a_watch_across_servers_names_each_tasks_server() -> None:
    rows = [watched(*r) for r in ROWS]
    events = view(*rows)
    events.servers = {rows[0].task_id: "127.0.0.1:3001", rows[1].task_id: "research"}
    wide = frame(events, 120)
    assert header_of(wide)[:3] == ["task", "server", "status"]
    assert "research" in "\n".join(wide)
    # on a narrow terminal the server gives way only after the low-value columns
    assert header_of(frame(events, 100)) == ["task", "server", "status", "message", "age", "via"]
    assert header_of(frame(events, 80)) == ["task", "status", "message"]


def wait_screen(
    tmux: Tmux, ok: Callable[[list[str]], bool], what: str, within: float = 60
) -> list[str]:
    """The screen, once `ok` holds for it."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        screen = tmux.screen()
        if ok(screen):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"never {what}:\n" + "\n".join(tmux.screen()))


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "mcptask", *args]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tmux_at", [120, 80], indirect=True)
def test_the_view_redraws_cleanly_after_a_form(
    tmux_at: Tmux, state_dir: Path, fastmcp4_server: Any
) -> None:
    """A form asked inside `watch` (fastmcp 4's ask_name): the frame leaves the terminal while
    the form asks, and comes back whole below it; no stale `input_required` table above."""
    env = clean_env(state_dir, {"PYTHONPATH": str(ROOT)})
    tmux_at.start(cli("call", "ask_name", "--watch", "--result", "--url", fastmcp4_server.url), env)
    wait_screen(tmux_at, lambda s: any(ln.strip() == "text:" for ln in s), "asked")
    tmux_at.run("send-keys", "-t", "t", "Di", "Enter")
    wait_screen(tmux_at, lambda s: any("send this answer?" in ln for ln in s), "confirmed")
    tmux_at.run("send-keys", "-t", "t", "Enter")
    final = wait_screen(tmux_at, lambda s: any("__END__" in ln for ln in s), "ended")
    assert "__END__ 0" in "\n".join(final), final
    text = "\n".join(final)
    assert "What is your name?" in text  # the form stays as it was answered
    assert sum(1 for ln in final if "┃" in ln) == 1, text  # one table: the one after the form
    assert "input_required" not in text
    assert "Hello, Di!" in text and "✔ completed" in text
    # the table comes after the form, not over it
    assert text.index("send this answer?") < text.index("┃")
    assert all(len(ln) <= tmux_at.width for ln in final)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tmux_at", [120], indirect=True)
def test_the_view_redraws_cleanly_on_resize(tmux_at: Tmux, state_dir: Path) -> None:
    env = clean_env(state_dir, {"PYTHONPATH": str(ROOT)})
    # a task that outlasts the three resizes on any machine (a loaded one took over 30 s): each
    # redraw is of a running view, not the last frame of an ended one
    tmux_at.start(cli("demo", "--seconds", "600"), env)
    wait_screen(tmux_at, lambda s: any("● working" in ln for ln in s), "working")
    for width in (80, 60, 100):
        tmux_at.run("resize-window", "-t", "t", "-x", str(width))

        def redrawn(s: list[str], width: int = width) -> bool:
            # one whole frame for the new width, and nothing of an older one: a frame drawn
            # for a wider terminal reflows its header and rule over two lines each
            rows = [ln for ln in s if "│" in ln]
            headers = [ln for ln in s if "┃" in ln]
            rules = [ln for ln in s if "╇" in ln]
            return (
                bool(rows)
                and summary(s)
                and all(len(ln.rstrip()) <= width for ln in s)
                and len(headers) == 1
                and len(rules) == 1
                and headers[0].lstrip().startswith("task")
                and sum(1 for ln in s if ln.startswith("mcptask demo: watching")) == 1
            )

        screen = wait_screen(tmux_at, redrawn, f"redrawn at {width}")
        # nothing of an older frame is left on the screen: one title, one header
        assert sum(1 for ln in screen if "┃" in ln) == 1, "\n".join(screen)
        assert sum(1 for ln in screen if ln.startswith("mcptask demo: watching")) == 1, screen


# -- tables in a real terminal (issue 28, items 1 and 2) -----------------------------------------


def run_in(tmux: Tmux, env: dict[str, str], *args: str) -> list[str]:
    tmux.start(cli(*args), env)
    screen = wait_screen(tmux, lambda s: any(ln.startswith("__END__") for ln in s), "ended")
    assert "__END__ 0" in "\n".join(screen), screen
    return [ln for ln in screen if not ln.startswith("__END__")]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tmux_at", [120, 80], indirect=True)
def test_list_never_wraps_or_cuts_an_id(
    tmux_at: Tmux, state_dir: Path, fastmcp4_server: Any, run_cli: Any
) -> None:
    url = fastmcp4_server.url
    ids = [
        run_cli("call", "slow_echo", "text=x", "seconds=30", "--url", url, "-o", "json").json()[
            "taskId"
        ]
        for _ in range(2)
    ]
    assert all(len(t) > 30 for t in ids)  # fastmcp 4's ids: 43 characters
    env = clean_env(state_dir, {"PYTHONPATH": str(ROOT)})
    screen = run_in(tmux_at, env, "list", "--url", url)
    for tid in ids:  # whole, on one line, to copy or double-click
        assert sum(1 for ln in screen if tid in ln) == 1, "\n".join(screen)
    assert header_of(screen) == ["task", "status", "message", "updated"]
    assert all(len(ln) <= tmux_at.width for ln in screen)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tmux_at", [120, 80], indirect=True)
def test_tools_shows_whole_names_and_the_required_arguments(
    tmux_at: Tmux, state_dir: Path, everything_server: Any, run_cli: Any
) -> None:
    url = everything_server.url
    tools = run_cli("tools", "--url", url, "-o", "json").json()["tools"]
    env = clean_env(state_dir, {"PYTHONPATH": str(ROOT)})
    tmux_at.height = 60
    screen = run_in(tmux_at, env, "tools", "--url", url)
    text = "\n".join(screen)
    assert header_of(screen) == ["tool", "task", "required", "description"]
    rows = {ln.split("│")[0].strip(): ln for ln in screen if "│" in ln}
    for tool in tools:
        assert tool["name"] in rows, text  # every name whole (none cut to the same stem)
        for arg in tool.get("required", []):
            assert arg in rows[tool["name"]], text  # each required argument, never mid-word
    assert "get-sum" in rows and "a, b" in rows["get-sum"]
    assert all(len(ln) <= tmux_at.width for ln in screen)
    if tmux_at.width == 120:  # the description takes the room there is
        assert max(len(ln.rstrip()) for ln in screen) >= 115, text


@pytest.mark.timeout(180)
@pytest.mark.parametrize("tmux_at", [120, 80], indirect=True)
def test_a_server_that_goes_down_mid_watch_reads_as_one_coherent_line(
    tmux_at: Tmux, state_dir: Path
) -> None:
    """fastmcp 4 stopped while a task of it is watched: the row keeps the status it was seen
    with, the message counts down to the next try (the same time as `next poll`, where that
    column is drawn), and the countdown moves."""
    import re

    from servers.mcp_envs import start_fastmcp4

    server = start_fastmcp4()
    try:
        env = clean_env(state_dir, {"PYTHONPATH": str(ROOT), "MCPTASK_CONNECT_TIMEOUT": "1"})
        made = subprocess.run(
            cli("call", "slow_echo", "text=x", "seconds=120", "--url", server.url, "-o", "json"),
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        task_id = made.stdout.split('"taskId": "')[1].split('"')[0]
        tmux_at.start(cli("watch", "--no-push", "--", task_id), env)
        wait_screen(tmux_at, lambda s: any("● working" in ln for ln in s), "working")
        server.stop()
        pattern = re.compile(r"retrying in ([0-9.m]+s)")

        def countdown(s: list[str]) -> str | None:
            found = [m.group(1) for ln in s if (m := pattern.search(ln))]
            return found[0] if found else None

        screen = wait_screen(tmux_at, lambda s: countdown(s) is not None, "retrying", 60)
        row = next(ln for ln in screen if "retrying in" in ln)
        assert "● working" in row and "unseen" not in row, screen
        header = header_of(screen)
        if "next poll" in header:
            cells = [c.strip() for c in row.split("│")]
            assert cells[header.index("next poll")] == countdown(screen), row
        first = countdown(screen)
        # not frozen: the countdown moves on
        wait_screen(tmux_at, lambda s: countdown(s) not in (None, first), "counting down", 60)
    finally:
        server.stop()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tmux_at", [120, 80], indirect=True)
def test_watching_server_everything_keeps_its_columns_and_the_whole_id(
    tmux_at: Tmux, state_dir: Path, everything_server: Any
) -> None:
    """server-everything's research task (4 stages of 1 s) followed live: the id is whole on
    its row at 120 columns (a unique prefix at 80, where the message gets the room), the
    columns never change, the age counts from the task's createdAt."""
    env = clean_env(state_dir, {"PYTHONPATH": str(ROOT)})
    url = everything_server.url
    tmux_at.start(
        cli("call", "simulate-research-query", "topic=tides", "--watch", "--url", url), env
    )
    frames = frames_until_end(tmux_at)
    final = frames[-1]
    assert "__END__ 0" in "\n".join(final), final
    created = next(ln for ln in final if ln.startswith("mcptask: task "))
    task_id = created.split()[2]
    whole = [f for f in frames if summary(f) and sum(1 for ln in f if "┃" in ln) == 1]
    assert whole, frames
    headers = {tuple(header_of(f)) for f in whole}
    assert len(headers) == 1, headers  # chosen once for the width
    for f in whole:
        rows = [ln for ln in f if "│" in ln]
        shown = rows[0].split("│")[0].strip() if len(rows) == 1 else ""
        if tmux_at.width >= 120:
            assert shown == task_id, f
        else:
            assert len(shown) >= 8 and task_id.startswith(shown), f
        assert all(len(ln) <= tmux_at.width for ln in f)
    assert "age" in header_of(final)


def test_a_task_that_ends_with_its_running_message_says_how_it_ended() -> None:
    """Many servers leave `Generating ...` in place when a task completes: the row then shows
    the result's first line (or how it ended), not the stale message."""
    from mcptask.model.results import TaskResult

    row = watched("t-1", "working", "Generating the summary")
    events = view(row)
    events.update(row, "poll")
    assert "Generating the summary" in "\n".join(frame(events, 120))
    assert row.task is not None
    row.task = row.task.model_copy(update={"status": "completed"})
    row.outcome, row.exit_code, row.ended = "completed", 0, 60.0
    assert "done" in "\n".join(frame(events, 120))
    row.result = TaskResult(task=row.task, payload={"content": [{"type": "text", "text": "42\n"}]})
    body = "\n".join(frame(events, 120))
    assert "result: 42" in body and "Generating" not in body
    # a message the server set at the end is its own
    row.task = row.task.model_copy(update={"statusMessage": "Summary written"})
    assert "Summary written" in "\n".join(frame(events, 120))


def test_pushed_progress_is_drawn_in_the_message() -> None:
    from mcptask.protocols.base import Progress

    row = watched("t-1", "working", "Drafting report")
    row.progress = Progress(progress=3, total=6)
    wide = "\n".join(frame(view(row), 120))
    assert "███░░░ 3/6  Drafting report" in wide
    assert "3/6  Drafting report" in "\n".join(frame(view(row), 60))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tmux_at", [120, 80], indirect=True)
def test_an_a2a_question_in_a_watch_is_confirmed_before_it_is_sent(
    tmux_at: Tmux, state_dir: Path
) -> None:
    """Issue 38: the A2A text answer asks `send this answer?` as the MCP form does, so a `y`
    typed for it never lands in the shell; the view comes back whole below the form."""
    from servers.odd_server import OddServer

    with OddServer() as odd:
        url = odd.agent("1.0")
        env = clean_env(state_dir, {"PYTHONPATH": str(ROOT)})
        made = subprocess.run(
            cli("send", "ask the weather", "-u", url, "-o", "json"),
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        task_id = made.stdout.split('"taskId": "')[1].split('"')[0]
        tmux_at.start(cli("watch", "--url", url, "--", task_id), env)
        wait_screen(tmux_at, lambda s: any(ln.strip() == "text:" for ln in s), "asked")
        tmux_at.run("send-keys", "-t", "t", "Paris", "Enter")
        wait_screen(tmux_at, lambda s: any("send this answer?" in ln for ln in s), "confirmed")
        assert odd.scenario(url).answers == []  # nothing sent before the confirmation
        tmux_at.run("send-keys", "-t", "t", "y", "Enter")
        final = wait_screen(tmux_at, lambda s: any("__END__" in ln for ln in s), "ended")
        text = "\n".join(final)
        assert "__END__ 0" in text, text
        assert odd.scenario(url).answers == [[{"text": "Paris"}]]
        assert "✔ completed" in text and sum(1 for ln in final if "┃" in ln) == 1, text
        assert text.index("send this answer?") < text.index("┃")
        assert all(len(ln) <= tmux_at.width for ln in final)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tmux_at", [80, 120], indirect=True)
def test_a_long_note_wraps_between_words_on_a_terminal(
    tmux_at: Tmux, state_dir: Path, run_cli: Any
) -> None:
    """Issue 38: a terminal wraps a long stderr line mid-word (`it is w` / `orking now`):
    mcptask folds it between words, a backticked command kept whole."""
    args = ("get", "4b")
    plain = run_cli(*args).stderr.strip()  # not a terminal: one line
    assert "\n" not in plain and len(plain) > 120
    env = clean_env(state_dir, {"PYTHONPATH": str(ROOT)})
    tmux_at.start(cli(*args), env)
    screen = wait_screen(tmux_at, lambda s: any("__END__" in ln for ln in s), "ended")
    lines = [
        ln.rstrip() for ln in screen[: next(i for i, ln in enumerate(screen) if "__END__" in ln)]
    ]
    lines = [ln for ln in lines if ln]
    assert len(lines) >= 2 and all(len(ln) <= tmux_at.width for ln in lines), lines
    assert all(ln.startswith("  ") for ln in lines[1:]), lines
    assert " ".join(ln.strip() for ln in lines) == plain  # no word cut in two
