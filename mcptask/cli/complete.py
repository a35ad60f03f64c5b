"""Shell completion callbacks. Every TAB runs the program, so these stay quick and never import
httpx: only the task book, the targets and the config file."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from ..targets import GlobalOptions


def completion_url(ctx: typer.Context) -> str | None:
    """The endpoint the command would reach, as far as the words typed so far (and MCPTASK_URL,
    MCPTASK_SERVER, the config's default) tell: None when unknown, "" for a stdio server (whose
    tasks die with it, so the task book has none)."""
    from types import SimpleNamespace
    from typing import cast

    from ..targets import choose, pick

    p = ctx.params
    names = ("url", "stdio", "server", "config")
    opts = cast("GlobalOptions", SimpleNamespace(**{name: p.get(name) for name in names}))
    try:
        kind, value, _ = choose(opts)
        if kind == "server":
            return pick(opts, value).url or ""
    except Exception:  # no target yet, or a broken config file: every endpoint's ids
        return None
    return value if kind == "url" else ""


def task_ids(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Task ids from the task book (only the target's when it is known), most recently seen
    first."""
    from ..taskbook import TaskBook, endpoint_key

    book = TaskBook()
    if not book.path.is_file():
        return []
    url = completion_url(ctx)
    endpoints = book.all_endpoints()
    if url is not None:
        key = endpoint_key(url)
        endpoints = {key: endpoints[key]} if key in endpoints else {}
    typed = set(ctx.params.get("task_ids") or ())
    found: dict[str, tuple[str, str, str]] = {}
    for key, ep in endpoints.items():
        tasks = ep.get("tasks") if isinstance(ep, dict) else None
        for task_id, rec in (tasks if isinstance(tasks, dict) else {}).items():
            if not task_id.startswith(incomplete) or task_id in typed or not isinstance(rec, dict):
                continue
            seen = str(rec.get("lastSeenAt", ""))
            if task_id not in found or seen > found[task_id][0]:
                found[task_id] = (seen, str(rec.get("status", "?")), key)
    ranked = sorted(found.items(), key=lambda kv: kv[1][0], reverse=True)
    return [(task_id, f"{status} on {key}") for task_id, (_, status, key) in ranked]


def config_server_names(config: str | None) -> list[tuple[str, str]]:
    """Completion for `-s/--server`: (name, what it is) for each server in the config file
    (`--config`, else MCPTASK_CONFIG, else the default path)."""
    from urllib.parse import urlsplit

    from ..config import load

    names = []
    for name, entry in sorted(load(config).servers.items()):
        if entry.url:
            u = urlsplit(entry.url)  # no userinfo, query or fragment: never a secret
            what = f"{u.scheme}://{u.hostname or ''}{f':{u.port}' if u.port else ''}{u.path}"
        else:
            what = "stdio: " + (entry.command or ["?"])[0]
        names.append((name, what))
    return names


def servers(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    try:
        names = config_server_names(ctx.params.get("config"))
    except Exception:  # a missing or broken config file completes nothing
        return []
    return [(name, what) for name, what in names if name.startswith(incomplete)]
