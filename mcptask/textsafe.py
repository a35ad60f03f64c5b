"""Text from a server is data: strip escape sequences and control characters before it
reaches a terminal. JSON output keeps the exact data; this is for pretty output and errors."""

from __future__ import annotations

import re

# CSI, OSC (terminated by BEL or ST), DCS/SOS/PM/APC strings, and two-byte ESC sequences
_ESCAPES = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]            # CSI ... final byte
    | \x9b[0-?]*[ -/]*[@-~]            # 8-bit CSI
    | [\x1b][\]PX^_].*?(?:\x07|\x1b\\|\x9c|$)   # OSC/DCS/SOS/PM/APC ... BEL or ST
    | [\x90\x9d\x98\x9e\x9f].*?(?:\x07|\x1b\\|\x9c|$)  # 8-bit forms
    | \x1b[ -/]*[0-~]?                 # other ESC sequences (and a lone ESC)
    """,
    re.VERBOSE | re.DOTALL,
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROLS_ONELINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def clean(text: str, *, multiline: bool = True) -> str:
    """Remove escape sequences and control characters. Newlines and tabs survive when
    `multiline`; otherwise they become spaces (one-line messages, table cells)."""
    text = _ESCAPES.sub("", text)
    if multiline:
        return _CONTROLS.sub("", text)
    return _CONTROLS_ONELINE.sub(" ", text.replace("\r\n", " ").replace("\n", " "))


def one_line(text: str, limit: int = 300) -> str:
    out = " ".join(clean(text, multiline=False).split())
    if len(out) > limit:
        out = out[: limit - 1] + "…"
    return out
