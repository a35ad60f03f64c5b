"""`mcptask servers`: the named targets in the config file, never a secret (header and variable
names are shown, their values are not; URLs and arguments have secret-looking parts redacted)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.errors import ExitCode

if TYPE_CHECKING:
    from mcptask.session.context import Context


@dataclass
class ServersOptions:
    pass


async def run_servers(opts: ServersOptions, ctx: Context) -> int:
    from mcptask.session import config, targets

    cfg = config.load(ctx.options.config)
    where, _ = config.locate(ctx.options.config)
    default = None
    if not os.environ.get(targets.ENV_URL, "").strip():
        default = os.environ.get(targets.ENV_SERVER, "").strip() or cfg.default
    rows = [targets.describe(e, default=name == default) for name, e in cfg.servers.items()]
    if cfg.path is None:
        ctx.out.note(f"no config file at {where}")
    if not ctx.out.pretty:
        path = str(cfg.path) if cfg.path else None
        ctx.out.line({"config": path, "format": cfg.format, "servers": rows})
        return ExitCode.OK
    _table(ctx, rows, str(cfg.path) if cfg.path else None)
    return ExitCode.OK


def _details(row: dict[str, Any]) -> str:
    parts = []
    if row.get("headers"):
        parts.append("headers: " + ", ".join(row["headers"]))
    if row.get("env"):
        parts.append("env: " + ", ".join(row["env"]))
    if row.get("cwd"):
        parts.append("cwd: " + row["cwd"])
    token = row.get("token")
    if isinstance(token, dict) and "env" in token:
        parts.append(f"token: ${token['env']}")
    elif isinstance(token, dict) and "file" in token:
        parts.append(f"token: file {token['file']}")
    oauth = row.get("oauth")
    if isinstance(oauth, dict):
        parts.append(f"oauth client: {oauth.get('clientId') or oauth.get('clientMetadataUrl')}")
    if row.get("unsupported"):
        parts.append("unsupported: " + row["unsupported"])
    return "; ".join(parts)


def _table(ctx: Context, rows: list[dict[str, Any]], path: str | None) -> None:
    from rich.table import Table

    from mcptask.output.console import safe

    if not rows:
        ctx.out.console.print(safe(f"no servers in {path}" if path else "no servers"))
        return
    table = Table(title=safe(path) if path else None, title_justify="left", show_edge=False)
    for col in ("name", "kind", "target", "protocol", "details"):
        table.add_column(col, overflow="fold")
    for row in rows:
        name = row["name"] + (" (default)" if row["default"] else "")
        target = row.get("url") or row.get("command") or ""
        table.add_row(
            safe(name), row["kind"], safe(target), safe(row["protocol"]), safe(_details(row))
        )
    ctx.out.console.print(table)
