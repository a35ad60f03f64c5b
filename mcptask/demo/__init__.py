"""The embedded demo server (MCP 2025-11-25 and 2026-07-28 with tasks)."""
