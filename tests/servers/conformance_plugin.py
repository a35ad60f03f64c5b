"""pytest fixture for the official MCP conformance suite's client scenarios.

Registered in ``tests/conftest.py``'s ``pytest_plugins``. The suite's environment is built on
first use (``python tests/servers/setup.py --only conformance`` prebuilds it); a build failure
makes the tests ERROR, never skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from servers.conformance import ConformanceRunner


@pytest.fixture
def conformance(state_dir: Path, tmp_path: Path) -> ConformanceRunner:
    """``conformance.run("tools_call", "call", "add_numbers", "a=1", "b=2", "--url")``.

    mcptask runs from this tree (``PYTHONPATH`` = repo root) with the test's private state dir
    and ``BROWSER`` = ``tests/servers/browser.sh``; results land under ``tmp_path/conformance``.
    """
    return ConformanceRunner.create(state_dir, tmp_path / "conformance")
