"""Made by `python -m mcptask.cli.completion_gen` from the Typer app: do not edit.

What `cli/quick_complete.py` needs to answer a TAB on a task id without Typer: the common
options (name -> takes a value) and, for each command that takes task ids, how many (None:
any), its own options that take a value and those that do not."""

COMMON_OPTIONS: dict[str, bool] = {
    "--url": True,
    "-u": True,
    "--server": True,
    "-s": True,
    "--config": True,
    "--stdio": True,
    "--protocol": True,
    "-p": True,
    "--header": True,
    "-H": True,
    "--token-file": True,
    "--proxy": True,
    "--cacert": True,
    "--login": False,
    "--client-id": True,
    "--client-secret-file": True,
    "--client-key-file": True,
    "--client-metadata-url": True,
    "--session": True,
    "--context-id": True,
    "--output": True,
    "-o": True,
    "--jq": True,
    "--trace": False,
}

TASK_ID_COMMANDS: dict[str, tuple[int | None, tuple[str, ...], tuple[str, ...]]] = {
    "get": (
        1,
        ("--history",),
        (),
    ),
    "watch": (
        None,
        (
            "--interval",
            "--push-port",
            "--push-public-url",
            "--save",
            "--timeout",
            "--traceparent",
            "--until",
        ),
        (
            "--all",
            "--bell",
            "--download",
            "--force",
            "--no-push",
            "--notify",
            "--otlp",
            "--push-receiver",
            "--result",
        ),
    ),
    "result": (
        1,
        (
            "--interval",
            "--save",
            "--timeout",
        ),
        (
            "--download",
            "--force",
            "--no-wait",
        ),
    ),
    "cancel": (
        1,
        (),
        (),
    ),
    "log": (
        1,
        ("--timeout",),
        (
            "--follow",
            "-f",
        ),
    ),
    "answer": (
        1,
        (
            "--data",
            "--json",
            "--key",
            "--text",
        ),
        (
            "--cancel",
            "--decline",
        ),
    ),
    "why": (
        1,
        (),
        (),
    ),
    "forget": (
        None,
        ("--endpoint",),
        (),
    ),
    "export": (
        None,
        (
            "--endpoint",
            "--since",
            "--timeout",
            "--to",
        ),
        (
            "--again",
            "--all",
            "--content",
        ),
    ),
}

#: for each command `cli/quick_get.py` runs before Typer: (its one argument; each option
#: word -> (its parameter, how it is read, its default, the environment variable Typer
#: reads it from))
QuickRow = tuple[str, str, str | bool | None, str | None]
QUICK_COMMANDS: dict[str, tuple[str, dict[str, QuickRow]]] = {
    "get": (
        "task_id",
        {
            "--history": ("history", "other", None, None),
            "--url": ("url", "text", None, None),
            "-u": ("url", "text", None, None),
            "--server": ("server", "text", None, None),
            "-s": ("server", "text", None, None),
            "--config": ("config", "text", None, None),
            "--stdio": ("stdio", "text", None, None),
            "--protocol": ("protocol", "text", "auto", "MCPTASK_PROTOCOL"),
            "-p": ("protocol", "text", "auto", "MCPTASK_PROTOCOL"),
            "--header": ("header", "texts", None, None),
            "-H": ("header", "texts", None, None),
            "--token-file": ("token_file", "text", None, None),
            "--proxy": ("proxy", "text", None, None),
            "--cacert": ("cacert", "text", None, None),
            "--login": ("login", "flag", False, None),
            "--client-id": ("client_id", "text", None, None),
            "--client-secret-file": ("client_secret_file", "text", None, None),
            "--client-key-file": ("client_key_file", "text", None, None),
            "--client-metadata-url": ("client_metadata_url", "text", None, None),
            "--session": ("session", "text", None, None),
            "--context-id": ("context_id", "text", None, None),
            "--output": ("output", "text", "auto", "MCPTASK_OUTPUT"),
            "-o": ("output", "text", "auto", "MCPTASK_OUTPUT"),
            "--jq": ("jq", "text", None, None),
            "--trace": ("trace", "flag", False, None),
        },
    ),
}
