"""The package's shape (issue 14): one module per command, no import circle, exit codes named in
one place, protocol names spelled only by the protocol modules, their check suites and the
registry, transport features reached through typed capabilities."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

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
    """Exit statuses are spelled `ExitCode.X` outside errors.py."""
    bare = re.compile(
        r"(Exit\(\d+\)|TaskEnded\([^)]*,\s*\d+\)|exit_code\s*=\s*\d+|return [1-9]\d*$"
        r"|code = \d+$)"
    )
    offenders = []
    for path in [*(PACKAGE / "commands").glob("*.py"), *(PACKAGE / "cli").glob("*.py")]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if bare.search(line.strip()):
                offenders.append(f"{path.name}:{n}: {line.strip()}")
    assert not offenders, offenders


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
    """`getattr`/`hasattr` on a transport is what the typed capabilities in `rpc` replace."""
    pattern = re.compile(r"(getattr|hasattr)\([^)]*transport")
    for path in [*(PACKAGE / "protocols").glob("*.py"), *(PACKAGE / "check").glob("*.py")]:
        text = path.read_text(encoding="utf-8")
        assert not pattern.search(text), path


#: what each room of the package may import at run time (docs/architecture.md draws the same);
#: `kernel` is errors.py, model.py and pacing.py at the root, which everything may use
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
        }
    ),
    "session": frozenset({"auth", "output", "protocols", "transports", "state", "text"}),
    "check": frozenset({"protocols", "transports", "text"}),
    "scheduler": frozenset({"protocols", "text"}),
    "output": frozenset({"protocols", "text", "schemas"}),
    "auth": frozenset({"transports", "state", "text"}),
    "demo": frozenset({"text"}),
    "protocols": frozenset({"transports", "text"}),
    "transports": frozenset({"text"}),
    "state": frozenset({"text"}),
    "text": frozenset(),
    "schemas": frozenset(),
    "kernel": frozenset(),
}
KERNEL = ("errors", "model", "pacing")


def room(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__main__",):
        return "root"
    if len(parts) == 2 and parts[1] in KERNEL:
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
        for node in tree.body:  # module constants
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
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
