"""A2A 1.0 over its gRPC binding, through the official SDK's generated stubs (`a2a-sdk[grpc]`,
mcptask's optional `grpc` extra: imported only here, and this module only for a gRPC endpoint).

The A2A spec's one data model is protobuf; its JSON (what JSON-RPC 1.0 and HTTP+JSON carry) is
that model's ProtoJSON. So everything but the wire is shared with `A2A10`: a JSON-RPC 1.0
method's params become its gRPC request (`json_format.ParseDict`), the answer becomes the JSON
JSON-RPC would have given (`MessageToDict`), and `SubscribeToTask` is a server stream of
`StreamResponse`s read as JSON-RPC's stream events.

Where: the agent card (read over HTTP at the URL given, as detection does) names the gRPC
interface (`host:port`); mcptask connects to the port it names on the host that was typed (as
for JSON-RPC: a card often names the host as the agent sees itself), over TLS when the typed URL
is `https` or the card says `https://`/`grpcs://`. Credentials (a token, `--header`s) go as call
metadata to that channel only: the host that was typed.

Errors: a2a-sdk puts a `google.rpc.Status` with an `ErrorInfo` (`reason`) in the trailer
`grpc-status-details-bin`; the reason is the A2A error JSON-RPC would have given (the same table
as HTTP+JSON's, `a2a_rest.REASONS`). Without one, the gRPC status code says what it can:
UNAUTHENTICATED / PERMISSION_DENIED (auth), UNAVAILABLE / DEADLINE_EXCEEDED (transient,
retried like a lost connection), NOT_FOUND (the task), UNIMPLEMENTED (no such method)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable
from urllib.parse import urlsplit

from mcptask.errors import (
    AuthError,
    ProtocolError,
    RpcError,
    ServerError,
    TransportError,
    UsageError,
)
from mcptask.model.refs import TaskRef
from mcptask.model.task import Task
from mcptask.protocols.a2a import (
    A2A10,
    CARD_LIMIT,
    GRPC_NAME,
    card_endpoint,
    card_urls,
    classify,
)
from mcptask.protocols.trace_context import TaskTrace
from mcptask.protocols.wire import METHOD_NOT_FOUND, TASK_NOT_FOUND, UNSUPPORTED_OPERATION
from mcptask.text.sanitize import one_line
from mcptask.transports.rpc import FetchesUrls, Traces

if TYPE_CHECKING:
    import httpx

#: how mcptask asks for the grpc extra when an agent offers only gRPC
INSTALL_HINT = "pip install 'mcptask[grpc]'"
#: seconds a unary call may take
CALL_TIMEOUT = 60.0

#: JSON-RPC 1.0 method -> the request message it takes over gRPC (the stub's method has the
#: JSON-RPC method's name)
_REQUESTS = {
    "SendMessage": "SendMessageRequest",
    "GetTask": "GetTaskRequest",
    "CancelTask": "CancelTaskRequest",
    "ListTasks": "ListTasksRequest",
    "CreateTaskPushNotificationConfig": "TaskPushNotificationConfig",
    "GetTaskPushNotificationConfig": "GetTaskPushNotificationConfigRequest",
    "ListTaskPushNotificationConfigs": "ListTaskPushNotificationConfigsRequest",
    "DeleteTaskPushNotificationConfig": "DeleteTaskPushNotificationConfigRequest",
}


@runtime_checkable
class _Credentials(Protocol):
    """An HTTP transport that sets a request's credentials when it goes to its own origin."""

    url: str

    def apply_credentials(self, request: httpx.Request) -> None: ...


def _sdk() -> tuple[Any, Any, Any, Any]:
    """grpc, the generated messages and stubs, and protobuf's JSON mapping; a one-line hint
    where the extra is not installed."""
    try:
        import grpc
        import grpc.aio
        from a2a.types import a2a_pb2, a2a_pb2_grpc
        from google.protobuf import json_format
    except ImportError:
        raise UsageError(
            f"the agent speaks A2A over gRPC: mcptask needs its grpc extra for that "
            f"({INSTALL_HINT})"
        ) from None
    return grpc, a2a_pb2, a2a_pb2_grpc, json_format


def grpc_target(typed: str, named: str) -> tuple[str, bool]:
    """The `host:port` to connect to, and whether over TLS: the port the card names, on the
    host that was typed; TLS when the typed URL is `https` or the card's says so."""
    n = urlsplit(named if "://" in named else "grpc://" + named)
    t = urlsplit(typed)
    tls = n.scheme in ("https", "grpcs") or t.scheme == "https"
    try:
        port = n.port or (443 if tls else 80)
    except ValueError:
        raise ProtocolError(f"the agent card names a gRPC interface at {named!r}") from None
    host = t.hostname or n.hostname
    if not host:
        raise ProtocolError(f"the agent card names a gRPC interface at {named!r}")
    return (f"[{host}]" if ":" in host else host) + f":{port}", tls


class A2AGrpc(A2A10):
    """A2A 1.0 over gRPC; the URL given is where the agent card is."""

    name: ClassVar[str] = GRPC_NAME
    other: ClassVar[str] = "a2a-1.0"
    binding: ClassVar[str] = "GRPC"

    #: the aio channel and stub (commands on the event loop), the blocking ones (one-shot
    #: commands run without a loop: `get`, `cancel`, `list`)
    _channel: Any = None
    _stub: Any = None
    _sync_channel: Any = None
    _sync_stub: Any = None
    _target: str | None = None
    _tls: bool = False
    _metadata: tuple[tuple[str, str], ...] = ()

    async def aclose(self) -> None:
        if self._sync_channel is not None:
            sync, self._sync_channel = self._sync_channel, None
            sync.close()
        if self._channel is not None:
            channel, self._channel = self._channel, None
            await channel.close()

    async def _connect(self, *, aio: bool) -> Any:
        """The stub, on a channel opened once to the gRPC interface the card names: an aio
        one on the event loop, a blocking one without (`aio`)."""
        stub = self._stub if aio else self._sync_stub
        if stub is not None:
            return stub
        grpc, _, pb_grpc, _ = _sdk()
        if self._target is None:
            named = await self._grpc_interface()
            self._target, self._tls = grpc_target(self.rpc.transport.url, named)
            self._metadata = self._credentials()
            self._trace(f"* the agent card names the gRPC interface {named}: {self._target}")
        where = grpc.aio if aio else grpc
        if self._tls:
            credentials = grpc.ssl_channel_credentials(_roots())
            channel = where.secure_channel(self._target, credentials)
        else:
            channel = where.insecure_channel(self._target)
        stub = pb_grpc.A2AServiceStub(channel)
        if aio:
            self._channel, self._stub = channel, stub
        else:
            self._sync_channel, self._sync_stub = channel, stub
        return stub

    async def _grpc_interface(self) -> str:
        transport = self.rpc.transport
        if not isinstance(transport, FetchesUrls):
            raise ServerError("A2A over gRPC needs the agent card's URL (--url)")
        for card_url in card_urls(transport.url):
            try:
                response = await transport.get(card_url, max_body=CARD_LIMIT, json_only=True)
                card = response.json() if response.status_code == 200 else None
            except (ProtocolError, ValueError):
                continue
            named = card_endpoint(card, self.name) if isinstance(card, dict) else None
            if named:
                return named
        raise ServerError(f"the agent card at {transport.url} names no gRPC 1.0 interface")

    def _credentials(self) -> tuple[tuple[str, str], ...]:
        """The headers the endpoint's HTTP transport sends to its own origin (a token,
        `--header`s), as call metadata (lower-case keys), plus `a2a-version`."""
        import httpx

        transport = self.rpc.transport
        pairs = [("a2a-version", "1.0")]
        if isinstance(transport, _Credentials):
            request = httpx.Request("GET", transport.url)
            transport.apply_credentials(request)
            for key, value in request.headers.items():
                k = key.lower()
                if k in ("host", "a2a-version", "content-length") or k.startswith(":"):
                    continue
                pairs.append((k, value))
        return tuple(pairs)

    def _trace(self, line: str) -> None:
        transport = self.rpc.transport
        if isinstance(transport, Traces):
            transport.trace(line)

    # -- the wire -------------------------------------------------------------------------------

    def _call_metadata(self, trace: TaskTrace | None) -> tuple[tuple[str, str], ...]:
        """The call's metadata: the credentials, and a request about a task its trace (made
        once per task)."""
        if trace is None:
            return self._metadata
        return trace.form(self.name, lambda fields: (*self._metadata, *fields.items()))

    async def _request(
        self, method: str, params: dict[str, Any], *, trace: TaskTrace | None = None
    ) -> Any:
        aio = _on_a_loop()
        stub = await self._connect(aio=aio)
        grpc, pb, _, json_format = _sdk()
        kind = _REQUESTS.get(method)
        if kind is None:
            raise ServerError(f"mcptask does not speak {method} over A2A gRPC")
        try:
            request = json_format.ParseDict(params, getattr(pb, kind)(), ignore_unknown_fields=True)
        except json_format.ParseError as exc:
            raise UsageError(f"{method}: {one_line(str(exc), 200)}") from None
        self._trace(f"> gRPC {method} {self._target}")
        try:
            call = getattr(stub, method)(
                request, metadata=self._call_metadata(trace), timeout=CALL_TIMEOUT
            )
            answer = await call if aio else call
        except grpc.RpcError as exc:
            raise self._failure(exc, method) from None
        data = json_format.MessageToDict(answer)
        self._trace(f"< gRPC {method} OK")
        if method == self.m_list and isinstance(data, dict):
            data.setdefault("tasks", [])  # an empty repeated field is not in ProtoJSON
        return data

    async def _push_call(self, which: int, params: dict[str, Any], ref: TaskRef) -> Any:
        method = self._PUSH_METHODS["1.0"][which]
        try:
            return await self._request(method, params, trace=ref.trace)
        except RpcError as exc:
            raise self._push_error(exc, method, ref, which) from None

    def _failure(self, exc: Any, method: str) -> Exception:
        """A gRPC error as the error JSON-RPC would have given (`RpcError` with the A2A code
        where the trailer names one), else by its status code."""
        from mcptask.protocols.a2a_rest import REASONS

        grpc = _sdk()[0]
        code = exc.code()
        message = one_line(str(exc.details() or code.name), 300)
        reason = _reason(exc)
        if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
            return AuthError(f"the agent refused {method} over gRPC: {code.name} {message}")
        if reason in REASONS:
            return RpcError(REASONS[reason], message, {"reason": reason})
        if code == grpc.StatusCode.NOT_FOUND:
            return RpcError(TASK_NOT_FOUND, message)
        if code == grpc.StatusCode.UNIMPLEMENTED:
            return RpcError(METHOD_NOT_FOUND, message)
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return TransportError(f"gRPC {self._target}: {code.name} ({message})")
        return ServerError(f"the agent answered {method} over gRPC with {code.name}: {message}")

    async def subscribe(self, ref: TaskRef) -> AsyncIterator[Task]:
        """`SubscribeToTask`: a server stream of StreamResponses (the task, status and artifact
        updates), as JSON-RPC's stream events. A finished task is read once instead."""
        stub = await self._connect(aio=True)
        grpc, pb, _, json_format = _sdk()
        call = stub.SubscribeToTask(
            pb.SubscribeToTaskRequest(id=ref.task_id), metadata=self._call_metadata(ref.trace)
        )
        self._trace(f"> gRPC SubscribeToTask {self._target}")
        current: dict[str, Any] | None = None
        try:
            async for response in call:
                kind, event = classify(json_format.MessageToDict(response))
                if kind == "message":
                    continue
                current, task = self.apply_event(current, kind, event)
                yield task
                if task.terminal:
                    return
        except grpc.RpcError as exc:
            failure = self._failure(exc, self.m_subscribe)
            if isinstance(failure, RpcError) and failure.code == UNSUPPORTED_OPERATION:
                done = await self.get(ref)
                if done.terminal:
                    yield done
                    return
            if isinstance(failure, RpcError):
                raise self._error(failure, self.m_subscribe, ref) from None
            raise failure from None
        finally:
            call.cancel()


def _on_a_loop() -> bool:
    """Whether an event loop runs (one-shot commands run without one: their calls block)."""
    import sys

    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _roots() -> bytes | None:
    """The CA certificates of `SSL_CERT_FILE` (as for HTTP), else gRPC's own."""
    import os

    cafile = os.environ.get("SSL_CERT_FILE")
    if not cafile:
        return None
    try:
        with open(cafile, "rb") as f:
            return f.read(4 * 1024 * 1024)
    except OSError as exc:
        raise UsageError(f"SSL_CERT_FILE {cafile}: {exc.strerror}") from None


def _reason(exc: Any) -> str | None:
    """The `ErrorInfo.reason` in a gRPC error's `grpc-status-details-bin` trailer."""
    try:
        from google.rpc import error_details_pb2, status_pb2
    except ImportError:  # pragma: no cover (googleapis-common-protos comes with a2a-sdk)
        return None
    for key, value in exc.trailing_metadata() or ():
        if key != "grpc-status-details-bin" or not isinstance(value, bytes):
            continue
        try:
            status = status_pb2.Status.FromString(value)
        except Exception:
            return None
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info) and info.reason:
                return str(info.reason)
    return None
