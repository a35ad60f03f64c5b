"""`protocols.artifacts`: what is new in a task's artifacts, chunk by chunk."""

from __future__ import annotations

from typing import Any

from mcptask.model.task import Task
from mcptask.protocols.artifacts import ArtifactTracker, decoded_size, part_size


def _task(artifacts: list[dict[str, Any]], status: str = "working") -> Task:
    return Task(
        taskId="t1",
        status=status,  # type: ignore[arg-type]
        protocol="a2a-1.0",
        server="http://x",
        raw={"id": "t1", "artifacts": artifacts},
    )


def _art(*texts: str, aid: str = "a", name: str | None = "report.md") -> dict[str, Any]:
    return {"artifactId": aid, "name": name, "parts": [{"text": t} for t in texts]}


def test_chunks_appended_are_shown_one_update_each() -> None:
    tracker = ArtifactTracker()
    first = tracker.updates(_task([_art("one\n")]), {"a": False})
    assert [(u.append, u.total_parts, u.last_chunk) for u in first] == [(False, 1, False)]
    assert tracker.updates(_task([_art("one\n")]), {"a": False}) == []  # nothing new
    second = tracker.updates(_task([_art("one\n", "two\n", "three\n")]), {"a": True})
    (u,) = second
    assert u.append and u.last_chunk is True and u.total_parts == 3
    assert [p["text"] for p in u.parts] == ["two\n", "three\n"]
    assert u.size == len("one\ntwo\nthree\n") and u.tail == "three"


def test_a_read_older_than_the_stream_is_not_shown_again_and_a_change_replaces() -> None:
    tracker = ArtifactTracker()
    tracker.updates(_task([_art("one", "two")]))
    assert tracker.updates(_task([_art("one")])) == []  # an older read: fewer parts
    (u,) = tracker.updates(_task([_art("other")]))
    assert not u.append and u.total_parts == 1 and u.last_chunk is None
    (done,) = tracker.updates(_task([_art("other", "end")], "completed"))
    assert done.last_chunk is True  # a finished task's artifacts are whole


def test_sizes_of_parts() -> None:
    assert part_size({"text": "é"}) == 2
    assert part_size({"raw": "AAEC"}) == 3 and decoded_size("AAE=") == 2
    assert part_size({"file": {"bytes": "AA=="}}) == 1
    assert part_size({"data": {"a": 1}}) == len('{"a":1}')
    assert part_size({"url": "https://x/y"}) == 0 and decoded_size("!!") == 0
    assert ArtifactTracker().updates(_task([{"artifactId": 3, "parts": []}])) == []


def test_the_live_view_draws_a_line_per_artifact_that_grew() -> None:
    from mcptask.model.refs import TaskRef
    from mcptask.output.live import artifact_lines
    from mcptask.scheduler.watcher import Watched

    w = Watched(ref=TaskRef("t1"))
    for u in w.artifacts.updates(_task([_art("# R\n", "line two\x1b[31m\n")]), {"a": True}):
        w.artifact_news[u.artifact_id] = u
    (line,) = artifact_lines([w], 80)
    assert line.plain.startswith("↳ report.md: 2 parts, 18 B ✔ line two")
    assert "\x1b" not in line.plain
    assert artifact_lines([Watched(ref=TaskRef("t2"))], 80) == []


def test_an_artifact_s_text_chunks_read_as_written() -> None:
    from mcptask.protocols.a2a import artifact_text, result_payload

    chunks = [{"kind": "text", "text": t} for t in ("# R\n", "one\n", "two")]
    assert artifact_text(chunks) == "# R\none\ntwo"
    assert artifact_text([{"kind": "text", "text": "a"}, {"kind": "text", "text": "b"}]) == "a\nb"
    raw = {"artifacts": [{"artifactId": "r", "parts": [{"text": "x\n"}, {"text": "y\n"}]}]}
    assert result_payload(raw)["text"] == "x\ny\n"
