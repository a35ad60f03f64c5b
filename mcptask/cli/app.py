"""The Typer app: one thin front-end per command (parse, build the command's options object,
call `execute` with its run function). Kept light: `--version` and `--help` import neither
httpx nor pydantic; each command imports what it uses when it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from mcptask import __version__
from mcptask.cli import complete
from mcptask.cli.help_data import COMMANDS, ROOT, examples_text
from mcptask.cli.help_layout import GroupedHelp, HelpfulGroup, described
from mcptask.cli.options import (
    Interval,
    Jq,
    ListContext,
    ListLimit,
    ListSince,
    ListStatus,
    NoPush,
    Otlp,
    OutputMode,
    PushPort,
    PushPublicUrl,
    PushReceiverFlag,
    SaveDir,
    SaveDownload,
    SaveForce,
    StartTraceparent,
    TaskId,
    Timeout,
    WantResult,
    WatchTraceparent,
    seconds_flag,
    with_auth_target,
    with_target,
)
from mcptask.cli.runner import execute

if TYPE_CHECKING:
    from mcptask.session.targets import GlobalOptions

app = typer.Typer(
    name="mcptask",
    cls=GroupedHelp,
    help=ROOT.description,
    epilog=examples_text(""),
    no_args_is_help=True,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mcptask {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    # a plain bool (not `bool | None`): Typer then needs no pydantic adapter to read it, and
    # `mcptask COMMAND --help` imports no pydantic (bench/startup.py)
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """(`mcptask --help` says what mcptask is: help_data.ROOT)"""


@app.command(**described("get"))
@with_target
def get(
    g: GlobalOptions,
    task_id: TaskId,
    history: Annotated[
        int | None, typer.Option("--history", help="A2A: include at most N history messages.")
    ] = None,
) -> None:
    from mcptask.cli.quick_get import GET, get_run

    execute(g, get_run(task_id, history), **GET)


@app.command(**described("watch"))
@with_target
def watch(
    g: GlobalOptions,
    task_ids: Annotated[
        list[str] | None,
        typer.Argument(help="Task ids to follow.", autocompletion=complete.task_ids),
    ] = None,
    all_tasks: Annotated[
        bool,
        typer.Option(
            "--all", help="Every unfinished task the server lists or the task book knows."
        ),
    ] = False,
    interval: Interval = None,
    timeout: Timeout = None,
    result: WantResult = False,
    no_push: NoPush = False,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            help="End each task with exit 0 at one of these statuses (e.g. input_required).",
            autocompletion=complete.statuses,
        ),
    ] = None,
    push_receiver: PushReceiverFlag = False,
    push_public_url: PushPublicUrl = None,
    push_port: PushPort = 0,
    bell: Annotated[
        bool, typer.Option("--bell", help="Ring the terminal's bell when the watch ends.")
    ] = False,
    notify: Annotated[
        bool,
        typer.Option(
            "--notify",
            help="A desktop notification when the watch ends (notify-send on Linux, osascript on macOS).",
        ),
    ] = False,
    save: SaveDir = None,
    force: SaveForce = False,
    download: SaveDownload = False,
    otlp: Otlp = False,
    traceparent: WatchTraceparent = None,
) -> None:
    from mcptask.commands.watch import WatchOptions, run_watch

    opts = WatchOptions(
        task_ids=task_ids or [],
        interval=interval,
        timeout=timeout,
        want_result=result,
        push=not no_push,
        all_tasks=all_tasks,
        until=until,
        receiver=_receiver(push_receiver, push_public_url, push_port),
        bell=bell,
        notify=notify,
        save=_save_to(save, force, download),
        otlp=otlp,
        traceparent=traceparent,
    )
    if save is None and (force or download):
        execute(g, lambda ctx: _usage("--force and --download go with --save DIR"))
        return
    execute(g, lambda ctx: run_watch(opts, ctx), streaming=True)


def _save_to(directory: str | None, force: bool, download: bool) -> Any:
    """`--save DIR` and its flags (`commands._save.SaveTo`)."""
    if directory is None:
        return None
    from pathlib import Path

    from mcptask.commands._save import SaveTo

    return SaveTo(Path(directory), force=force, download=download)


@app.command(**described("result"))
@with_target
def result(
    g: GlobalOptions,
    task_id: TaskId,
    no_wait: Annotated[
        bool, typer.Option("--no-wait", help="Fail at once if the task is still running.")
    ] = False,
    interval: Interval = None,
    timeout: Timeout = None,
    save: SaveDir = None,
    force: SaveForce = False,
    download: SaveDownload = False,
) -> None:
    from mcptask.commands.result import ResultOptions, run_result

    opts = ResultOptions(
        task_id,
        wait=not no_wait,
        interval=interval,
        timeout=timeout,
        save=_save_to(save, force, download),
    )
    if save is None and (force or download):
        execute(g, lambda ctx: _usage("--force and --download go with --save DIR"))
        return
    execute(g, lambda ctx: run_result(opts, ctx), one_at_a_time=True)


@app.command("list", **described("list"))
@with_target
def list_(
    g: GlobalOptions,
    local: Annotated[
        bool, typer.Option("--local", help="The tasks this machine created or saw.")
    ] = False,
    status: ListStatus = None,
    context: ListContext = None,
    since: ListSince = None,
    limit: ListLimit = None,
) -> None:
    from mcptask.commands.list import ListOptions, many_pages, run_list

    opts = ListOptions(local=local, status=status, context=context, since=since, limit=limit)
    execute(
        g,
        lambda ctx: run_list(opts, ctx),
        one_at_a_time=True,
        loop_free=True,
        many_reads=None if local else many_pages,
    )


@app.command(**described("cancel"))
@with_target
def cancel(g: GlobalOptions, task_id: TaskId) -> None:
    from mcptask.commands.cancel import CancelOptions, run_cancel

    execute(
        g, lambda ctx: run_cancel(CancelOptions(task_id), ctx), one_at_a_time=True, loop_free=True
    )


@app.command(**described("log"))
@with_target
def log(
    g: GlobalOptions,
    task_id: TaskId,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow", "-f", help="Keep printing what any mcptask records until the task ends."
        ),
    ] = False,
    timeout: Timeout = None,
) -> None:
    from mcptask.commands.log import LogOptions, run_log

    execute(
        g,
        lambda ctx: run_log(LogOptions(task_id, follow=follow, timeout=timeout), ctx),
        streaming=True,
        loop_free=not follow,  # the book alone: nothing to wait for
    )


@app.command(**described("answer"))
@with_target
def answer(
    g: GlobalOptions,
    task_id: TaskId,
    json_content: Annotated[
        str | None,
        typer.Option(
            "--json", help="The answer: a JSON object of the form's fields (checked against it)."
        ),
    ] = None,
    decline: Annotated[
        bool, typer.Option("--decline", help="Decline what the server asks (MCP).")
    ] = False,
    cancel: Annotated[
        bool, typer.Option("--cancel", help="Dismiss the question without a choice (MCP).")
    ] = False,
    text: Annotated[
        str | None,
        typer.Option("--text", help="The answer as text (A2A; or a form with one text field)."),
    ] = None,
    key: Annotated[
        str | None,
        typer.Option("--key", help="Which input request to answer when several wait (MCP 2026)."),
    ] = None,
    data: Annotated[
        str | None,
        typer.Option("--data", help="The answer as JSON in a data part (A2A; with --text too)."),
    ] = None,
) -> None:
    from mcptask.commands.answer import AnswerOptions, run_answer

    opts = AnswerOptions(
        task_id, json=json_content, decline=decline, cancel=cancel, text=text, key=key, data=data
    )
    execute(g, lambda ctx: run_answer(opts, ctx))


@app.command(**described("tools"))
@with_target
def tools(g: GlobalOptions) -> None:
    from mcptask.commands.tools import ToolsOptions, run_tools

    execute(g, lambda ctx: run_tools(ToolsOptions(), ctx), one_at_a_time=True)


@app.command(**described("call"))
@with_target
def call(
    g: GlobalOptions,
    tool: Annotated[str, typer.Argument(help="The tool to call.", autocompletion=complete.tools)],
    arguments: Annotated[
        list[str] | None,
        typer.Argument(
            help="KEY=VALUE (the value converted to the type the tool's input schema gives) or KEY:=JSON."
        ),
    ] = None,
    args: Annotated[str | None, typer.Option("--args", help="Arguments as a JSON object.")] = None,
    ttl: Annotated[
        int | None, typer.Option("--ttl", help="Ask for a ttl in ms (2025-11-25).")
    ] = None,
    task: Annotated[
        bool | None,
        typer.Option(
            "--task/--no-task",
            help="Run it as a task, or as a plain call (default: a task where the tool and "
            "server allow it).",
        ),
    ] = None,
    watch: Annotated[bool, typer.Option("--watch", help="Then watch the task.")] = False,
    result: WantResult = False,
    interval: Interval = None,
    timeout: Timeout = None,
    no_push: NoPush = False,
    json_content: Annotated[
        str | None,
        typer.Option(
            "--json",
            help="A plain call's questions: answer with this JSON object (defaults fill the rest).",
        ),
    ] = None,
    decline: Annotated[
        bool, typer.Option("--decline", help="A plain call's questions: decline them.")
    ] = False,
    cancel: Annotated[
        bool, typer.Option("--cancel", help="A plain call's questions: dismiss them.")
    ] = False,
    defaults: Annotated[
        bool,
        typer.Option(
            "--defaults", help="A plain call's questions: accept with the form's defaults."
        ),
    ] = False,
    otlp: Otlp = False,
    traceparent: StartTraceparent = None,
) -> None:
    from mcptask.commands._follow import FollowUp
    from mcptask.commands.call import CallOptions, PlainAnswers, run_call

    then = FollowUp(
        watch, want_result=result, interval=interval, timeout=timeout, push=not no_push, otlp=otlp
    )
    answers = PlainAnswers(json=json_content, decline=decline, cancel=cancel, defaults=defaults)
    opts = CallOptions(
        tool=tool,
        pairs=arguments or [],
        args_json=args,
        ttl=ttl,
        then=then,
        task=task,
        answers=answers,
        traceparent=traceparent,
    )
    # a plain call reads the session's GET stream while its POST runs: the async pool
    execute(g, lambda ctx: run_call(opts, ctx), streaming=watch)


@app.command(**described("send"))
@with_target
def send(
    g: GlobalOptions,
    text: Annotated[str, typer.Argument(help="The message that starts the A2A task.")],
    watch: Annotated[bool, typer.Option("--watch", help="Then watch the task.")] = False,
    result: WantResult = False,
    interval: Interval = None,
    timeout: Timeout = None,
    no_push: NoPush = False,
    push_receiver: PushReceiverFlag = False,
    push_public_url: PushPublicUrl = None,
    push_port: PushPort = 0,
    otlp: Otlp = False,
    traceparent: StartTraceparent = None,
) -> None:
    from mcptask.commands._follow import FollowUp
    from mcptask.commands.send import SendOptions, run_send

    receiver = _receiver(push_receiver, push_public_url, push_port)
    if receiver is not None and not watch:
        execute(g, lambda ctx: _usage("--push-receiver goes with --watch"))
        return
    then = FollowUp(
        watch, want_result=result, interval=interval, timeout=timeout, push=not no_push, otlp=otlp
    )
    then.receiver = receiver
    opts = SendOptions(text, then=then, traceparent=traceparent)
    execute(g, lambda ctx: run_send(opts, ctx), streaming=watch, one_at_a_time=not watch)


def _receiver(on: bool, public_url: str | None, port: int) -> Any:
    """`--push-receiver` and its options as a `commands._webhook.PushReceiver` (None: off)."""
    if not on and public_url is None and not port:
        return None
    from mcptask.commands._webhook import PushReceiver

    return PushReceiver(public_url=public_url, port=port)


async def _usage(message: str) -> int:
    from mcptask.errors import UsageError

    raise UsageError(message)


@app.command(**described("check"))
@with_target
def check(
    g: GlobalOptions,
    arguments: Annotated[
        list[str] | None,
        typer.Argument(
            help="The task tool's arguments: KEY=VALUE (converted to its schema's types) or KEY:=JSON."
        ),
    ] = None,
    tool: Annotated[
        str | None,
        typer.Option(
            "--tool",
            help="The tool whose tasks are examined (default: the first that allows tasks; required on MCP 2026-07-28).",
        ),
    ] = None,
    failing_tool: Annotated[
        str | None,
        typer.Option(
            "--failing-tool",
            help="A tool known to fail, for the failed-task checks (default: one named fail/error).",
        ),
    ] = None,
    failing_args: Annotated[
        str | None,
        typer.Option("--failing-args", help="The failing tool's arguments as a JSON object."),
    ] = None,
    check_ids: Annotated[
        list[str] | None,
        typer.Option(
            "--check",
            help="Run only this check (repeatable; a prefix selects several).",
            autocompletion=complete.check_ids,
        ),
    ] = None,
    category: Annotated[
        list[str] | None,
        typer.Option(
            "--category",
            help="Run only this category (repeatable): capability, creation, status, result, cancel, list, errors, session, wire, card, update, stream, security.",
            autocompletion=complete.categories,
        ),
    ] = None,
    rpc: Annotated[
        bool, typer.Option("--rpc", help="Show the messages each check exchanged.")
    ] = False,
    junit: Annotated[
        str | None, typer.Option("--junit", help="Also write the results as JUnit XML to PATH.")
    ] = None,
    task_timeout: Annotated[
        float,
        typer.Option(
            "--task-timeout",
            help="How long to wait for a task to end (seconds).",
            parser=seconds_flag("--task-timeout"),
        ),
    ] = 60.0,
) -> None:
    from mcptask.commands.check import CheckOptions, run_check

    opts = CheckOptions(
        tool=tool,
        pairs=arguments or [],
        failing_tool=failing_tool,
        failing_args=failing_args,
        checks=check_ids or [],
        categories=category or [],
        rpc=rpc,
        junit=junit,
        task_timeout=task_timeout,
    )
    execute(g, lambda ctx: run_check(opts, ctx))


@app.command(**described("servers"))
def servers(
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            help="mcptask's TOML config file, or an mcpServers/servers JSON file. [env var: MCPTASK_CONFIG]",
        ),
    ] = None,
    output: OutputMode = "auto",
    jq: Jq = None,
) -> None:
    from mcptask.commands.servers import ServersOptions, run_servers
    from mcptask.session.targets import GlobalOptions

    execute(
        GlobalOptions(config=config, output=output, jq=jq),
        lambda ctx: run_servers(ServersOptions(), ctx),
    )


@app.command(**described("why"))
@with_target
def why(g: GlobalOptions, task_id: TaskId) -> None:
    from mcptask.commands.why import WhyOptions, run_why

    execute(g, lambda ctx: run_why(WhyOptions(task_id), ctx), one_at_a_time=True, loop_free=True)


@app.command(**described("book"))
def book(output: OutputMode = "auto", jq: Jq = None) -> None:
    from mcptask.commands.book import BookOptions, run_book
    from mcptask.session.targets import GlobalOptions

    execute(GlobalOptions(output=output, jq=jq), lambda ctx: run_book(BookOptions(), ctx))


@app.command(**described("forget"))
@with_target
def forget(
    g: GlobalOptions,
    task_ids: Annotated[
        list[str] | None,
        typer.Argument(
            help="Task ids to drop from the task book.", autocompletion=complete.task_ids
        ),
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option(
            "--endpoint", help="Drop this endpoint (every spelling), its tasks and history."
        ),
    ] = None,
) -> None:
    from mcptask.commands.forget import ForgetOptions, run_forget

    execute(g, lambda ctx: run_forget(ForgetOptions(task_ids or [], endpoint), ctx))


@app.command(**described("export"))
@with_target
def export(
    g: GlobalOptions,
    task_ids: Annotated[
        list[str] | None,
        typer.Argument(help="Task ids whose story to export.", autocompletion=complete.task_ids),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", help="The tasks seen within this long: 30m, 12h, 7d.", metavar="AGE"
        ),
    ] = None,
    all_tasks: Annotated[
        bool, typer.Option("--all", help="Every task of the book (the target's, when given).")
    ] = False,
    to: Annotated[
        str | None,
        typer.Option(
            "--to", help="Write OTLP JSON lines to FILE (-: stdout) instead.", metavar="FILE"
        ),
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option(
            "--endpoint",
            help="The OTLP/HTTP endpoint (else OTEL_EXPORTER_OTLP_ENDPOINT).",
            metavar="URL",
        ),
    ] = None,
    content: Annotated[
        bool,
        typer.Option(
            "--content", help="Send what tasks carried too: results, messages, questions."
        ),
    ] = False,
    again: Annotated[
        bool, typer.Option("--again", help="Send stories already sent (same span ids).")
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            help="Seconds the backend has to take a batch.",
            parser=seconds_flag("--timeout"),
        ),
    ] = None,
) -> None:
    from mcptask.commands.export import ExportOptions, run_export

    opts = ExportOptions(
        task_ids or [],
        since=since,
        all_tasks=all_tasks,
        to=to,
        endpoint=endpoint,
        content=content,
        again=again,
        timeout=timeout,
    )
    execute(g, lambda ctx: run_export(opts, ctx))


@app.command(**described("prune"))
def prune(
    older_than: Annotated[
        str,
        typer.Option("--older-than", help="Drop tasks not seen for this long: 7d, 12h, 30m, 2w."),
    ],
    unfinished: Annotated[
        bool,
        typer.Option(
            "--unfinished", help="Drop tasks last seen unfinished too (kept unless given)."
        ),
    ] = False,
    output: OutputMode = "auto",
    jq: Jq = None,
) -> None:
    from mcptask.commands.prune import PruneOptions, run_prune
    from mcptask.session.targets import GlobalOptions

    execute(
        GlobalOptions(output=output, jq=jq),
        lambda ctx: run_prune(PruneOptions(older_than, unfinished), ctx),
    )


@app.command(**described("demo"))
def demo(
    seconds: Annotated[
        float,
        typer.Option(
            "--seconds", help="How long the demo task runs.", parser=seconds_flag("--seconds")
        ),
    ] = 8.0,
    output: OutputMode = "auto",
    jq: Jq = None,
    trace: Annotated[bool, typer.Option("--trace", help="Print the exchanges on stderr.")] = False,
    serve: Annotated[
        bool,
        typer.Option(
            "--serve",
            help="Keep the demo server up on 127.0.0.1 (its URL on stdout) to try call, watch and result against; Ctrl-C stops it.",
        ),
    ] = False,
    port: Annotated[
        int, typer.Option("--port", help="With --serve: the port (0: a free one).")
    ] = 3001,
) -> None:
    from mcptask.commands.demo import DemoOptions, run_demo
    from mcptask.session.targets import GlobalOptions

    g = GlobalOptions(output=output, trace=trace, url="http://127.0.0.1", jq=jq)
    opts = DemoOptions(seconds=seconds, serve=serve, port=port)
    # --serve blocks until Ctrl-C without an event loop (Ctrl-C ends it at once)
    execute(g, lambda ctx: run_demo(opts, ctx), streaming=True, loop_free=serve)


auth_app = typer.Typer(
    name="auth",
    cls=HelpfulGroup,
    help=COMMANDS["auth"].description,
    short_help=COMMANDS["auth"].summary,
    epilog=examples_text("auth"),
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(auth_app)


@auth_app.command("login", **described("auth login"))
@with_auth_target
def auth_login(
    g: GlobalOptions,
    scope: Annotated[
        str | None,
        typer.Option("--scope", help="Ask for these scopes (space-separated) instead."),
    ] = None,
    no_browser: Annotated[
        bool,
        typer.Option(
            "--no-browser",
            help="Print the authorization URL; take the redirect on the listener or pasted.",
        ),
    ] = False,
    client_credentials: Annotated[
        bool,
        typer.Option(
            "--client-credentials",
            help="The client-credentials grant (with --client-id and a secret or key file).",
        ),
    ] = False,
) -> None:
    from mcptask.commands.auth import LoginOptions, run_login

    opts = LoginOptions(scope=scope, no_browser=no_browser, client_credentials=client_credentials)
    execute(g, lambda ctx: run_login(opts, ctx))


@auth_app.command("logout", **described("auth logout"))
@with_auth_target
def auth_logout(g: GlobalOptions) -> None:
    from mcptask.commands.auth import LogoutOptions, run_logout

    execute(g, lambda ctx: run_logout(LogoutOptions(), ctx))


@auth_app.command("status", **described("auth status"))
@with_auth_target
def auth_status(g: GlobalOptions) -> None:
    from mcptask.commands.auth import StatusOptions, run_status

    execute(g, lambda ctx: run_status(StatusOptions(), ctx))


@auth_app.command("token", **described("auth token"))
@with_auth_target
def auth_token(g: GlobalOptions) -> None:
    from mcptask.commands.auth import TokenOptions, run_token

    execute(g, lambda ctx: run_token(TokenOptions(), ctx))


push_app = typer.Typer(
    name="push",
    cls=HelpfulGroup,
    help=COMMANDS["push"].description,
    short_help=COMMANDS["push"].summary,
    epilog=examples_text("push"),
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(push_app)

ConfigId = Annotated[
    str | None,
    typer.Option("--id", help="The push config's id (default: the task's only one)."),
]


#: the webhook token from a file, else $MCPTASK_WEBHOOK_TOKEN (never a flag's value)
WebhookTokenFile = Annotated[
    str | None,
    typer.Option(
        "--webhook-token-file",
        metavar="PATH",
        help="The X-A2A-Notification-Token, from a file (default: $MCPTASK_WEBHOOK_TOKEN).",
    ),
]
#: `--token VALUE`: refused with advice (a secret on the command line shows in ps)
SecretFlag = Annotated[str | None, typer.Option("--token", hidden=True, metavar="REFUSED")]


@push_app.command("set", **described("push set"))
@with_target
def push_set(
    g: GlobalOptions,
    task_id: TaskId,
    webhook: Annotated[
        str,
        typer.Option(
            "--webhook", help="Where the agent POSTs the task's updates (--url is the agent)."
        ),
    ],
    webhook_token_file: WebhookTokenFile = None,
    auth_scheme: Annotated[
        str | None,
        typer.Option("--auth-scheme", help="The Authorization scheme the agent sends (Bearer)."),
    ] = None,
    credentials_file: Annotated[
        str | None,
        typer.Option(
            "--auth-credentials-file",
            metavar="PATH",
            help="The credentials sent with --auth-scheme, from a file "
            "(default: $MCPTASK_WEBHOOK_CREDENTIALS).",
        ),
    ] = None,
    config_id: Annotated[
        str | None, typer.Option("--id", help="The config's id (default: the agent picks).")
    ] = None,
    token_value: SecretFlag = None,
    credentials: Annotated[
        str | None, typer.Option("--auth-credentials", hidden=True, metavar="REFUSED")
    ] = None,
) -> None:
    from mcptask.commands.push import PushOptions, run_push

    opts = PushOptions(
        "set",
        task_id,
        url=webhook,
        token_file=webhook_token_file,
        auth_scheme=auth_scheme,
        credentials_file=credentials_file,
        config_id=config_id,
        secret_flag="--token" if token_value else "--auth-credentials" if credentials else None,
    )
    execute(g, lambda ctx: run_push(opts, ctx), one_at_a_time=True)


@push_app.command("get", **described("push get"))
@with_target
def push_get(g: GlobalOptions, task_id: TaskId, config_id: ConfigId = None) -> None:
    from mcptask.commands.push import PushOptions, run_push

    opts = PushOptions("get", task_id, config_id=config_id)
    execute(g, lambda ctx: run_push(opts, ctx), one_at_a_time=True)


@push_app.command("list", **described("push list"))
@with_target
def push_list(g: GlobalOptions, task_id: TaskId) -> None:
    from mcptask.commands.push import PushOptions, run_push

    opts = PushOptions("list", task_id)
    execute(g, lambda ctx: run_push(opts, ctx), one_at_a_time=True)


@push_app.command("delete", **described("push delete"))
@with_target
def push_delete(g: GlobalOptions, task_id: TaskId, config_id: ConfigId = None) -> None:
    from mcptask.commands.push import PushOptions, run_push

    opts = PushOptions("delete", task_id, config_id=config_id)
    execute(g, lambda ctx: run_push(opts, ctx), one_at_a_time=True)


@push_app.command("listen", **described("push listen"))
def push_listen(
    port: Annotated[int, typer.Option("--port", help="The port (default: any free one).")] = 0,
    host: Annotated[
        str, typer.Option("--host", help="The address to bind (default: loopback only).")
    ] = "127.0.0.1",
    token_file: Annotated[
        str | None,
        typer.Option(
            "--webhook-token-file",
            metavar="PATH",
            help="The X-A2A-Notification-Token required, from a file (default: "
            "$MCPTASK_WEBHOOK_TOKEN, else a random one, shown once).",
        ),
    ] = None,
    path: Annotated[
        str | None, typer.Option("--path", help="The URL path (default: /hook).")
    ] = None,
    max_body: Annotated[
        int | None,
        typer.Option("--max-body", help="The largest body taken, in bytes (default 1 MiB)."),
    ] = None,
    count: Annotated[
        int | None, typer.Option("--count", help="Stop after this many notifications.")
    ] = None,
    tasks: Annotated[
        list[str] | None,
        typer.Option("--task", help="Take notifications about this task only (repeatable)."),
    ] = None,
    output: OutputMode = "auto",
    jq: Jq = None,
    token: SecretFlag = None,
) -> None:
    from mcptask.commands.push import PushOptions, run_push
    from mcptask.session.targets import GlobalOptions

    g = GlobalOptions(output=output, url="http://127.0.0.1", jq=jq)
    opts = PushOptions(
        "listen",
        host=host,
        port=port,
        token_file=token_file,
        path=path,
        max_body=max_body,
        count=count,
        tasks=tasks,
        secret_flag="--token" if token else None,
    )
    execute(g, lambda ctx: run_push(opts, ctx), streaming=True)


@app.command(**described("schema"))
def schema(
    name: Annotated[
        str | None,
        typer.Argument(
            help="The shape: task, list, watch-event, watch-summary, result, cancel, check, tools, servers or push (none: list them).",
            autocompletion=complete.schema_names,
        ),
    ] = None,
    jq: Jq = None,
) -> None:
    from mcptask.commands.schema import SchemaOptions, run_schema
    from mcptask.session.targets import GlobalOptions

    g = GlobalOptions(output="json", jq=jq)
    execute(g, lambda ctx: run_schema(SchemaOptions(name), ctx))


def _app_for(args: list[str]) -> typer.Typer:
    """Typer builds every command's parameters (a pydantic adapter each) before it runs one:
    for a plain `mcptask COMMAND ...` only that command is built (start-up time; see
    bench/startup.py). Help for all commands and shell completion use the whole app."""
    import os

    if any(k.startswith("_MCPTASK_COMPLETE") for k in os.environ):
        return app
    if args in ([], ["--help"], ["-h"]):
        return _listing_app()
    for info in app.registered_commands:
        name = info.name or (info.callback.__name__ if info.callback else "")
        if name.replace("_", "-") == args[0]:
            one = _one_command_app()
            one.registered_commands = [info]
            return one
    # a command with subcommands (`auth`): that group alone (Typer's own completion options,
    # which the whole app has, would each need a pydantic adapter to be read)
    for group in app.registered_groups:
        typer_instance = group.typer_instance
        if (group.name or (typer_instance.info.name if typer_instance else "")) == args[0]:
            one = _one_command_app()
            one.registered_groups = [group]
            return one
    return app


def _listing_app() -> typer.Typer:
    """The whole app as `mcptask --help` lists it: every command and group with its name, help
    and panel, but none of their parameters (Typer would build each one's, 450 in all, to print
    one line per command)."""
    import copy

    def listed(info: Any) -> Any:
        callback = info.callback
        if callback is None:
            return info

        def stub() -> None:
            """(only listed)"""

        stub.__name__ = callback.__name__
        stub.__doc__ = callback.__doc__
        out = copy.copy(info)
        out.callback = stub
        return out

    def group(info: Any) -> Any:
        out = copy.copy(info)
        if info.typer_instance is not None:
            inner = out.typer_instance = copy.copy(info.typer_instance)
            inner.registered_commands = [listed(c) for c in inner.registered_commands]
            inner.registered_groups = [group(g) for g in inner.registered_groups]
        return out

    whole = copy.copy(app)
    whole.registered_commands = [listed(c) for c in app.registered_commands]
    whole.registered_groups = [group(g) for g in app.registered_groups]
    return whole


def _one_command_app() -> typer.Typer:
    one = typer.Typer(
        name="mcptask",
        cls=GroupedHelp,
        add_completion=False,
        context_settings=app.info.context_settings,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
    )
    one.registered_callback = app.registered_callback
    return one
