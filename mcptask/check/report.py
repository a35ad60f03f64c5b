"""`mcptask check`'s report: a Rich table and JUnit XML (JSON is the Report itself)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mcptask.check.suite import (
    COULD_NOT_RUN,
    FAIL,
    SKIP,
)
from mcptask.errors import (
    UsageError,
)

if TYPE_CHECKING:
    from mcptask.session.context import Context

from mcptask.check.engine import Report

# -- output -----------------------------------------------------------------------------------

VERDICT_STYLE = {
    "PASS": "green",
    "WARN": "yellow",
    "FAIL": "bold red",
    "INFO": "cyan",
    "SKIP": "bright_black",
}
OUTCOME_STYLE = {
    "passed": "bold green",
    "failed": "bold red",
    "incomplete": "bold yellow",
    "no task support": "bold yellow",
}


def _summary(report: Report, ctx: Context) -> None:
    from rich.text import Text

    counts = report.counts()
    summary = Text(f"{report.outcome}", style=OUTCOME_STYLE[report.outcome])
    summary.append(f" (exit {report.exit_code}): ")
    summary.append(", ".join(f"{n} {v}" for v, n in counts.items() if n))
    summary.append(f" in {report.duration:.1f} s", style="dim")
    ctx.out.console.print(summary)


def print_pretty(report: Report, ctx: Context, *, with_rpc: bool) -> None:
    import json

    from rich.table import Table
    from rich.text import Text

    from mcptask.text.sanitize import clean, one_line

    console = ctx.out.console
    info = report.facts.get("serverInfo")
    who = ""
    if isinstance(info, dict):
        name = one_line(str(info.get("name", "?")), 60)
        who = f" — {name} {one_line(str(info.get('version', '')), 20)}"
    console.print(
        Text(f"mcptask check {one_line(report.server, 120)} ({report.protocol}){who}", style="bold")
    )
    reasons = {(r.verdict, r.observed) for r in report.results}
    if len(report.results) > 1 and len(reasons) == 1 and report.results[0].verdict == SKIP:
        # nothing ran, for one reason (Agno: mcptask check does not cover it): one line says
        # what the check covers, not a row per check
        console.print(
            Text(
                f"SKIP all {len(report.results)} checks: "
                + clean(report.results[0].observed, multiline=False),
                style=VERDICT_STYLE[SKIP],
            )
        )
        _summary(report, ctx)
        return
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
    _summary(report, ctx)
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
                "classname": f"mcptask.check.engine.{r.check.id.split('.')[0]}.{r.check.category}",
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
