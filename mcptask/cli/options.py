"""The options every command shares (the contract's "Choosing the target" and output), added to
each command by `@with_target`, and the argument/option types several commands use."""

from __future__ import annotations

import copy
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any, get_args

import typer

from mcptask.cli import complete
from mcptask.protocols.registry import CHOICES

TARGET = "Target"
OUTPUT = "Output"
AUTH = "Authentication"


def _common_parameters() -> list[inspect.Parameter]:
    def opt(name: str, annotation: Any, default: Any) -> inspect.Parameter:
        return inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
        )

    return [
        # MCPTASK_URL, MCPTASK_SERVER and MCPTASK_CONFIG are read by targets/config, not by Typer:
        # a target flag must beat a target variable of the other kind, and a missing --config
        # file is an error where a missing $MCPTASK_CONFIG file is not
        opt(
            "url",
            Annotated[
                str | None,
                typer.Option(
                    "--url",
                    "-u",
                    help="The endpoint: MCP Streamable HTTP, A2A JSON-RPC, or an Agno agent base. [env var: MCPTASK_URL]",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "server",
            Annotated[
                str | None,
                typer.Option(
                    "--server",
                    "-s",
                    help="A named target from the config file (see `mcptask servers`). [env var: MCPTASK_SERVER]",
                    rich_help_panel=TARGET,
                    autocompletion=complete.servers,
                ),
            ],
            None,
        ),
        opt(
            "config",
            Annotated[
                str | None,
                typer.Option(
                    "--config",
                    help="mcptask's TOML config file, or an mcpServers/servers JSON file. [env var: MCPTASK_CONFIG]",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "stdio",
            Annotated[
                str | None,
                typer.Option(
                    "--stdio",
                    help="Spawn an MCP server and talk to it over stdio.",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "protocol",
            Annotated[
                str,
                typer.Option(
                    "--protocol",
                    "-p",
                    envvar="MCPTASK_PROTOCOL",
                    help=f"{', '.join(CHOICES[:-1])} or {CHOICES[-1]}.",
                    rich_help_panel=TARGET,
                    autocompletion=complete.protocols,
                ),
            ],
            "auto",
        ),
        opt(
            "header",
            Annotated[
                list[str] | None,
                typer.Option(
                    "--header",
                    "-H",
                    help="Extra HTTP header 'Name: Value' (repeatable).",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "token_file",
            Annotated[
                str | None,
                typer.Option(
                    "--token-file",
                    help="Read the bearer token from this file (or set MCPTASK_TOKEN).",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "proxy",
            Annotated[
                str | None,
                typer.Option(
                    "--proxy",
                    help="Send HTTP requests through this proxy (http://HOST:PORT); beats HTTPS_PROXY, HTTP_PROXY and ALL_PROXY; NO_PROXY still applies.",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "cacert",
            Annotated[
                str | None,
                typer.Option(
                    "--cacert",
                    help="Trust the certificate authorities in this PEM file (or hashed directory) instead of the default ones; beats SSL_CERT_FILE and SSL_CERT_DIR.",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "login",
            Annotated[
                bool,
                typer.Option(
                    "--login",
                    help="Log in (OAuth) when the server asks and no usable credentials are stored.",
                    rich_help_panel=AUTH,
                ),
            ],
            False,
        ),
        opt(
            "client_id",
            Annotated[
                str | None,
                typer.Option(
                    "--client-id",
                    help="OAuth: a client registered at the authorization server.",
                    rich_help_panel=AUTH,
                ),
            ],
            None,
        ),
        opt(
            "client_secret_file",
            Annotated[
                str | None,
                typer.Option(
                    "--client-secret-file",
                    help="OAuth: read that client's secret from this file.",
                    rich_help_panel=AUTH,
                ),
            ],
            None,
        ),
        opt(
            "client_key_file",
            Annotated[
                str | None,
                typer.Option(
                    "--client-key-file",
                    help="OAuth: that client's PEM private key (private_key_jwt).",
                    rich_help_panel=AUTH,
                ),
            ],
            None,
        ),
        opt(
            "client_metadata_url",
            Annotated[
                str | None,
                typer.Option(
                    "--client-metadata-url",
                    help="OAuth: an https URL of a client ID metadata document to use as the client id.",
                    rich_help_panel=AUTH,
                ),
            ],
            None,
        ),
        opt(
            "session",
            Annotated[
                str | None,
                typer.Option(
                    "--session", help="An MCP 2025-11-25 session to reuse.", rich_help_panel=TARGET
                ),
            ],
            None,
        ),
        opt(
            "context_id",
            Annotated[
                str | None,
                typer.Option(
                    "--context-id",
                    help="The A2A context: continues a conversation; Agno looks its tasks up by it (the task book keeps it for tasks sent from here).",
                    rich_help_panel=TARGET,
                ),
            ],
            None,
        ),
        opt(
            "output",
            Annotated[
                str,
                typer.Option(
                    "--output",
                    "-o",
                    envvar="MCPTASK_OUTPUT",
                    help="auto, pretty, json or ndjson.",
                    rich_help_panel=OUTPUT,
                    autocompletion=complete.output_modes,
                ),
            ],
            "auto",
        ),
        opt(
            "jq",
            Annotated[
                str | None,
                typer.Option(
                    "--jq",
                    help="Filter the JSON output through this jq program (strings print as plain text); output is JSON then, on a terminal too.",
                    rich_help_panel=OUTPUT,
                ),
            ],
            None,
        ),
        opt(
            "trace",
            Annotated[
                bool,
                typer.Option(
                    "--trace",
                    help="Print every HTTP exchange and JSON-RPC message on stderr (secrets redacted).",
                    rich_help_panel=OUTPUT,
                ),
            ],
            False,
        ),
    ]


_COMMON = _common_parameters()


def _flags(param: inspect.Parameter) -> list[str]:
    """A common parameter's flags (`--url`, `-u`), as its `typer.Option` declares them."""
    info = next(a for a in get_args(param.annotation)[1:] if isinstance(a, typer.models.OptionInfo))
    declared = [info.default] if isinstance(info.default, str) else []
    decls = [*declared, *(info.param_decls or ())]
    return list(dict.fromkeys(d for d in decls if isinstance(d, str)))


#: every common flag -> whether it takes a value: what `argv_order.hoist` may move before the
#: command word, made from the parameters above (the one table of the global options; their
#: names are `GlobalOptions`'s fields, which `with_target` fills)
COMMON_OPTIONS: dict[str, bool] = {
    flag: get_args(p.annotation)[0] is not bool for p in _COMMON for flag in _flags(p)
}


def with_target(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Add the common target/output options to a command; it receives them as `g`."""
    return _Front(fn, lambda: _COMMON)


#: what `auth` does not use: auth is for MCP servers over HTTP, by URL or name
_NOT_FOR_AUTH = frozenset({"stdio", "session", "context_id", "login", "protocol"})


def _auth_parameters() -> list[inspect.Parameter]:
    out = []
    for p in _COMMON:
        if p.name in _NOT_FOR_AUTH or p.name == "url":
            base, info = typing.get_args(p.annotation)
            info = copy.copy(info)
            if p.name == "url":
                info.help = "The MCP server's endpoint (Streamable HTTP). [env var: MCPTASK_URL]"
            else:
                # still parsed (auth says why it does not apply), never listed
                info.hidden = True
            p = p.replace(annotation=Annotated[base, info])
        out.append(p)
    return out


def with_auth_target(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`with_target` for `auth`: only the options that apply there are listed (an MCP server
    over HTTP: no --stdio, --session, --context-id, -p or --login; they still parse, so that
    auth can say why they do not apply)."""
    return _Front(fn, _auth_parameters)


class _Front:
    """A command's front-end with the common options added (`with_target`): called with
    every option by name, it calls the command with its own and `g`. Its signature (what
    Typer reads) is made when first asked, which Typer does for the command it runs only:
    resolving every command's annotations at import took a tenth of `get`'s start-up."""

    def __init__(
        self, fn: Callable[..., Any], params: Callable[[], list[inspect.Parameter]]
    ) -> None:
        self._fn = fn
        self._params = params
        self._signature: inspect.Signature | None = None
        self.__module__ = fn.__module__
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__

    def __call__(self, **kwargs: Any) -> Any:
        from mcptask.session.targets import GlobalOptions

        common = {p.name: kwargs.pop(p.name, p.default) for p in _COMMON}
        return self._fn(g=GlobalOptions.from_params(common), **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        if self._signature is None:
            fn = self._fn
            sig = inspect.signature(fn)
            hints = typing.get_type_hints(
                fn, localns={"GlobalOptions": object}, include_extras=True
            )
            own = [
                p.replace(annotation=hints.get(p.name, p.annotation))
                for p in sig.parameters.values()
                if p.name != "g"
            ]
            self._signature = sig.replace(parameters=own + self._params())
        return self._signature

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return {p.name: p.annotation for p in self.__signature__.parameters.values()}


TaskId = Annotated[
    str,
    typer.Argument(
        help="The task id (put -- before an id that starts with -).",
        autocompletion=complete.task_ids,
    ),
]


def _bounded(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """A flag's number parsed within its bounds (text/numbers.py): a bad one is Click's usage
    error (exit 2), as a word that is not a number already is."""

    def parser(text: str | float) -> Any:
        from mcptask.text.numbers import OutOfBounds

        try:
            return parse(str(text))  # Click passes a default through too (a float)
        except OutOfBounds as exc:
            raise typer.BadParameter(exc.reason) from None

    return parser


def seconds_flag(name: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        from mcptask.text.numbers import seconds

        return seconds(text, name)

    return _bounded(parse)


def _interval(text: str) -> float:
    from mcptask.text.numbers import interval

    return interval(text)


Interval = Annotated[
    float | None,
    typer.Option(
        "--interval",
        help="Poll no faster than every SECONDS (a floor: never faster than the server asks).",
        parser=_bounded(_interval),
    ),
]
Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout", help="Give up after SECONDS (exit 7).", parser=seconds_flag("--timeout")
    ),
]
WantResult = Annotated[
    bool, typer.Option("--result", help="Also print the result when the task ends.")
]
NoPush = Annotated[
    bool, typer.Option("--no-push", help="Poll only; ignore updates the server pushes.")
]
Otlp = Annotated[
    bool,
    typer.Option(
        "--otlp",
        envvar="MCPTASK_OTLP",
        show_envvar=False,
        help="Export each task's story (OTLP) as it ends.",
    ),
]
#: `call` and `send`: the trace the new task joins
StartTraceparent = Annotated[
    str | None,
    typer.Option(
        "--traceparent",
        help="Start the task in this W3C trace (00-<trace id>-<span id>-<flags>; default: "
        "TRACEPARENT, with TRACESTATE), else in a new one.",
    ),
]
#: `watch`: the trace a task joins when it has none yet
WatchTraceparent = Annotated[
    str | None,
    typer.Option(
        "--traceparent",
        help="Tasks with no trace join this one (or TRACEPARENT).",
    ),
]


def _limit(text: str) -> int:
    from mcptask.text.numbers import whole

    return whole(text, "--limit", high=100_000)


ListStatus = Annotated[
    str | None,
    typer.Option(
        "--status",
        metavar="STATUS[,...]",
        help="Only tasks in these statuses, e.g. working,input_required.",
        autocompletion=complete.statuses,
    ),
]
ListContext = Annotated[
    str | None,
    typer.Option("--context", metavar="ID", help="Only tasks of this context (A2A contextId)."),
]
ListSince = Annotated[
    str | None,
    typer.Option(
        "--since", metavar="SPAN", help="Only tasks updated within this span: 90s, 30m, 1h, 2d."
    ),
]
ListLimit = Annotated[
    int | None,
    typer.Option("--limit", metavar="N", help="At most N tasks.", parser=_bounded(_limit)),
]
SaveDir = Annotated[
    str | None,
    typer.Option(
        "--save",
        metavar="DIR",
        help="Write the result's parts as files into DIR (made if missing) and print what was written.",
    ),
]
SaveForce = Annotated[
    bool, typer.Option("--force", help="With --save: overwrite files that are there.")
]
SaveDownload = Annotated[
    bool,
    typer.Option(
        "--download",
        help="With --save: also fetch parts given as URLs (credentials only to the endpoint's origin).",
    ),
]

PushReceiverFlag = Annotated[
    bool,
    typer.Option(
        "--push-receiver",
        help="A2A: push notifications on a webhook on 127.0.0.1 (its configs deleted at the end).",
    ),
]
PushPublicUrl = Annotated[
    str | None,
    typer.Option(
        "--push-public-url",
        help="Where the agent reaches --push-receiver (a tunnel).",
    ),
]
PushPort = Annotated[
    int,
    typer.Option(
        "--push-port",
        help="--push-receiver's local port (default: any free one; implies --push-receiver).",
    ),
]

OutputMode = Annotated[
    str,
    typer.Option(
        "--output",
        "-o",
        envvar="MCPTASK_OUTPUT",
        help="auto, pretty, json or ndjson.",
        autocompletion=complete.output_modes,
    ),
]
Jq = Annotated[
    str | None,
    typer.Option(
        "--jq",
        help="Filter the JSON output through this jq program (strings print as plain text).",
    ),
]
