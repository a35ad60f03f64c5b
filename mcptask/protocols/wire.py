"""Public wire vocabulary shared by the protocol modules and `check`: error codes, status sets,
how a tool's task support is read, the human text of a result. Defined once here."""

from __future__ import annotations

import json
from typing import Any

# -- JSON-RPC error codes ---------------------------------------------------------------------
# the transports' own (what a request nobody answers gets), named here for the protocols
from mcptask.transports.rpc import METHOD_NOT_FOUND as METHOD_NOT_FOUND

INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
#: MCP servers that rate-limit polling: `errors.TOO_MANY_REQUESTS` (the kernel reads it)

#: A2A
TASK_NOT_FOUND = -32001
TASK_NOT_CANCELABLE = -32002
PUSH_NOT_SUPPORTED = -32003
UNSUPPORTED_OPERATION = -32004
VERSION_NOT_SUPPORTED = -32009

#: MCP 2026-07-28
HEADER_MISMATCH = -32020
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022

# -- MCP task statuses ------------------------------------------------------------------------

MCP_STATUSES: tuple[str, ...] = ("working", "input_required", "completed", "failed", "cancelled")
MCP_TERMINAL: tuple[str, ...] = ("completed", "failed", "cancelled")

#: `execution.taskSupport` values; absent means "forbidden"
TASK_SUPPORT: tuple[str, ...] = ("forbidden", "optional", "required")


def task_support(tool: Any) -> str | None:
    """A tool's `execution.taskSupport` as the server wrote it, when it is a string (None:
    absent or not a string; absent means "forbidden")."""
    execution = tool.get("execution") if isinstance(tool, dict) else None
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if isinstance(value, str) else None


def runs_as_task(tool: Any) -> bool:
    return task_support(tool) in ("optional", "required")


def result_text(payload: Any) -> tuple[str, bool]:
    """The human text of a result payload (MCP CallToolResult or A2A artifacts) and whether
    it is an error."""
    if isinstance(payload, dict):
        is_error = payload.get("isError") is True
        parts: list[str] = []
        content = payload.get("content")
        if isinstance(content, list):
            for item in content:
                if not isinstance(item, dict):
                    continue
                kind = item.get("type")
                if kind == "text" and isinstance(item.get("text"), str):
                    parts.append(item["text"])
                elif kind in ("image", "audio"):
                    parts.append(f"[{kind}: {item.get('mimeType', '?')}]")
                elif kind == "resource_link":
                    parts.append(f"[resource: {item.get('uri', '?')}]")
                elif kind == "resource":
                    res = item.get("resource")
                    if isinstance(res, dict) and isinstance(res.get("text"), str):
                        parts.append(res["text"])
                    else:
                        uri = res.get("uri", "?") if isinstance(res, dict) else "?"
                        parts.append(f"[resource: {uri}]")
                else:
                    parts.append(json.dumps(item, ensure_ascii=False))
        if "text" in payload and isinstance(payload["text"], str) and not parts:
            parts.append(payload["text"])
        if not parts and payload.get("structuredContent") is not None:
            parts.append(json.dumps(payload["structuredContent"], indent=2, ensure_ascii=False))
        if parts:
            return "\n".join(parts), is_error
    if isinstance(payload, str):
        return payload, False
    return json.dumps(payload, indent=2, ensure_ascii=False), False
