"""A2A artifacts as they grow and as they are saved, against the real a2a-sdk 1.3.0 agent
(`report...`: a text artifact streamed in four appended chunks one step apart, then a 4 KiB file
artifact as `raw` bytes): `watch -o ndjson` prints `artifact` events before the task ends, over
the stream (JSON-RPC, HTTP+JSON) and over polls alone (an agent that does not stream); `result`
has the artifact whole."""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import Draft202012Validator

from mcptask import schemas

from conftest import CliResult, RunCli, assert_one_line_error
from servers.a2a_plugin import A2AServerProcess
from servers.a2a_report import REPORT_CHUNKS, REPORT_FILE

pytestmark = pytest.mark.timeout(240)


def _ok(r: CliResult, code: int = 0) -> CliResult:
    assert r.code == code, f"exit {r.code}\nstdout: {r.stdout[-3000:]}\nstderr: {r.stderr}"
    assert "Traceback" not in r.stderr, r.stderr
    return r


@cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(schemas.bundle("watch-event"))


@cache
def _save_validator() -> Draft202012Validator:
    return Draft202012Validator(schemas.bundle("save"))


def _watch_report(run_cli: RunCli, url: str) -> tuple[str, list[dict[str, Any]]]:
    # one process sends and watches: the report (over 4 s) is under way when the watch begins
    lines = _ok(run_cli("send", "report please", "-u", url, "--watch", "-o", "ndjson")).lines()
    for line in lines:
        errors = list(_validator().iter_errors(line))
        assert not errors, (line, [e.message[:200] for e in errors])
    return lines[0]["taskId"], lines


def _assembled(events: list[dict[str, Any]], artifact_id: str) -> list[dict[str, Any]]:
    """The parts of one artifact, rebuilt from its events as a consumer would."""
    parts: list[dict[str, Any]] = []
    for e in events:
        if e.get("event") == "artifact" and e["artifactId"] == artifact_id:
            parts = [*parts, *e["parts"]] if e["append"] else list(e["parts"])
            assert e["partsSoFar"] == len(parts)
    return parts


def _check_report_events(lines: list[dict[str, Any]], *, streamed: bool) -> None:
    kinds = [line.get("event") for line in lines]
    completed = next(i for i, line in enumerate(lines) if line.get("status") == "completed")
    report = [
        (i, line)
        for i, line in enumerate(lines)
        if line.get("event") == "artifact" and line["artifactId"] == "report"
    ]
    assert report, kinds
    # the artifact arrives while the task runs, not only at its end
    assert report[0][0] < completed
    assert any(line["append"] for _, line in report), report
    text = "".join(p["text"] for p in _assembled(lines, "report"))
    assert text == "".join(REPORT_CHUNKS)
    last = report[-1][1]
    assert last["lastChunk"] is True
    assert last["bytesSoFar"] == len(text.encode())
    assert last["name"] == "report.md"
    if streamed:
        # every chunk after those the stream's first event held came as its own update
        assert len(report) >= 2, report
        assert all(line["lastChunk"] is not True for _, line in report[:-1])
    data = _assembled(lines, "data")
    assert len(data) == 1 and data[0]["kind"] == "file"
    assert data[0]["name"] == "data.bin"
    assert base64.b64decode(data[0]["bytes"]) == REPORT_FILE
    # the artifacts come before the status that ends the task, and the end is last
    assert kinds[-1] == "end"


def test_watch_shows_the_artifact_grow_over_json_rpc(
    run_cli: RunCli, a2a_server: A2AServerProcess
) -> None:
    task_id, lines = _watch_report(run_cli, a2a_server.url)
    _check_report_events(lines, streamed=True)
    # `result` prints the artifact whole, and the file's bytes
    result = _ok(run_cli("result", "-o", "json", "--", task_id)).json()
    report = next(a for a in result["artifacts"] if a["artifactId"] == "report")
    assert "".join(p["text"] for p in report["parts"]) == "".join(REPORT_CHUNKS)


def test_watch_shows_the_artifact_grow_over_http_json(
    run_cli: RunCli, a2a_rest_server: A2AServerProcess
) -> None:
    _, lines = _watch_report(run_cli, a2a_rest_server.url)
    _check_report_events(lines, streamed=True)


def test_watch_shows_the_artifact_grow_from_reads_alone(
    run_cli: RunCli, a2a_push_server: A2AServerProcess
) -> None:
    """An agent that does not stream (`streaming: false`): the artifact's growth shows from
    what each GetTask adds (the chunks come a step of 1 s apart, over 4 s)."""
    _, lines = _watch_report(run_cli, a2a_push_server.url)
    _check_report_events(lines, streamed=False)
    report = [e for e in lines if e.get("event") == "artifact" and e["artifactId"] == "report"]
    # while the task runs, a read cannot tell whether a chunk was the last; once it ended,
    # an update without parts says the artifact is whole
    assert all(e["lastChunk"] is None for e in report[:-1])


# -- result --save --------------------------------------------------------------------------------


def test_result_save_writes_the_file_byte_for_byte_and_the_text_whole(
    run_cli: RunCli, a2a_server: A2AServerProcess, tmp_path: Path
) -> None:
    task = _ok(run_cli("send", "report to save", "-u", a2a_server.url, "-o", "json")).json()
    out = tmp_path / "out"
    manifest = _ok(run_cli("result", "--save", str(out), "-o", "json", "--", task["taskId"])).json()
    errors = list(_save_validator().iter_errors(manifest))
    assert not errors, [e.message for e in errors]
    assert (out / "data.bin").read_bytes() == REPORT_FILE
    assert (out / "report.md").read_text() == "".join(REPORT_CHUNKS)
    by_name = {Path(f["path"]).name: f for f in manifest["files"]}
    assert set(by_name) == {"report.md", "data.bin"}
    assert by_name["data.bin"]["bytes"] == len(REPORT_FILE)
    assert by_name["data.bin"]["sha256"] == hashlib.sha256(REPORT_FILE).hexdigest()
    assert by_name["data.bin"]["mediaType"] == "application/octet-stream"
    # nothing is overwritten without --force: a one-line error, exit 2, the file as it was
    (out / "report.md").write_text("mine")
    again = run_cli("result", "--save", str(out), "--", task["taskId"])
    assert again.code == 2
    assert_one_line_error(again)
    assert "--force" in again.stderr
    assert (out / "report.md").read_text() == "mine"
    _ok(run_cli("result", "--save", str(out), "--force", "-o", "json", "--", task["taskId"]))
    assert (out / "report.md").read_text() == "".join(REPORT_CHUNKS)


def test_watch_result_save_prints_a_saved_event(
    run_cli: RunCli, a2a_server: A2AServerProcess, tmp_path: Path
) -> None:
    task = _ok(run_cli("send", "report to watch", "-u", a2a_server.url, "-o", "json")).json()
    out = tmp_path / "w"
    lines = _ok(
        run_cli("watch", "--result", "--save", str(out), "-o", "ndjson", "--", task["taskId"])
    ).lines()
    for line in lines:
        assert not list(_validator().iter_errors(line)), line
    saved = [line for line in lines if line.get("event") == "saved"]
    assert len(saved) == 1 and saved[0]["taskId"] == task["taskId"]
    assert (out / "data.bin").read_bytes() == REPORT_FILE
    assert (out / "report.md").read_text() == "".join(REPORT_CHUNKS)
    bad = run_cli("watch", "--save", str(out), "--", task["taskId"])
    assert bad.code == 2
    assert_one_line_error(bad)


def test_the_a2a_js_agent_s_artifacts_grow_and_save(
    run_cli: RunCli, a2a_js_server: A2AServerProcess, tmp_path: Path
) -> None:
    """@a2a-js/sdk 1.3.0 (no streaming: what each read adds), the same report and file."""
    task_id, lines = _watch_report(run_cli, a2a_js_server.url)
    _check_report_events(lines, streamed=False)
    out = tmp_path / "js"
    _ok(run_cli("result", "--save", str(out), "-o", "json", "--", task_id))
    assert (out / "data.bin").read_bytes() == REPORT_FILE
    assert (out / "report.md").read_text() == "".join(REPORT_CHUNKS)


def test_url_parts_are_listed_and_fetched_only_with_download(
    run_cli: RunCli, a2a_server: A2AServerProcess, tmp_path: Path
) -> None:
    task = _ok(run_cli("send", "link please", "-u", a2a_server.url, "--watch", "-o", "json"))
    task_id = task.json()["tasks"][0]["taskId"]
    out = tmp_path / "links"
    listed = _ok(run_cli("result", "--save", str(out), "-o", "json", "--", task_id)).json()
    (entry,) = listed["files"]
    assert entry["kind"] == "url" and entry["path"] is None and entry["bytes"] is None
    assert entry["url"] == a2a_server.card_url
    assert not (out / "card.json").exists()
    fetched = _ok(run_cli("result", "--save", str(out), "--download", "-o", "json", "--", task_id))
    (entry,) = fetched.json()["files"]
    assert Path(entry["path"]).name == "card.json" and entry["bytes"] > 0
    card = json.loads((out / "card.json").read_text())
    assert card["name"] == "mcptask test agent"
