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
