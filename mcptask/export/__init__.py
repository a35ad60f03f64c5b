"""The task book's stories as OpenTelemetry traces (`mcptask export`, `watch --otlp`).

`spans.py` turns a task's record and events into plain span descriptions (no OpenTelemetry
import: pure and cheap); `otlp.py` hands them to the official SDK's OTLP/HTTP exporter or
writes them as OTLP JSON lines; `live.py` exports tasks as a watch sees them end, off the
event loop."""
