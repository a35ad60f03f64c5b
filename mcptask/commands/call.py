"""`mcptask call TOOL [k=v ...]`: run an MCP tool. As a task where the tool and the server
allow it (then print, watch or wait for the task), otherwise as a plain `tools/call` whose
progress, logs and questions are shown while it runs. `--task` / `--no-task` force either."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcptask.commands._follow import FollowUp, after_create
from mcptask.errors import AnswerLost, UsageError

if TYPE_CHECKING:
    from mcptask.commands._answering import Responder
    from mcptask.model.tools import Tool
    from mcptask.output.call_view import CallEvents
    from mcptask.protocols.base import TaskProtocol
    from mcptask.protocols.trace_context import TaskTrace
    from mcptask.session.context import Context


@dataclass
class PlainAnswers:
    """How questions (elicitation) during a plain call are answered off a terminal."""

    json: str | None = None
    decline: bool = False
    cancel: bool = False
    #: accept, each field left out filled with the schema's `default` (SEP-1034)
    defaults: bool = False


@dataclass
class CallOptions:
    tool: str
    pairs: list[str] = field(default_factory=list)
    args_json: str | None = None
    ttl: int | None = None
    then: FollowUp = field(default_factory=FollowUp)
    #: `--task` (True), `--no-task` (False), or as the tool and server allow (None)
    task: bool | None = None
    answers: PlainAnswers = field(default_factory=PlainAnswers)
    #: `--traceparent`: the trace the task joins (over `TRACEPARENT`; else a new one)
    traceparent: str | None = None


async def run_call(opts: CallOptions, ctx: Context) -> int:
    from mcptask.protocols import tool_args as arguments

    content = _answer_content(opts.answers)
    ctx.name_trace(opts.traceparent)  # a malformed one is a usage error before any request
    # Ctrl-C before the call goes out (connecting, looking the tool up) says so: the server
    # never started it (once it is out, `_plain` and `_create` say what became of it)
    ctx.out.interrupted = "interrupted before the call was sent: the server did not start it"
    from mcptask.commands.export import check_live

    check_live(opts.then.otlp, opts.then.watch)
    proto = await ctx.endpoint.protocol()
    if not proto.has_tools:
        created = await proto.call_tool(opts.tool, {}, ttl=opts.ttl)  # says what to use instead
        return await after_create(ctx, created, opts.then)
    tool = await proto.tool(opts.tool)
    args = arguments.build(opts.pairs, opts.args_json, tool.inputSchema)
    arguments.check(opts.tool, args, tool.inputSchema, ctx.out.note)
    if _as_task(opts, proto, tool):
        ctx.out.interrupted = None  # a task may have been made: the usual words
        trace = ctx.places.new_trace()
        created = await _create(opts, ctx, proto, args, trace)
        return await after_create(ctx, created, opts.then, fields={"tool": opts.tool}, trace=trace)
    if opts.ttl is not None:
        ctx.out.note(f"--ttl: tool {opts.tool!r} runs as a plain call, not a task; ignored")
    return await _plain(opts, ctx, proto, args, content)


async def _create(
    opts: CallOptions, ctx: Context, proto: TaskProtocol, args: dict[str, Any], trace: TaskTrace
) -> Any:
    """The task-making `tools/call`, carrying the task's `trace`. When its answer is lost,
    the task may exist: its session is kept in the task book, where `list` looks, and the
    error says so."""
    try:
        return await proto.call_tool(opts.tool, args, ttl=opts.ttl, trace=trace)
    except AnswerLost as exc:
        if exc.session and ctx.places.remembers:
            ctx.places.remember_session(exc.session)
            exc.hint = (
                f"it would be on session {exc.session}, which the task book keeps: "
                f"`mcptask list --url {ctx.server}` looks for it there"
            )
        raise


def _as_task(opts: CallOptions, proto: TaskProtocol, tool: Tool) -> bool:
    if opts.task is True:
        return True  # the protocol says clearly when the tool or the server cannot
    if opts.task is False:
        if tool.taskSupport == "required":
            raise UsageError(
                f"tool {tool.name!r} runs only as a task (taskSupport: required); "
                "leave out --no-task"
            )
        return False
    # `required`: a task or nothing (a server without tasks says so); `optional`: where the
    # server does tasks at all
    return tool.taskSupport == "required" or (tool.runs_as_task and proto.makes_tasks)


def _answer_content(answers: PlainAnswers) -> Any:
    """The `--json` answer, checked before anything is sent; conflicting answers refused."""
    from mcptask.commands._answering import json_answer, one_answer

    one_answer(
        [
            ("--json", answers.json is not None),
            ("--decline", answers.decline),
            ("--cancel", answers.cancel),
            ("--defaults", answers.defaults and (answers.decline or answers.cancel)),
        ]
    )
    return json_answer(answers.json)


def _responder(ctx: Context, answers: PlainAnswers, content: Any, events: CallEvents) -> Responder:
    """A form on a terminal; else the answer given; else `decline`, said on stderr."""
    from mcptask.commands._answering import Responder

    given = answers.json is not None or answers.decline or answers.cancel or answers.defaults
    if not given and ctx.env.interactive:
        console = ctx.out.console if ctx.out.pretty else ctx.out.err_console()
        return Responder(ctx, console=console, interrupt_dismisses=False, around=events.paused)
    action = "decline" if answers.decline else "cancel" if answers.cancel else None
    explain = None
    if not given:
        action = "decline"
        explain = "declined (answer with --json CONTENT, --defaults or --cancel, or on a terminal)"
    return Responder(
        ctx,
        content=content if content is not None else {},
        action=action,
        explain=explain,
        option="--json" if answers.json is not None else "--defaults",
    )


async def _plain(
    opts: CallOptions, ctx: Context, proto: TaskProtocol, args: dict[str, Any], content: Any
) -> int:
    import asyncio

    from mcptask.errors import RpcError
    from mcptask.output.call_view import call_events, outcome_of
    from mcptask.protocols.base import CallHooks

    events = call_events(ctx.out, opts.tool)
    hooks = CallHooks(
        on_progress=events.progress,
        on_log=events.log,
        responder=_responder(ctx, opts.answers, content, events),
        on_note=ctx.out.note,
        trace=ctx.places.new_trace(),
    )
    ctx.out.interrupted = None  # from here the call may be out: said below, when it is
    with events:
        try:
            result = await proto.call_plain(opts.tool, args, hooks)
        except asyncio.CancelledError:
            events.end("interrupted")  # Ctrl-C: `notifications/cancelled` went out
            ctx.out.interrupted = (
                "interrupted: the server was told to cancel the call (notifications/cancelled)"
                if hooks.cancel_sent
                else "interrupted: the server could not be told to cancel the call; it may "
                "still run it"
            )
            raise
        except RpcError as exc:
            if ctx.out.mode == "ndjson":
                events.end("error", error=exc.to_json())
            raise
    return events.end(outcome_of(result), result)
