"""`mcptask check`'s engine: the catalogue of checks, the selection, running a suite, the outcome.

Each check has a stable id (`mcp2025.result.waits`), a category, the requirement in a few words
with the spec section that states it, a verdict (PASS, WARN, FAIL, INFO, SKIP with a reason) and
what was observed. The suites live in `mcp2025`, `mcp2026` and `a2a`.

Outcome: `failed` (exit 5) when a check FAILs; else `incomplete` (exit 10) when a selected check
that applies could not run; else `passed` (exit 0). A check that does not apply (SKIP
not-applicable) never turns a run red.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcptask.check.suite import (
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
    not_applicable,
    unreachable,
)
from mcptask.errors import (
    AuthError,
    ExitCode,
    McptaskError,
    ProtocolError,
    RpcError,
    ServerError,
    UsageError,
)

if TYPE_CHECKING:
    pass

#: a check run's outcome -> its exit status (a task's outcomes are `errors.OUTCOME_EXIT`)
CHECK_EXIT: dict[str, int] = {
    "passed": ExitCode.OK,
    "failed": ExitCode.FAILED,
    "incomplete": ExitCode.INCOMPLETE,
    # a server (or agent) without tasks breaks no rule: it has none to check (as `list` says)
    "no task support": ExitCode.SERVER,
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
        if self.facts.get("taskSupport") is False:
            return "no task support"
        if any(r.verdict == SKIP and r.skip_reason == COULD_NOT_RUN for r in self.results):
            return "incomplete"
        return "passed"

    @property
    def exit_code(self) -> int:
        return CHECK_EXIT[self.outcome]

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

    from mcptask.protocols import registry

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
            if suite.facts.get("taskSupport") is False:
                raise not_applicable("no task support: the task checks do not apply")
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
    from mcptask.protocols import registry

    row = registry.info(name)
    if row is None:
        raise UsageError(f"no check suite for protocol {name!r}")
    cls: Any = registry.load(row.check)
    suite: Suite = cls(rpc, recorder, opts, proto=proto)
    return suite
