"""Shell completion callbacks. Every TAB runs the program, so these stay quick and never import
httpx: only the task book, the targets and the config file."""

from __future__ import annotations

import typer

# `quick_complete` (the book's look-ups) is imported when a TAB asks, not by every command


def completion_url(ctx: typer.Context) -> str | None:
    """The endpoint the command would reach, as far as the words typed so far (and MCPTASK_URL,
    MCPTASK_SERVER, the config's default) tell: None when unknown, "" for a stdio server (whose
    tasks die with it, so the task book has none)."""
    from mcptask.cli.quick_complete import url_for

    return url_for(ctx.params)


def task_ids(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Task ids from the task book (only the target's when it is known), most recently seen
    first. (A TAB on a task id is usually answered before Typer: `cli/quick_complete.py`.)"""
    typed = set(ctx.params.get("task_ids") or ())
    from mcptask.cli.quick_complete import book_candidates

    return book_candidates(completion_url(ctx), typed, incomplete)


def config_server_names(config: str | None) -> list[tuple[str, str]]:
    """Completion for `-s/--server`: (name, what it is) for each server in the config file
    (`--config`, else MCPTASK_CONFIG, else the default path)."""
    from urllib.parse import urlsplit

    from mcptask.session.config import load

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


#: `-o/--output` values and what each prints (render.MODES, kept here so TAB imports no renderer)
OUTPUT_MODES = {
    "auto": "pretty on a terminal, JSON elsewhere",
    "pretty": "for people",
    "json": "one JSON document",
    "ndjson": "one JSON object per line",
}


def _offer(items: list[tuple[str, str]], incomplete: str) -> list[tuple[str, str]]:
    return [(value, what) for value, what in items if value.startswith(incomplete)]


def output_modes(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    return _offer(list(OUTPUT_MODES.items()), incomplete)


def protocols(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    from mcptask.protocols.registry import CHOICES

    return _offer([(name, "detect it" if name == "auto" else "") for name in CHOICES], incomplete)


def categories(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """`check --category`: the categories of every suite, with how many checks each has."""
    from mcptask.check.engine import catalogue

    counts: dict[str, int] = {}
    for check in catalogue():
        counts[check.category] = counts.get(check.category, 0) + 1
    return _offer([(c, f"{n} checks") for c, n in counts.items()], incomplete)


def check_ids(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """`check --check`: every check's id, with its requirement."""
    from mcptask.check.engine import catalogue

    return _offer([(c.id, c.requirement) for c in catalogue()], incomplete)


def schema_names(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    from mcptask import schemas

    return _offer([(name, schemas.title(name)) for name in schemas.NAMES], incomplete)


#: seconds the one quick `tools/list` of a TAB may take
TOOLS_TIMEOUT = 3.0


def tools(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """`call TOOL`: the tools of the target (only when it is known): the ones its last
    `tools/list` named (kept in the task book), else one quick `tools/list`, then kept."""
    from mcptask.state.taskbook import TaskBook

    url = completion_url(ctx)
    if not url:
        return []  # no target yet, or a stdio server (completion spawns nothing)
    book = TaskBook()
    found = book.tools(url)
    if not found:
        found = _list_tools(ctx)
        if found:
            book.remember_tools(url, found)
    return _offer(found, incomplete)


def _list_tools(ctx: typer.Context) -> list[tuple[str, str]]:
    """One `tools/list` of the target the words typed so far name; nothing when it fails."""
    import asyncio
    import io

    from mcptask.output.console import Output
    from mcptask.session.context import Context
    from mcptask.session.targets import GlobalOptions

    p = ctx.params
    names = ("url", "server", "config", "protocol", "token_file", "session", "context_id")
    g = GlobalOptions(**{n: p[n] for n in names if p.get(n) is not None})
    g.headers = list(p.get("header") or [])

    async def fetch() -> list[tuple[str, str]]:
        c = Context(g, Output(mode="json", stdout=io.StringIO(), stderr=io.StringIO()))
        try:
            proto = await c.endpoint.protocol()
            if not proto.has_tools:
                return []
            return [(t.name, t.taskSupport) for t in await proto.list_tools()]
        finally:
            await c.aclose()

    try:
        return asyncio.run(asyncio.wait_for(fetch(), TOOLS_TIMEOUT))
    except Exception:  # unreachable, refused, not MCP: TAB offers nothing
        return []


def statuses(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """`watch --until`: status words, the last of a comma-separated list completed."""
    from mcptask.model.status import STATUSES

    done, _, last = incomplete.rpartition(",")
    prefix = done + "," if done else ""
    given = set(done.split(",")) if done else set()
    words = sorted(w for w in STATUSES if w not in given)
    return [(prefix + w, "") for w in words if w.startswith(last)]


#: the bash script (Typer's, plus one step): bash splits the words of a command line at the
#: characters in COMP_WORDBREAKS, `:` among them, so `--url http://127.0.0.1:3001/mcp` reaches
#: the program as five words and nothing after it completes. The words are joined again at
#: each `:` before the program sees them, and the candidates for a word with a `:` in it lose
#: what bash already has before its last `:` (as bash-completion's `__ltrim_colon_completions`)
BASH_SCRIPT = r"""
%(complete_func)s() {
    local IFS=$'\n'
    local -a words=()
    local cword=0 i n w
    for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
        w=${COMP_WORDS[i]}
        n=${#words[@]}
        if [[ $COMP_WORDBREAKS == *:* && $n -gt 0 && $i -gt 0 && \
              ( $w == ":"* || ${words[n-1]} == *":" ) ]]; then
            words[n-1]+=$w
        else
            words+=("$w")
        fi
        if ((i == COMP_CWORD)); then
            cword=$((${#words[@]} - 1))
        fi
    done
    if ((COMP_CWORD >= ${#COMP_WORDS[@]})); then
        cword=${#words[@]}
    fi
    local cur=${words[cword]}
    COMPREPLY=( $( env COMP_WORDS="${words[*]}" \
                   COMP_CWORD=$cword \
                   %(autocomplete_var)s=complete_bash $1 ) )
    if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
        local colon_word=${cur%%"${cur##*:}"}
        for ((i = 0; i < ${#COMPREPLY[@]}; i++)); do
            COMPREPLY[i]=${COMPREPLY[i]#"$colon_word"}
        done
    fi
    return 0
}

complete -o default -F %(complete_func)s %(prog_name)s
"""


def use_bash_script() -> None:
    """Make Typer print BASH_SCRIPT for bash (`_MCPTASK_COMPLETE=source_bash`,
    `--show-completion`, `--install-completion`). Pinned: typer's `BashComplete.source_template`
    and `_completion_shared._completion_scripts` (tests/e2e/test_completion_values.py runs the
    script in a real bash)."""
    from typer import _completion_classes, _completion_shared

    _completion_classes.BashComplete.source_template = BASH_SCRIPT
    _completion_shared._completion_scripts["bash"] = BASH_SCRIPT
