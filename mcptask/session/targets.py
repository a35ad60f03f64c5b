"""Choosing the target: `--url`, `--stdio` or a named server (`-s`) from a config file.

Precedence (documented in docs/configuration.md):

- The target: a target flag (`--url`, `--stdio`, `-s`) beats the target variables
  (`MCPTASK_URL`, `MCPTASK_SERVER`), which beat the config file's `default`. Two target flags, or
  (without a target flag) both target variables, are a usage error. `MCPTASK_URL`/`MCPTASK_SERVER`
  are read here, not by Typer, so that a flag can override a variable of the other kind.
- Per option, for the chosen target: flags beat environment, which beats the config entry:
  `-p`/`MCPTASK_PROTOCOL` over the entry's `protocol`; `-H` over the entry's `headers` (per header
  name); `--token-file` over `MCPTASK_TOKEN` over the entry's `token_env`/`token_file`.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcptask.errors import UsageError
from mcptask.text import redact
from mcptask.text.urls import safe_url, shown_url

if TYPE_CHECKING:
    from mcptask.session.config import ConfigFile, ServerEntry
    from mcptask.transports.net import Network

ENV_URL = "MCPTASK_URL"
ENV_SERVER = "MCPTASK_SERVER"
ENV_TOKEN = "MCPTASK_TOKEN"

Warn = Callable[[str], None]


@dataclass
class GlobalOptions:
    """The options every command accepts (the contract's "Choosing the target")."""

    url: str | None = None
    server: str | None = None
    config: str | None = None
    stdio: str | None = None
    protocol: str = "auto"
    headers: list[str] = field(default_factory=list)
    token_file: str | None = None
    #: `--proxy URL` and `--cacert FILE` (transports/net.py): over the environment's
    proxy: str | None = None
    cacert: str | None = None
    session: str | None = None
    context_id: str | None = None
    output: str = "auto"
    trace: bool = False
    #: `--login`: log in (OAuth) when the server asks and nothing usable is stored
    login: bool = False
    client_id: str | None = None
    client_secret_file: str | None = None
    client_key_file: str | None = None
    client_metadata_url: str | None = None
    #: `--jq EXPR`: filter the JSON printed through this jq program
    jq: str | None = None

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> GlobalOptions:
        """From the command line's parameters, by their names (`header`: each `-H`, or None)."""
        given = dict(params)
        given["headers"] = list(given.pop("header", None) or [])
        return cls(**given)


@dataclass
class OAuthSettings:
    """OAuth for a URL target (mcptask/auth): `--login` and the client, flags over the entry."""

    login: bool = False
    client_id: str | None = None
    client_secret_file: str | None = None
    client_key_file: str | None = None
    client_metadata_url: str | None = None
    #: how the target was named, for the commands mcptask suggests (`--url U` or `-s NAME`)
    target_args: str = ""


@dataclass
class Target:
    """Where to send requests, after flags, environment and config files are merged."""

    url: str | None = None
    command: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    protocol: str = "auto"
    headers: dict[str, str] = field(default_factory=dict)
    token: str | None = None
    name: str | None = None
    #: a stdio server's working directory
    cwd: str | None = None
    #: a throwaway server (the demo): nothing is kept in the task book
    ephemeral: bool = False
    #: OAuth applies: an HTTP target with no token nor `Authorization` header given
    oauth: OAuthSettings | None = None
    #: an explicit proxy and CA file (flag over config entry) and where each was given; the
    #: environment's (HTTPS_PROXY, SSL_CERT_FILE, ...) otherwise: see `network`
    proxy: str | None = None
    cacert: str | None = None
    proxy_from: str = "--proxy"
    cacert_from: str = "--cacert"
    _network: Network | None = field(default=None, repr=False, compare=False)

    @property
    def network(self) -> Network:
        """Proxies and trusted CAs for every HTTP request to this target, OAuth's included
        (made once: the TLS context loads its CA bundle once)."""
        if self._network is None:
            from mcptask.transports.net import Network

            self._network = Network(
                proxy=self.proxy,
                cacert=self.cacert,
                proxy_from=self.proxy_from,
                cacert_from=self.cacert_from,
            )
        return self._network

    @property
    def key(self) -> str:
        """The task book's namespace for this target; shown in every task, so never a user,
        password or key."""
        if self.url:
            return shown_url(self.url)
        return "stdio:" + " ".join(self.command or [])


# -- which target -------------------------------------------------------------------------------


def choose(options: GlobalOptions) -> tuple[str, str, str]:
    """(kind, value, where it came from): kind is "url", "stdio" or "server"; the source is
    "flag", "env" or "default" (the config file's `default`)."""
    if options.config:
        from mcptask.session import config

        config.load(options.config)  # a file named by --config must exist and parse
    flags = [
        (kind, label, value)
        for kind, label, value in (
            ("url", "--url", options.url),
            ("stdio", "--stdio", options.stdio),
            ("server", "-s", options.server),
        )
        if value
    ]
    if len(flags) > 1:
        raise UsageError(f"give exactly one target, not {' and '.join(f[1] for f in flags)}")
    if flags:
        return flags[0][0], flags[0][2] or "", "flag"
    env_url = os.environ.get(ENV_URL, "").strip()
    env_server = os.environ.get(ENV_SERVER, "").strip()
    if env_url and env_server:
        raise UsageError(
            f"{ENV_URL} and {ENV_SERVER} are both set: unset one, or choose with --url or -s"
        )
    if env_url:
        return "url", env_url, "env"
    if env_server:
        return "server", env_server, "env"
    from mcptask.session import config

    cfg = config.load(options.config)
    if cfg.default:
        return "server", cfg.default, "default"
    hint = ""
    if cfg.servers:
        hint = f"; servers in {cfg.path}: {', '.join(sorted(cfg.servers))}"
    raise NoTarget(
        f"no target: give --url URL, --stdio CMD or -s NAME (or set {ENV_URL} or {ENV_SERVER})"
        + hint
    )


class NoTarget(UsageError):
    """No flag, variable or config default names a target (commands about task ids then
    look the ids up in the task book)."""


def given(options: GlobalOptions) -> bool:
    """Whether a flag, a target variable or the config file's default names a target."""
    try:
        choose(options)
    except NoTarget:
        return False
    return True


def endpoint_target(options: GlobalOptions, url: str, warn: Warn | None = None) -> Target:
    """The target for an endpoint the task book names (a run without a target): the config
    entry for that place when there is one (its headers, token, OAuth client and name), else
    the bare URL (its own OAuth login, if any). Credentials given on the command line or in
    the environment (`-H`, `--token-file`, `MCPTASK_TOKEN`, `--client-*`) belong to the
    command's own target (`--url`/`-s`) and never ride along to another endpoint: `warn` says
    so once per run when some were given."""
    from mcptask.session import config
    from mcptask.state.endpoints import same_place

    if url.startswith("stdio:"):  # a stdio server the book keeps the tasks of
        return Target(command=url.removeprefix("stdio:").split())
    place = same_place(url)
    for entry in config.load(options.config).servers.values():
        if not entry.url or entry.unsupported:
            continue
        try:
            full = config.expanded(entry)
        except UsageError:  # a variable it needs is not set: not this one
            continue
        if full.url and same_place(full.url) == place:
            _not_carried(options, warn)
            return _url_target(options, full.url, full, own=False)
    if redact.REDACTED in url:
        raise UsageError(
            f"the task book keeps no secrets, so it cannot reach {url} alone: "
            "give the target (--url URL or -s NAME)"
        )
    _not_carried(options, warn)
    return _url_target(options, url, None, own=False)


#: runs (their options objects) already told that their credentials stay behind
_told: set[int] = set()


def _given_credentials(options: GlobalOptions) -> list[str]:
    """What the command line and the environment give as credentials (names, never values)."""
    given = []
    if options.headers:
        given.append("-H headers")
    if options.token_file:
        given.append("--token-file")
    elif os.environ.get(ENV_TOKEN, "").strip():
        given.append(ENV_TOKEN)
    if options.client_id or options.client_secret_file or options.client_key_file:
        given.append("the --client-* options")
    return given


def _not_carried(options: GlobalOptions, warn: Warn | None) -> None:
    given = _given_credentials(options)
    if not given or warn is None or id(options) in _told:
        return
    _told.add(id(options))
    warn(
        f"{' and '.join(given)} go only to the target given with --url or -s; tasks "
        "found in the task book are reached with their own endpoint's credentials (its config "
        "entry, its OAuth login) or none"
    )


def resolve(options: GlobalOptions, warn: Warn | None = None) -> Target:
    """The target after flags, environment and the config file are merged."""
    check_session(options.session)
    kind, value, _source = choose(options)
    if kind == "url":
        return _url_target(options, value, None)
    if kind == "stdio":
        try:
            command = shlex.split(value)
        except ValueError as exc:
            raise UsageError(f"--stdio: {exc}") from None
        if not command:
            raise UsageError("--stdio needs a command")
        return _stdio_target(options, command, None, warn)
    entry = pick(options, value)
    if entry.command is not None:
        return _stdio_target(options, entry.command, entry, warn)
    assert entry.url is not None
    return _url_target(options, entry.url, entry)


def pick(options: GlobalOptions, name: str) -> ServerEntry:
    """The named entry of the config file, expanded."""
    from mcptask.session import config

    cfg = config.load(options.config)
    entry = cfg.servers.get(name)
    if entry is None:
        raise UsageError(unknown_server(name, cfg))
    if entry.unsupported:
        raise UsageError(f"server {name!r} ({entry.source}) {entry.unsupported}")
    return config.expanded(entry)


def unknown_server(name: str, cfg: ConfigFile) -> str:
    if cfg.path is None:
        from mcptask.session import config

        where, _ = config.locate(None)
        return (
            f"unknown server {name!r}: no config file (looked for {where}; "
            "see --config and MCPTASK_CONFIG)"
        )
    known = ", ".join(sorted(cfg.servers)) or "none"
    return f"unknown server {name!r} in {cfg.path}; known: {known}"


def _protocol(options: GlobalOptions, entry: ServerEntry | None) -> str:
    if options.protocol and options.protocol != "auto":
        return options.protocol
    if entry is not None and entry.protocol:
        from mcptask.protocols.registry import NAMES

        if entry.protocol not in NAMES:
            raise UsageError(
                f"server {entry.name!r} ({entry.source}): unknown protocol {entry.protocol!r}; "
                f"known: auto, {', '.join(NAMES)}"
            )
        return entry.protocol
    return "auto"


def _url_target(
    options: GlobalOptions, url: str, entry: ServerEntry | None, *, own: bool = True
) -> Target:
    """`own`: the command's own target, which the command line's and the environment's
    credentials are for; another endpoint (found in the task book) gets only its entry's."""
    url = url.strip()
    what = f"server {entry.name!r}: url" if entry else "--url"
    check_url(url, what)
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"{what} {safe_url(url)!r} must start with http:// or https://")
    headers = dict(entry.headers) if entry else {}
    check_headers(headers.items(), f"server {entry.name!r}" if entry else "")
    for name, value in (parse_headers(options.headers) if own else {}).items():
        for old in [k for k in headers if k.lower() == name.lower()]:
            del headers[old]
        headers[name] = value
    token = flag_or_env_token(options) if own else None
    if token is None and entry is not None:
        token = entry_token(entry)
    oauth = None
    if token is None and not any(k.lower() == "authorization" for k in headers):
        oauth = oauth_settings(options, entry, url, own=own)
    target = Target(
        url=url,
        protocol=_protocol(options, entry),
        headers=headers,
        token=token,
        name=entry.name if entry else None,
        oauth=oauth,
    )
    # the network is not a credential: `--proxy`/`--cacert` go to every endpoint of the run
    where = f"server {entry.name!r} ({entry.source})" if entry else ""
    if options.proxy:
        target.proxy = options.proxy
    elif entry is not None and entry.proxy:
        target.proxy, target.proxy_from = entry.proxy, f"{where}: proxy"
    if options.cacert:
        target.cacert = options.cacert
    elif entry is not None and entry.cacert:
        target.cacert, target.cacert_from = entry.cacert, f"{where}: cacert"
    if target.proxy is not None:
        target.network  # noqa: B018 (a bad proxy URL is a usage error before anything runs)
    return target


def oauth_settings(
    options: GlobalOptions, entry: ServerEntry | None, url: str, *, own: bool = True
) -> OAuthSettings:
    """The OAuth client: each flag beats the config entry's key of the same name (flags only
    for the command's own target: a client secret is a credential too)."""

    def pick(name: str) -> str | None:
        flag = getattr(options, name) if own else None
        return flag if flag else (getattr(entry, name) if entry is not None else None)

    named = f"-s {shlex.quote(entry.name)}" if entry is not None else ""
    return OAuthSettings(
        login=options.login,
        client_id=pick("client_id"),
        client_secret_file=pick("client_secret_file"),
        client_key_file=pick("client_key_file"),
        client_metadata_url=pick("client_metadata_url"),
        target_args=named or f"--url {shlex.quote(shown_url(url))}",
    )


def check_url(url: str, what: str) -> None:
    """A URL mcptask can send to: UTF-8 text without spaces or controls, a host, a port in
    range (1-65535), brackets that close (IPv6). The URL is shown only where it is text."""
    if any("\udc80" <= c <= "\udcff" for c in url):
        raise UsageError(f"{what} has a byte that is not UTF-8 text")
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise UsageError(f"{what} {safe_url(url)!r} has a space or a control character")
    from urllib.parse import urlsplit

    try:
        u = urlsplit(url)
        port = u.port
    except ValueError as exc:
        raise UsageError(f"{what} {safe_url(url)!r} is not a valid URL: {exc}") from None
    if u.scheme in ("http", "https") and not u.hostname:
        raise UsageError(f"{what} {safe_url(url)!r} has no host")
    if port == 0:
        raise UsageError(f"{what} {safe_url(url)!r}: port 0 is not a port to connect to")


def check_session(session: str | None) -> None:
    """`--session`: an `Mcp-Session-Id` is visible ASCII (0x21-0x7E), as the spec says."""
    if session is not None and (not session or not all("!" <= c <= "~" for c in session)):
        raise UsageError(
            "--session must be visible ASCII (no space, newline, control or non-ASCII "
            "character), as an Mcp-Session-Id is"
        )


def _stdio_target(
    options: GlobalOptions, command: list[str], entry: ServerEntry | None, warn: Warn | None
) -> Target:
    ignored = []
    if options.headers or (entry is not None and entry.headers):
        ignored.append("-H headers" if options.headers else "the entry's headers")
    if options.token_file:
        ignored.append("--token-file")
    elif os.environ.get(ENV_TOKEN):
        ignored.append(f"the token in {ENV_TOKEN}")
    elif entry is not None and (entry.token_env or entry.token_file):
        ignored.append("the entry's token")
    if ignored and warn is not None:
        warn(f"warning: {' and '.join(ignored)} mean nothing over stdio; ignored")
    target = Target(
        command=command,
        env=dict(entry.env) if entry else {},
        protocol=_protocol(options, entry),
        name=entry.name if entry else None,
    )
    if entry is not None and entry.cwd is not None:
        target.cwd = entry.cwd
    return target


# -- headers and tokens ---------------------------------------------------------------------------


def _bad_char(value: str) -> bool:
    return any(ord(c) < 32 or ord(c) == 127 or ord(c) > 126 for c in value)


def check_headers(items: Iterable[tuple[str, str]], where: str) -> None:
    for name, value in items:
        prefix = f"{where}: " if where else ""
        if not name or _bad_char(name) or any(c in name for c in ' :()<>@,;\\"/[]?={}'):
            raise UsageError(f"{prefix}{name!r} is not an HTTP header name")
        if name.lower() in ("content-length", "transfer-encoding"):
            # the body's framing is the HTTP client's to set: another value would make the
            # server read the body wrong (and the next request on the connection)
            raise UsageError(f"{prefix}{name} is set by mcptask, not by a header of yours")
        if value != value.strip("\t ") or _bad_char(value.replace("\t", " ")):
            # the value is not shown: it may be a secret
            raise UsageError(
                f"{prefix}the value of header {name} has a control or non-ASCII character, "
                "or leading/trailing spaces"
            )


def parse_headers(raw: list[str]) -> dict[str, str]:
    """`-H 'Name: Value'` flags; errors never show a value (it may be a secret)."""
    out: dict[str, str] = {}
    for i, item in enumerate(raw, 1):
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"-H number {i} is not 'Name: Value' (its text is not shown)")
        name, value = name.strip(), value.strip()
        check_headers([(name, value)], "-H")
        out[name] = value
    return out


def check_token(token: str, label: str) -> str:
    if _bad_char(token) or " " in token:
        raise UsageError(
            f"the token from {label} contains a space, a control or a non-ASCII character "
            "(it is not shown)"
        )
    return token


def read_token_file(path: str, label: str) -> str:
    try:
        token = Path(path).expanduser().read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise UsageError(f"cannot read {label}: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{label} is not UTF-8 text") from None
    if not token:
        raise UsageError(f"{label} is empty")
    return check_token(token, label)


def flag_or_env_token(options: GlobalOptions) -> str | None:
    """`--token-file` (a flag) beats `MCPTASK_TOKEN`."""
    if options.token_file:
        return read_token_file(options.token_file, f"--token-file {options.token_file}")
    token = os.environ.get(ENV_TOKEN, "").strip()
    return check_token(token, ENV_TOKEN) if token else None


def entry_token(entry: ServerEntry) -> str | None:
    if entry.token_env:
        token = os.environ.get(entry.token_env, "").strip()
        if not token:
            raise UsageError(
                f"server {entry.name!r} takes its token from ${entry.token_env}, which is not set"
            )
        return check_token(token, entry.token_env)
    if entry.token_file:
        return read_token_file(entry.token_file, f"token_file {entry.token_file}")
    return None


# -- describing, without secrets ------------------------------------------------------------------


def safe_command(command: list[str]) -> list[str]:
    """Arguments with values of secret-looking options redacted (`--api-key X`,
    `--token=X`, `API_KEY=X`)."""
    out: list[str] = []
    hide_next = False
    for arg in command:
        if hide_next:
            out.append(redact.REDACTED)
            hide_next = False
            continue
        name, sep, _value = arg.partition("=")
        if sep and redact.is_secret_name(name.lstrip("-")):
            out.append(f"{name}={redact.REDACTED}")
        elif arg.startswith("-") and redact.is_secret_name(arg.lstrip("-")):
            out.append(arg)
            hide_next = True
        else:
            out.append(arg)
    return out


def describe(entry: ServerEntry, *, default: bool = False) -> dict[str, Any]:
    """An entry as `mcptask servers` shows it: names of headers and variables, never values."""
    out: dict[str, Any] = {"name": entry.name, "kind": entry.kind}
    if entry.command is not None:
        out["command"] = shlex.join(safe_command(entry.command))
        out["env"] = sorted(entry.env)
        if entry.cwd:
            out["cwd"] = entry.cwd
    else:
        out["url"] = safe_url(entry.url or "")
        out["headers"] = sorted(entry.headers)
    out["protocol"] = entry.protocol or "auto"
    if entry.token_env:
        out["token"] = {"env": entry.token_env}
    elif entry.token_file:
        out["token"] = {"file": entry.token_file}
    else:
        out["token"] = None
    oauth = {
        camel: getattr(entry, key)
        for key, camel in (
            ("client_id", "clientId"),
            ("client_secret_file", "clientSecretFile"),
            ("client_key_file", "clientKeyFile"),
            ("client_metadata_url", "clientMetadataUrl"),
        )
        if getattr(entry, key)
    }
    if oauth:
        out["oauth"] = oauth  # the client id and file names: never a secret's value
    out["default"] = default
    if entry.unsupported:
        out["unsupported"] = entry.unsupported
    return out


def unreachable_over_stdio(command: str, task_id: str) -> UsageError:
    return UsageError(
        f"{command} cannot reach task {task_id} over stdio: a stdio server's tasks die with its "
        "process, and this run would start a new one (usage error, exit 2); start and follow a "
        "task in one run with `mcptask call TOOL ... --stdio CMD`"
    )
