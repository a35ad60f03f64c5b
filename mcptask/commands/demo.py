"""`mcptask demo`: an embedded task server on 127.0.0.1, and a watch of one task on it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcptask.commands._follow import FollowUp, after_create

if TYPE_CHECKING:
    from mcptask.session.context import Context


@dataclass
class DemoOptions:
    seconds: float = 8.0
    want_result: bool = True
    #: `--serve`: keep the demo server up on 127.0.0.1 (its URL on stdout) until Ctrl-C
    serve: bool = False
    port: int = 3001


async def run_demo(opts: DemoOptions, ctx: Context) -> int:
    from mcptask.demo.server import DemoServer
    from mcptask.protocols.mcp2025 import Mcp2025
    from mcptask.session.targets import Target

    if opts.serve:
        return serve(opts, ctx)
    with DemoServer(task_seconds=opts.seconds) as server:
        ctx.options.url = server.url
        ctx.options.protocol = Mcp2025.name
        ctx.use_target(Target(url=server.url, protocol=Mcp2025.name, ephemeral=True))
        if ctx.out.pretty:
            ctx.out.note(f"demo task server listening on {server.url}")
        proto = await ctx.endpoint.protocol()
        trace = ctx.places.new_trace()
        args = {"topic": "tide pools"}
        created = await proto.call_tool("build-report", args, ttl=60_000, trace=trace)
        return await after_create(
            ctx,
            created,
            FollowUp(watch=True, want_result=opts.want_result),
            fields={"tool": "build-report"},
            title="mcptask demo: watching a task on the embedded server",
            trace=trace,
        )


def serve(opts: DemoOptions, ctx: Context) -> int:
    """`mcptask demo --serve`: the demo server on 127.0.0.1 until Ctrl-C (or SIGTERM). Its URL
    is the one line on stdout; how to try it goes to stderr. It blocks without an event loop
    (the command runs loop-free), so Ctrl-C ends it at once, exit 0."""
    import signal
    import threading

    from mcptask.demo.server import DemoServer
    from mcptask.errors import ExitCode, UsageError

    if ctx.options.output in ("json", "ndjson") or ctx.options.jq is not None:
        raise UsageError("--serve prints the server's URL as one line of text: leave out -o/--jq")
    if not 0 <= opts.port <= 65535:
        raise UsageError(f"--port must be 0..65535, not {opts.port}")
    try:
        server = DemoServer(task_seconds=opts.seconds, port=opts.port).start()
    except OSError as exc:
        raise UsageError(
            f"cannot listen on 127.0.0.1:{opts.port}: {exc.strerror or exc} "
            "(--port 0 takes a free port)"
        ) from None
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        ctx.out.stdout.write(server.url + "\n")
        ctx.out.stdout.flush()
        url = server.url
        ctx.out.note(f"demo task server listening on {url}; Ctrl-C stops it. Try:")
        for line in (
            f"mcptask tools --url {url}",
            f"mcptask call build-report topic=tides --url {url}",
            "mcptask watch ID        # the id `call` printed",
            "mcptask result ID",
        ):
            ctx.out.stderr.write(f"  {line}\n")
        ctx.out.stderr.flush()
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.stop()
    return ExitCode.OK
