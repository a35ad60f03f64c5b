"""The error hierarchy. Every failure mcptask reports is one of these; `exit_code_for` is the
only place that turns an exception into a process exit status (see the CLI contract)."""

from __future__ import annotations

from enum import IntEnum
from typing import Any


class ExitCode(IntEnum):
    """mcptask's exit statuses (the CLI contract's table): the only place they are numbered."""

    OK = 0
    INTERNAL = 1
    USAGE = 2
    AUTH = 3
    SERVER = 4
    FAILED = 5
    INPUT = 6
    TIMEOUT = 7
    CANCELLED = 8
    NOT_FOUND = 9
    INCOMPLETE = 10
    NOT_APPLICABLE = 11
    #: SIGHUP: the terminal closed (128 + 1)
    HANGUP = 129
    INTERRUPTED = 130
    #: SIGQUIT (Ctrl-\\): 128 + 3
    QUIT = 131
    TERMINATED = 143


#: the JSON-RPC error code of an MCP server that rate-limits (polling): a failure worth retrying
TOO_MANY_REQUESTS = -32429


class McptaskError(Exception):
    """Base class: a failure with a one-line message for the user."""

    exit_code: int = ExitCode.INTERNAL

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(McptaskError):
    """The command line or configuration is wrong (exit 2)."""

    exit_code: int = ExitCode.USAGE


class AuthError(McptaskError):
    """Authentication or permission refused: HTTP 401/403 (exit 3)."""

    exit_code: int = ExitCode.AUTH


class ServerError(McptaskError):
    """Unreachable, timed out, not the protocol, or no task support (exit 4). The fields are
    set where the error is made (the HTTP transport maps every HTTP failure in one place), so
    that nobody needs to read them back out of the message."""

    exit_code: int = ExitCode.SERVER
    #: the HTTP status of the answer that failed, when there was one
    http_status: int | None = None
    #: seconds the server asked to wait (`Retry-After`)
    retry_after: float | None = None
    #: the server's own words (an HTTP error body's `detail`), when it gave some
    detail: str | None = None


class TransportError(ServerError):
    """The connection failed or timed out: transient (unless `transient` says otherwise)."""

    #: False for failures that retrying cannot mend (a stdio server that exited)
    transient = True
    #: the connection was refused (nothing listens there, or the server turns connections
    #: away): a watch asks less of it
    refused = False


class AnswerLost(TransportError):
    """A request that creates something (a task) was sent, but its answer was lost: the thing
    may exist. `session` says where to look for it (MCP 2025-11-25)."""

    def __init__(self, message: str, *, session: str | None = None) -> None:
        super().__init__(message)
        self.session = session


class ProtocolError(ServerError):
    """The server answered something that is not the protocol."""


class HttpStatusError(ServerError):
    """An HTTP error status without a JSON-RPC error body."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        retry_after: float | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.http_status = status
        self.retry_after = retry_after
        self.detail = detail


class RpcError(ServerError):
    """A JSON-RPC error object from the server."""

    def __init__(
        self,
        code: int,
        message: str,
        data: Any = None,
        *,
        http_status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"server error {code}: {message}")
        self.code = code
        self.rpc_message = message
        self.data = data
        self.http_status = http_status
        self.retry_after = retry_after

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.rpc_message}
        if self.data is not None:
            out["data"] = self.data
        return out


class TaskNotFound(McptaskError):
    """Unknown or expired task id (exit 9). `reason`: the server's own words, when it gave any
    (its JSON-RPC error message), kept apart from the message mcptask made of them."""

    exit_code: int = ExitCode.NOT_FOUND

    def __init__(self, message: str, *, hint: str | None = None, reason: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason


class SessionGone(TaskNotFound):
    """The MCP session that created a task no longer exists on the server (exit 9): the task
    cannot be reached, which says nothing of whether it expired. Raised by the protocol that
    saw the session refused (HTTP 404 for the session); `reason` is what the server said."""


class NotApplicable(McptaskError):
    """The operation does not apply to the task's state (exit 11)."""

    exit_code: int = ExitCode.NOT_APPLICABLE


class PushUrlRefused(ServerError):
    """An agent refused the webhook URL itself (not push notifications as such): every task's
    config would be refused alike."""


class TaskEnded(McptaskError):
    """A command ends with the task's state as its status (5 failed, 6 input, 8 cancelled...)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class Interrupted(McptaskError):
    exit_code: int = ExitCode.INTERRUPTED

    def __init__(self, message: str = "interrupted", exit_code: int = ExitCode.INTERRUPTED) -> None:
        super().__init__(message)
        self.exit_code = exit_code


#: exit status by task outcome (contract: watch's `end` lines)
OUTCOME_EXIT: dict[str, int] = {
    "completed": ExitCode.OK,
    "failed": ExitCode.FAILED,
    "input_required": ExitCode.INPUT,
    "auth_required": ExitCode.INPUT,
    "timeout": ExitCode.TIMEOUT,
    "cancelled": ExitCode.CANCELLED,
    "rejected": ExitCode.CANCELLED,
    "expired": ExitCode.NOT_FOUND,
    "unknown": ExitCode.NOT_FOUND,
    "error": ExitCode.SERVER,
    "interrupted": ExitCode.INTERRUPTED,
}


#: HTTP statuses of a server in passing trouble (rate-limited, overloaded, a gateway's backend
#: away): besides these, every 5xx
RETRY_STATUSES = frozenset({429})


def is_transient(exc: BaseException) -> bool:
    """Whether a failure is the network's or a server's passing trouble, worth retrying (and,
    for `check`, saying nothing of how the server behaves): connection failures and timeouts,
    HTTP 5xx and 429, JSON-RPC -32429. The one place this is decided."""
    if isinstance(exc, TransportError):
        return exc.transient
    if isinstance(exc, RpcError) and exc.code == TOO_MANY_REQUESTS:
        return True
    if isinstance(exc, HttpStatusError | RpcError) and exc.http_status is not None:
        return exc.http_status >= 500 or exc.http_status in RETRY_STATUSES
    return False


def ctrl_c_inside(exc: BaseException) -> bool:
    """Whether this is Ctrl-C, or a RuntimeError Python raised from it: Python 3.11 reraises
    an exception from a class body's `__set_name__` (`functools.cached_property`, met while
    modules import) as a RuntimeError whose cause is the KeyboardInterrupt. Nothing else
    counts (a bug met while handling Ctrl-C is still a bug)."""
    for _ in range(8):
        if isinstance(exc, KeyboardInterrupt):
            return True
        if type(exc) is not RuntimeError or exc.__cause__ is None:
            return False
        exc = exc.__cause__
    return False


def exit_code_for(exc: BaseException) -> int:
    """The one mapping from an exception to an exit status."""
    if isinstance(exc, McptaskError):
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt) or ctrl_c_inside(exc):
        return ExitCode.INTERRUPTED
    if isinstance(exc, BrokenPipeError):
        return ExitCode.OK  # the reader went away (`| head -1`): not a failure
    return ExitCode.INTERNAL
