"""`result --save DIR` and `watch --result --save DIR`: what a task produced, as files.

A2A: each artifact's text parts as one file (the chunks of one document, in order), named by
the artifact's name (`.txt`, or the extension of its media type, when the name has none); data
parts as `.json`; file parts with inline bytes as the part's filename; file parts with a URL
listed, downloaded only with `--download` (through the endpoint's client: credentials go only to
the endpoint's own origin). MCP: the result's content items: text, images and audio (by media
type), embedded resources (text or blob), resource links listed like URLs; `structuredContent`
as `structured.json`.

Every name is made safe (no path separators, no `..`, no control characters, no leading dot,
at most NAME_MAX characters); two parts that would share a name get `-2`, `-3`; a file that is
already there is not overwritten without `--force` (nothing is written then). What was written
is the manifest (`schemas/save.json`)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcptask.errors import ProtocolError, UsageError

if TYPE_CHECKING:
    from mcptask.session.context import Context

#: a file name is at most this many characters (before `-N` and the extension)
NAME_MAX = 100
#: a URL part downloaded with `--download` is read up to this many bytes
DOWNLOAD_MAX = 256 * 1024 * 1024

#: media types whose extension `mimetypes` does not know or gets wrong
_EXTENSIONS = {
    "text/plain": ".txt",
    "text/markdown": ".md",
    "application/json": ".json",
    "application/octet-stream": ".bin",
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
    "audio/mpeg": ".mp3",
    "image/jpeg": ".jpg",
}


def extension(media_type: str | None, default: str) -> str:
    """The usual extension of a media type (`image/png` -> `.png`), else `default`."""
    if not media_type:
        return default
    base = media_type.split(";")[0].strip().lower()
    if base in _EXTENSIONS:
        return _EXTENSIONS[base]
    import mimetypes

    return mimetypes.guess_extension(base) or default


def safe_name(name: str | None, fallback: str) -> str:
    """A name fit for a file in DIR: the last path component, without control characters,
    `..`, a leading dot or separators; `fallback` when nothing is left."""
    text = unicodedata.normalize("NFC", name or "")
    text = re.split(r"[/\\]", text)[-1]
    text = "".join(c for c in text if unicodedata.category(c)[0] != "C")
    text = text.replace("..", "_").strip().lstrip(".").strip()
    text = re.sub(r"\s+", " ", text)
    if len(text) > NAME_MAX:
        stem, dot, ext = text.rpartition(".")
        text = (stem[: NAME_MAX - len(ext) - 1] + "." + ext) if dot and len(ext) < 10 else text
        text = text[:NAME_MAX]
    return text or fallback


@dataclass
class SaveTo:
    """`--save DIR` and its flags."""

    directory: Path
    #: overwrite files that are there
    force: bool = False
    #: fetch URL parts (else they are only listed)
    download: bool = False


@dataclass
class Planned:
    """A file to write (`content`), or a URL to list (and download with `--download`)."""

    name: str
    kind: str
    media_type: str | None = None
    content: bytes | None = None
    url: str | None = None
    artifact_id: str | None = None


@dataclass
class Plan:
    files: list[Planned] = field(default_factory=list)
    #: names taken so far (case-folded: some file systems do not tell case apart)
    taken: set[str] = field(default_factory=set)

    def add(self, item: Planned) -> None:
        stem, dot, ext = item.name.rpartition(".")
        if not dot or not stem:
            stem, ext = item.name, ""
        name, n = item.name, 1
        while name.casefold() in self.taken:
            n += 1
            name = f"{stem}-{n}" + (f".{ext}" if ext else "")
        self.taken.add(name.casefold())
        item.name = name
        self.files.append(item)


def _decoded(b64: Any, what: str) -> bytes:
    if not isinstance(b64, str):
        raise ProtocolError(f"the server sent {what} whose bytes are not base64 text")
    text = "".join(b64.split())
    padded = text + "=" * (-len(text) % 4)
    try:
        if "-" in text or "_" in text:  # the URL-safe alphabet (ProtoJSON reads both)
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        raise ProtocolError(f"the server sent {what} whose bytes are not base64") from None


def _named(name: str | None, fallback: str, media_type: str | None, default_ext: str) -> str:
    """A safe name that has an extension: the given one, or the media type's."""
    base = safe_name(name, fallback)
    if "." in base.strip("."):
        return base
    return base + extension(media_type, default_ext)


def plan_a2a(payload: dict[str, Any]) -> Plan:
    """The files of an A2A result (`a2a.result_payload`): one per artifact's run of text
    parts, one per data part, one per file part."""
    plan = Plan()
    artifacts = payload.get("artifacts")
    for n, artifact in enumerate(artifacts if isinstance(artifacts, list) else [], 1):
        if isinstance(artifact, dict):
            _plan_artifact(plan, artifact, n)
    if not plan.files:
        message = payload.get("message")
        text = payload.get("statusMessage") or (
            payload.get("text") if isinstance(message, dict) else None
        )
        if isinstance(text, str) and text:
            plan.add(Planned("message.txt", "text", "text/plain", text.encode("utf-8", "replace")))
    return plan


def _plan_artifact(plan: Plan, artifact: dict[str, Any], n: int) -> None:
    aid = artifact.get("artifactId") if isinstance(artifact.get("artifactId"), str) else None
    label = artifact.get("name") if isinstance(artifact.get("name"), str) else None
    label = label or aid or f"artifact-{n}"
    fallback = f"artifact-{n}"
    texts: list[str] = []
    parts = artifact.get("parts")
    for part in [*(parts if isinstance(parts, list) else []), None]:
        kind = part.get("kind") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part, dict):
            texts.append(str(part.get("text", "")))
            continue
        if texts:  # a run of text parts ends: one file (the chunks of one document)
            content = "".join(texts).encode("utf-8", "surrogatepass")
            name = _named(label, fallback, "text/plain", ".txt")
            plan.add(Planned(name, "text", "text/plain", content, artifact_id=aid))
            texts = []
        if not isinstance(part, dict):
            continue
        if kind == "data":
            body = json.dumps(part.get("data"), indent=2, ensure_ascii=False) + "\n"
            stem = safe_name(label, fallback)
            stem = stem.rsplit(".", 1)[0] if stem.endswith(".txt") else stem
            plan.add(Planned(stem + ".json", "data", "application/json", body.encode(), None, aid))
        elif kind == "file":
            mime = part.get("mimeType") if isinstance(part.get("mimeType"), str) else None
            fname = part.get("name") if isinstance(part.get("name"), str) else None
            if part.get("bytes") is not None:
                content = _decoded(part["bytes"], f"artifact {label}'s file")
                name = _named(fname or label, fallback, mime, ".bin")
                plan.add(Planned(name, "file", mime, content, artifact_id=aid))
            elif isinstance(part.get("uri"), str):
                name = _named(fname or _url_name(part["uri"]) or label, fallback, mime, "")
                plan.add(Planned(name, "url", mime, url=part["uri"], artifact_id=aid))


def plan_mcp(payload: dict[str, Any]) -> Plan:
    """The files of an MCP `CallToolResult`: its content items, and `structuredContent`."""
    plan = Plan()
    content = payload.get("content")
    for n, item in enumerate(content if isinstance(content, list) else [], 1):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        mime = item.get("mimeType") if isinstance(item.get("mimeType"), str) else None
        if kind == "text" and isinstance(item.get("text"), str):
            plan.add(Planned(f"content-{n}.txt", "text", "text/plain", item["text"].encode()))
        elif kind in ("image", "audio"):
            data = _decoded(item.get("data"), f"content item {n} ({kind})")
            plan.add(Planned(f"{kind}-{n}" + extension(mime, ".bin"), kind, mime, data))
        elif kind == "resource" and isinstance(item.get("resource"), dict):
            res = item["resource"]
            rmime = res.get("mimeType") if isinstance(res.get("mimeType"), str) else None
            name = _url_name(res.get("uri")) or f"resource-{n}"
            if isinstance(res.get("text"), str):
                body = res["text"].encode("utf-8", "surrogatepass")
                plan.add(Planned(_named(name, f"resource-{n}", rmime, ".txt"), "text", rmime, body))
            elif res.get("blob") is not None:
                blob = _decoded(res["blob"], f"content item {n} (resource)")
                plan.add(Planned(_named(name, f"resource-{n}", rmime, ".bin"), "file", rmime, blob))
        elif kind == "resource_link" and isinstance(item.get("uri"), str):
            label = item.get("name") if isinstance(item.get("name"), str) else None
            name = _named(label or _url_name(item["uri"]), f"link-{n}", mime, "")
            plan.add(Planned(name, "url", mime, url=item["uri"]))
    if payload.get("structuredContent") is not None:
        body = json.dumps(payload["structuredContent"], indent=2, ensure_ascii=False) + "\n"
        plan.add(Planned("structured.json", "data", "application/json", body.encode()))
    return plan


def _url_name(uri: Any) -> str | None:
    if not isinstance(uri, str):
        return None
    from urllib.parse import unquote, urlsplit

    try:
        path = urlsplit(uri).path
    except ValueError:
        return None
    last = unquote(path.rstrip("/").rsplit("/", 1)[-1])
    return last or None


def plan_for(payload: Any) -> Plan:
    """The files of a result payload, whichever protocol made it."""
    if isinstance(payload, dict) and isinstance(payload.get("artifacts"), list):
        return plan_a2a(payload)
    if isinstance(payload, dict):
        return plan_mcp(payload)
    return Plan()


async def save(
    ctx: Context,
    task_id: str,
    payload: Any,
    to: SaveTo,
) -> dict[str, Any]:
    """Write a result's files into `to.directory` (made if missing); the manifest. A name
    that is taken there (without `force`) is a usage error before anything is written."""
    directory, force, download = to.directory, to.force, to.download
    plan = plan_for(payload)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--save {directory}: not a directory")
    targets = [(item, directory / item.name) for item in plan.files]
    if not force:
        there = [
            str(path)
            for item, path in targets
            if (item.content is not None or download) and os.path.lexists(path)
        ]
        if there:
            more = f" (and {len(there) - 1} more)" if len(there) > 1 else ""
            raise UsageError(f"--save: {there[0]} exists{more}; --force overwrites")
    directory.mkdir(parents=True, exist_ok=True)
    files: list[dict[str, Any]] = []
    for item, path in targets:
        entry: dict[str, Any] = {
            "path": str(path),
            "kind": item.kind,
            "mediaType": item.media_type,
            "artifactId": item.artifact_id,
        }
        content = item.content
        if item.url is not None:
            from mcptask.text.urls import safe_url

            entry["url"] = safe_url(item.url)
            if download:
                content = await _download(ctx, item.url)
        if content is None:
            entry["path"] = None
            entry["bytes"] = None
            entry["sha256"] = None
        else:
            _write(path, content, force=force)
            entry["bytes"] = len(content)
            entry["sha256"] = hashlib.sha256(content).hexdigest()
        files.append(entry)
    return {"taskId": task_id, "directory": str(directory), "files": files}


def _write(path: Path, content: bytes, *, force: bool) -> None:
    """Write a file without following a link at its place; refuse one that appeared since
    the check (without `force`)."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    flags |= os.O_TRUNC if force else os.O_EXCL
    if force and path.is_symlink():
        path.unlink()
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        raise UsageError(f"--save: {path} exists; --force overwrites") from None
    except OSError as exc:
        raise UsageError(f"--save: cannot write {path}: {exc.strerror}") from None
    with os.fdopen(fd, "wb") as f:
        f.write(content)


async def _download(ctx: Context, url: str) -> bytes:
    """A URL part's content, through the endpoint's client: its credentials go to the
    endpoint's own origin only (never elsewhere, redirects included)."""
    from urllib.parse import urlsplit

    from mcptask.transports.rpc import FetchesUrls

    if urlsplit(url).scheme not in ("http", "https"):
        raise UsageError(f"--download: {url} is not an http(s) URL")
    transport = ctx.endpoint.rpc().transport
    if not isinstance(transport, FetchesUrls):
        raise UsageError("--download needs an HTTP endpoint (--url)")
    response = await transport.get(url, max_body=DOWNLOAD_MAX)
    if response.status_code != 200:
        from mcptask.errors import HttpStatusError
        from mcptask.text.urls import safe_url

        raise HttpStatusError(
            f"{safe_url(url)} answered HTTP {response.status_code}", status=response.status_code
        )
    return response.content


def show(ctx: Context, manifest: dict[str, Any]) -> None:
    """The manifest: as JSON (`-o json`, `ndjson`), else one line a file."""
    if not ctx.out.pretty:
        ctx.out.line(manifest)
        return
    from mcptask.output.live import manifest_lines

    for line in manifest_lines(manifest):
        ctx.out.console.print(line, markup=False, highlight=False)
