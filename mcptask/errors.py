"""The error hierarchy. Every failure mcptask reports is one of these; `exit_code_for` is the
only place that turns an exception into a process exit status (see the CLI contract)."""

from __future__ import annotations

from typing import Any


class McptaskError(Exception):
    """Base class: a failure with a one-line message for the user."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(McptaskError):
    """The command line or configuration is wrong (exit 2)."""

    exit_code = 2


class AuthError(McptaskError):
    """Authentication or permission refused: HTTP 401/403 (exit 3)."""

    exit_code = 3


class ServerError(McptaskError):
    """Unreachable, timed out, not the protocol, or no task support (exit 4)."""

    exit_code = 4
    #: a failure worth retrying during `watch` (connection errors, 5xx, timeouts, non-JSON)
    transient = False


class TransportError(ServerError):
    """The connection failed or timed out: transient."""

    transient = True


class ProtocolError(ServerError):
    """The server answered something that is not the protocol."""


class HttpStatusError(ServerError):
    """An HTTP error status without a JSON-RPC error body."""

    def __init__(self, message: str, *, status: int, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.transient = status >= 500 or status == 429


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
        self.transient = code == -32429

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.rpc_message}
        if self.data is not None:
            out["data"] = self.data
        return out


class TaskNotFound(McptaskError):
    """Unknown or expired task id (exit 9)."""

    exit_code = 9


class NotApplicable(McptaskError):
    """The operation does not apply to the task's state (exit 11)."""

    exit_code = 11


class TaskEnded(McptaskError):
    """A command ends with the task's state as its status (5 failed, 6 input, 8 cancelled...)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class Interrupted(McptaskError):
    exit_code = 130

    def __init__(self, message: str = "interrupted", exit_code: int = 130) -> None:
        super().__init__(message)
        self.exit_code = exit_code


#: exit status by task outcome (contract: watch's `end` lines)
OUTCOME_EXIT = {
    "completed": 0,
    "failed": 5,
    "input_required": 6,
    "auth_required": 6,
    "timeout": 7,
    "cancelled": 8,
    "rejected": 8,
    "expired": 9,
    "unknown": 9,
    "error": 4,
    "interrupted": 130,
}


def exit_code_for(exc: BaseException) -> int:
    """The one mapping from an exception to an exit status."""
    if isinstance(exc, McptaskError):
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return 130
    return 1
