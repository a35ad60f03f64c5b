"""The domain: what mcptask knows of a task, whatever protocol or room it came through.

`model.task` (`Task`, its statuses, the time formats) and `model.events` (`EventKind`, the
vocabulary of a task's story). Imported by every room; this package's `__init__` imports
neither, so that what needs only the event kinds (a TAB, the task book) does not load pydantic.
"""
