"""Prebuild the environments of the servers the tests run against.

    python tests/servers/setup.py                 # everything known
    python tests/servers/setup.py --only fastmcp4 everything
    python tests/servers/setup.py --list

Environments are cached under ``.cache/servers`` and reused; building them here first keeps the
first test run from spending its time in pip and npm. The registry is the union of the
``ENVIRONMENTS`` dicts of the modules in ``ENV_MODULES`` that exist (name -> zero-argument
callable that builds the environment and returns its path). Exit status is non-zero when a build
fails.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

ENV_MODULES = ["servers.mcp_envs", "servers.a2a_envs", "servers.conformance", "servers.phoenix"]


def load_environments() -> dict[str, Callable[[], Any]]:
    envs: dict[str, Callable[[], Any]] = {}
    for name in ENV_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # the module itself is absent: fine
                continue
            raise
        for key, build in getattr(module, "ENVIRONMENTS", {}).items():
            if key in envs:
                raise RuntimeError(f"environment {key!r} defined twice (again in {name})")
            envs[key] = build
    return envs


def main(argv: list[str] | None = None) -> int:
    envs = load_environments()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        choices=sorted(envs),
        help="build only these environments",
    )
    parser.add_argument("--list", action="store_true", help="list known environments and exit")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(sorted(envs)))
        return 0
    names = args.only or list(envs)
    failed: list[str] = []
    total = time.monotonic()
    for name in names:
        print(f"[{name}] building ...", flush=True)
        start = time.monotonic()
        try:
            result = envs[name]()
        except Exception as exc:
            failed.append(name)
            print(f"[{name}] FAILED after {time.monotonic() - start:.1f} s:\n{exc}", flush=True)
            continue
        print(f"[{name}] ok in {time.monotonic() - start:.1f} s: {result}", flush=True)
    print(f"done in {time.monotonic() - total:.1f} s", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
