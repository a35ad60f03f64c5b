"""`mcptask schema [NAME]`: print the JSON Schema of one of mcptask's output shapes (shipped in
`mcptask/schemas/`, described in docs/output.md), or list the shapes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcptask.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from mcptask.session.context import Context


@dataclass
class SchemaOptions:
    name: str | None = None


async def run_schema(opts: SchemaOptions, ctx: Context) -> int:
    from mcptask import schemas

    if opts.name is None:
        for name in schemas.NAMES:
            ctx.out.stdout.write(f"{name:<14} {schemas.title(name)}\n")
        return ExitCode.OK
    if opts.name not in schemas.NAMES:
        raise UsageError(f"no schema {opts.name!r}; the shapes: {', '.join(schemas.NAMES)}")
    if ctx.out.jq is not None:
        ctx.out.line(schemas.bundle(opts.name))
    else:
        ctx.out.stdout.write(schemas.text(opts.name))
    return ExitCode.OK
