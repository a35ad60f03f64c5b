"""`result --save`: which files a result makes, and their names made safe."""

from __future__ import annotations

import base64

import pytest

from mcptask.commands._save import extension, plan_a2a, plan_for, plan_mcp, safe_name
from mcptask.errors import ProtocolError


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("report.md", "report.md"),
        ("../../etc/passwd", "passwd"),
        ("a/b\\c.txt", "c.txt"),
        ("..", "_"),
        ("x..y", "x_y"),
        (".hidden", "hidden"),
        ("bell\x07\x1b[31m.txt", "bell[31m.txt"),
        ("", "fallback"),
        (None, "fallback"),
        ("x" * 300 + ".txt", "x" * 96 + ".txt"),
    ],
)
def test_safe_names(given: str | None, expected: str) -> None:
    assert safe_name(given, "fallback") == expected


def test_an_a2a_result_s_files() -> None:
    raw = base64.b64encode(b"\x00\x01\x02").decode()
    payload = {
        "artifacts": [
            {
                "artifactId": "r",
                "name": "report",
                "parts": [
                    {"kind": "text", "text": "a"},
                    {"kind": "text", "text": "b"},
                    {"kind": "data", "data": {"k": 1}},
                    {"kind": "file", "name": "../x.bin", "mimeType": None, "bytes": raw},
                    {
                        "kind": "file",
                        "name": None,
                        "mimeType": "image/png",
                        "uri": "https://h/p/i.png",
                    },
                ],
            },
            {"artifactId": "s", "name": "report", "parts": [{"kind": "text", "text": "c"}]},
        ]
    }
    plan = plan_for(payload)
    got = [(f.name, f.kind, f.content, f.url) for f in plan.files]
    assert got == [
        ("report.txt", "text", b"ab", None),
        ("report.json", "data", b'{\n  "k": 1\n}\n', None),
        ("x.bin", "file", b"\x00\x01\x02", None),
        ("i.png", "url", None, "https://h/p/i.png"),
        ("report-2.txt", "text", b"c", None),
    ]
    assert [f.name for f in plan_a2a({"artifacts": [], "statusMessage": "hi"}).files] == [
        "message.txt"
    ]
    with pytest.raises(ProtocolError):
        plan_a2a({"artifacts": [{"parts": [{"kind": "file", "bytes": 3}]}]})
    with pytest.raises(ProtocolError):
        plan_a2a({"artifacts": [{"parts": [{"kind": "file", "bytes": "not*base64"}]}]})
    urlsafe = {
        "kind": "file",
        "name": "u.bin",
        "bytes": base64.urlsafe_b64encode(b"\xfb\xff").decode(),
    }
    (u,) = plan_a2a({"artifacts": [{"parts": [urlsafe]}]}).files
    assert u.content == b"\xfb\xff"


def test_an_mcp_result_s_files() -> None:
    png = base64.b64encode(b"PNG").decode()
    payload = {
        "content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": png, "mimeType": "image/png"},
            {"type": "audio", "data": png, "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a/notes.md", "text": "# n"}},
            {
                "type": "resource",
                "resource": {"uri": "x://b", "blob": png, "mimeType": "application/pdf"},
            },
            {"type": "resource_link", "uri": "https://h/doc.pdf", "name": "doc.pdf"},
        ],
        "structuredContent": {"ok": True},
    }
    got = [(f.name, f.kind, f.content) for f in plan_mcp(payload).files]
    assert got == [
        ("content-1.txt", "text", b"hello"),
        ("image-2.png", "image", b"PNG"),
        ("audio-3.wav", "audio", b"PNG"),
        ("notes.md", "text", b"# n"),
        ("resource-5.pdf", "file", b"PNG"),
        ("doc.pdf", "url", None),
        ("structured.json", "data", b'{\n  "ok": true\n}\n'),
    ]
    assert extension("text/markdown; charset=utf-8", ".txt") == ".md"
    assert extension(None, ".bin") == ".bin"
