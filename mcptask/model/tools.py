"""A server's tool, as mcptask shows it whatever protocol version listed it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Tool:
    """A tool as `tools/list` shows it, normalized: `taskSupport` is one of
    `protocols.wire.TASK_SUPPORT` (the spec's default, `forbidden`, when the server says
    nothing), `raw` what it sent."""

    name: str
    title: str | None
    description: str | None
    taskSupport: str
    inputSchema: dict[str, Any]
    raw: dict[str, Any]

    @property
    def required(self) -> list[str]:
        """The arguments the schema requires, in its order."""
        req = self.inputSchema.get("required")
        return [r for r in req if isinstance(r, str)] if isinstance(req, list) else []

    @property
    def runs_as_task(self) -> bool:
        return self.taskSupport in ("required", "optional")

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "taskSupport": self.taskSupport,
            "inputSchema": self.inputSchema,
            "raw": self.raw,
        }
