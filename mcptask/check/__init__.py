"""`mcptask check`: walk a target's task support and judge each observation against the spec.

`engine` selects and runs the checks of a protocol's suite (`mcp2025`, `mcp2026`, `a2a`, built on
`suite`); `report` prints what they found (a Rich table, JUnit XML).
"""
