"""The official MCP conformance suite's client scenarios, run against mcptask (issue 16).

Each test runs one scenario of ``@modelcontextprotocol/conformance`` 0.1.16 with the mcptask
command the issue names; the suite starts its own server on localhost and appends its URL to the
command. mcptask passes all four.
"""

from __future__ import annotations

import sys

import pytest

from servers.conformance import HERE, ConformanceRunner, list_scenarios

pytestmark = pytest.mark.timeout(120)

SCENARIO_TIMEOUT = 10.0  # seconds the suite gives mcptask; a passing run takes about one


def test_suite_lists_the_client_scenarios(conformance: ConformanceRunner) -> None:
    names = list_scenarios()
    for name in ("initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults"):
        assert name in names
    assert any(name.startswith("auth/") for name in names)


def test_browser_script_completes_an_authorization_redirect(
    conformance: ConformanceRunner,
) -> None:
    """browser.sh (the fixture's $BROWSER) takes a scripted client to its authorization code."""
    client = [sys.executable, str(HERE / "redirect_client.py")]
    result = conformance.run_command("auth/metadata-default", client, timeout=SCENARIO_TIMEOUT)
    assert "code=test-auth-code state=xyz" in result.client_stdout, result.failed_checks()
    for check_id in ("client-registration", "authorization-request", "pkce-s256-method-used"):
        check = result.check(check_id)
        assert check is not None and check.status == "SUCCESS", result.failed_checks()


def test_initialize(conformance: ConformanceRunner) -> None:
    result = conformance.run("initialize", "tools", "--url", timeout=SCENARIO_TIMEOUT)
    assert result.ok, result.failed_checks()


def test_tools_call(conformance: ConformanceRunner) -> None:
    result = conformance.run(
        "tools_call", "call", "add_numbers", "a=1", "b=2", "--url", timeout=SCENARIO_TIMEOUT
    )
    assert result.ok, result.failed_checks()


def test_sse_retry(conformance: ConformanceRunner) -> None:
    result = conformance.run(
        "sse-retry", "call", "test_reconnection", "--url", timeout=SCENARIO_TIMEOUT
    )
    assert result.ok, result.failed_checks()


def test_elicitation_client_defaults(conformance: ConformanceRunner) -> None:
    result = conformance.run(
        "elicitation-sep1034-client-defaults",
        "call",
        "test_client_elicitation_defaults",
        "--defaults",
        "--url",
        timeout=SCENARIO_TIMEOUT,
    )
    assert result.ok, result.failed_checks()
