"""The domain: what mcptask knows of a task, whatever protocol or room it came through.

`model.task` (`Task`, its statuses, the time formats), `model.events` (`EventKind`, the
vocabulary of a task's story), `model.refs` (`TaskRef`, how a task is reached again),
`model.results` (`TaskResult`, `Created`), `model.inputs` (`InputRequest`, `TEXT_FORM`,
`Answered`), `model.tools` (`Tool`) and `model.push` (`PushConfig`): plain data, importing
nothing of mcptask but the kernel (types of higher rooms only under `TYPE_CHECKING`).
Imported by every room; this package's `__init__` imports none of them, so that what needs
only the event kinds (a TAB, the task book) does not load pydantic.
"""
