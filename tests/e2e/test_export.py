"""Issue 35: `mcptask export` and `--otlp` as a user runs them, the real CLI against the embedded
demo server: a task's story as OTLP JSON lines (the file target), what was sent not sent again,
tasks still running left out unless named, `-o json`/`-o ndjson` in their schema, every mistake
one line with its exit status, and a backend that is down: exit 4 for `export`, one warning for
a watch that goes on. The real backend (Arize Phoenix) is `test_export_phoenix.py`."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import Draft202012Validator

from mcptask import schemas
from mcptask.demo.server import DemoServer

from conftest import RunCli, assert_one_line_error, ok

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def demo() -> Iterator[str]:
    with DemoServer(task_seconds=2) as server:
        yield server.url


@pytest.fixture(scope="module")
def slow_demo() -> Iterator[str]:
    with DemoServer(task_seconds=600) as server:
        yield server.url


@pytest.fixture
def closed_port() -> int:
    """A port nothing listens on (taken, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spans_in(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        for rs in doc["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                out += ss["spans"]
    return out


def attrs(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


def valid_export(doc: Any) -> dict[str, Any]:
    errors = list(Draft202012Validator(schemas.bundle("export")).iter_errors(doc))
    assert not errors, [e.message for e in errors]
    assert isinstance(doc, dict)
    return doc


def test_a_watched_task_s_story_goes_to_a_file_once(
    run_cli: RunCli, demo: str, tmp_path: Path
) -> None:
    tid = ok(run_cli("call", "build-report", "topic=otel", "--url", demo, "-o", "json")).json()[
        "taskId"
    ]
    ok(run_cli("watch", "-o", "ndjson", "--", tid))
    out = tmp_path / "traces.jsonl"
    doc = valid_export(ok(run_cli("export", "--to", str(out), "-o", "json", "--", tid)).json())
    assert (doc["exported"], doc["destination"]) == (1, str(out))
    [task] = doc["tasks"]
    assert task["taskId"] == tid and task["ended"] is True
    spans = spans_in(out)
    assert {s["traceId"] for s in spans} == {task["traceId"]}
    root = next(s for s in spans if s["spanId"] == task["spanId"])
    assert "parentSpanId" not in root
    assert root["name"] == "execute_tool build-report"
    assert attrs(root)["gen_ai.tool.name"] == "build-report"
    assert attrs(root)["mcptask.task.id"] == tid
    names = [e["name"] for e in root["events"]]
    assert names[0] == "created" and "status completed" in names and names[-1] == "end"
    times = [int(e["timeUnixNano"]) for e in root["events"]]
    assert times == sorted(times)
    assert int(root["startTimeUnixNano"]) <= times[0] and times[-1] <= int(root["endTimeUnixNano"])
    methods = {attrs(s).get("mcp.method.name") for s in spans if s.get("parentSpanId")}
    assert {"tools/call", "tasks/result"} <= methods
    # sent whole: not sent again, unless asked (then under the same ids)
    again = valid_export(ok(run_cli("export", "--to", str(out), "-o", "json", "--", tid)).json())
    assert (again["exported"], again["skipped"]["unchanged"]) == (0, 1)
    forced = ok(run_cli("export", "--to", str(out), "--again", "-o", "ndjson", "--", tid)).lines()
    assert [(x["traceId"], x["spanId"]) for x in forced] == [(task["traceId"], task["spanId"])]
    assert len(spans_in(out)) == 2 * len(spans)
    # the pretty words: how many, where, and the trace to paste
    pretty = ok(run_cli("export", "--to", str(out), "--again", "-o", "pretty", "--", tid))
    assert "exported 1 task(s)" in pretty.stderr and task["traceId"] in pretty.stdout


def test_tasks_still_running_go_only_when_named(
    run_cli: RunCli, slow_demo: str, tmp_path: Path
) -> None:
    long = ok(
        run_cli("call", "build-report", "topic=slow", "--url", slow_demo, "-o", "json")
    ).json()["taskId"]
    out = tmp_path / "t.jsonl"
    doc = valid_export(
        ok(run_cli("export", "--all", "--url", slow_demo, "--to", str(out), "-o", "json")).json()
    )
    assert long not in [t["taskId"] for t in doc["tasks"]] and doc["skipped"]["unfinished"] >= 1
    named = valid_export(ok(run_cli("export", "--to", str(out), "-o", "json", "--", long)).json())
    assert named["tasks"][0]["ended"] is False
    # a snapshot under ids of its own, a child of the task's span (sent whole once it ends)
    [root] = [s for s in spans_in(out) if attrs(s).get("mcptask.task.open")]
    assert root["parentSpanId"] == named["tasks"][0]["spanId"]
    assert attrs(root)["mcptask.task.span_id"] == named["tasks"][0]["spanId"]
    since = valid_export(
        ok(run_cli("export", "--since", "1h", "--to", str(out), "-o", "json")).json()
    )
    # sent as far as it went, and nothing new since: left out either way
    assert long not in [t["taskId"] for t in since["tasks"]]
    assert since["skipped"]["unchanged"] >= 1


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ((), "task ids, --since DURATION or --all"),
        (("--all", "--since", "1h"), "one of them"),
        (("--since", "5"), "needs a unit"),
        (("--all", "--to", "x.jsonl", "--endpoint", "http://127.0.0.1:1"), "not both"),
        (("--all", "--endpoint", "ftp://collector"), "OTLP/HTTP"),
        (("--all",), "nowhere to export to"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(
    run_cli: RunCli, args: tuple[str, ...], words: str, tmp_path: Path
) -> None:
    r = run_cli("export", *args)
    assert r.code == 2, (r.code, r.stderr)
    assert_one_line_error(r)
    assert words in r.stderr


def test_an_unknown_task_is_exit_9(run_cli: RunCli, tmp_path: Path) -> None:
    r = run_cli("export", "feedfacefeedface", "--to", str(tmp_path / "x"))
    assert r.code == 9, r.stderr
    assert_one_line_error(r)


def test_a_backend_that_is_down(
    run_cli: RunCli, demo: str, closed_port: int, tmp_path: Path
) -> None:
    endpoint = f"http://127.0.0.1:{closed_port}"
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_TIMEOUT": "2"}
    # a watch that exports live: one warning, and the watch's own outcome
    watched = run_cli(
        "call",
        "build-report",
        "topic=down",
        "--url",
        demo,
        "--watch",
        "--otlp",
        "-o",
        "ndjson",
        env=env,
    )
    ok(watched)
    assert watched.lines()[-1]["outcome"] == "completed"
    warnings = [ln for ln in watched.stderr.splitlines() if "export" in ln]
    assert len(warnings) == 1 and "connection refused" in warnings[0], watched.stderr
    tid = watched.lines()[-1]["taskId"]
    # `export` itself: exit 4, one line; the story is sent once the backend is back
    r = run_cli("export", "--", tid, env=env)
    assert r.code == 4, r.stderr
    assert_one_line_error(r)
    assert "connection refused" in r.stderr and f"127.0.0.1:{closed_port}" in r.stderr
    out = tmp_path / "later.jsonl"
    assert (
        valid_export(ok(run_cli("export", "--to", str(out), "-o", "json", "--", tid)).json())[
            "exported"
        ]
        == 1
    )


def test_otlp_goes_with_a_watch_and_a_destination(run_cli: RunCli, demo: str) -> None:
    r = run_cli("call", "build-report", "topic=x", "--url", demo, "--otlp")
    assert r.code == 2 and "goes with --watch" in r.stderr
    assert_one_line_error(r)
    r = run_cli("call", "build-report", "topic=x", "--url", demo, "--watch", "--otlp")
    assert r.code == 2 and "nowhere to export to" in r.stderr
    assert_one_line_error(r)
    r = run_cli("watch", "feedface", "--url", demo, "--otlp", env={"MCPTASK_OTLP": "1"})
    assert r.code == 2 and "nowhere to export to" in r.stderr
