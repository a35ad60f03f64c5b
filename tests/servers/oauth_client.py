"""Runs mcptask commands for one conformance-suite auth scenario, in order.

``python oauth_client.py ARGS... [--then ARGS...]... URL``: the suite appends the scenario's
server URL last; each ``ARGS`` is one mcptask command line, run as ``python -m mcptask ARGS URL``
(so each should end with ``--url``). The token ``@client`` in ``ARGS`` becomes the client the
scenario pre-registered, taken from ``MCP_CONFORMANCE_CONTEXT``: ``--client-id ID`` plus
``--client-secret-file F`` or ``--client-key-file F`` (files written to a private temporary
folder). Stops at the first command that fails and exits with its status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def client_flags(folder: Path) -> list[str]:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    flags = []
    if context.get("client_id"):
        flags += ["--client-id", context["client_id"]]
    if context.get("client_secret"):
        secret = folder / "client-secret"
        secret.write_text(context["client_secret"])
        flags += ["--client-secret-file", str(secret)]
    if context.get("private_key_pem"):
        key = folder / "client-key.pem"
        key.write_text(context["private_key_pem"])
        flags += ["--client-key-file", str(key)]
    return flags


def commands(argv: list[str]) -> tuple[list[list[str]], str]:
    *args, url = argv
    out: list[list[str]] = [[]]
    for arg in args:
        if arg == "--then":
            out.append([])
        else:
            out[-1].append(arg)
    return [c for c in out if c], url


def main() -> int:
    cmds, url = commands(sys.argv[1:])
    with tempfile.TemporaryDirectory(prefix="mcptask-oauth-") as tmp:
        folder = Path(tmp)
        os.chmod(folder, 0o700)
        flags = client_flags(folder)
        for cmd in cmds:
            args = [a for arg in cmd for a in (flags if arg == "@client" else [arg])]
            code = subprocess.call([sys.executable, "-m", "mcptask", *args, url])
            if code != 0:
                return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
