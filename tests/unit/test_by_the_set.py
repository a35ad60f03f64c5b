"""The batch paths of `list`, `watch --all` and prefix look-ups against the one-at-a-time paths
they stand in for: the task book's `record_set` leaves the same rows and events as
`record_many`, `refs_many` reads what `lookup_many` reads, and MCP 2025's quick normalize
makes the task the validated one makes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcptask.model import events as ev
from mcptask.model.events import EventKind
from mcptask.model.task import Task
from mcptask.protocols import mcp2025
from mcptask.state import taskbook
from mcptask.state.taskbook import VIA, TaskBook

URL = "http://127.0.0.1:8000/mcp"


def _dump(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every task row (times aside) and every event (its number and time aside)."""
    conn = sqlite3.connect(path)
    try:
        tasks = conn.execute(
            "SELECT id, status, message, fields, result, result_size FROM tasks ORDER BY id"
        ).fetchall()
        events = conn.execute(
            "SELECT task, kind, via, status, message, command, data FROM events ORDER BY n"
        ).fetchall()
    finally:
        conn.close()
    return tasks, events


ROUNDS: list[dict[str, dict[str, Any]]] = [
    # new tasks: created (and a question), one with a result, one with a result not kept
    {
        "t1": {"status": "working", "statusMessage": "a", "session": "s1", "pollInterval": 1000},
        "t2": {"status": "input_required", "inputRequests": {"q": {"method": "x"}}, VIA: "push"},
        "t3": {"status": "completed", "result": {"content": [{"type": "text", "text": "ok"}]}},
        "t4": {"status": "completed", "result": "x" * (taskbook.MAX_RESULT_BYTES + 10)},
        "t5": {"protocol": "mcp-2025-11-25"},  # no status: no event
    },
    # the same again (nothing changes but when), a message, a pace, a status, a new field
    {
        "t1": {"status": "working", "statusMessage": "a", "session": "s1", "pollInterval": 1000},
        "t2": {"status": "input_required", "inputRequests": {"q": {"method": "x"}}},
        "t3": {"status": "completed", "statusMessage": "done"},
        "t4": {"status": "completed", "result": {"small": True}},
        "t5": {"contextId": "c9", "ttl": None},
    },
    {
        "t1": {"status": "working", "statusMessage": "a", "pollInterval": 2000},
        "t2": {"status": "input_required", "inputRequests": {"q2": {"method": "y"}}},
        "t3": {"status": "failed", "statusMessage": "done", "lastUpdatedAt": "2026-01-01T00:00Z"},
        "t6": {"statusMessage": "no status"},
    },
]


def test_record_set_leaves_what_record_many_leaves(tmp_path: Path) -> None:
    one = TaskBook(tmp_path / "one" / "tasks.db")
    many = TaskBook(tmp_path / "many" / "tasks.db")
    extra = [ev.event("t1", EventKind.CANCEL, at=1.0, via="cli")]
    for updates in ROUNDS:
        one.record_many(URL, {k: dict(v) for k, v in updates.items()}, events=extra, command="c")
        many.record_set(URL, {k: dict(v) for k, v in updates.items()}, events=extra, command="c")
    one.close()
    many.close()
    assert _dump(tmp_path / "many" / "tasks.db") == _dump(tmp_path / "one" / "tasks.db")


def test_record_set_keeps_the_event_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ev, "MAX_EVENTS_PER_TASK", 5)
    book = TaskBook(tmp_path / "tasks.db")
    for k in range(12):
        book.record_set(URL, {"t1": {"status": "working", "statusMessage": f"step {k}"}})
    assert len(book.events(URL, "t1")) == 5
    assert book.events(URL, "t1")[0]["kind"] == EventKind.CREATED  # the first stays


def test_refs_many_reads_what_lookup_many_reads(tmp_path: Path) -> None:
    book = TaskBook(tmp_path / "tasks.db")
    book.record_many(
        URL,
        {
            "a": {"status": "working", "session": "s1", "protocolVersion": "2025-06-18"},
            "b": {"status": "completed", "contextId": "c1", "result": {"x": 1}},
            "c": {"session": 5},  # not text: a reference does not take it
        },
    )
    # another spelling of the same endpoint holds one more
    book.record_many("http://localhost:8000/mcp", {"d": {"status": "failed", "session": "s2"}})
    full = book.lookup_many(URL, ["a", "b", "c", "d", "zz"])
    some = book.refs_many(URL, ["a", "b", "c", "d", "zz"])
    every = book.refs_many(URL)
    assert set(some) == set(full) == set(every) == {"a", "b", "c", "d"}
    for tid, rec in full.items():
        want = {k: rec[k] for k in (*taskbook.REF_FIELDS, "status") if k in rec}
        assert some[tid] == every[tid] == want


def test_refs_many_reads_ids_past_one_batch(tmp_path: Path) -> None:
    book = TaskBook(tmp_path / "tasks.db")
    ids = [f"t{k:05d}" for k in range(taskbook.BATCH * 2 + 7)]
    book.record_set(URL, {t: {"status": "working", "session": "s"} for t in ids})
    got = book.refs_many(URL, [*ids, "missing"])
    assert len(got) == len(ids)
    assert all(r == {"status": "working", "session": "s"} for r in got.values())


_text = st.one_of(st.none(), st.text(max_size=8), st.integers(), st.booleans(), st.floats())
_wire = st.fixed_dictionaries(
    {"taskId": st.one_of(st.text(max_size=8), st.integers())},
    optional={
        "status": st.one_of(st.sampled_from(["working", "Completed", "canceled", "odd"]), _text),
        "statusMessage": _text,
        "createdAt": st.one_of(_text, st.just("2026-01-01T01:00:00+01:00")),
        "lastUpdatedAt": st.one_of(_text, st.just("2026-01-01T00:00:00Z")),
        "ttl": _text,
        "pollInterval": _text,
        "extra": _text,
    },
)


def _validated(data: Any) -> Any:
    try:
        return Task.model_validate(mcp2025.normalize(data, protocol="p", server="s").model_dump())
    except Exception as exc:  # the quick path must fail the same way
        return type(exc).__name__


@settings(max_examples=300, deadline=None)
@given(_wire)
def test_quick_normalize_makes_the_validated_task(data: dict[str, Any]) -> None:
    quick = _validated(data)
    slow_path = mcp2025._plain
    try:
        mcp2025._plain = lambda _data: False  # type: ignore[assignment]
        slow = _validated(data)
    finally:
        mcp2025._plain = slow_path
    assert quick == slow
    if not isinstance(quick, str):
        task = mcp2025.normalize(data, protocol="p", server="s")
        assert task.to_json() == Task.model_validate(task.model_dump()).to_json()
    if not isinstance(quick, str):
        # `list -o ndjson` prints the view: the same document, key for key, in order
        for made in (task, Task.model_validate(task.model_dump())):
            view, doc = made.json_view(), made.to_json()
            assert list(view.items()) == list(doc.items())


@settings(max_examples=300, deadline=None)
@given(st.text(), st.binary(max_size=40))
def test_the_quick_surrogate_checks_agree_with_the_regex(text: str, raw: bytes) -> None:
    """`text_safe` and `parsed_safe` test by substring and UTF-8 encoding (C speed) what
    the regexes find: a lone surrogate in text, one that an escape or raw bytes may make."""
    from mcptask.text import jsonsafe

    lone = text + "\ud800" if len(text) % 2 else text
    assert jsonsafe.text_safe(lone) == jsonsafe._SURROGATE.sub("\ufffd", lone)
    texts: list[str | bytes] = [raw, raw + b"\xed\xa0\x80", b'"\\uD800' + raw]
    texts += [raw.decode("latin-1"), lone, "\\ud801" + text]
    for data in texts:
        if isinstance(data, str):
            regex = jsonsafe._MAYBE_SURROGATE.search(data) is not None
        else:
            regex = jsonsafe._MAYBE_SURROGATE_BYTES.search(data) is not None
        walked: list[Any] = []
        original = jsonsafe.unicode_safe
        try:
            jsonsafe.unicode_safe = walked.append  # type: ignore[assignment]
            jsonsafe.parsed_safe(data, "value")
        finally:
            jsonsafe.unicode_safe = original
        assert bool(walked) == regex
