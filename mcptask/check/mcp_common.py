"""What the two MCP suites (2025-11-25 and 2026-07-28) share: the task statuses, the track of one
task, choosing the task tool and the failing tool, and the checks both judge alike."""

from __future__ import annotations

import asyncio
import itertools
import uuid
from dataclasses import dataclass, field
from typing import Any

from mcptask.check.suite import (
    FAIL,
    PASS,
    WARN,
    BadAnswer,
    Clock,
    Outcome,
    TaskSuite,
    build_arguments,
    could_not_run,
    looks_failing,
    not_applicable,
    poll_interval,
    short,
    squash,
    timestamp,
)
from mcptask.errors import UsageError
from mcptask.protocols import wire
from mcptask.protocols.wire import MCP_STATUSES, MCP_TERMINAL

STATUSES = MCP_STATUSES
TERMINAL = MCP_TERMINAL

Tool = dict[str, Any]


@dataclass
class Track:
    """One task as this run saw it: the creation answer and every task object since."""

    task_id: str
    tool: str
    created: dict[str, Any]
    seen: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last(self) -> dict[str, Any]:
        return self.seen[-1]

    @property
    def status(self) -> str:
        return str(self.last.get("status"))

    @property
    def state(self) -> str:
        return self.status

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


class McpSuite(TaskSuite[Track]):
    """The MCP suites' common ground; each version says how a request is sent (`request`,
    `routing`), what a tool's taskSupport is taken to be (`support`) and how a task is made
    (`create`)."""

    #: what `--tool NAME` gets when the tool forbids tasks
    FORBIDDEN_TOOL = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tools = self.lazy("tools/list", self._tools)
        self.probe = self.lazy("choosing the task tool", self._probe)
        self.failing = self.lazy("the failing task", self._failing)
        self.no_such = f"mcptask-check-no-such-task-{uuid.uuid4().hex}"

    # -- what each version says -----------------------------------------------------------------

    def routing(self, task_id: str) -> dict[str, Any]:
        """Extra `request` arguments for a request about one task."""
        return {}

    def support(self, tool: Tool) -> str | None:
        raise NotImplementedError

    async def ready(self) -> None:
        """What must hold before tools are chosen (a skip when it does not)."""

    async def create(self, tool: str, arguments: dict[str, Any], *, guessed: bool = False) -> Track:
        raise NotImplementedError

    def auto_tool(self, tools: list[Tool]) -> tuple[Tool, dict[str, Any]]:
        """The task tool when `--tool` is not given."""
        raise NotImplementedError

    # -- plumbing -------------------------------------------------------------------------------

    async def get_task(self, track: Track) -> dict[str, Any]:
        data = await self.request(
            "tasks/get", {"taskId": track.task_id}, **self.routing(track.task_id)
        )
        if not isinstance(data, dict) or not isinstance(data.get("status"), str):
            raise BadAnswer(f"tasks/get answered something that is not a task: {short(data)}")
        track.seen.append(data)
        return data

    def poll_after(self, track: Track) -> float:
        return poll_interval(track.last)

    # -- fixtures -------------------------------------------------------------------------------

    async def _tools(self) -> list[Tool]:
        out: list[Tool] = []
        cursor: str | None = None
        for _ in range(100):
            data = await self.request("tools/list", {"cursor": cursor} if cursor else {})
            if not isinstance(data, dict) or not isinstance(data.get("tools"), list):
                raise BadAnswer("tools/list answered no `tools` list")
            out.extend(t for t in data["tools"] if isinstance(t, dict))
            nxt = data.get("nextCursor")
            if not isinstance(nxt, str) or not nxt or nxt == cursor:
                break
            cursor = nxt
        return out

    async def _probe(self) -> tuple[Tool, dict[str, Any]]:
        await self.ready()
        tools = await self.tools.get()
        if self.opts.tool:
            return self.named_tool(tools)
        return self.auto_tool(tools)

    def named_tool(self, tools: list[Tool]) -> tuple[Tool, dict[str, Any]]:
        for tool in tools:
            if tool.get("name") == self.opts.tool:
                break
        else:
            names = ", ".join(str(t.get("name")) for t in tools) or "none"
            raise UsageError(
                f"--tool: the server has no tool {self.opts.tool!r}; its tools: {names}"
            )
        if self.support(tool) == "forbidden":
            raise could_not_run(self.FORBIDDEN_TOOL.format(tool=self.opts.tool))
        args = build_arguments(tool.get("inputSchema"), self.opts.pairs)
        if args is None:
            raise UsageError(f"--tool {self.opts.tool}: give its required arguments as k=v")
        self.facts["tool"] = {"name": tool["name"], "arguments": args, "chosen": "--tool"}
        return tool, args

    def first_task_tool(self, tools: list[Tool]) -> tuple[Tool, dict[str, Any]] | None:
        """The first tool that allows tasks and whose arguments can be filled in."""
        for tool in tools:
            if self.support(tool) in ("optional", "required"):
                args = build_arguments(tool.get("inputSchema"), [])
                if args is not None:
                    self.facts["tool"] = {"name": tool["name"], "arguments": args, "chosen": "auto"}
                    return tool, args
        return None

    async def _make_main(self) -> Track:
        tool, args = await self.probe.get()
        return await self.create(str(tool["name"]), args)

    async def _failing(self) -> Track:
        await self.ready()
        tools = await self.tools.get()
        if self.opts.failing_tool:
            chosen = [t for t in tools if t.get("name") == self.opts.failing_tool]
            if not chosen:
                raise UsageError(
                    f"--failing-tool: the server has no tool {self.opts.failing_tool!r}"
                )
            tool, guessed = chosen[0], False
        else:
            candidates = [
                t
                for t in tools
                if isinstance(t.get("name"), str)
                and looks_failing(t["name"])
                and self.support(t) != "forbidden"
                and build_arguments(t.get("inputSchema"), [], self.opts.failing_args) is not None
            ]
            if not candidates:
                raise not_applicable("not applicable: no tool known to fail (--failing-tool NAME)")
            tool, guessed = candidates[0], True
            self.note(
                f"failing tool: {tool['name']} (picked by its name; choose another with "
                "--failing-tool NAME)"
            )
        args = build_arguments(tool.get("inputSchema"), [], self.opts.failing_args)
        if args is None:
            raise UsageError(
                f"--failing-tool {tool['name']}: give its arguments with --failing-args"
            )
        self.facts["failingTool"] = {
            "name": tool["name"],
            "arguments": args,
            "chosen": "its name" if guessed else "--failing-tool",
        }
        track = await self.create(str(tool["name"]), args, guessed=guessed)
        await self.wait_terminal(track)
        return track

    # -- checks both versions judge alike -------------------------------------------------------

    async def c_message(self) -> Outcome:
        track = await self.main.get()
        messages: list[str] = []
        # sample for at least two of the server's poll intervals (a message may change only
        # as often as the server asks to be polled)
        clock = Clock()
        while True:
            messages = [
                str(t["statusMessage"])
                for t in track.seen
                if t.get("status") == "working"
                and isinstance(t.get("statusMessage"), str)
                and t["statusMessage"].strip()
            ]
            pace = poll_interval(track.last)
            if messages or track.terminal or clock.elapsed() >= 2 * pace:
                break
            await asyncio.sleep(pace)
            await self.get_task(track)
        working = [t for t in track.seen if t.get("status") == "working"]
        if messages:
            return PASS, f"statusMessage while working: {short(messages[-1], 80)!r}"
        if not working:
            raise could_not_run("the task was never seen working")
        return WARN, (
            f"no statusMessage in {len(working)} answers while working (optional, but "
            "it is what a user sees)"
        )

    async def c_lifecycle(self) -> Outcome:
        track = await self.main_done.get()
        await asyncio.sleep(poll_interval(track.last) / 2)
        await self.get_task(track)
        return judge_lifecycle([str(t.get("status")) for t in track.seen])

    async def c_timestamps(self) -> Outcome:
        track = await self.main.get()
        return judge_timestamps(track.seen)


def result_text(result: Any) -> str:
    """A CallToolResult's text, on one line (the wire vocabulary's reading of it)."""
    return " ".join(wire.result_text(result)[0].split())


def judge_lifecycle(statuses: list[str]) -> Outcome:
    """Statuses as observed in order: all known, first `working`, nothing after a terminal
    status but the same status."""
    unknown = sorted({s for s in statuses if s not in STATUSES})
    if unknown:
        return FAIL, f"status words that are not MCP statuses: {', '.join(unknown)}"
    if not statuses:
        raise could_not_run("no status was observed")
    path = squash(statuses)
    if path[0] != "working":
        return FAIL, f"the task began {path[0]}; it MUST begin working ({' → '.join(path)})"
    for before, after in itertools.pairwise(path):
        if before in TERMINAL:
            return FAIL, f"left the terminal status {before} for {after} ({' → '.join(path)})"
    if path[-1] not in TERMINAL:
        raise could_not_run(f"the task never ended ({' → '.join(path)})")
    return PASS, f"{' → '.join(path)} over {len(statuses)} answers; stays {path[-1]}"


def judge_timestamps(tasks: list[dict[str, Any]]) -> Outcome:
    problems: list[str] = []
    notes: list[str] = []
    created_values = set()
    for task in tasks:
        created, why_c = timestamp(task.get("createdAt"))
        updated, why_u = timestamp(task.get("lastUpdatedAt"))
        for name, value, why in (("createdAt", created, why_c), ("lastUpdatedAt", updated, why_u)):
            if why == "no UTC offset":
                notes.append(f"{name} has no UTC offset")
            elif why is not None:
                problems.append(f"{name} {why}")
            del value
        if task.get("createdAt") is not None:
            created_values.add(str(task.get("createdAt")))
        if created and updated and created.tzinfo and updated.tzinfo and updated < created:
            problems.append(f"lastUpdatedAt {task['lastUpdatedAt']} is before createdAt")
    if len(created_values) > 1:
        problems.append(f"createdAt changed between answers: {', '.join(sorted(created_values))}")
    if problems:
        return FAIL, "; ".join(dict.fromkeys(problems))
    first = tasks[0]
    text = (
        f"{len(tasks)} answers, e.g. createdAt {first.get('createdAt')}, lastUpdatedAt "
        f"{tasks[-1].get('lastUpdatedAt')}"
    )
    if notes:
        return WARN, f"{text}; {'; '.join(dict.fromkeys(notes))} (RFC 3339 wants one)"
    return PASS, text
