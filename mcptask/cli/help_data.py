"""What `--help` says: each command's one-line summary (for `mcptask --help`, never cut), its
description, its examples (gh's style), the group it is listed under, and the placeholders
(metavars) options show. Only plain data: `--help` imports nothing else for it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommandHelp:
    group: str
    #: one line in `mcptask --help`
    summary: str
    #: the paragraph under the usage line of `mcptask COMMAND --help`
    description: str
    #: (comment, command line) pairs; the comment may be empty
    examples: tuple[tuple[str, str], ...]


FOLLOW = "Follow tasks"
START = "Start tasks"
SERVERS = "Servers"
SCRIPTING = "Scripting"
#: the order of the groups in `mcptask --help`
GROUPS = (FOLLOW, START, SERVERS, SCRIPTING)

URL = "http://127.0.0.1:3001/mcp"

COMMANDS: dict[str, CommandHelp] = {
    "get": CommandHelp(
        FOLLOW,
        "Show a task's status once",
        "Fetch a task's status once and print it: a panel on a terminal, the normalized task as "
        "JSON elsewhere (docs/output.md). Without a target, the task book says where the task "
        "lives; a unique prefix of at least 4 characters stands for an id it knows. Exit 0 "
        "whatever the status, 9 when the server does not know the task. Why it may look stuck "
        "(also with the server down): `mcptask why ID`.",
        (
            ("", f"mcptask get 8488be63b6d99b9f312f717804759bc8 --url {URL}"),
            ("a task the task book knows: its endpoint comes from there", "mcptask get 8488be63"),
            ("only the status, for a script", "mcptask get 8488be63 --jq .status"),
            ("an id that begins with -", f"mcptask get --url {URL} -- -kE3xYz"),
        ),
    ),
    "watch": CommandHelp(
        FOLLOW,
        "Follow tasks live until they end",
        "Follow one or more tasks until each ends: a live view on a terminal, one JSON event "
        "per line in a pipe (`-o json`: one summary at the end). Updates the server pushes are "
        "shown at once; polls follow the pace the server asks (`--interval` only slows them). "
        "On a terminal a task that asks for input gets a form. --push-receiver takes an A2A "
        "agent's push notifications on a webhook on 127.0.0.1 (`via: webhook`). Exit by the final state: 0 "
        "completed, 5 failed, 6 needs input, 7 timed out, 8 cancelled, 9 unknown or expired "
        "(the highest of several). Why stuck: `mcptask why ID`.",
        (
            ("", f"mcptask watch 8488be63 --url {URL}"),
            (
                "several tasks, giving up after ten minutes",
                "mcptask watch 8488be63 f00dfeed --timeout 600",
            ),
            (
                "every unfinished task the server or the task book knows",
                f"mcptask watch --all --url {URL}",
            ),
            (
                "wait until a task asks for input, then answer it",
                "mcptask watch 8488be63 --until input_required && mcptask answer 8488be63",
            ),
            (
                "go away while it runs: a bell and a desktop notification when it ends",
                "mcptask watch 8488be63 --bell --notify",
            ),
        ),
    ),
    "result": CommandHelp(
        FOLLOW,
        "Print a task's result, waiting for it",
        "Print a task's result: the tool's content (MCP) or the artifacts and final message "
        "(A2A); JSON elsewhere than a terminal. Waits while the task runs (`--no-wait` fails at "
        "once instead). A result the task book kept is shown after the server forgot the task. "
        "Exit 0 completed, 5 failed (the error is still printed), 6 the task waits for input, 7 "
        "--timeout elapsed, 8 cancelled, 9 unknown, 11 still running with --no-wait.",
        (
            ("", "mcptask result 8488be63"),
            (
                "save the result as JSON",
                f"mcptask result 8488be63 --url {URL} -o json > report.json",
            ),
            ("write its parts as files into out/", "mcptask result 8488be63 --save out/"),
            (
                "only the text of the first content item",
                "mcptask result 8488be63 --jq '.content[0].text'",
            ),
            ("fail fast when it is not done", "mcptask result 8488be63 --no-wait"),
        ),
    ),
    "list": CommandHelp(
        FOLLOW,
        "List the server's tasks",
        "List the server's tasks (every page, once for each session the task book knows for "
        "the endpoint), or with --local the tasks this machine created or saw. A server that "
        "cannot list tasks is answered from the task book. --status, --context, --since and "
        "--limit filter the list (on the server where the protocol can, as A2A's ListTasks; "
        "the same on --local). `-o ndjson` prints one task per line.",
        (
            ("", f"mcptask list --url {URL}"),
            ("what this machine has seen, every endpoint", "mcptask list --local"),
            (
                "the tasks that run or wait, updated in the last hour",
                f"mcptask list --url {URL} --status working,input_required --since 1h",
            ),
            (
                "the ids of the running tasks",
                f"mcptask list --url {URL} -o ndjson --jq 'select(.status == \"working\") | .taskId'",
            ),
        ),
    ),
    "cancel": CommandHelp(
        FOLLOW,
        "Ask the server to cancel a task",
        "Ask the server to cancel a task and print the task as the server then shows it. "
        "Cancellation is cooperative: the task may take a moment to stop (`mcptask watch` shows "
        "when). Exit 0 when the request was accepted, 11 when the task had already ended (its "
        "final state is named), 9 when the server does not know it.",
        (
            ("", f"mcptask cancel 8488be63 --url {URL}"),
            (
                "cancel, then follow it to the end",
                "mcptask cancel 8488be63 && mcptask watch 8488be63",
            ),
        ),
    ),
    "answer": CommandHelp(
        FOLLOW,
        "Answer a task that waits for input",
        "Answer a task in input_required: a form built from the server's question on a "
        "terminal, otherwise --json (checked against the form), --decline, --cancel or --text "
        "(A2A), or --data JSON (an A2A data part). Servers acknowledge answers they ignore, so the task is looked up first and "
        "watched for a few seconds after: exit 0 when it moved on, 6 when it still waits, 11 "
        "when it was not waiting for input.",
        (
            ("a form on the terminal", "mcptask answer 8488be63"),
            ("from a script", 'mcptask answer 8488be63 --json \'{"name": "Ada"}\''),
            ("say no", "mcptask answer 8488be63 --decline"),
            (
                "an A2A agent's question",
                "mcptask answer 3f2a91c4 --url http://127.0.0.1:9999/ --text blue",
            ),
        ),
    ),
    "call": CommandHelp(
        START,
        "Call an MCP tool (as a task where it can)",
        "Call an MCP tool: as a task where the tool and the server allow it (print the task, "
        "or follow it with --watch, or wait for its result with --result), otherwise as a plain "
        "call whose progress and logs show live. Arguments are KEY=VALUE (the value converted "
        "to the type the tool's input schema gives), KEY:=JSON, or --args with a JSON object, "
        "checked against the schema before anything is sent. Over --stdio the task dies with "
        "the server, so the call is always watched.",
        (
            ("", f"mcptask call simulate-research-query topic=tides --url {URL}"),
            (
                "watch it and print the result at the end",
                f"mcptask call simulate-research-query topic=tides --watch --result --url {URL}",
            ),
            (
                "a tool that does not run as a task: its progress live, then its result",
                f"mcptask call trigger-long-running-operation duration=2 steps=4 --url {URL}",
            ),
            (
                "arguments as JSON, and a ttl of one minute",
                "mcptask call slow_tool --args '{\"items\": [1, 2, 3]}' --ttl 60000",
            ),
            (
                "a server spawned for this run",
                'mcptask call build-report topic=otters --stdio "node dist/index.js stdio"',
            ),
        ),
    ),
    "send": CommandHelp(
        START,
        "Send a message that starts an A2A task",
        "Send a message to an A2A agent without waiting for the answer, and print the task it "
        "starts; --watch follows it, --result waits for its result. --context-id continues a "
        "conversation; a task sent from this machine remembers its context (Agno looks its "
        "tasks up by context).",
        (
            ("", 'mcptask send "summarise the Q3 report" --url http://127.0.0.1:9999/'),
            (
                "follow it and print the answer",
                'mcptask send "summarise the Q3 report" --url http://127.0.0.1:9999/ --watch --result',
            ),
            (
                "an Agno agent, continuing a conversation",
                "mcptask send hello --url http://127.0.0.1:7777/a2a/agents/echo --context-id c1",
            ),
        ),
    ),
    "demo": CommandHelp(
        START,
        "Watch a task on an embedded demo server",
        "Start a small MCP task server on 127.0.0.1, start a task on it and watch it live, then "
        "print its result: what mcptask looks like, with nothing to install or configure.",
        (
            ("", "mcptask demo"),
            ("a shorter task, its events as JSON lines", "mcptask demo --seconds 3 -o ndjson"),
            (
                "keep the demo server up on 127.0.0.1:3001 to try the other commands against",
                "mcptask demo --serve",
            ),
        ),
    ),
    "tools": CommandHelp(
        SERVERS,
        "List the target's tools and their task support",
        "List the target's MCP tools: name, whether a call may, must or cannot run as a task "
        "(optional, required, forbidden), a one-line description and the required arguments.",
        (
            ("", f"mcptask tools --url {URL}"),
            (
                "the tools that can run as tasks",
                f"mcptask tools --url {URL} --jq '.tools[] | select(.taskSupport != \"forbidden\") | .name'",
            ),
        ),
    ),
    "check": CommandHelp(
        SERVERS,
        "Check a server's task support against the spec",
        "Create real tasks on the target and judge, check by check, what the spec requires: "
        "PASS, WARN, FAIL, INFO or SKIP, each with its requirement, spec section and what the "
        "server answered. For server authors, in development or CI. Exit 0 passed, 5 a check "
        "failed, 10 incomplete (a check that applies could not run).",
        (
            ("", "mcptask check --url http://localhost:8000/mcp"),
            (
                "the tool to make tasks with, and a JUnit report for CI",
                "mcptask check --url http://localhost:8000/mcp --tool build_report topic=x --junit check.xml",
            ),
            (
                "only the cancellation checks, with the messages exchanged",
                'mcptask check --stdio "node dist/index.js stdio" --category cancel --rpc',
            ),
        ),
    ),
    "log": CommandHelp(
        FOLLOW,
        "Tell a task's story from the task book",
        "Print everything mcptask recorded about a task, in the order it happened: its "
        "creation, each status and message (marked push or poll), progress, questions and "
        "answers (refused, dismissed), cancels, retries and errors, push streams and configs, "
        "expiry, the result fetched. Each event is at the server's time where the server said "
        "when (a `~` marks one mcptask could only time by when it saw it), with the time since "
        "creation, the gap since the event before, how late mcptask saw it, and the command "
        "that recorded it when that was not one following the task. `--follow` prints each "
        "event as it happens until the task ends: what a `watch` elsewhere records, else "
        "`log` follows the task itself at the server's pace (push where offered); "
        "`--timeout` bounds that wait. In a pipe: one JSON object per event (`--jq` applies "
        "to each); `-o json`: one document (docs/output.md). Why a task may look stuck: "
        "`mcptask why ID`. Exit 9 when the book has no history of it.",
        (
            ("", "mcptask log 8488be63"),
            ("follow a task as it runs", "mcptask log 8488be63 --follow"),
            ("only the retries", "mcptask log 8488be63 --jq 'select(.kind == \"retry\")'"),
        ),
    ),
    "why": CommandHelp(
        FOLLOW,
        "Say why a task may look stuck",
        "Why a task may look stuck, from the server and the task book: the likely reasons "
        "first, since when nothing moved (in the server's time where it says), its last "
        "message, the pace it asks, whether a watch follows it (and whether push is live), "
        "retries and the last error, the question it waits on and how to answer it, when the "
        "server will purge it. When the server cannot be reached, the answer comes from what "
        "the task book last saw, with the connection error as the first reason (exit 4, as "
        "`get` would). Exit 9 when the server does not know the task.",
        (
            ("", "mcptask why 8488be63"),
            ("the reasons only, for a script", "mcptask why 8488be63 --jq '.history.reasons[]'"),
        ),
    ),
    "book": CommandHelp(
        SERVERS,
        "List the endpoints in the task book",
        "The task book as an address book: each endpoint mcptask has recorded tasks on (HTTP "
        "URLs, stdio servers by their command line), its protocol, its tasks and how many are "
        "unfinished, its events, when it last answered and last failed. Tend it with `forget` "
        "and `prune`; the book lives in the state directory (MCPTASK_STATE_DIR).",
        (
            ("", "mcptask book"),
            ("as JSON", "mcptask book -o json"),
        ),
    ),
    "forget": CommandHelp(
        SERVERS,
        "Drop tasks or an endpoint from the task book",
        "Drop tasks (with their history and kept results) from the task book, or a whole "
        "endpoint with `--endpoint URL` (every spelling of it). The server is not asked "
        "anything: its tasks go on. Exit 9 when the book has none of them.",
        (
            ("", "mcptask forget 8488be63"),
            ("an endpoint that is gone for good", f"mcptask forget --endpoint {URL}"),
        ),
    ),
    "export": CommandHelp(
        SERVERS,
        "Send tasks' stories to a trace backend (OTLP)",
        "Send the task book's story of tasks as OpenTelemetry traces: one trace per task (the "
        "one `call --traceparent` started it in, else its own), its span from creation to end "
        "at the server's times with every status, message, question, answer, retry and push "
        "event, and the calls mcptask made about it as child spans; MCP and A2A attributes "
        "after the OpenTelemetry GenAI conventions. Goes over OTLP/HTTP to "
        "OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT, with OTEL_EXPORTER_OTLP_HEADERS, "
        "OTEL_SERVICE_NAME, as every OTel SDK reads them; --endpoint overrides), or as OTLP JSON "
        "lines to a file with --to (what the Collector's file receiver reads). Results, "
        "agents' messages and questions stay out unless --content. A story sent whole is not "
        "sent again; tasks still running are sent only when named. Live, as a watch sees tasks "
        "end: `watch --otlp`. Exit 4 when the backend does not take them.",
        (
            ("", "mcptask export 8488be63 --endpoint http://localhost:4318"),
            ("what ended in the last two hours", "mcptask export --since 2h"),
            ("no backend: a file", "mcptask export --all --to tasks.otlp.jsonl"),
        ),
    ),
    "prune": CommandHelp(
        SERVERS,
        "Drop what the task book has not seen for a while",
        "Drop the tasks not seen for the given age (with their history and kept results), and "
        "endpoints left without tasks that have not answered for as long. Tasks last seen "
        "unfinished stay unless --unfinished is given; the age needs a unit. The book does this "
        "by itself for what it has not seen for MCPTASK_BOOK_DAYS days (default 30).",
        (
            ("", "mcptask prune --older-than 7d"),
            ("everything older than twelve hours", "mcptask prune --older-than 12h"),
        ),
    ),
    "servers": CommandHelp(
        SERVERS,
        "List the servers in the config file",
        "List the named targets in the config file (mcptask's TOML, or an mcpServers or VS Code "
        "mcp.json file), for use with -s NAME. Never a secret: header and variable names are "
        "shown, their values are not.",
        (
            ("", "mcptask servers"),
            ("the servers Cursor knows", "mcptask servers --config ~/.cursor/mcp.json"),
        ),
    ),
    "auth": CommandHelp(
        SERVERS,
        "Log in to MCP servers that need OAuth",
        "OAuth for MCP servers that authorize (the MCP authorization spec): log in once, and "
        "every command sends the stored token for that target and refreshes it when it "
        "expires. Credentials live in the OS keyring, else in a 0600 file in the state "
        "directory; never in the task book, --trace or an error.",
        (
            ("", "mcptask auth login --url https://mcp.example.com/mcp"),
            ("", "mcptask auth status"),
            ("", "mcptask auth logout --url https://mcp.example.com/mcp"),
        ),
    ),
    "auth login": CommandHelp(
        SERVERS,
        "Log in and store the credentials",
        "Log in to the target's authorization server and store the credentials: the browser "
        "opens at the authorization server and the redirect comes back to a listener on "
        "127.0.0.1 (--no-browser prints the address and takes the pasted redirect), or, for "
        "machines, the client-credentials grant. Exit 0 logged in, 3 refused.",
        (
            ("opens the browser", "mcptask auth login --url https://mcp.example.com/mcp"),
            (
                "over SSH: print the address, paste where the browser ends up",
                "mcptask auth login --url https://mcp.example.com/mcp --no-browser",
            ),
            (
                "a machine with a registered client",
                "mcptask auth login --url https://mcp.example.com/mcp --client-credentials --client-id ci-bot --client-secret-file ~/.ci-secret",
            ),
        ),
    ),
    "auth logout": CommandHelp(
        SERVERS,
        "Forget the target's stored credentials",
        "Forget the credentials stored for the target, revoking the tokens at the "
        "authorization server where it offers revocation (RFC 7009).",
        (
            ("", "mcptask auth logout --url https://mcp.example.com/mcp"),
            ("", "mcptask auth logout -s research"),
        ),
    ),
    "auth status": CommandHelp(
        SERVERS,
        "Show the stored credentials, never a secret",
        "Show the stored credentials, all of them or the target's: the endpoint, the issuer, "
        "the scopes and when the token expires; never a token or secret.",
        (
            ("", "mcptask auth status"),
            (
                "only one target's, as JSON",
                "mcptask auth status --url https://mcp.example.com/mcp -o json",
            ),
        ),
    ),
    "auth token": CommandHelp(
        SERVERS,
        "Print the target's access token",
        "Print the target's access token (refreshed first when it expired), for scripts that "
        "call the server themselves. The one command that prints a token.",
        (
            ("", "mcptask auth token --url https://mcp.example.com/mcp"),
            (
                "",
                'curl -H "Authorization: Bearer $(mcptask auth token -s research)" https://mcp.example.com/mcp',
            ),
        ),
    ),
    "push": CommandHelp(
        SERVERS,
        "A2A push notifications: configs and a receiver",
        "An A2A task's push notification configs (where the agent POSTs the task's updates, and "
        "the token it sends with them): set, get, list, delete. `push listen` is a webhook "
        "receiver that prints every notification it gets, one JSON line each, until Ctrl-C. "
        "`watch --push-receiver` does both for the tasks it watches.",
        (
            (
                "print what an agent pushes to /hook (token: $MCPTASK_WEBHOOK_TOKEN)",
                "mcptask push listen --port 8765",
            ),
            (
                "point a task's updates at it (the same $MCPTASK_WEBHOOK_TOKEN)",
                "mcptask push set 8488be63 --webhook http://127.0.0.1:8765/hook",
            ),
            ("", "mcptask push list 8488be63"),
        ),
    ),
    "push set": CommandHelp(
        SERVERS,
        "Make the agent POST a task's updates to a URL",
        "Create (or replace, with --id) a push notification config for the task: the agent "
        "POSTs each update to --webhook with the token of --webhook-token-file (else "
        "$MCPTASK_WEBHOOK_TOKEN) in X-A2A-Notification-Token, and an Authorization header "
        "with --auth-scheme and the credentials of --auth-credentials-file (else "
        "$MCPTASK_WEBHOOK_CREDENTIALS): secrets never go on the command line. Agents should "
        "refuse loopback and private URLs: give one they can reach. Exit 11 when the agent "
        "does not push.",
        (
            (
                "",
                "mcptask push set 8488be63 --webhook https://hooks.example.com/a2a --webhook-token-file ~/.a2a-token",
            ),
            (
                "with an Authorization header, under an id of your own",
                "mcptask push set 8488be63 --webhook https://hooks.example.com/a2a --auth-scheme Bearer --auth-credentials-file ~/.a2a-bearer --id hook-1",
            ),
        ),
    ),
    "push get": CommandHelp(
        SERVERS,
        "Show one push config of a task",
        "Show one push notification config of the task (--id; without it, the task's only "
        "one): its URL and whether a token or credentials are set, never what they are.",
        (
            ("", "mcptask push get 8488be63 --id hook-1"),
            ("the task's only config, as JSON", "mcptask push get 8488be63 -o json"),
        ),
    ),
    "push list": CommandHelp(
        SERVERS,
        "List a task's push configs",
        "List the task's push notification configs: each one's id, the URL the agent POSTs "
        "to, and whether a token or credentials are set, never what they are.",
        (
            ("", "mcptask push list 8488be63"),
            ("one config per line", "mcptask push list 8488be63 -o ndjson"),
        ),
    ),
    "push delete": CommandHelp(
        SERVERS,
        "Stop a task's pushes to a URL",
        "Delete one push notification config of the task (--id; without it, the task's only "
        "one): the agent stops POSTing there.",
        (
            ("", "mcptask push delete 8488be63 --id hook-1"),
            ("the task's only config", "mcptask push delete 8488be63"),
        ),
    ),
    "push listen": CommandHelp(
        SERVERS,
        "Print every push notification received",
        "A webhook receiver on 127.0.0.1 (--host to bind elsewhere), at a random port unless "
        "given and the path /hook (--path), that prints every notification as one JSON line: "
        "the task, its status, "
        "what changed, whether the token matched, what it answered. It refuses (401) a "
        "request without the token, bodies over --max-body (413), anything not JSON (415), "
        "and answers duplicates once. The first line says where it listens. The token "
        "required comes from --webhook-token-file, else $MCPTASK_WEBHOOK_TOKEN, else a random "
        "one is shown once on stderr. Ctrl-C ends it (exit 0).",
        (
            ("", "mcptask push listen --port 8765 --webhook-token-file ~/.a2a-token"),
            ("stop after the first notification", "mcptask push listen --count 1 -o json"),
        ),
    ),
    "schema": CommandHelp(
        SCRIPTING,
        "Print the JSON Schema of an output shape",
        "Print the JSON Schema (draft 2020-12) of one of the JSON shapes mcptask prints: task, "
        "list, watch-event, watch-summary, result, cancel, check, tools, servers, push, log, "
        "export and the others `mcptask schema` lists. The schemas "
        "ship in the package; docs/output.md says which command prints which.",
        (
            ("", "mcptask schema task"),
            ("every shape's name", "mcptask schema"),
            ("save one for a validator", "mcptask schema watch-event > watch-event.schema.json"),
        ),
    ),
}


#: `mcptask --help`
ROOT = CommandHelp(
    "",
    "Inspect, follow and collect long-running tasks on MCP servers and A2A agents",
    "Inspect, follow and collect long-running tasks on MCP servers and A2A agents. A server "
    "takes slow work (a tool call, an agent run) and hands back a task id: mcptask shows that "
    "task, follows it live and collects its result, for a person on a terminal or a script in "
    "a pipe (JSON; docs/output.md). Every command that talks to a server takes the target "
    "options (--url URL, -s NAME from the config file, or --stdio 'CMD ARGS'); `mcptask "
    "COMMAND --help` shows them.",
    (
        ("see it work, nothing to set up", "mcptask demo"),
        (
            "start a task, follow it, collect its result",
            f"mcptask call simulate-research-query topic=tides --url {URL}",
        ),
        ("", "mcptask watch 8488be63"),
        ("", "mcptask result 8488be63"),
    ),
)


def examples_text(name: str) -> str:
    """The `Examples:` section of `mcptask NAME --help` (the command's epilog, printed line by
    line); `""` for `mcptask --help`."""
    lines = ["Examples:"]
    for comment, command in (COMMANDS[name] if name else ROOT).examples:
        if comment:
            lines.append(f"  # {comment}")
        lines.append(f"  $ {command}")
    return "\n".join(lines)


#: the placeholders options and arguments show in help (never a Python type)
METAVARS = {
    "url": "URL",
    "server": "NAME",
    "config": "PATH",
    "stdio": "'CMD ARGS'",
    "protocol": "PROTOCOL",
    "header": "'NAME: VALUE'",
    "token_file": "PATH",
    "session": "SESSION_ID",
    "context_id": "CONTEXT_ID",
    "output": "MODE",
    "jq": "EXPR",
    "task_id": "TASK_ID",
    "task_ids": "TASK_ID",
    "interval": "SECONDS",
    "timeout": "SECONDS",
    "traceparent": "VALUE",
    "until": "STATUS[,...]",
    "history": "N",
    "json_content": "JSON",
    "text": "TEXT",
    "key": "KEY",
    "tool": "TOOL",
    "arguments": "KEY=VALUE",
    "args": "JSON",
    "ttl": "MS",
    "seconds": "SECONDS",
    "failing_tool": "TOOL",
    "failing_args": "JSON",
    "check_ids": "CHECK_ID",
    "category": "CATEGORY",
    "junit": "PATH",
    "task_timeout": "SECONDS",
    "name": "NAME",
    "scope": "SCOPES",
    "client_id": "CLIENT_ID",
    "client_secret_file": "PATH",
    "client_key_file": "PATH",
    "push_public_url": "URL",
    "push_port": "PORT",
    "webhook": "URL",
    "auth_scheme": "SCHEME",
    "auth_credentials": "CREDENTIALS",
    "config_id": "ID",
    "port": "PORT",
    "host": "ADDRESS",
    "path": "PATH",
    "max_body": "BYTES",
    "count": "N",
    "tasks": "TASK_ID",
    "client_metadata_url": "URL",
    "endpoint": "URL",
    "older_than": "AGE",
}
