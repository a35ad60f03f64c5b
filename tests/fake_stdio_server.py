"""A tiny MCP 2025-11-25 server over stdio for the stdio transport tests (standard library only).

    python fake_stdio_server.py [options] [marker...]

--dump PATH      write {"env": os.environ, "cwd": os.getcwd()} to PATH at start
--banner         print non-JSON lines on stdout before anything else
--ping           send a `ping` request (and a notification) before answering tasks/list
--hang           never answer tasks/list
--hung PATH      with --hang: create PATH when tasks/list has come (tests wait for it)
--die-on METHOD  on METHOD: write three stderr lines and exit 3
--ignore-eof     keep running after stdin closes
--ignore-term    ignore SIGTERM (only SIGKILL stops it)
--trickle        answer tasks/list one byte every 0.3 s (each write is quick, the line never ends
                 in time)
--child          start a child process (same process group, the markers in its arguments)
--daemon         start a daemon in a session of its own (double fork, setsid; the markers in
                 its arguments), as a server that starts a helper might
--deep           answer tasks/list with a result nested 950 deep

Extra arguments (a marker for finding the process in /proc) are ignored.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


def send(msg: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    opts: dict[str, str | bool] = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--dump", "--die-on", "--hung"):
            opts[a] = argv[i + 1]
            i += 2
            continue
        if a.startswith("--"):
            opts[a] = True
        i += 1
    if opts.get("--ignore-term"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if isinstance(opts.get("--dump"), str):
        with open(str(opts["--dump"]), "w") as f:
            json.dump({"env": dict(os.environ), "cwd": os.getcwd()}, f)
    if opts.get("--child"):
        markers = [a for a in argv if not a.startswith("--")]
        code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
        subprocess.Popen([sys.executable, "-c", code, *markers], stdin=subprocess.DEVNULL)
    if opts.get("--daemon"):
        markers = [a for a in argv if not a.startswith("--")]
        code = (
            "import os, signal, time\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "if os.fork(): os._exit(0)\n"
            "os.setsid()\n"
            "if os.fork(): os._exit(0)\n"
            "time.sleep(600)\n"
        )
        subprocess.run(
            [sys.executable, "-c", code, *markers],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    print("fake server starting", file=sys.stderr, flush=True)
    if opts.get("--banner"):
        print("Welcome to the fake server!", flush=True)
        print("{not json either", flush=True)
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, mid = msg.get("method"), msg.get("id")
        if method is None or mid is None:
            continue  # notifications and answers to our requests
        if method == opts.get("--die-on"):
            for n in (1, 2, 3):
                print(f"fatal {n}: cannot handle {method}", file=sys.stderr, flush=True)
            return 3
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "result": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tasks": {"list": {}, "cancel": {}}, "tools": {}},
                        "serverInfo": {"name": "fake-stdio", "version": "1"},
                    },
                }
            )
        elif method == "tasks/list":
            if opts.get("--hang"):
                if isinstance(opts.get("--hung"), str):
                    open(str(opts["--hung"]), "w").close()
                continue
            if opts.get("--trickle"):
                line = json.dumps({"jsonrpc": "2.0", "id": mid, "result": {"tasks": []}}) + "\n"
                for ch in line:
                    sys.stdout.write(ch)
                    sys.stdout.flush()
                    time.sleep(0.3)
                continue
            if opts.get("--deep"):
                deep = '{"a": ' * 950 + "1" + "}" * 950
                sys.stdout.write(f'{{"jsonrpc": "2.0", "id": {mid}, "result": {deep}}}\n')
                sys.stdout.flush()
                continue
            if opts.get("--ping"):
                send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": 1}})
                send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
                answer = json.loads(sys.stdin.readline())
                if answer.get("id") != "srv-1" or answer.get("result") != {}:
                    print(f"bad ping answer {answer}", file=sys.stderr, flush=True)
                    return 5
            send({"jsonrpc": "2.0", "id": mid, "result": {"tasks": []}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": []}})
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "error": {"code": -32601, "message": f"Method not found: {method}"},
                }
            )
    if opts.get("--ignore-eof"):
        while True:
            time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
