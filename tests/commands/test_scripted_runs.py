"""Run functions driven in-process against a scripted protocol (no server, a virtual clock):
the common paths of get, watch, result, cancel, answer and call, with their output, exit
statuses and what the task book keeps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted import Run, Scripted, tool

from mcptask.commands._follow import FollowUp
from mcptask.commands.answer import AnswerOptions, run_answer
from mcptask.commands.call import CallOptions, PlainAnswers, run_call
from mcptask.commands.cancel import CancelOptions, run_cancel
from mcptask.commands.get import GetOptions, run_get
from mcptask.commands.result import ResultOptions, run_result
from mcptask.commands.watch import WatchOptions, run_watch
from mcptask.errors import ExitCode, NotApplicable, TaskEnded, TaskNotFound, UsageError
from mcptask.model.inputs import InputRequest
from mcptask.model.refs import TaskRef
from mcptask.model.task import Task
from mcptask.protocols.base import CallHooks, Progress

# -- get --------------------------------------------------------------------------------------


def test_get_prints_the_task_and_keeps_it(tmp_path: Path) -> None:
    proto = Scripted()
    proto.script("t1", "working")
    run = Run(proto, tmp_path)
    assert run.go(lambda ctx: run_get(GetOptions("t1"), ctx)) == ExitCode.OK
    out = run.json()
    assert (out["taskId"], out["status"]) == ("t1", "working")
    assert run.book.lookup(run.ctx.server, "t1")["status"] == "working"


def test_get_of_a_task_the_book_knew_says_it_expired(tmp_path: Path) -> None:
    proto = Scripted()
    proto.script("t1", "completed")
    Run(proto, tmp_path).go(lambda ctx: run_get(GetOptions("t1"), ctx))
    proto.scripts.clear()  # the server forgot it
    run = Run(proto, tmp_path)
    with pytest.raises(TaskNotFound, match=r"t1 has expired \(last seen completed\)"):
        run.go(lambda ctx: run_get(GetOptions("t1"), ctx))


def test_a_gone_session_and_a_forgotten_task_are_told_apart_by_type(tmp_path: Path) -> None:
    """Issue 36: `get` of a task the book knew says "session" only for a `SessionGone`, and
    keeps the server's own words apart (no regex rewriting them)."""
    from mcptask.errors import SessionGone

    proto = Scripted()
    proto.script("t1", "working")
    Run(proto, tmp_path).go(lambda ctx: run_get(GetOptions("t1"), ctx))
    proto.scripts.clear()

    async def session_gone(ref: TaskRef) -> Task:
        raise SessionGone("whatever the words", reason="HTTP 404")

    proto.get = session_gone  # type: ignore[method-assign]
    run = Run(proto, tmp_path)
    with pytest.raises(TaskNotFound) as caught:
        run.go(lambda ctx: run_get(GetOptions("t1"), ctx))
    assert str(caught.value) == (
        "task t1 has expired (last seen working): the session that created it no longer "
        "exists on the server (HTTP 404); its tasks cannot be reached"
    )

    async def forgotten(ref: TaskRef) -> Task:
        raise TaskNotFound("task t1: Task t1 not found in session", reason="Task t1 not found")

    proto.get = forgotten  # type: ignore[method-assign]
    run = Run(proto, tmp_path)
    with pytest.raises(TaskNotFound) as caught:
        run.go(lambda ctx: run_get(GetOptions("t1"), ctx))
    assert "session" not in str(caught.value)
    assert "the server no longer knows it (the server said: Task t1 not found)" in str(caught.value)


# -- watch ------------------------------------------------------------------------------------


def test_watch_follows_each_task_to_its_end(tmp_path: Path) -> None:
    proto = Scripted()
    proto.script("a", "working", "working", "completed")
    proto.script("b", "working", "failed")
    run = Run(proto, tmp_path, mode="ndjson")
    code = run.go(lambda ctx: run_watch(WatchOptions(["a", "b"]), ctx))
    assert code == ExitCode.FAILED  # the highest of the tasks' statuses
    lines = run.lines()
    ends = {x["taskId"]: x["outcome"] for x in lines if x["event"] == "end"}
    assert ends == {"a": "completed", "b": "failed"}
    statuses = [x["status"] for x in lines if x["event"] == "status" and x["taskId"] == "a"]
    assert statuses == ["working", "completed"]  # a status is printed when it changes
    assert lines[-1]["event"] == "done" and lines[-1]["exitCode"] == ExitCode.FAILED
    assert run.book.lookup(run.ctx.server, "a")["status"] == "completed"


def test_watch_until_ends_at_the_status_asked_for(tmp_path: Path) -> None:
    proto = Scripted()
    proto.script("a", "working", "input_required")
    run = Run(proto, tmp_path, mode="json")
    opts = WatchOptions(["a"], until="input_required")
    assert run.go(lambda ctx: run_watch(opts, ctx)) == ExitCode.OK
    assert run.json()["tasks"][0]["outcome"] == "input_required"


def test_watch_times_out_on_the_virtual_clock(tmp_path: Path) -> None:
    proto = Scripted()
    proto.script("a", "working")
    run = Run(proto, tmp_path, mode="ndjson")
    code = run.go(lambda ctx: run_watch(WatchOptions(["a"], timeout=30), ctx))
    assert code == ExitCode.TIMEOUT
    assert [x["outcome"] for x in run.lines() if x["event"] == "end"] == ["timeout"]
    assert 30 <= run.now < 32  # no real time went by: the clock is the test's


def test_watch_without_ids_is_a_usage_error(tmp_path: Path) -> None:
    run = Run(Scripted(), tmp_path)
    with pytest.raises(UsageError, match="watch needs task ids"):
        run.go(lambda ctx: run_watch(WatchOptions([]), ctx))


# -- result -----------------------------------------------------------------------------------


def test_result_waits_for_the_task_and_prints_its_payload(tmp_path: Path) -> None:
    proto = Scripted()
    proto.script("t", "working", "working", "completed", result={"content": [{"text": "hi"}]})
    run = Run(proto, tmp_path)
    assert run.go(lambda ctx: run_result(ResultOptions("t"), ctx)) == ExitCode.OK
    assert run.json() == {"content": [{"text": "hi"}]}
    assert [c for c in proto.calls if c[0] == "get"] == [("get", "t")] * 3
    # kept in the book: `result` answers from it once the server forgot the task
    proto.scripts.clear()
    again = Run(proto, tmp_path)
    assert again.go(lambda ctx: run_result(ResultOptions("t"), ctx)) == ExitCode.OK
    assert again.json() == {"content": [{"text": "hi"}]}
    assert "showing the result kept" in again.stderr.getvalue()


def test_result_of_a_failed_task_exits_5(tmp_path: Path) -> None:
    proto = Scripted()
    proto.script("t", "failed", result={"isError": True, "content": []})
    run = Run(proto, tmp_path)
    assert run.go(lambda ctx: run_result(ResultOptions("t"), ctx)) == ExitCode.FAILED


def test_result_no_wait_on_a_running_task_does_not_apply(tmp_path: Path) -> None:
    proto = Scripted()
    proto.script("t", "working")
    run = Run(proto, tmp_path)
    with pytest.raises(NotApplicable, match="still working"):
        run.go(lambda ctx: run_result(ResultOptions("t", wait=False), ctx))


def test_result_of_a_task_waiting_for_input_says_how_to_answer(tmp_path: Path) -> None:
    proto = Scripted()
    proto.script("t", "working", "input_required")
    run = Run(proto, tmp_path)
    with pytest.raises(TaskEnded, match="mcptask answer t") as caught:
        run.go(lambda ctx: run_result(ResultOptions("t"), ctx))
    assert caught.value.exit_code == ExitCode.INPUT


# -- cancel -----------------------------------------------------------------------------------


def test_cancel_prints_the_cancelled_task(tmp_path: Path) -> None:
    proto = Scripted()
    proto.script("t", "working")
    run = Run(proto, tmp_path)
    assert run.go(lambda ctx: run_cancel(CancelOptions("t"), ctx)) == ExitCode.OK
    assert run.json()["status"] == "cancelled"
    assert run.book.lookup(run.ctx.server, "t")["status"] == "cancelled"


def test_cancel_of_a_finished_task_does_not_apply(tmp_path: Path) -> None:
    proto = Scripted()
    proto.script("t", "completed")
    with pytest.raises(NotApplicable):
        Run(proto, tmp_path).go(lambda ctx: run_cancel(CancelOptions("t"), ctx))


# -- answer -----------------------------------------------------------------------------------

FORM = {"type": "object", "properties": {"size": {"type": "string"}}, "required": ["size"]}


def asking(proto: Scripted, task_id: str = "t") -> None:
    proto.script(task_id, "input_required")
    proto.asks = [
        InputRequest(
            task_id, "elicitation/create", {"message": "Size?", "requestedSchema": FORM}, key="q1"
        )
    ]


def test_answer_sends_the_json_and_confirms_the_task_moved_on(tmp_path: Path) -> None:
    proto = Scripted()
    asking(proto)
    run = Run(proto, tmp_path)
    opts = AnswerOptions("t", json='{"size": "m"}')
    assert run.go(lambda ctx: run_answer(opts, ctx)) == ExitCode.OK
    assert proto.answers == [{"action": "accept", "content": {"size": "m"}}]
    assert run.json()["status"] == "working"
    assert "took the answer (accept)" in run.stderr.getvalue()
    assert run.book.lookup(run.ctx.server, "t")["answered"] == ["q1"]


def test_answer_that_does_not_fit_the_form_is_a_usage_error(tmp_path: Path) -> None:
    proto = Scripted()
    asking(proto)
    run = Run(proto, tmp_path)
    with pytest.raises(UsageError, match="--json"):
        run.go(lambda ctx: run_answer(AnswerOptions("t", json='{"size": 3}'), ctx))
    assert proto.answers == []


def test_answer_without_an_answer_off_a_terminal_says_what_is_asked(tmp_path: Path) -> None:
    proto = Scripted()
    asking(proto)
    with pytest.raises(UsageError, match=r"task t asks: Size\?"):
        Run(proto, tmp_path).go(lambda ctx: run_answer(AnswerOptions("t"), ctx))


def test_answer_to_a_task_that_does_not_wait_does_not_apply(tmp_path: Path) -> None:
    proto = Scripted()
    proto.script("t", "working")
    with pytest.raises(NotApplicable, match="not waiting for input"):
        Run(proto, tmp_path).go(lambda ctx: run_answer(AnswerOptions("t", decline=True), ctx))


# -- call -------------------------------------------------------------------------------------


def test_call_as_a_task_prints_the_task(tmp_path: Path) -> None:
    proto = Scripted()
    proto.tools = [tool("slow", "required")]
    run = Run(proto, tmp_path)
    assert run.go(lambda ctx: run_call(CallOptions("slow", ["n:=3"]), ctx)) == ExitCode.OK
    task = run.json()
    assert task["status"] == "working"
    assert proto.results[task["taskId"]]["args"] == {"n": 3}
    assert run.book.lookup(run.ctx.server, task["taskId"]) is not None


def test_call_watch_result_follows_the_task_and_prints_its_result(tmp_path: Path) -> None:
    proto = Scripted()
    proto.tools = [tool("slow", "required")]
    run = Run(proto, tmp_path, mode="ndjson")
    opts = CallOptions("slow", then=FollowUp(watch=True, want_result=True))
    assert run.go(lambda ctx: run_call(opts, ctx)) == ExitCode.OK
    end = next(x for x in run.lines() if x["event"] == "end")
    assert end["outcome"] == "completed" and end["result"]["args"] == {}


def test_a_plain_call_shows_progress_and_answers_a_question(tmp_path: Path) -> None:
    proto = Scripted()
    proto.tools = [tool("ask", "forbidden")]
    asked: list[dict[str, Any]] = []

    async def plain(hooks: CallHooks) -> dict[str, Any]:
        assert hooks.on_progress is not None and hooks.responder is not None
        hooks.on_progress(Progress(1, 2, "half way"))
        answer = await hooks.responder(
            InputRequest("", "elicitation/create", {"message": "Size?", "requestedSchema": FORM})
        )
        asked.append(answer or {})
        return {"content": [{"type": "text", "text": "done"}], "isError": False}

    proto.plain = plain
    run = Run(proto, tmp_path, mode="ndjson")
    opts = CallOptions("ask", answers=PlainAnswers(json='{"size": "s"}'))
    assert run.go(lambda ctx: run_call(opts, ctx)) == ExitCode.OK
    assert asked == [{"action": "accept", "content": {"size": "s"}}]
    events = [x.get("event") for x in run.lines()]
    assert "progress" in events
    assert json.dumps(run.lines()[-1]).count("done") == 1


def test_a_plain_call_that_fails_exits_5(tmp_path: Path) -> None:
    proto = Scripted()
    proto.tools = [tool("boom", "forbidden")]

    async def plain(hooks: CallHooks) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "no"}], "isError": True}

    proto.plain = plain
    run = Run(proto, tmp_path)
    assert run.go(lambda ctx: run_call(CallOptions("boom"), ctx)) == ExitCode.FAILED


def test_call_of_an_unknown_tool_names_the_tools(tmp_path: Path) -> None:
    proto = Scripted()
    proto.tools = [tool("echo"), tool("slow")]
    with pytest.raises(UsageError, match="its tools: echo, slow"):
        Run(proto, tmp_path).go(lambda ctx: run_call(CallOptions("nope"), ctx))
