"""`mcptask check`: walk a target's task support and judge each observation against the spec.

Each check has a stable id (`mcp2025.result.waits`), a category, the requirement in a few words
with the spec section that states it, a verdict (PASS, WARN, FAIL, INFO for facts reported without
judgement, SKIP with a reason) and what was observed. The suites live in `mcp2025`, `mcp2026` and
`a2a`; this module selects checks, runs them, and reports (JSON, a Rich table, JUnit XML).

Outcome: `failed` (exit 5) when a check FAILs; else `incomplete` (exit 10) when a selected check
that applies could not run; else `passed` (exit 0). A check that does not apply (SKIP
not-applicable) never turns a run red.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import (
    AuthError,
    ExitCode,
    McptaskError,
    ProtocolError,
    RpcError,
    ServerError,
    UsageError,
)
from .suite import (
    COULD_NOT_RUN,
    FAIL,
    SKIP,
    VERDICTS,
    CheckDef,
    CheckResult,
    Recorder,
    Skip,
    Suite,
    SuiteOptions,
    describe,
    unreachable,
)

if TYPE_CHECKING:
    from ..context import Context

OUTCOME_EXIT: dict[str, int] = {
    "passed": ExitCode.OK,
    "failed": ExitCode.FAILED,
    "incomplete": ExitCode.INCOMPLETE,
}


@dataclass
class Report:
    protocol: str
    server: str
    results: list[CheckResult]
    facts: dict[str, Any] = field(default_factory=dict)
    duration: float = 0.0

    @property
    def outcome(self) -> str:
        if any(r.verdict == FAIL for r in self.results):
            return "failed"
        if any(r.verdict == SKIP and r.skip_reason == COULD_NOT_RUN for r in self.results):
            return "incomplete"
        return "passed"

    @property
    def exit_code(self) -> int:
        return OUTCOME_EXIT[self.outcome]

    def counts(self) -> dict[str, int]:
        return {v: sum(1 for r in self.results if r.verdict == v) for v in VERDICTS}

    def to_json(self, *, with_rpc: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "outcome": self.outcome,
            "exitCode": self.exit_code,
            "protocol": self.protocol,
            "server": self.server,
        }
        out.update(self.facts)
        out["summary"] = self.counts()
        out["checks"] = [r.to_json(with_rpc=with_rpc) for r in self.results]
        return out


# -- catalogue and selection ------------------------------------------------------------------


def catalogue() -> list[CheckDef]:
    """Every check of every suite (for validating --check and --category)."""
    import importlib

    from ..protocols import registry

    checks: list[CheckDef] = []
    for module in registry.check_modules():
        checks.extend(importlib.import_module(module).CHECKS)
    return checks


def categories() -> list[str]:
    return list(dict.fromkeys(c.category for c in catalogue()))


def select(defs: list[CheckDef], ids: list[str], cats: list[str]) -> set[str]:
    """Checks matching every given filter: an id equal to or starting with a `--check` value,
    and one of the `--category` values."""
    chosen = set()
    for d in defs:
        if ids and not any(d.id == i or d.id.startswith(i) for i in ids):
            continue
        if cats and d.category not in cats:
            continue
        chosen.add(d.id)
    return chosen


def validate_selection(ids: list[str], cats: list[str]) -> None:
    every = catalogue()
    known_cats = categories()
    for cat in cats:
        if cat not in known_cats:
            raise UsageError(f"--category {cat!r}: known categories: {', '.join(known_cats)}")
    for i in ids:
        if not any(d.id == i or d.id.startswith(i) for d in every):
            raise UsageError(
                f"--check {i!r} matches no check (ids look like "
                "mcp2025.result.waits; a prefix selects several)"
            )


# -- running ----------------------------------------------------------------------------------


async def run_suite(suite: Suite, chosen: set[str]) -> list[CheckResult]:
    results: list[CheckResult] = []
    for check, fn in suite.plan():
        if check.id not in chosen:
            continue
        log: list[dict[str, Any]] = []
        suite.recorder.sinks = [log]
        started = time.monotonic()
        skip_reason: str | None = None
        try:
            verdict, observed = await fn()
        except Skip as exc:
            verdict, observed, skip_reason = SKIP, exc.text, exc.reason
        except (UsageError, AuthError):
            raise
        except (ProtocolError, RpcError, ServerError) as exc:
            if unreachable(exc):
                if not suite.recorder.answered:
                    raise  # the server was never reached: unreachable, exit 4, one line
                verdict, observed, skip_reason = SKIP, describe(exc), COULD_NOT_RUN
            elif isinstance(exc, ProtocolError | RpcError):
                verdict, observed = FAIL, f"unexpected answer: {describe(exc)}"
            else:
                verdict, observed, skip_reason = SKIP, describe(exc), COULD_NOT_RUN
        except McptaskError as exc:
            verdict, observed, skip_reason = SKIP, describe(exc), COULD_NOT_RUN
        except Exception as exc:  # a bug in a check must not hide the others
            verdict, observed = SKIP, f"internal error: {type(exc).__name__}: {exc}"
            skip_reason = COULD_NOT_RUN
        finally:
            suite.recorder.sinks = []
        results.append(
            CheckResult(
                check,
                verdict,
                observed,
                skip_reason,
                int((time.monotonic() - started) * 1000),
                log,
            )
        )
    return results


def make_suite(name: str, rpc: Any, recorder: Recorder, opts: SuiteOptions, proto: Any) -> Suite:
    """The registry's check suite for the protocol."""
    from ..protocols import registry

    row = registry.info(name)
    if row is None:
        raise UsageError(f"no check suite for protocol {name!r}")
    cls: Any = registry.load(row.check)
    suite: Suite = cls(rpc, recorder, opts, proto=proto)
    return suite


# -- output -----------------------------------------------------------------------------------

VERDICT_STYLE = {
    "PASS": "green",
    "WARN": "yellow",
    "FAIL": "bold red",
    "INFO": "cyan",
    "SKIP": "bright_black",
}
OUTCOME_STYLE = {"passed": "bold green", "failed": "bold red", "incomplete": "bold yellow"}


def print_pretty(report: Report, ctx: Context, *, with_rpc: bool) -> None:
    import json

    from rich.table import Table
    from rich.text import Text

    from ..textsafe import clean, one_line

    console = ctx.out.console
    info = report.facts.get("serverInfo")
    who = ""
    if isinstance(info, dict):
        name = one_line(str(info.get("name", "?")), 60)
        who = f" — {name} {one_line(str(info.get('version', '')), 20)}"
    console.print(
        Text(f"mcptask check {one_line(report.server, 120)} ({report.protocol}){who}", style="bold")
    )
    table = Table(show_edge=False, expand=False, pad_edge=False)
    table.add_column("", no_wrap=True)
    table.add_column("check", no_wrap=True)
    table.add_column("observed", overflow="fold")
    for r in report.results:
        observed = Text(clean(r.observed, multiline=False))
        if r.skip_reason and not r.observed.startswith(r.skip_reason.replace("-", " ")):
            observed = Text(f"({r.skip_reason}) ", style="dim") + observed
        if r.verdict in ("WARN", "FAIL") or r.skip_reason == COULD_NOT_RUN:
            # what was expected, and where the spec says so
            observed.append(f"\n{r.check.requirement} — {r.check.spec}", style="dim")
        table.add_row(Text(r.verdict, style=VERDICT_STYLE[r.verdict]), r.check.id, observed)
    console.print(table)
    counts = report.counts()
    summary = Text(f"{report.outcome}", style=OUTCOME_STYLE[report.outcome])
    summary.append(f" (exit {report.exit_code}): ")
    summary.append(", ".join(f"{n} {v}" for v, n in counts.items() if n))
    summary.append(f" in {report.duration:.1f} s", style="dim")
    console.print(summary)
    if with_rpc:
        for r in report.results:
            if not r.rpc:
                continue
            console.print(Text(f"── {r.check.id}", style="bold"))
            for entry in r.rpc:
                console.print(
                    Text(
                        one_line(
                            "> "
                            + json.dumps(
                                entry.get("request") or {"GET": entry.get("get")},
                                ensure_ascii=False,
                            ),
                            2000,
                        ),
                        style="dim",
                    )
                )
                if entry.get("headers"):
                    sent = "; ".join(f"{k}: {v}" for k, v in entry["headers"].items())
                    console.print(Text(one_line(f"  {sent}", 500), style="dim"))
                answers = entry.get("answers") or ([entry["body"]] if "body" in entry else [])
                for answer in answers:
                    console.print(
                        Text(one_line("< " + json.dumps(answer, ensure_ascii=False), 2000))
                    )
                if "error" in entry:
                    console.print(
                        Text(
                            one_line(
                                "< " + json.dumps({"error": entry["error"]}, ensure_ascii=False),
                                2000,
                            )
                        )
                    )


def junit_xml(report: Report) -> bytes:
    """One testsuite, one testcase per check: FAIL is a failure, SKIP skipped, the rest pass
    (WARN and INFO say what they saw in system-out)."""
    import re
    import xml.etree.ElementTree as ET

    bad = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

    def x(text: str) -> str:
        return bad.sub("", text)

    counts = report.counts()
    total_time = f"{sum(r.duration_ms for r in report.results) / 1000:.3f}"
    root = ET.Element(
        "testsuites",
        {
            "name": "mcptask check",
            "tests": str(len(report.results)),
            "failures": str(counts[FAIL]),
            "errors": "0",
            "skipped": str(counts[SKIP]),
            "time": total_time,
        },
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": f"mcptask check {report.protocol}",
            "tests": str(len(report.results)),
            "failures": str(counts[FAIL]),
            "errors": "0",
            "skipped": str(counts[SKIP]),
            "time": total_time,
        },
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("server", report.server),
        ("protocol", report.protocol),
        ("outcome", report.outcome),
        ("exitCode", str(report.exit_code)),
    ):
        ET.SubElement(props, "property", {"name": name, "value": x(value)})
    for r in report.results:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": f"mcptask.check.{r.check.id.split('.')[0]}.{r.check.category}",
                "name": r.check.id,
                "time": f"{r.duration_ms / 1000:.3f}",
            },
        )
        detail = f"{r.check.requirement} ({r.check.spec})"
        if r.verdict == FAIL:
            failure = ET.SubElement(case, "failure", {"message": x(r.observed), "type": "FAIL"})
            failure.text = x(f"{detail}\nobserved: {r.observed}")
        elif r.verdict == SKIP:
            ET.SubElement(case, "skipped", {"message": x(f"{r.skip_reason}: {r.observed}")})
        else:
            out = ET.SubElement(case, "system-out")
            out.text = x(f"{r.verdict}: {r.observed}\n{detail}")
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data


def write_junit(report: Report, path: str) -> None:
    try:
        Path(path).expanduser().write_bytes(junit_xml(report))
    except OSError as exc:
        raise UsageError(f"--junit {path}: {exc.strerror or exc}") from None
