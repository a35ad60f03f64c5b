"""`mcptask check`: walk the target's task support and judge each observation against the spec
(the suites are in `mcptask.check`; this runs the one the registry names for the protocol)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcptask.check.engine import Report, make_suite, run_suite, select, validate_selection
from mcptask.check.report import print_pretty, write_junit
from mcptask.check.suite import Recorder, SuiteOptions
from mcptask.errors import UsageError

if TYPE_CHECKING:
    from mcptask.session.context import Context


@dataclass
class CheckOptions:
    tool: str | None = None
    pairs: list[str] = field(default_factory=list)
    failing_tool: str | None = None
    failing_args: str | None = None
    checks: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    rpc: bool = False
    junit: str | None = None
    task_timeout: float = 60.0


def _family(name: str) -> str:
    from mcptask.protocols import registry

    row = registry.info(name)
    return row.family if row else "?"


def _failing_args(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    import json

    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--failing-args is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError("--failing-args must be a JSON object")
    return value


async def run_check(opts: CheckOptions, ctx: Context) -> int:
    from mcptask.transports.rpc import RpcClient

    validate_selection(opts.checks, opts.categories)
    if opts.pairs and not opts.tool:
        raise UsageError("k=v arguments are the task tool's: give --tool NAME before them")
    if opts.task_timeout <= 0:
        raise UsageError("--task-timeout must be positive")
    if opts.junit and not Path(opts.junit).expanduser().parent.is_dir():
        raise UsageError(f"--junit {opts.junit}: no such directory")
    suite_opts = SuiteOptions(
        tool=opts.tool,
        pairs=opts.pairs,
        failing_tool=opts.failing_tool,
        failing_args=_failing_args(opts.failing_args),
        task_timeout=opts.task_timeout,
    )
    started = time.monotonic()
    proto = await ctx.endpoint.protocol()
    # the suites set every header themselves (some checks leave one out on purpose): their
    # client has none of the protocol's (those go with the protocol's own client)
    recorder = Recorder(ctx.endpoint.rpc().transport)
    suite = make_suite(proto.name, RpcClient(recorder), recorder, suite_opts, proto)
    if _family(proto.name) == "a2a":
        for flag, value in (("--tool", opts.tool), ("--failing-tool", opts.failing_tool)):
            if value:
                ctx.out.note(f"{flag} means nothing to A2A agents; ignored")
    defs = [d for d, _ in suite.plan()]
    chosen = select(defs, opts.checks, opts.categories)
    if not chosen:
        raise UsageError(
            f"no {proto.name} check matches the selection; its checks: "
            + ", ".join(d.id for d in defs)
        )
    results = await run_suite(suite, chosen)
    report = Report(proto.name, ctx.server, results, suite.facts, time.monotonic() - started)
    for note in suite.notes:
        ctx.out.note(note)
    if ctx.out.pretty:
        print_pretty(report, ctx, with_rpc=opts.rpc)
    else:
        ctx.out.line(report.to_json(with_rpc=opts.rpc))
    if opts.junit:
        write_junit(report, opts.junit)
    return report.exit_code
