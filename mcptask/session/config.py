"""Config files: mcptask's TOML, or the JSON files other MCP clients keep.

The content decides the format. A JSON object (comments and trailing commas allowed, as VS Code
writes them) with `mcpServers` (Claude Desktop, Cursor, Claude Code, Windsurf...), `servers`
(VS Code `mcp.json`) or `mcp.servers` (VS Code `settings.json`) is that format; anything else must
be mcptask's TOML:

    default = "research"            # optional: the server used when no target is given

    [servers.research]
    url = "https://example.com/mcp"
    protocol = "auto"               # optional: one of `mcptask get --help`'s -p choices
    headers = { "X-Team" = "blue" }
    token_env = "RESEARCH_TOKEN"    # or token_file = "research.token"

    [servers.local]
    command = "npx"                 # or command = ["npx", "-y", "..."]
    args = ["-y", "@modelcontextprotocol/server-everything", "stdio"]
    env = { DEBUG = "1" }
    cwd = "~/src/server"

Entries are kept as written; `${VAR}`, `${env:VAR}` and `${VAR:-default}` references are expanded
only when an entry is used (`expanded`), so `mcptask servers` shows no expanded secret and a bad
reference in one entry does not break the others.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat as stat_mode
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mcptask.errors import UsageError

CONFIG_ENV = "MCPTASK_CONFIG"
#: an entry's OAuth client (mcptask/auth), for servers that take no dynamic registration
OAUTH_KEYS = ("client_id", "client_secret_file", "client_key_file", "client_metadata_url")
TOML_SERVER_KEYS = (
    "url",
    "command",
    "args",
    "env",
    "cwd",
    "protocol",
    "headers",
    "token_env",
    "token_file",
    "proxy",
    "cacert",
    *OAUTH_KEYS,
)
#: the largest config file read (a real one is a few KiB; `--config /dev/zero` must not hang)
MAX_CONFIG_BYTES = 1024 * 1024
_REF = re.compile(r"\$\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class ServerEntry:
    """One named target as written in a config file (nothing expanded)."""

    name: str
    source: Path
    url: str | None = None
    command: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    protocol: str | None = None
    token_env: str | None = None
    token_file: str | None = None
    #: the OAuth client where the server takes no dynamic registration (see mcptask/auth)
    client_id: str | None = None
    client_secret_file: str | None = None
    client_key_file: str | None = None
    client_metadata_url: str | None = None
    #: the proxy and CA file for this server (transports/net.py), under `--proxy`/`--cacert`
    proxy: str | None = None
    cacert: str | None = None
    #: why this entry cannot be used (said when it is picked)
    unsupported: str | None = None

    @property
    def kind(self) -> str:
        return "stdio" if self.command is not None else "url"


@dataclass
class ConfigFile:
    path: Path | None
    format: str | None = None  # "toml", "mcpServers", "servers"
    servers: dict[str, ServerEntry] = field(default_factory=dict)
    default: str | None = None


# -- finding the file ---------------------------------------------------------------------------


def default_path() -> Path:
    from platformdirs import user_config_dir

    return Path(user_config_dir("mcptask", appauthor=False)) / "config.toml"


def locate(flag: str | None) -> tuple[Path, bool]:
    """The config file to read and whether it must exist (only when named by `--config`)."""
    if flag:
        return Path(flag).expanduser(), True
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env).expanduser(), False
    return default_path(), False


def load(flag: str | None) -> ConfigFile:
    """The config file named by `--config`, `MCPTASK_CONFIG` or the default path. A missing file
    is an error only when `--config` named it."""
    path, required = locate(flag)
    try:
        stat = path.stat()
        key = (str(path), stat.st_mtime_ns, stat.st_size)
        if key in _LOADED:
            return _LOADED[key]
        text = _read(path, stat.st_mode)
    except FileNotFoundError:
        if required:
            raise UsageError(f"--config {path}: no such file") from None
        return ConfigFile(path=None)
    except IsADirectoryError:
        raise UsageError(f"config {path} is a directory, not a file") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise UsageError(f"cannot read config {path}: {reason}") from None
    _LOADED[key] = parse(text, path)
    return _LOADED[key]


def _read(path: Path, mode: int) -> str:
    """The text of a config file: a regular file (never a device, a FIFO or a socket, which
    may never end) of at most MAX_CONFIG_BYTES, read no further than that."""
    if stat_mode.S_ISDIR(mode):
        raise IsADirectoryError
    if str(path) == os.devnull:
        return ""  # `MCPTASK_CONFIG=/dev/null`: no config file, the usual idiom
    if not stat_mode.S_ISREG(mode):
        raise UsageError(f"config {path} is not a regular file")
    from mcptask.state.files import UnsafeFile, read_regular

    try:
        # opened without blocking and checked again on the open file: a FIFO swapped in
        # after the stat above must not hold mcptask either
        data = read_regular(path, MAX_CONFIG_BYTES)
    except UnsafeFile as exc:
        if exc.errno == errno.EFBIG:
            raise UsageError(
                f"config {path} is over the {MAX_CONFIG_BYTES // 1024 // 1024} MiB limit for a "
                "config file"
            ) from None
        raise UsageError(f"config {path} is not a regular file") from None
    return data.decode("utf-8-sig")


def _too_deep(path: Path) -> UsageError:
    return UsageError(f"config {path} is nested too deeply to be a config file")


#: files already read in this process, by (path, mtime, size)
_LOADED: dict[tuple[str, int, int], ConfigFile] = {}


# -- parsing ------------------------------------------------------------------------------------


def parse(text: str, path: Path) -> ConfigFile:
    if text.lstrip().startswith("{"):
        return _parse_json(text, path)
    return _parse_toml(text, path)


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (VS Code's JSONC) as plain JSON."""
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
            continue
        if c == '"':
            in_string = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif c == ",":
            j = i + 1
            while j < n:
                if text[j].isspace():
                    j += 1
                elif text.startswith("//", j):
                    k = text.find("\n", j)
                    j = n if k < 0 else k
                elif text.startswith("/*", j):
                    k = text.find("*/", j + 2)
                    j = n if k < 0 else k + 2
                else:
                    break
            if j < n and text[j] in "}]":
                i += 1  # a trailing comma
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _parse_json(text: str, path: Path) -> ConfigFile:
    try:
        data = json.loads(strip_jsonc(text))
    except ValueError as exc:
        raise UsageError(f"config {path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise _too_deep(path) from None
    if not isinstance(data, dict):
        raise UsageError(f"config {path}: expected a JSON object")
    fmt = "mcpServers"
    servers = data.get("mcpServers")
    if servers is None:
        fmt = "servers"
        servers = data.get("servers")
    if servers is None and isinstance(data.get("mcp"), dict):
        servers = data["mcp"].get("servers")
    if servers is None:
        raise UsageError(
            f"config {path} is JSON without `mcpServers` or `servers`; "
            "mcptask reads those JSON files or its own TOML"
        )
    if not isinstance(servers, dict):
        raise UsageError(f"config {path}: `{fmt}` must be an object of named servers")
    out = ConfigFile(path=path, format=fmt)
    for name, raw in servers.items():
        out.servers[name] = _json_entry(name, raw, path)
    return out


def _strings(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{what} must be a list of strings")
    return list(value)


def _string_map(value: Any, what: str, *, lenient: bool = False) -> dict[str, str]:
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be a table of strings")
    out: dict[str, str] = {}
    for k, v in value.items():
        if v is None and lenient:
            continue  # VS Code: null removes a variable
        if isinstance(v, bool) and lenient:
            v = "true" if v else "false"
        elif isinstance(v, int | float) and not isinstance(v, bool) and lenient:
            v = str(v)
        if not isinstance(v, str):
            raise UsageError(f"{what}: {k} must be a string")
        out[str(k)] = v
    return out


def _string(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{what} must be a non-empty string")
    return value


def _json_entry(name: str, raw: Any, path: Path) -> ServerEntry:
    where = f"config {path}: server {name!r}"
    if not isinstance(raw, dict):
        raise UsageError(f"{where} must be an object")
    kind = raw.get("type", raw.get("transport"))
    kind = kind.lower().replace("_", "-") if isinstance(kind, str) else None
    url = raw.get("url", raw.get("serverUrl", raw.get("httpUrl")))
    entry = ServerEntry(name=name, source=path)
    if kind == "sse":
        entry.url = url if isinstance(url, str) else ""
        entry.unsupported = (
            "uses the legacy HTTP+SSE transport (type sse), which mcptask does not speak; "
            "point it at the server's Streamable HTTP endpoint"
        )
        return entry
    if raw.get("command") is not None and kind not in ("http", "streamable-http", "streamablehttp"):
        entry.command = [_string(raw["command"], f"{where}: command")]
        if raw.get("args") is not None:
            entry.command += _strings(raw["args"], f"{where}: args")
        if raw.get("env") is not None:
            entry.env = _string_map(raw["env"], f"{where}: env", lenient=True)
        if raw.get("cwd") is not None:
            entry.cwd = _string(raw["cwd"], f"{where}: cwd")
    elif url is not None:
        entry.url = _string(url, f"{where}: url")
        if raw.get("headers") is not None:
            entry.headers = _string_map(raw["headers"], f"{where}: headers", lenient=True)
    else:
        raise UsageError(f"{where} has neither `command` nor `url`")
    return entry


def _parse_toml(text: str, path: Path) -> ConfigFile:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(
            f"config {path} is neither mcptask's TOML nor JSON with mcpServers/servers: {exc}"
        ) from None
    except RecursionError:
        raise _too_deep(path) from None
    unknown = sorted(set(data) - {"default", "servers"})
    if unknown:
        raise UsageError(
            f"config {path}: unknown key {unknown[0]!r} (mcptask's TOML has `default` and "
            "[servers.NAME] tables)"
        )
    servers = data.get("servers", {})
    if not isinstance(servers, dict):
        raise UsageError(f"config {path}: `servers` must be a table of [servers.NAME] tables")
    out = ConfigFile(path=path, format="toml")
    for name, raw in servers.items():
        out.servers[name] = _toml_entry(name, raw, path)
    default = data.get("default")
    if default is not None:
        if not isinstance(default, str) or default not in out.servers:
            known = ", ".join(sorted(out.servers)) or "none"
            raise UsageError(
                f"config {path}: default = {default!r} names no server (known: {known})"
            )
        out.default = default
    return out


def _toml_entry(name: str, raw: Any, path: Path) -> ServerEntry:
    where = f"config {path}: [servers.{name}]"
    if not isinstance(raw, dict):
        raise UsageError(f"{where} must be a table")
    unknown = sorted(set(raw) - set(TOML_SERVER_KEYS))
    if unknown:
        raise UsageError(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(TOML_SERVER_KEYS)})"
        )
    has_url, has_command = "url" in raw, "command" in raw
    if has_url == has_command:
        raise UsageError(f"{where} needs exactly one of `url` and `command`")
    entry = ServerEntry(name=name, source=path)
    if "protocol" in raw:
        entry.protocol = _string(raw["protocol"], f"{where}: protocol")
    if "token_env" in raw and "token_file" in raw:
        raise UsageError(f"{where}: give token_env or token_file, not both")
    if "token_env" in raw:
        entry.token_env = _string(raw["token_env"], f"{where}: token_env")
    if "token_file" in raw:
        entry.token_file = _string(raw["token_file"], f"{where}: token_file")
    if "headers" in raw:
        entry.headers = _string_map(raw["headers"], f"{where}: headers")
    if has_url:
        entry.url = _string(raw["url"], f"{where}: url")
        for key in ("args", "env", "cwd"):
            if key in raw:
                raise UsageError(f"{where}: `{key}` goes with `command`, not `url`")
        for key in (*OAUTH_KEYS, "proxy", "cacert"):
            if key in raw:
                setattr(entry, key, _string(raw[key], f"{where}: {key}"))
        return entry
    for key in (*OAUTH_KEYS, "proxy", "cacert"):
        if key in raw:
            raise UsageError(f"{where}: `{key}` goes with `url` (it is for HTTP servers)")
    command = raw["command"]
    if isinstance(command, list):
        entry.command = _strings(command, f"{where}: command")
        if not entry.command:
            raise UsageError(f"{where}: command is empty")
    else:
        entry.command = [_string(command, f"{where}: command")]
    if "args" in raw:
        entry.command += _strings(raw["args"], f"{where}: args")
    if "env" in raw:
        entry.env = _string_map(raw["env"], f"{where}: env")
    if "cwd" in raw:
        entry.cwd = _string(raw["cwd"], f"{where}: cwd")
    return entry


# -- expanding ----------------------------------------------------------------------------------


def expand(value: str, where: str, source: Path | None = None) -> str:
    """Expand `${VAR}`, `${env:VAR}`, `${VAR:-default}`, `${userHome}`, `${workspaceFolder}`;
    an undefined variable is a usage error naming it."""

    def one(match: re.Match[str]) -> str:
        ref = match.group(1)
        if ref == "userHome":
            return str(Path.home())
        if ref in ("workspaceFolder", "workspaceRoot"):
            return str(_workspace(source))
        if ref == "pathSeparator":
            return os.sep
        body = ref[4:] if ref.startswith("env:") else ref
        name, sep, fallback = body.partition(":-")
        if not _NAME.fullmatch(name):
            if ":" in ref:
                kind = ref.split(":", 1)[0]
                raise UsageError(
                    f"{where}: ${{{ref}}} is a {kind}: variable mcptask cannot resolve; "
                    "put the value in an environment variable and write ${env:NAME}"
                )
            raise UsageError(f"{where}: ${{{ref}}} is not a variable reference")
        got = os.environ.get(name)
        if got is None or (sep and got == ""):
            if sep:
                return fallback
            raise UsageError(f"{where} uses ${{{ref}}}, but {name} is not set in the environment")
        return got

    return _REF.sub(one, value)


def _workspace(source: Path | None) -> Path:
    if source is not None and source.parent.name == ".vscode":
        return source.parent.parent.resolve()
    return Path.cwd()


def expanded(entry: ServerEntry) -> ServerEntry:
    """A copy of the entry with every reference expanded (`cwd` relative to the file)."""
    where = f"server {entry.name!r} ({entry.source})"
    src = entry.source

    def ex(value: str, what: str) -> str:
        return expand(value, f"{where} {what}", src)

    out = replace(entry)
    if entry.url is not None:
        out.url = ex(entry.url, "url")
    if entry.command is not None:
        out.command = [ex(a, "command") for a in entry.command]
    out.env = {k: ex(v, f"env {k}") for k, v in entry.env.items()}
    out.headers = {k: ex(v, f"header {k}") for k, v in entry.headers.items()}
    if entry.cwd is not None:
        cwd = Path(ex(entry.cwd, "cwd")).expanduser()
        out.cwd = str(cwd if cwd.is_absolute() else (src.parent / cwd))
    if entry.token_file is not None:
        tf = Path(ex(entry.token_file, "token_file")).expanduser()
        out.token_file = str(tf if tf.is_absolute() else (src.parent / tf))
    for key in ("client_secret_file", "client_key_file"):
        value = getattr(entry, key)
        if value is not None:
            path = Path(ex(value, key)).expanduser()
            setattr(out, key, str(path if path.is_absolute() else (src.parent / path)))
    if entry.proxy is not None:
        out.proxy = ex(entry.proxy, "proxy")
    if entry.cacert is not None:
        ca = Path(ex(entry.cacert, "cacert")).expanduser()
        out.cacert = str(ca if ca.is_absolute() else (src.parent / ca))
    if entry.client_id is not None:
        out.client_id = ex(entry.client_id, "client_id")
    if entry.client_metadata_url is not None:
        out.client_metadata_url = ex(entry.client_metadata_url, "client_metadata_url")
    return out
