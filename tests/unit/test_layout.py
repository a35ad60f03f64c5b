"""The package's shape (issue 14): one module per command, no import circle, exit codes named in
one place, protocol names spelled only by the protocol modules, their check suites and the
registry, transport features reached through typed capabilities."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path
from typing import Any

import pytest

from mcptask.errors import OUTCOME_EXIT, ExitCode
from mcptask.protocols import registry

PACKAGE = Path(__file__).resolve().parents[2] / "mcptask"
COMMANDS = ("get", "watch", "result", "list", "cancel", "answer", "call", "send", "check")
COMMANDS += ("servers", "demo")


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every mcptask module this one imports, at the top or inside a function (not under
    TYPE_CHECKING, which never runs)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (child.level - 1)]
                    base = ".".join(parts + ([child.module] if child.module else []))
                for alias in child.names:
                    if f"{base}.{alias.name}" in known:
                        found.add(f"{base}.{alias.name}")
                    elif base in known:
                        found.add(base)
            elif isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name in known)
            visit(child)

    visit(tree)
    # importing a.b.c runs a and a.b first
    for target in list(found):
        parts = target.split(".")
        for i in range(2, len(parts)):
            parent = ".".join(parts[:i])
            if parent in known and not name.startswith(parent + "."):
                found.add(parent)
    found.discard(name)
    return found


def test_no_import_circle() -> None:
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if nxt not in state:
                walk(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node)


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_its_module(command: str) -> None:
    source = (PACKAGE / "commands" / f"{command}.py").read_text(encoding="utf-8")
    assert re.search(rf"^async def run_{command}\(opts: \w+Options, ctx: Context\)", source, re.M)
    assert re.search(r"^class \w+Options\b", source, re.M)


def test_exit_codes_are_named() -> None:
    assert {int(c) for c in ExitCode} >= {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 130, 143}
    assert all(isinstance(code, ExitCode) for code in OUTCOME_EXIT.values())


def test_no_bare_exit_numbers() -> None:
    """Exit statuses are spelled `ExitCode.X` outside errors.py, in every room (issue 23,
    defect 7: the scheduler, the protocols, the plain-call view and `check` had numbers)."""
    bare = re.compile(
        r"(Exit\(\d+\)|TaskEnded\([^)]*,\s*\d+\)|exit_code\s*=\s*\d+|return [1-9]\d*$"
        r"|code = \d+$)"
    )
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "errors.py":
            continue
        rel = path.relative_to(PACKAGE)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if bare.search(line.strip()):
                offenders.append(f"{rel}:{n}: {line.strip()}")
        offenders += [f"{rel}:{n}: {why} {value}" for n, why, value in _exit_numbers(path)]
    assert not offenders, offenders


#: the words of outcomes (watch's, a plain call's, check's): a dict from them holds exit statuses
OUTCOME_WORDS = frozenset(OUTCOME_EXIT) | {"completed", "error", "passed", "incomplete"}
#: calls whose arguments (after the first, for the first two) are exit statuses
EXIT_CALLS = ("_end", "TaskEnded", "Exit", "Interrupted", "interrupt", "exit")


def _ints(node: ast.AST) -> list[ast.Constant]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return [node]
    if isinstance(node, ast.IfExp):
        return _ints(node.body) + _ints(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [c for v in node.values for c in _ints(v)]
    return []


def _exit_numbers(path: Path) -> list[tuple[int, str, int]]:
    """Integer literals where an exit status goes: returned by run functions and `main`s,
    passed to `_end`, `TaskEnded`, `Exit`..., given as `exit_code=`/`code=`, assigned to a
    name that says exit or code, the default of an `*EXIT*.get`, values of a dict of
    outcome words."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[ast.Constant] = []
    why: dict[int, str] = {}

    def add(nodes: list[ast.Constant], reason: str) -> None:
        for node in nodes:
            found.append(node)
            why[id(node)] = reason

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            named = node.name.lstrip("_").startswith(("run", "main", "exit", "end", "finish"))
            if named and node.returns is not None and ast.unparse(node.returns) == "int":
                for r in ast.walk(node):
                    if isinstance(r, ast.Return) and r.value is not None:
                        add(_ints(r.value), "returned by " + node.name)
        elif isinstance(node, ast.Call):
            name = ast.unparse(node.func).rpartition(".")[2]
            if name in EXIT_CALLS:
                args = node.args[1:] if name in ("_end", "TaskEnded") else node.args
                for a in args:
                    add(_ints(a), f"{name}()")
            if name == "get" and "EXIT" in ast.unparse(node.func) and len(node.args) > 1:
                add(_ints(node.args[1]), "the default of *EXIT*.get")
            for kw in node.keywords:
                if kw.arg in ("exit_code", "code"):
                    add(_ints(kw.value), f"{kw.arg}=")
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                name = ast.unparse(t).lower()
                if "exit" in name or name.endswith(("code", "by_state")):
                    add(_ints(node.value), f"{name} =")
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                key = k.value if isinstance(k, ast.Constant) else None
                if key in OUTCOME_WORDS or key == "exitCode":
                    add(_ints(v), f"the value of {key!r}")
    return [(n.lineno, why[id(n)], int(n.value)) for n in found]


def test_protocol_names_live_in_the_registry() -> None:
    """Outside protocols/ and check/, no module spells a protocol's name: help texts, the
    target's checks and `check` read the registry."""
    names = registry.NAMES
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in ("protocols", "check"):
            continue
        text = path.read_text(encoding="utf-8")
        offenders += [f"{rel}: {name}" for name in names if f'"{name}"' in text]
    assert not offenders, offenders


def test_registry_rows_load() -> None:
    for row in registry.PROTOCOLS:
        cls = registry.load(row.impl)
        assert getattr(cls, "name", None) == row.name
        assert registry.load(row.check) is not None
    assert registry.fallback().name in registry.NAMES
    assert registry.probe_modules()


def test_protocols_reach_transport_features_through_capabilities() -> None:
    """`getattr`/`hasattr` on a transport (or its private parts) is what the typed
    capabilities in `rpc` replace, in every room (`getattr(transport, "_trace")` was in the
    context)."""
    pattern = re.compile(r"(getattr|hasattr)\([^)]*(transport|\"_\w+\")")
    offenders = [
        f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}"
        for path in PACKAGE.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not offenders, offenders


def test_the_schemas_name_the_registry_s_protocols() -> None:
    """A list of protocol names in a schema (an enum, examples) is the registry's, whole and
    in its order; a protocol-like word anywhere in the schemas is one the registry has."""
    import json

    names = list(registry.NAMES)
    looks_like = re.compile(r"\b(mcp-\d{4}-\d\d-\d\d|a2a-\d+\.\d+|agno)\b")
    schemas = sorted((PACKAGE / "schemas").glob("*.json"))
    assert schemas

    def walk(node: object, where: str) -> list[str]:
        bad: list[str] = []
        if isinstance(node, dict):
            for k, v in node.items():
                bad += walk(v, f"{where}/{k}")
        elif isinstance(node, list):
            if any(v in names for v in node):
                listed = [v for v in node if v != "?"]
                if listed != names:
                    bad.append(f"{where}: {listed} is not the registry's {names}")
            for i, v in enumerate(node):
                bad += walk(v, f"{where}/{i}")
        elif isinstance(node, str):
            bad += [f"{where}: {w}" for w in looks_like.findall(node) if w not in names]
        return bad

    offenders: list[str] = []
    for path in schemas:
        offenders += walk(json.loads(path.read_text(encoding="utf-8")), path.name)
    assert not offenders, offenders


#: what each room of the package may import at run time (docs/architecture.md draws the same);
#: `kernel` is errors.py and pacing.py at the root and the `model` package (the domain: `Task`,
#: `EventKind`, `TaskRef`, `TaskResult`, `InputRequest`, `Tool`, `PushConfig`...), which
#: everything may use
ROOMS: dict[str, frozenset[str]] = {
    "cli": frozenset(
        {
            "commands",
            "session",
            "check",
            "scheduler",
            "output",
            "auth",
            "protocols",
            "transports",
            "state",
            "text",
            "schemas",
            "demo",
            "export",
        }
    ),
    "commands": frozenset(
        {
            "session",
            "check",
            "scheduler",
            "output",
            "auth",
            "protocols",
            "transports",
            "state",
            "text",
            "schemas",
            "demo",
            "export",
        }
    ),
    "session": frozenset({"auth", "output", "protocols", "transports", "state", "text"}),
    "check": frozenset({"protocols", "transports", "text"}),
    "scheduler": frozenset({"protocols", "text"}),
    "output": frozenset({"protocols", "text", "schemas"}),
    "auth": frozenset({"transports", "state", "text"}),
    "demo": frozenset({"text"}),
    "export": frozenset({"protocols", "state", "text"}),
    "protocols": frozenset({"transports", "text"}),
    "transports": frozenset({"text"}),
    "state": frozenset({"text"}),
    "text": frozenset(),
    "schemas": frozenset(),
    "kernel": frozenset(),
}
KERNEL = ("errors", "pacing")


def room(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__main__",):
        return "root"
    if (len(parts) == 2 and parts[1] in KERNEL) or parts[1] == "model":
        return "kernel"
    return parts[1]


def test_the_root_holds_only_the_kernel() -> None:
    assert {p.name for p in PACKAGE.glob("*.py")} == {
        "__init__.py",
        "__main__.py",
        *(f"{k}.py" for k in KERNEL),
    }


def test_each_room_imports_only_the_rooms_below_it() -> None:
    known = modules()
    offenders = []
    for name, path in sorted(known.items()):
        here = room(name)
        if here == "root":
            continue
        assert here in ROOMS, f"{name}: a room docs/architecture.md does not draw"
        for target in sorted(imports(name, path, known)):
            there = room(target)
            if there in (here, "root", "kernel") or there in ROOMS[here]:
                continue
            offenders.append(f"{name} -> {target}")
    assert not offenders, offenders


#: names the package defines for a framework to call (http.server, Click's help formatter,
#: Typer's commands are decorated) or for the tests (`redact.release_all`)
CALLED_FROM_OUTSIDE = frozenset(
    {
        "format_options",  # Click's, overridden: the shared options in their panels
        "do_GET",
        "do_POST",
        "do_DELETE",
        "log_message",
        "format_commands",
        "format_epilog",
        "display_type_rich",
        "_rich_display_name",
        "_usage_display_name",
        "release_all",
        "handle_async_request",  # httpx's transports
        "async_auth_flow",  # httpx's Auth (transports/http.py's OAuth resend loop)
        # asyncio's protocol and llhttp's parser call these (transports/poll_pool.py)
        "connection_made",
        "data_received",
        "eof_received",
        "connection_lost",
        "on_message_begin",
        "on_status",
        "on_header",
        "on_headers_complete",
        "on_body",
        "on_message_complete",
        "emit",  # a logging.Handler's (export.otlp: what the OTLP exporter says of a failure)
    }
)
#: attributes set on objects of other libraries (a Rich console's hook, an httpx response's
#: body, http.server's keep-alive, a function's signature for Typer)
SET_FOR_OTHERS = frozenset(
    {
        "on_broken_pipe",
        "_content",
        "close_connection",
        "__signature__",
        "__wrapped__",
        "__annotations__",
        "__class__",
        "_shape",  # Rich's Live: a redraw starts from a cleared screen after a resize
        "source_template",  # typer's bash completion script (COMP_WORDBREAKS handled)
        "whitespace_split",  # shlex's settings (quick completion splits the line as bash does)
        "commenters",
    }
)


def test_no_dead_code() -> None:
    """Issue 23, defect 9: every function is called, every constant read, every attribute that
    is written is also read somewhere in the package (by name: a coarse net, but it catches
    `tool_schema`, `TaskBook.forget`, `needs_schema`, unused constants and write-only
    counters); the rate-limit code is spelled once."""
    read: set[str] = set()  # names loaded, attributes read, words in strings (getattr, specs)
    written: dict[str, str] = {}
    defined: dict[str, str] = {}
    for path in PACKAGE.rglob("*.py"):
        rel = str(path.relative_to(PACKAGE))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for stmt in tree.body:  # module constants
            targets = stmt.targets if isinstance(stmt, ast.Assign) else []
            if isinstance(stmt, ast.AnnAssign):
                targets = [stmt.target]
            for t in targets:
                if isinstance(t, ast.Name) and t.id.isupper():
                    defined.setdefault(t.id, rel)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                if isinstance(node.ctx, ast.Load):
                    read.add(node.attr)
                else:
                    written.setdefault(node.attr, rel)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                read.add(node.id)
            elif isinstance(node, ast.keyword) and node.arg:
                read.add(node.arg)
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
            ):
                read.update(re.findall(r"[A-Za-z_]\w*", node.value))
            elif (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and not node.decorator_list
                and not node.name.startswith("__")
            ):
                defined.setdefault(node.name, rel)
    dead = [
        f"{where}: {name}"
        for name, where in defined.items()
        if name not in read and name not in CALLED_FROM_OUTSIDE
    ]
    dead += [
        f"{where}: .{name} is written, never read"
        for name, where in written.items()
        if name not in read and name not in SET_FOR_OTHERS
    ]
    assert not dead, dead
    literal = [
        f"{p.relative_to(PACKAGE)}:{tok.start[0]}"
        for p in PACKAGE.rglob("*.py")
        for tok in tokenize.generate_tokens(io.StringIO(p.read_text(encoding="utf-8")).readline)
        if tok.type == tokenize.NUMBER and tok.string == "32429"
    ]
    assert len(literal) == 1, literal  # errors.TOO_MANY_REQUESTS


def test_no_test_reads_a_pipe_line_by_line_then_communicates() -> None:
    """`Popen.communicate(timeout=...)` reads the pipes' file descriptors, not the file objects:
    lines a `readline()` took into the pipe's buffer with the one it returned are lost (a
    follower's last three lines were, in CI). Such a test takes the rest with
    `conftest.rest_of`. Judged by function, and by class (a helper class reads in one method
    and ends the process in another); a read is `X.stdout.read...()`, `for ... in X.stdout`
    or `next(X.stdout)`."""
    tests = Path(__file__).resolve().parents[1]
    found = []
    for path in sorted(tests.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scopes = [n for n in ast.walk(tree) if isinstance(n, _SCOPES)]
        for scope in scopes:
            read: set[str] = set()
            communicated: set[str] = set()
            for node in ast.walk(scope):
                pipe: ast.AST | None = None
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    if node.func.attr.startswith("read"):
                        pipe = node.func.value
                    elif node.func.attr == "communicate":
                        communicated.add(ast.unparse(node.func.value))
                elif isinstance(node, ast.For):
                    pipe = node.iter
                elif isinstance(node, ast.Call) and ast.unparse(node.func) == "next":
                    pipe = node.args[0] if node.args else None
                if isinstance(pipe, ast.Attribute) and pipe.attr in ("stdout", "stderr"):
                    read.add(ast.unparse(pipe.value))
            found += [f"{path.name}:{scope.name} ({p})" for p in sorted(read & communicated)]
    assert not found, found


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _the_cli() -> tuple[frozenset[tuple[str, ...]], frozenset[str]]:
    """What the CLI itself says: the commands that take task ids (`("get",)`, `("push",
    "set")`...: a `task_id`/`task_ids` argument) and the options that take no value
    (`--result`, `--trace`...)."""
    import typer.main

    from mcptask.cli.app import app

    taking_ids: set[tuple[str, ...]] = set()
    flags: set[str] = set()

    def walk(command: Any, path: tuple[str, ...]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))
        for p in command.params:
            if p.param_type_name == "argument" and p.name in ("task_id", "task_ids"):
                taking_ids.add(path)
            elif p.param_type_name == "option" and (p.is_flag or p.count):
                flags.update([*p.opts, *p.secondary_opts])

    walk(typer.main.get_command(app), ())
    return frozenset(taking_ids), frozenset(flags)


#: calls whose first argument is a command's name but whose others are no command line
#: (the hint's own `command_line`, a schema check, a scripted server's record of its calls)
NOT_A_COMMAND_LINE = frozenset({"command_line", "valid", "append"})
#: tests of what a dashed id before `--` does (the usage error's hint): on purpose
ID_BEFORE_DASHES_ON_PURPOSE = frozenset({"test_mcp2026.py:test_task_id_beginning_with_dash"})
#: what a server's id may be in a test: a variable, `task["taskId"]`, `r.json()[...]`,
#: `str(tid)`, an f-string (an ALL-CAPS name is a constant of the test's: not a server's)
_MAYBE_AN_ID = (ast.Name, ast.Attribute, ast.Subscript, ast.JoinedStr, ast.Call)


def _ids_before_dashes(
    words: list[ast.expr], commands: frozenset[tuple[str, ...]], flags: frozenset[str]
) -> list[ast.expr]:
    """In a command line (a call's positional arguments, a list's items), the words that may be
    a server's task id and come before `--`: after an id-taking command, neither an option nor
    an option's value (a word right after an option that takes one), nor a `*splat`."""
    from mcptask.cli.options import COMMON_OPTIONS

    text = [
        w.value if isinstance(w, ast.Constant) and isinstance(w.value, str) else None for w in words
    ]
    i = text.index("mcptask") + 1 if "mcptask" in text else 0  # [python, -m, mcptask, ...]
    # before the command: the program's words (a splat), common options (`--url U get ID`)
    while i < len(words) and (isinstance(words[i], ast.Starred) or (text[i] or "").startswith("-")):
        option = text[i] or ""
        i += 2 if COMMON_OPTIONS.get(option, False) and "=" not in option else 1
    if i < len(words) and tuple(text[i : i + 2]) in commands:
        i += 2
    elif i < len(words) and (text[i],) in commands:
        i += 1
    else:
        return []
    found: list[ast.expr] = []
    value_next = False
    for node, word in zip(words[i:], text[i:], strict=True):
        if word == "--":
            break
        if word is not None and word.startswith("-"):
            value_next = word not in flags and "=" not in word
            continue
        if value_next or isinstance(node, ast.Starred):
            value_next = False
            continue
        constant = isinstance(node, ast.Name) and node.id.isupper()
        if isinstance(node, _MAYBE_AN_ID) and not constant:
            found.append(node)
    return found


def test_no_test_gives_a_server_s_task_id_before_double_dash() -> None:
    """A task id from a server goes after `--` on a test's command line (`run_cli("get",
    "--url", url, "--", tid)`): fastmcp's random ids begin with `-` one time in 64, and
    such an id before `--` is an unknown option (exit 2, the `put -- before it` usage
    error): random failures of the full run, twice. Checked where a call's arguments or a
    list's items name a command that takes ids; values fixed at collection (`parametrize`)
    are not a server's."""
    commands, flags = _the_cli()
    tests = Path(__file__).resolve().parents[1]
    found = []
    for path in sorted(tests.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
        fixed: set[int] = set()  # under a `parametrize`: written before any server runs
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("parametrize"):
                fixed.update(id(n) for n in ast.walk(node))
        for node in ast.walk(tree):
            if id(node) in fixed:
                continue
            if isinstance(node, ast.Call):
                call: ast.AST | None = node
                words = node.args
            elif isinstance(node, ast.List | ast.Tuple):
                call = parents.get(id(node))
                words = node.elts
            else:
                continue
            name = ast.unparse(call.func) if isinstance(call, ast.Call) else ""
            if name.rpartition(".")[2] in NOT_A_COMMAND_LINE:
                continue
            ids = _ids_before_dashes(words, commands, flags)
            if not ids:
                continue
            scope = parents.get(id(node))
            while scope is not None and not isinstance(scope, ast.FunctionDef):
                scope = parents.get(id(scope))
            where = f"{path.name}:{scope.name if scope else ''}"
            if where in ID_BEFORE_DASHES_ON_PURPOSE:
                continue
            found += [f"{path.relative_to(tests)}:{node.lineno}: {ast.unparse(i)}" for i in ids]
    assert not found, found
