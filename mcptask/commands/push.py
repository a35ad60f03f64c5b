"""`mcptask push set|get|list|delete TASK_ID`: an A2A task's push notification configs (where
the agent POSTs the task's updates); `mcptask push listen`: a webhook receiver that prints
every notification it gets, one ndjson line each, until Ctrl-C."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcptask.errors import ExitCode, NotApplicable, UsageError

if TYPE_CHECKING:
    from mcptask.model.push import PushConfig
    from mcptask.model.refs import TaskRef
    from mcptask.protocols.base import TaskProtocol
    from mcptask.session.context import Context
    from mcptask.transports.webhook import Delivery

ACTIONS = ("set", "get", "list", "delete", "listen")
#: the webhook token (`push set`: sent back by the agent; `push listen`: required), and the
#: credentials `push set --auth-scheme` names, when no file is given: never a flag's value
ENV_WEBHOOK_TOKEN = "MCPTASK_WEBHOOK_TOKEN"
ENV_WEBHOOK_CREDENTIALS = "MCPTASK_WEBHOOK_CREDENTIALS"
#: where `push listen` takes notifications unless `--path` says otherwise (the path the
#: examples' `push set --webhook` uses)
LISTEN_PATH = "/hook"


@dataclass
class PushOptions:
    action: str
    task_id: str | None = None
    #: `set --url`
    url: str | None = None
    #: `--webhook-token-file` (else $MCPTASK_WEBHOOK_TOKEN): `set`: the token the agent sends
    #: back in `X-A2A-Notification-Token`; `listen`: the token required (none: a random one)
    token_file: str | None = None
    auth_scheme: str | None = None
    #: `set --auth-credentials-file` (else $MCPTASK_WEBHOOK_CREDENTIALS, with --auth-scheme)
    credentials_file: str | None = None
    #: a secret given as a flag's value (`--token`, `--auth-credentials`): refused, with advice
    secret_flag: str | None = None
    #: `--id`: the config's id
    config_id: str | None = None
    #: `listen`
    host: str = "127.0.0.1"
    port: int = 0
    path: str | None = None
    max_body: int | None = None
    #: `listen --count N`: stop after N notifications (None: until Ctrl-C)
    count: int | None = None
    #: `listen --task ID`: the tasks taken (others: 404); none: any task
    tasks: list[str] | None = None


def secret(path: str | None, env: str, flag: str) -> str | None:
    """A secret from its file (the flag) or the environment, never from a flag's value."""
    import os

    from mcptask.session.targets import check_token, read_token_file

    if path:
        return read_token_file(path, f"{flag} {path}")
    value = os.environ.get(env, "").strip()
    return check_token(value, env) if value else None


def refuse_secret_flag(flag: str) -> None:
    file_flag = (
        "--auth-credentials-file" if flag == "--auth-credentials" else "--webhook-token-file"
    )
    env = ENV_WEBHOOK_CREDENTIALS if flag == "--auth-credentials" else ENV_WEBHOOK_TOKEN
    raise UsageError(
        f"{flag} takes no secret on the command line (ps and shell history would show it): "
        f"use {file_flag} PATH or ${env}"
    )


async def run_push(opts: PushOptions, ctx: Context) -> int:
    if opts.action not in ACTIONS:
        raise UsageError(f"push {opts.action}: not one of {', '.join(ACTIONS)}")
    if opts.secret_flag:
        refuse_secret_flag(opts.secret_flag)
    if opts.action == "listen":
        return await _listen(opts, ctx)
    if not opts.task_id:
        raise UsageError(f"push {opts.action} needs a task id")
    ctx, task_id = ctx.places.locate(opts.task_id)
    ctx.places.require_reachable(f"push {opts.action}", [task_id])
    proto = await ctx.endpoint.protocol()
    if not proto.can_push_configs:
        raise NotApplicable(f"push notification configs are A2A's; {proto.name} has none")
    ref = ctx.places.ref(task_id)
    if opts.action == "set":
        return await _set(opts, ctx, proto, ref)
    if opts.action == "list":
        configs = await _listed(proto, ref)
        if ctx.out.mode == "ndjson":
            for config in configs:
                ctx.out.line(_config_json(config))
        elif not ctx.out.pretty:
            ctx.out.line({"taskId": task_id, "configs": [_config_json(c) for c in configs]})
        elif not configs:
            ctx.out.note(f"task {task_id} has no push notification configs")
        for config in configs if ctx.out.pretty else []:
            _show(ctx, config)
        return ExitCode.OK
    config_id = opts.config_id or await _only_config(proto, ref)
    if opts.action == "get":
        config = await proto.push_get(ref, config_id)
        _print(ctx, config)
        return ExitCode.OK
    await proto.push_delete(ref, config_id)
    from mcptask.commands._webhook import config_events

    config_events(ctx, [(task_id, config_id)], "deleted", "")
    if ctx.out.pretty:
        ctx.out.note(f"task {task_id}: push config {config_id} deleted")
    else:
        ctx.out.line({"taskId": task_id, "id": config_id, "deleted": True})
    return ExitCode.OK


async def _set(opts: PushOptions, ctx: Context, proto: TaskProtocol, ref: TaskRef) -> int:
    from urllib.parse import urlsplit

    from mcptask.text import redact

    if not opts.url:
        raise UsageError("push set needs --webhook URL (where the agent POSTs the task's updates)")
    u = urlsplit(opts.url)
    if u.scheme not in ("http", "https") or not u.netloc:
        raise UsageError(f"--webhook {opts.url!r}: not an http(s) URL")
    token = secret(opts.token_file, ENV_WEBHOOK_TOKEN, "--webhook-token-file")
    credentials = None
    if opts.credentials_file and not opts.auth_scheme:
        raise UsageError("--auth-credentials-file goes with --auth-scheme (e.g. Bearer)")
    if opts.auth_scheme:
        credentials = secret(
            opts.credentials_file, ENV_WEBHOOK_CREDENTIALS, "--auth-credentials-file"
        )
    redact.hold(s for s in (token, credentials) if s)
    if await proto.push_supported() is False:
        raise NotApplicable(
            "the agent card says pushNotifications: false: the agent does not push task updates"
        )
    config = await proto.push_set(
        ref,
        opts.url,
        token=token,
        auth_scheme=opts.auth_scheme,
        credentials=credentials,
        config_id=opts.config_id,
    )
    from mcptask.commands._webhook import config_events

    config_events(ctx, [(ref.task_id, config.id or "?")], "created", opts.url)
    _print(ctx, config)
    return ExitCode.OK


async def _listed(proto: TaskProtocol, ref: TaskRef) -> list[PushConfig]:
    if await proto.push_supported() is False:
        raise NotApplicable(
            "the agent card says pushNotifications: false: the agent has no push configs"
        )
    return await proto.push_list(ref)


async def _only_config(proto: TaskProtocol, ref: TaskRef) -> str:
    """Without --id: the task's one config; several: say which there are."""
    configs = await _listed(proto, ref)
    ids = [c.id for c in configs if c.id]
    if len(ids) == 1:
        return ids[0]
    if not ids:
        raise NotApplicable(f"task {ref.task_id} has no push notification configs")
    raise UsageError(
        f"task {ref.task_id} has {len(ids)} push configs: pick one with --id ({', '.join(ids)})"
    )


def _config_json(config: PushConfig) -> dict[str, Any]:
    """A push config as `push` prints it. Secrets never leave it: whether a token or
    credentials are set, not what they are; the URL without its password."""
    from mcptask.text.urls import safe_url

    auth = None
    if config.auth_scheme is not None:
        auth = {"scheme": config.auth_scheme, "credentialsSet": bool(config.credentials)}
    return {
        "taskId": config.task_id,
        "id": config.id,
        "url": safe_url(config.url),
        "tokenSet": bool(config.token),
        "authentication": auth,
    }


def _print(ctx: Context, config: PushConfig) -> None:
    if ctx.out.pretty:
        _show(ctx, config)
    else:
        ctx.out.line(_config_json(config))


def _show(ctx: Context, config: PushConfig) -> None:
    from mcptask.output.console import safe_line

    view = _config_json(config)
    auth = view["authentication"]
    extras = ["token set" if view["tokenSet"] else "no token"]
    if auth:
        extras.append(f"{auth['scheme']} authentication")
    ctx.out.console.print(
        safe_line(
            f"{view['id'] or '-'}  task {view['taskId']}  {view['url']}  ({', '.join(extras)})"
        )
    )


# -- push listen ------------------------------------------------------------------------------


async def _listen(opts: PushOptions, ctx: Context) -> int:
    import signal

    from mcptask.protocols.a2a_push import notification_view, task_id_of
    from mcptask.text import redact
    from mcptask.transports.webhook import MAX_BODY, WebhookReceiver

    if not 0 <= opts.port <= 65535:
        raise UsageError(f"--port {opts.port}: not a port (0-65535)")
    if opts.max_body is not None and not 1 <= opts.max_body <= 64 * MAX_BODY:
        raise UsageError(f"--max-body {opts.max_body}: from 1 to {64 * MAX_BODY} bytes")
    if opts.count is not None and opts.count < 1:
        raise UsageError(f"--count {opts.count}: at least 1")
    path = opts.path or LISTEN_PATH
    token = secret(opts.token_file, ENV_WEBHOOK_TOKEN, "--webhook-token-file")
    done = asyncio.Event()
    seen = 0

    def report(delivery: Delivery) -> None:
        nonlocal seen
        view = notification_view(delivery)
        if ctx.out.pretty:
            _show_notification(ctx, view)
        else:
            ctx.out.line(view)
        seen += 1
        if opts.count is not None and seen >= opts.count:
            done.set()

    receiver = WebhookReceiver(
        host=opts.host,
        port=opts.port,
        path=path,
        token=token,
        max_body=opts.max_body or MAX_BODY,
        task_of=task_id_of,
        known=set(opts.tasks).__contains__ if opts.tasks else None,
        on_delivery=report,
    )
    try:
        await receiver.start()
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {opts.host}:{opts.port}: {exc.strerror or exc}"
        ) from None
    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, done.set)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    try:
        listening = {
            "event": "listening",
            "url": receiver.url,
            "host": receiver.host,
            "port": receiver.port,
        }
        if ctx.out.pretty:
            ctx.out.note(f"listening at {receiver.url}; Ctrl-C ends")
        else:
            ctx.out.line(listening)
        if token is None:
            # the one place the generated token is shown: the agent's config needs it
            ctx.out.stderr.write(
                f"mcptask: token: {receiver.token} (for `push set`: "
                f"{ENV_WEBHOOK_TOKEN}=... or --webhook-token-file)\n"
            )
            ctx.out.stderr.flush()
        redact.hold([receiver.token])
        await done.wait()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
        await receiver.aclose()
    return ExitCode.OK


def _show_notification(ctx: Context, view: dict[str, Any]) -> None:
    from mcptask.output.console import safe_line

    what = view["changed"] or "?"
    words = [f"task {view['taskId'] or '?'}", what]
    if view["status"]:
        words.append(view["status"])
    if view["artifact"]:
        words.append(f"artifact {view['artifact']}")
    if view["message"]:
        words.append(repr(view["message"])[:120])
    if view["refused"]:
        words.append(f"REFUSED {view['httpStatus']}: {view['refused']}")
    elif view["duplicate"]:
        words.append("(duplicate)")
    words.append(
        "token ok"
        if view["tokenMatched"]
        else "token WRONG"
        if view["tokenMatched"] is False
        else "no token"
    )
    ctx.out.console.print(safe_line("  ".join(words)))
