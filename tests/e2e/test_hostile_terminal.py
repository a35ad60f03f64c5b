"""Terminal safety: escape sequences and control bytes from a server never reach a terminal.

Pretty output is checked through a real pseudo-terminal: Rich's own styling escapes are allowed,
and every sequence the server injected (OSC 52 clipboard writes, title sets, clear screen, 8-bit
CSI, DCS, device status reports, carriage-return overwrites, backspaces, bidi overrides, NUL,
BEL) must be gone, while the words around them survive. `-o json` keeps the exact data.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from servers.fault_server import (
    HOSTILE,
    INIT_RESULT,
    FaultServer,
    hostile_text,
    raw,
    rpc_error,
    run_inprocess,
    run_pty,
    task,
    tool_result,
)

pytestmark = pytest.mark.timeout(60)
P = ("-p", "mcp-2025-11-25")
MSG = hostile_text("msg")
DONE_MSG = hostile_text("done")
RESULT = "first line\n" + hostile_text("res") + "\nlast line"
ERROR = hostile_text("err")
EVIL_ID = "evil\x1b]0;pwned-title\x07\x1b[2JID"
#: what the server hid inside its sequences: never shown
PAYLOADS = ("pwned-title", "ZWNobyBwd25lZA", "544e")
#: Rich's own output: SGR styling, cursor hide/show, and the live view's redraw moves
RICH_OWN = re.compile(
    r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[\?2026[hl]|\x1b\[[0-9]*[AK]|\r(?=\x1b\[2K)"
)
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def assert_terminal_safe(out: str, *markers: str, payloads: bool = True) -> None:
    for payload in PAYLOADS if payloads else ():
        assert payload not in out, payload
    rest = RICH_OWN.sub("", out).replace("\r\n", "\n")
    found = sorted({repr(c) for c in UNSAFE.findall(rest)})
    assert not found, (found, out[:2000])
    for prefix in markers:  # the text around the sequences is still there
        for name in HOSTILE:
            assert f"{prefix.upper()}{name.upper()}" in out, (prefix, name)


@pytest.fixture(scope="module")
def fault() -> Iterator[FaultServer]:
    with FaultServer() as fs:
        yield fs


NGINX = "<html>\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x9b2J\r bad gateway</html>".encode()


def hostile(fault: FaultServer, *, watch: bool = False) -> str:
    """A scenario with hostile text everywhere; with `watch`, tasks/get answers a working
    task, a 502 with an HTML page, then the completed task."""
    done = task(status="completed", statusMessage=DONE_MSG)
    working = task(statusMessage=MSG)
    finished = task(status="completed", statusMessage=MSG)
    return fault.url(
        get=[working, raw(502, NGINX, "text/html"), done] if watch else [finished],
        result=[tool_result(RESULT)],
        list=[{"tasks": [task(statusMessage=MSG), task(taskId=EVIL_ID, statusMessage=MSG)]}],
        cancel=[rpc_error(-32000, ERROR)],
        tools=[{"tools": [{"name": f"tool {ERROR}", "inputSchema": {"type": "object"}}]}],
    )


def test_get_list_result_and_errors_on_a_terminal(fault: FaultServer, tmp_path: Path) -> None:
    url = hostile(fault)
    code, out = run_pty("get", "t-1", "--url", url, *P, state_dir=tmp_path)
    assert code == 0, out
    assert "\x1b[" in out  # Rich did style it: this is pretty output
    assert_terminal_safe(out, "msg")

    code, out = run_pty("list", "--url", url, *P, state_dir=tmp_path)
    assert code == 0, out
    assert_terminal_safe(out, "msg")
    assert "evilID" in out

    code, out = run_pty("result", "t-1", "--url", url, *P, state_dir=tmp_path)
    assert code == 0, out
    assert_terminal_safe(out, "res")
    assert "first line" in out and "last line" in out  # newlines are kept

    code, out = run_pty("cancel", "t-1", "--url", url, *P, state_dir=tmp_path)
    assert code == 4, out
    assert_terminal_safe(out, "err")
    assert "mcptask: error: server error -32000" in out

    code, out = run_pty("call", "nosuch", "--url", url, *P, state_dir=tmp_path)
    assert code == 2, out
    assert_terminal_safe(out, "err")
    assert "has no tool 'nosuch'" in out


def test_the_live_view_and_its_result(fault: FaultServer, tmp_path: Path) -> None:
    url = hostile(fault, watch=True)
    code, out = run_pty("watch", "t-1", "--result", "--url", url, *P, state_dir=tmp_path)
    assert code == 0, out
    assert "\x1b[2K" in out  # the live view redrew
    assert_terminal_safe(out, "res")
    assert "MSGOSC52" in out  # the status message showed (cut to the column's width)


def test_trace_lines(fault: FaultServer, tmp_path: Path) -> None:
    url = hostile(fault)
    code, out = run_pty("result", "t-1", "--trace", "--url", url, *P, state_dir=tmp_path)
    assert code == 0, out
    assert "< 200 OK" in out and '"statusMessage"' in out
    # JSON escapes C0 controls as text (\u001b: harmless); C1 and bidi come raw and are cut
    assert "\\u001b]0;pwned-title" in out
    assert_terminal_safe(out, "res", payloads=False)
    # a body that is not JSON is traced as it came, cleaned
    url = fault.url(get=[raw(200, NGINX, "text/html")])
    code, out = run_pty("get", "t-1", "--trace", "--url", url, *P, state_dir=tmp_path)
    assert code == 4, out
    assert "< <html> bad gateway</html>" in out
    assert_terminal_safe(out)


def test_a_server_name_in_an_error(fault: FaultServer, tmp_path: Path) -> None:
    init = {**INIT_RESULT, "capabilities": {"tools": {}}, "serverInfo": {"name": ERROR}}
    url = fault.url(init=[init])
    code, out = run_pty("get", "t-1", "--url", url, *P, state_dir=tmp_path)
    assert code == 4, out
    assert "does not support tasks" in out
    assert_terminal_safe(out, "err")


def test_json_output_keeps_the_exact_data(fault: FaultServer, tmp_path: Path) -> None:
    url = hostile(fault)
    r = run_inprocess("get", "t-1", "--url", url, *P, "-o", "json", state_dir=tmp_path)
    assert r.code == 0, r.stderr
    assert r.json()["statusMessage"] == MSG
    assert r.json()["raw"]["statusMessage"] == MSG
    r = run_inprocess("list", "--url", url, *P, "-o", "json", state_dir=tmp_path)
    assert [t["taskId"] for t in r.json()["tasks"]] == ["t-1", EVIL_ID]
    r = run_inprocess("result", "t-1", "--url", url, *P, state_dir=tmp_path)
    assert r.json()["content"][0]["text"] == RESULT
    url = hostile(fault, watch=True)
    r = run_inprocess("watch", "t-1", "--url", url, *P, "-o", "ndjson", state_dir=tmp_path)
    assert r.code == 0, r.stderr
    lines = r.lines()
    assert [ln.get("statusMessage") for ln in lines[:-1]] == [MSG, DONE_MSG]
    # errors go to stderr, cleaned, whatever the output mode
    assert "retrying" in r.stderr
    assert not UNSAFE.search(r.stderr.replace("\n", "")), repr(r.stderr)
    r = run_inprocess("cancel", "t-1", "--url", url, *P, "-o", "json", state_dir=tmp_path)
    assert r.code == 4
    assert not UNSAFE.search(r.stderr.rstrip("\n")), repr(r.stderr)
    assert "ERROSC52" in r.stderr
