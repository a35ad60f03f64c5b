"""Artifacts as they grow (A2A 1.0 `TaskArtifactUpdateEvent`s with `append` and `lastChunk`):
what a watch has shown of each task's artifacts, and what is new in a task it is given.

A task reaches a watch from a stream (each event applied to the task by the protocol,
`a2a.merge_event`: its artifacts are assembled by `artifactId`) or from a read (GetTask, whose
artifacts the agent assembled). Either way the tracker compares the artifacts with those it has
shown: parts added after the ones shown are a chunk appended; an artifact that is otherwise
different is replaced whole; one with fewer parts than shown is older news (a read sent before a
stream event arrived) and is not shown again."""

from __future__ import annotations

import binascii
import json
from dataclasses import dataclass, field
from typing import Any

from mcptask.model.task import Task

#: the last line of an artifact's text a live view shows, at most this long
TAIL_CHARS = 200


@dataclass
class ArtifactUpdate:
    """One update of one artifact: the parts it brought (`parts`, each as `a2a.part_view`
    shows a part), whether they were appended to what came before (`append`), and whether
    the agent said it was the artifact's last chunk (`last_chunk`: None when it is not known,
    as after a read of a task that still runs). `total_parts`, `size` (bytes of content: text
    in UTF-8, file bytes decoded, data as JSON) and `tail` (its text's last line) describe the
    artifact assembled so far."""

    task_id: str
    artifact_id: str
    name: str | None
    parts: list[dict[str, Any]]
    append: bool
    last_chunk: bool | None
    total_parts: int
    size: int
    tail: str

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "artifact",
            "taskId": self.task_id,
            "artifactId": self.artifact_id,
            "name": self.name,
            "append": self.append,
            "lastChunk": self.last_chunk,
            "parts": self.parts,
            "partsSoFar": self.total_parts,
            "bytesSoFar": self.size,
        }


def artifacts_of(task: Task) -> list[dict[str, Any]]:
    """The task's artifacts as the agent sent them (A2A `artifacts`), each with an
    `artifactId` and a list of parts."""
    found = task.raw.get("artifacts")
    return [
        a
        for a in (found if isinstance(found, list) else [])
        if isinstance(a, dict)
        and isinstance(a.get("artifactId"), str)
        and isinstance(a.get("parts"), list)
    ]


def part_size(part: Any) -> int:
    """Bytes of a part's content: text in UTF-8, `raw`/`bytes` decoded from base64, data as
    compact JSON, a URL nothing (its content is elsewhere)."""
    if not isinstance(part, dict):
        return 0
    if isinstance(part.get("text"), str):
        return len(part["text"].encode("utf-8", "surrogatepass"))
    inline = part.get("raw")
    if inline is None and isinstance(part.get("file"), dict):
        inline = part["file"].get("bytes")  # 0.3
    if isinstance(inline, str):
        return decoded_size(inline)
    if "data" in part:
        try:
            return len(json.dumps(part["data"], separators=(",", ":"), ensure_ascii=False))
        except (TypeError, ValueError):
            return 0
    return 0


def decoded_size(b64: str) -> int:
    """How many bytes base64 text decodes to (what it holds, without decoding it)."""
    text = b64.strip()
    try:
        if len(text) % 4 == 0:
            return len(text) // 4 * 3 - len(text) + len(text.rstrip("="))
        return len(binascii.a2b_base64(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError):
        return 0


def _tail(parts: list[Any]) -> str:
    for part in reversed(parts):
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            lines = [line for line in part["text"].splitlines() if line.strip()]
            if lines:
                return str(lines[-1][-TAIL_CHARS:])
    return ""


@dataclass
class _Shown:
    parts: list[Any]
    size: int
    name: str | None
    #: the last update shown said the artifact was whole
    whole: bool = False


@dataclass
class ArtifactTracker:
    """What a watch has shown of one task's artifacts (by `artifactId`)."""

    shown: dict[str, _Shown] = field(default_factory=dict)

    def updates(
        self, task: Task, last_chunk: dict[str, bool] | None = None
    ) -> list[ArtifactUpdate]:
        """What is new in `task`'s artifacts since the last call. `last_chunk`: what the
        stream said of each artifact's latest chunk (artifact id -> `lastChunk`), when the
        task came from a stream; a finished task's artifacts are all whole (an artifact shown
        before that was not said to be whole gets an update without parts that says so)."""
        out = []
        for artifact in artifacts_of(task):
            aid = artifact["artifactId"]
            parts = artifact["parts"]
            name = artifact.get("name") if isinstance(artifact.get("name"), str) else None
            old = self.shown.get(aid)
            if old is not None and parts == old.parts and name == old.name:
                if task.terminal and not old.whole:
                    # the task ended: the artifact, shown before, is whole (no new parts)
                    old.whole = True
                    out.append(self._update(task, aid, name, [], True, True, old))
                continue
            append = (
                old is not None
                and len(parts) > len(old.parts)
                and (parts[: len(old.parts)] == old.parts)
            )
            if old is not None and not append and old.parts[: len(parts)] == parts:
                continue  # fewer parts than shown: a read older than the stream
            chunk = parts[len(old.parts) :] if append and old is not None else parts
            size = (old.size if append and old is not None else 0) + sum(map(part_size, chunk))
            if task.terminal:
                last: bool | None = True
            elif last_chunk is not None:
                last = last_chunk.get(aid, False)
            else:
                last = None
            shown = self.shown[aid] = _Shown(list(parts), size, name, last is True)
            out.append(self._update(task, aid, name, chunk, append, last, shown))
        return out

    @staticmethod
    def _update(
        task: Task,
        aid: str,
        name: str | None,
        chunk: list[Any],
        append: bool,
        last: bool | None,
        shown: _Shown,
    ) -> ArtifactUpdate:
        from mcptask.protocols.a2a import part_view

        return ArtifactUpdate(
            task_id=task.taskId,
            artifact_id=aid,
            name=name,
            parts=[part_view(p) for p in chunk],
            append=append,
            last_chunk=last,
            total_parts=len(shown.parts),
            size=shown.size,
            tail=_tail(shown.parts),
        )
