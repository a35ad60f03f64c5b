"""Cached virtualenvs for the A2A test servers (see ``A2A_README.md``).

``ENVIRONMENTS[name]()`` builds the venv once (under ``.cache/servers``) and returns its python.
a2a-sdk 1.3.0 and agno 3.1.10 (which pins ``a2a-sdk<1.0``) cannot share a venv.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from servers.common import npm_folder, venv_python

HERE = Path(__file__).resolve().parent
A2A_SERVER_SCRIPT = HERE / "a2a_server.py"
AGNO_SERVER_SCRIPT = HERE / "agno_server.py"
A2A_JS_SERVER_SCRIPT = HERE / "a2a_js_server.cjs"

A2A_REQUIREMENTS = ["a2a-sdk[http-server,grpc]==1.3.0", "uvicorn"]
AGNO_REQUIREMENTS = ["agno[os,a2a]==3.1.10", "uvicorn", "sqlalchemy"]
#: the A2A project's TypeScript SDK (A2A 1.0, 0.3 through its compat layer, push notifications)
A2A_JS_PACKAGES = ["@a2a-js/sdk@1.3.0", "express@4.22.3"]


def a2a_python() -> Path:
    """Python of the venv holding a2a-sdk 1.3.0 (runs ``a2a_server.py``)."""
    return venv_python("a2a", A2A_REQUIREMENTS)


def agno_python() -> Path:
    """Python of the venv holding agno 3.1.10 (runs ``agno_server.py``)."""
    return venv_python("agno", AGNO_REQUIREMENTS)


def a2a_js_modules() -> Path:
    """The folder whose node_modules hold @a2a-js/sdk and express (for ``a2a_js_server.cjs``,
    through ``A2A_JS_MODULES``)."""
    return npm_folder("a2a-js-sdk-1.3.0_express-4.22.3", A2A_JS_PACKAGES)


ENVIRONMENTS: dict[str, Callable[[], Path]] = {
    "a2a": a2a_python,
    "agno": agno_python,
    "a2a-js": a2a_js_modules,
}
