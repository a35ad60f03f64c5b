"""The official MCP conformance suite's `auth/*` client scenarios (0.1.16), run against mcptask.

Every scenario but `cross-app-access-complete-flow` (an extension mcptask does not implement).
The suite starts its own protected MCP server and authorization server on localhost; mcptask
logs in through `$BROWSER` = tests/servers/browser.sh, which follows the authorization redirects
to mcptask's loopback listener. Where a scenario pre-registers a client, `oauth_client.py` turns
the scenario's context into `--client-id` and `--client-secret-file`/`--client-key-file`.
"""

from __future__ import annotations

import sys

import pytest

from servers.conformance import HERE, ConformanceRunner, ScenarioResult

pytestmark = pytest.mark.timeout(180)

#: the suite's bound on a scenario's client: a bound, not a pace (a passing client ends long
#: before it); scope-step-up runs two logins in two processes, 24 s on a machine running two
#: suites beside stress-ng
SCENARIO_TIMEOUT = 75.0
CLIENT = [sys.executable, str(HERE / "oauth_client.py")]
#: how a scenario is driven: any command, logging in when the server asks
DRIVER = ["tools", "--login", "--url"]
CIMD_URL = "https://conformance-test.local/client-metadata.json"

AUTHORIZATION_CODE = [
    "metadata-default",
    "metadata-var1",
    "metadata-var2",
    "metadata-var3",
    "scope-from-www-authenticate",
    "scope-from-scopes-supported",
    "scope-omitted-when-undefined",
    "scope-retry-limit",
    "token-endpoint-auth-basic",
    "token-endpoint-auth-post",
    "token-endpoint-auth-none",
    "2025-03-26-oauth-metadata-backcompat",
    "2025-03-26-oauth-endpoint-fallback",
    "offline-access-scope",
    "offline-access-not-supported",
]


def assert_passed(result: ScenarioResult) -> None:
    warnings = [c for c in result.checks if c.status == "WARNING"]
    assert result.ok and not warnings, result.failed_checks()


def run(conformance: ConformanceRunner, scenario: str, *args: str) -> ScenarioResult:
    return conformance.run_command(f"auth/{scenario}", [*CLIENT, *args], timeout=SCENARIO_TIMEOUT)


@pytest.mark.parametrize("scenario", AUTHORIZATION_CODE)
def test_authorization_code_scenarios(conformance: ConformanceRunner, scenario: str) -> None:
    assert_passed(run(conformance, scenario, *DRIVER))


def test_basic_cimd(conformance: ConformanceRunner) -> None:
    args = [*DRIVER[:-1], "--client-metadata-url", CIMD_URL, DRIVER[-1]]
    result = run(conformance, "basic-cimd", *args)
    assert_passed(result)
    check = result.check("cimd-client-id-used")
    assert check is not None and check.status == "SUCCESS"


def test_pre_registration(conformance: ConformanceRunner) -> None:
    assert_passed(run(conformance, "pre-registration", *DRIVER[:-1], "@client", DRIVER[-1]))


def test_resource_mismatch_is_refused(conformance: ConformanceRunner) -> None:
    result = run(conformance, "resource-mismatch", *DRIVER)
    assert_passed(result)
    assert "names another resource" in result.client_stderr


@pytest.mark.parametrize("scenario", ["client-credentials-basic", "client-credentials-jwt"])
def test_client_credentials(conformance: ConformanceRunner, scenario: str) -> None:
    """`auth login --client-credentials`, then a command that uses the stored token."""
    login = ["auth", "login", "--client-credentials", "@client", "--url"]
    result = run(conformance, scenario, *login, "--then", "tools", "--url")
    assert_passed(result)
    assert result.check("valid-bearer-token") is not None, result.failed_checks()


def test_scope_step_up(conformance: ConformanceRunner) -> None:
    """tools/list needs `mcp:basic` (401), tools/call `mcp:basic mcp:write` (403 step-up)."""
    call = ["call", "test-tool", "--login", "--url"]
    result = run(conformance, "scope-step-up", *DRIVER, "--then", *call)
    assert_passed(result)
    check = result.check("scope-step-up-escalation")
    assert check is not None and check.status == "SUCCESS", result.failed_checks()
