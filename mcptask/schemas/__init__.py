"""The JSON Schemas (draft 2020-12) of everything mcptask prints as JSON, one file per shape,
shipped in the package; `mcptask schema NAME` prints one. docs/output.md describes each shape
and which command prints it.

The files refer to each other by `$id` (`urn:mcptask:schema:NAME`); `bundle(NAME)` embeds every
schema a file refers to under its `$defs` (a compound document, JSON Schema 2020-12 section 9.3),
so the printed schema stands alone in any validator. Only `json` and `importlib.resources` are
imported here: printing a schema needs nothing else."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: every shape, in the order docs/output.md describes them
NAMES = (
    "task",
    "list",
    "watch-event",
    "watch-summary",
    "result",
    "save",
    "cancel",
    "check",
    "tools",
    "servers",
    "push",
    "log-event",
    "log",
    "book",
    "forget",
    "prune",
    "export",
)
URN = "urn:mcptask:schema:"


def load(name: str) -> dict[str, Any]:
    """One schema as its file holds it (references to the others left as they are)."""
    if name not in NAMES:
        raise KeyError(name)
    text = resources.files(__name__).joinpath(f"{name}.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def title(name: str) -> str:
    """The schema's one-line description (its `title`)."""
    return str(load(name).get("title", name))


def refers_to(schema: Any) -> set[str]:
    """The names of the other schemas `schema` refers to (directly)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(URN):
            found.add(ref[len(URN) :].split("#", 1)[0])
        for value in schema.values():
            found |= refers_to(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= refers_to(value)
    return found


def bundle(name: str) -> dict[str, Any]:
    """`name`'s schema with every schema it needs, directly or not, embedded under `$defs`
    (keyed `mcptask:NAME`, each keeping its `$id`, so the references resolve inside it)."""
    schema = load(name)
    needed: list[str] = []
    todo = sorted(refers_to(schema))
    while todo:
        other = todo.pop(0)
        if other == name or other in needed:
            continue
        needed.append(other)
        todo.extend(sorted(refers_to(load(other))))
    if needed:
        defs = schema.setdefault("$defs", {})
        for other in sorted(needed):
            embedded = load(other)
            embedded.pop("$schema", None)
            defs[f"mcptask:{other}"] = embedded
    return schema


def text(name: str) -> str:
    """What `mcptask schema NAME` prints."""
    return json.dumps(bundle(name), indent=2, ensure_ascii=False) + "\n"
