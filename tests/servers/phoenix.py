"""Arize Phoenix 20.26.1: a real OTLP trace backend for the export tests.

Environment ``phoenix``: ``arize-phoenix==20.26.1`` in its own venv under ``.cache/servers``
(851 MB; ``python tests/servers/setup.py --only phoenix`` prebuilds it, 92 s cold on 2 cores).

``start_phoenix()`` runs ``phoenix serve`` on two free ports (HTTP on 127.0.0.1; gRPC, which
Phoenix always binds on all interfaces, ``[::]``) with a fresh temporary working directory (its
SQLite database and its log), waits for uvicorn's "Uvicorn running on" line (read from the
server's output as it comes: no polling; a 180 s deadline) and returns a ``PhoenixServer``.
Start-up is 18-25 s on an idle 2-core machine (16 s of it is Phoenix importing itself), 54 s
for two at once under load. The ``phoenix`` fixture (``servers.phoenix_plugin``) starts one per
pytest session, so one per xdist worker that runs a test using it.

What Phoenix 20.26.1 does with OTLP, observed against the running server
(tests/e2e/test_phoenix_backend.py keeps these true):

* Ingestion is asynchronous: ``POST /v1/traces`` answers 200 first, then queues the spans (a
  background task); a bulk inserter writes the queue in order, in 0.1 s rounds (``wait_spans``
  waits for spans to be there; ``settle()`` for everything sent so far to be written).
* **A re-sent span is dropped, not duplicated**: the ``spans`` table is unique on ``span_id``
  alone (across traces) and inserts ``ON CONFLICT DO NOTHING``. Sending a span again, even with
  other content (name, end time, attributes), keeps the first version unchanged; a span whose
  ``span_id`` another trace already used is dropped too.
* The project: the HTTP header ``x-project-name``, else the resource attribute
  ``openinference.project.name``, else ``default``; but a trace stays in the project of the
  first of its spans that arrived (later spans land there whatever they say).

REST shapes (``GET /v1/projects``, ``GET /v1/projects/<name>/spans``):

* ``/v1/projects`` -> ``{"data": [{"name": "default", "description": "Default project",
  "id": "UHJvamVjdDox"}], "next_cursor": null}`` (``id`` is a base64 GraphQL global id).
* ``/v1/projects/<name>/spans?limit=N&cursor=C&sort=start_time&order=asc&trace_id=T`` ->
  ``{"data": [span, ...], "next_cursor": "U3Bhbjoy" | null}``; ``limit`` is 1..1000 (default
  100); ``next_cursor`` is null on the last page, else passed back as ``cursor`` with the same
  ``sort``/``order``; the default order is newest insertion first (``sort=id``,
  ``order=desc``). Filters: ``trace_id`` / ``span_id`` / ``name`` (repeatable), ``parent_id``
  (``null`` for roots), ``start_time`` / ``end_time``. An unknown project is 404 (a project is
  created by the first span that names it).
* a span::

    {"id": "U3BhbjoxMg==",                   # Phoenix's global id, not the OTLP span id
     "name": "tasks/get",
     "context": {"trace_id": "0af7651916cd43dd8448eb211c80319c",   # 32 lowercase hex digits
                 "span_id": "b7ad6b7169203331"},                    # 16 lowercase hex digits
     "span_kind": "UNKNOWN",   # attribute openinference.span.kind (TOOL, AGENT, CHAIN...),
                               # which is taken out of "attributes"
     "parent_id": "00f067aa0ba902b7",        # 16 lowercase hex digits; null for a root
     "start_time": "2026-12-02T10:00:00.500000+00:00",
     "end_time": "2026-12-02T10:00:03+00:00",
     "status_code": "ERROR",                 # "UNSET", "OK" or "ERROR"
     "status_message": "boom",
     "attributes": {"rpc.method": "tasks/get", "http.status_code": 200, "retried": false},
     "events": [{"name": "status", "timestamp": "2026-12-02T10:00:01.250000+00:00",
                 "attributes": {"status": "working", "seq": 1}}]}

  Times (span and event alike) are ISO 8601 in UTC written ``+00:00`` (``datetime.fromisoformat``
  reads them), in microseconds: nanoseconds are rounded, and a zero fraction is left out
  (``...T10:00:03+00:00``). Attributes keep their OTLP types (string, int, bool, float; arrays
  become lists) with their dotted keys as sent. Events keep the order they were sent in. The
  resource's attributes (``service.name``...) are not in the span.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx

from servers.common import free_port, venv_python

PHOENIX_VERSION = "20.26.1"
PHOENIX_REQUIREMENTS = [f"arize-phoenix=={PHOENIX_VERSION}"]

#: where ``PhoenixServer.settle()`` puts its marker spans
MARKER_PROJECT = "mcptask-fixture-markers"
#: uvicorn's line once it listens, printed after Phoenix's start-up (gRPC server included)
READY_LINE = b"Uvicorn running on"
#: generous: Phoenix takes 18-25 s on an idle 2-core machine, 54 s for two at once under load,
#: and a suite on 4 xdist workers may start several
START_TIMEOUT = 180.0
_START_ATTEMPTS = 3
_LOG_LINES = 200

#: Phoenix without its extras: no SQL echo of the migrations, no telemetry, nothing fetched from
#: the internet (the WASM sandbox, the docs MCP server), no assistant, no MCP server of its own
PHOENIX_ENV = {
    "PHOENIX_HOST": "127.0.0.1",
    "PHOENIX_LOG_MIGRATIONS": "false",
    "PHOENIX_TELEMETRY_ENABLED": "false",
    "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
    "PHOENIX_ENABLE_MCP_SERVER": "false",
    "PHOENIX_ALLOWED_SANDBOX_PROVIDERS": "NONE",
    "PYTHONUNBUFFERED": "1",
}


def phoenix_python() -> Path:
    """The python of the Phoenix venv, built once (a half-built one is rebuilt)."""
    return venv_python("phoenix", PHOENIX_REQUIREMENTS)


def phoenix_command() -> Path:
    """The ``phoenix`` console script of the venv."""
    script = phoenix_python().parent / "phoenix"
    if not script.exists():
        raise RuntimeError(f"{script} is missing: the phoenix venv is incomplete")
    return script


ENVIRONMENTS: dict[str, Callable[[], Path]] = {"phoenix": phoenix_command}
"""For ``setup.py`` (``--only phoenix``)."""


class PhoenixStartError(RuntimeError):
    """Phoenix did not come up; ``port_taken`` when another process had one of its ports."""

    def __init__(self, message: str, *, port_taken: bool = False) -> None:
        super().__init__(message)
        self.port_taken = port_taken


@dataclass
class PhoenixServer:
    """A running ``phoenix serve``: where to send OTLP, and its spans read back over REST."""

    port: int
    grpc_port: int
    working_dir: Path
    proc: subprocess.Popen[bytes]
    log_path: Path
    _reader: threading.Thread = field(repr=False)
    #: seconds from the start of the process to its readiness
    started_in: float = 0.0
    _client: httpx.Client | None = field(default=None, repr=False)
    _stopped: bool = field(default=False, repr=False)

    @property
    def otlp_endpoint(self) -> str:
        """The base URL for ``OTEL_EXPORTER_OTLP_ENDPOINT`` (the SDK appends ``/v1/traces``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def traces_url(self) -> str:
        """The OTLP/HTTP traces endpoint (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``endpoint=``)."""
        return f"{self.otlp_endpoint}/v1/traces"

    @property
    def grpc_endpoint(self) -> str:
        """The OTLP/gRPC endpoint."""
        return f"http://127.0.0.1:{self.grpc_port}"

    def _http(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(base_url=self.otlp_endpoint, timeout=30, trust_env=False)
        return self._client

    def projects(self) -> list[dict[str, Any]]:
        """Every project (``name``, ``description``, ``id``)."""
        return self._pages("/v1/projects", {})

    def spans(
        self, project: str = "default", *, trace_id: str | None = None, page_size: int = 1000
    ) -> list[dict[str, Any]]:
        """Every span of ``project`` (optionally of one trace), oldest ``start_time`` first,
        following the pagination (``page_size`` spans a request, 1..1000); ``[]`` when the
        project does not exist (yet)."""
        params = {"sort": "start_time", "order": "asc", "limit": str(page_size)}
        if trace_id is not None:
            params["trace_id"] = trace_id
        try:
            return self._pages(f"/v1/projects/{project}/spans", params)
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code == 404:
                return []
            raise

    def wait_spans(
        self, trace_id: str, count: int, project: str = "default", timeout: float = 60
    ) -> list[dict[str, Any]]:
        """The spans of ``trace_id`` in ``project`` once there are at least ``count`` of them
        (Phoenix writes what it received a moment later); AssertionError after ``timeout``
        seconds, naming what was there."""
        deadline = time.monotonic() + timeout
        pause = 0.05
        while True:
            found = self.spans(project, trace_id=trace_id)
            if len(found) >= count:
                return found
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"phoenix exited ({self.proc.returncode}) while waiting for spans\n"
                    + self.log_tail()
                )
            if time.monotonic() >= deadline:
                names = [p.get("name") for p in self.projects()]
                raise AssertionError(
                    f"trace {trace_id} has {len(found)} span(s) in project {project!r} after "
                    f"{timeout:g} s, {count} wanted; projects: {names}; spans: {found}"
                )
            # Phoenix's bulk inserter works in 0.1 s rounds: ask again soon, then less often
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, 0.5)

    def settle(self, timeout: float = 60) -> None:
        """Return once Phoenix has written every span it was sent before this call (to count
        what is *not* there, e.g. that a re-sent span made no duplicate).

        Phoenix queues the spans of a request once it has answered it and writes its queue in
        order; so this sends a marker span (a new trace in project ``MARKER_PROJECT``, out of
        the way of ``default``) and waits until the marker is written."""
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import ReadableSpan
        from opentelemetry.sdk.trace.export import SpanExportResult
        from opentelemetry.trace import SpanContext

        trace_id = random.getrandbits(128) | 1
        now = time.time_ns()
        marker = ReadableSpan(
            name="settle",
            context=SpanContext(trace_id, random.getrandbits(64) | 1, is_remote=False),
            resource=Resource.create({"openinference.project.name": MARKER_PROJECT}),
            start_time=now,
            end_time=now,
        )
        exporter = OTLPSpanExporter(endpoint=self.traces_url, timeout=30)
        try:
            result = exporter.export([marker])
        finally:
            exporter.shutdown()  # type: ignore[no-untyped-call]
        if result is not SpanExportResult.SUCCESS:
            raise AssertionError(f"phoenix refused the marker span ({result})\n" + self.log_tail())
        self.wait_spans(f"{trace_id:032x}", 1, project=MARKER_PROJECT, timeout=timeout)

    def _pages(self, path: str, params: dict[str, str]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            query = dict(params) if cursor is None else {**params, "cursor": cursor}
            response = self._http().get(path, params=query)
            response.raise_for_status()
            body = response.json()
            items.extend(body["data"])
            cursor = body.get("next_cursor")
            if not cursor:
                return items

    def log_tail(self, n: int = _LOG_LINES) -> str:
        """The last ``n`` lines of the server's output."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-n:])

    def stop(self) -> None:
        """Terminate (then kill) the server and remove its working directory; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self._halt()
        shutil.rmtree(self.working_dir, ignore_errors=True)

    def _halt(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._reader.join(timeout=10)


def _pump(out: IO[bytes], log_path: Path, ready: threading.Event) -> None:
    """Copy the server's output to its log as it comes; set ``ready`` at uvicorn's line or
    when the output ends (the process exited).

    Both ports are bound exclusively (uvicorn; Phoenix's gRPC server turns SO_REUSEPORT off), and
    Phoenix exits (code 3) when either is taken, so the ready line means both are its own: a
    port taken between ``free_port()`` and the bind (another xdist worker) makes
    ``start_phoenix`` try again on new ports."""
    with open(log_path, "ab") as log:
        for line in out:
            log.write(line)
            log.flush()
            if READY_LINE in line:
                ready.set()
    ready.set()


def _start_once(command: Path, timeout: float) -> PhoenixServer:
    port = free_port()
    grpc_port = free_port()
    while grpc_port == port:
        grpc_port = free_port()
    working_dir = Path(tempfile.mkdtemp(prefix="mcptask-phoenix-"))
    log_path = working_dir / "phoenix.log"
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))
    } | PHOENIX_ENV
    env |= {
        "PHOENIX_WORKING_DIR": str(working_dir),
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
    }
    started = time.monotonic()
    proc = subprocess.Popen(
        [str(command), "serve"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=working_dir,
    )
    assert proc.stdout is not None
    ready = threading.Event()
    reader = threading.Thread(
        target=_pump, args=(proc.stdout, log_path, ready), name="phoenix-log", daemon=True
    )
    reader.start()
    server = PhoenixServer(
        port=port,
        grpc_port=grpc_port,
        working_dir=working_dir,
        proc=proc,
        log_path=log_path,
        _reader=reader,
    )
    port_taken = False
    if not ready.wait(timeout):
        problem = f"phoenix did not listen within {timeout:g} s"
    elif proc.poll() is not None:
        problem = f"phoenix exited with code {proc.returncode} before listening"
        log = server.log_tail().lower()
        port_taken = "address already in use" in log or "failed to bind" in log
    else:
        try:
            answer = httpx.get(f"{server.otlp_endpoint}/healthz", timeout=10, trust_env=False)
        except httpx.HTTPError as exc:
            answer = None
            problem = f"phoenix printed that it listens, but /healthz failed: {exc!r}"
        if answer is not None:
            if answer.status_code == 200:
                server.started_in = time.monotonic() - started
                return server
            problem = f"phoenix /healthz answered {answer.status_code}"
    server._halt()
    log = server.log_tail()
    server.stop()
    raise PhoenixStartError(
        f"{problem} (HTTP port {port}, gRPC port {grpc_port}): {command} serve\n"
        f"--- phoenix log ---\n{log}",
        port_taken=port_taken,
    )


def start_phoenix(timeout: float = START_TIMEOUT) -> PhoenixServer:
    """Build (once) and start Phoenix on free ports; the caller must ``stop()`` it."""
    command = phoenix_command()
    last: PhoenixStartError | None = None
    for _ in range(_START_ATTEMPTS):
        try:
            return _start_once(command, timeout)
        except PhoenixStartError as exc:
            if not exc.port_taken:
                raise
            last = exc
    assert last is not None
    raise last
