"""Completion of option values: the task book keeps each endpoint's tool names for `call`."""

from __future__ import annotations

from pathlib import Path

from mcptask.taskbook import MAX_TOOLS_KEPT, TaskBook


def test_the_task_book_keeps_an_endpoints_tools(tmp_path: Path) -> None:
    book = TaskBook(tmp_path / "tasks.json")
    assert book.tools("http://127.0.0.1:1/mcp") == []
    book.remember_tools("http://127.0.0.1:1/mcp/", [("echo", "forbidden"), ("slow", "optional")])
    assert book.tools("http://127.0.0.1:1/mcp") == [("echo", "forbidden"), ("slow", "optional")]
    book.remember_tools("http://127.0.0.1:1/mcp", [(f"t{i}", "") for i in range(600)])
    assert len(book.tools("http://127.0.0.1:1/mcp")) == MAX_TOOLS_KEPT
