"""The ``phoenix`` fixture: a real OTLP trace backend (Arize Phoenix 20.26.1) for the tests of
export. Registered in ``tests/conftest.py``'s ``pytest_plugins``; see ``servers/phoenix.py`` for
what Phoenix does with the spans it gets and the shapes its REST API gives them back in.

    def test_export(phoenix: PhoenixServer) -> None:
        exporter = OTLPSpanExporter(endpoint=phoenix.traces_url)   # or
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.otlp_endpoint}
        ...
        spans = phoenix.wait_spans(trace_id_hex, count=2)

One server per pytest session (per xdist worker, on its own free ports and working directory):
spans of other tests are there too, so look up your own trace. A server that cannot be built
or started makes the fixture raise with its log, so the tests using it ERROR: never skipped.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from servers.phoenix import PhoenixServer, start_phoenix


@pytest.fixture(scope="session")
def phoenix() -> Iterator[PhoenixServer]:
    """Arize Phoenix on 127.0.0.1: ``.otlp_endpoint``, ``.traces_url``, ``.spans(project)``,
    ``.wait_spans(trace_id, count, project, timeout)``, ``.projects()``."""
    server = start_phoenix()
    try:
        yield server
    finally:
        server.stop()
