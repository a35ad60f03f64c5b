"""Text from a server is data: strip escape sequences and control characters before it
reaches a terminal (and any secret mcptask holds that the server echoed). JSON output keeps the
exact data (secrets scrubbed by `render.Output`); this is for pretty output and errors."""

from __future__ import annotations

import functools
import re

from mcptask.text.jsonsafe import text_safe
from mcptask.text.redact import scrub_held

# CSI, OSC (terminated by BEL or ST), DCS/SOS/PM/APC strings, and two-byte ESC sequences
_ESCAPES = r"""
    \x1b\[[0-?]*[ -/]*[@-~]            # CSI ... final byte
    | \x9b[0-?]*[ -/]*[@-~]            # 8-bit CSI
    | [\x1b][\]PX^_].*?(?:\x07|\x1b\\|\x9c|$)   # OSC/DCS/SOS/PM/APC ... BEL or ST
    | [\x90\x9d\x98\x9e\x9f].*?(?:\x07|\x1b\\|\x9c|$)  # 8-bit forms
    | \x1b[ -/]*[0-~]?                 # other ESC sequences (and a lone ESC)
    """
_CONTROLS = r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]"
_CONTROLS_ONELINE = r"[\x00-\x1f\x7f-\x9f\u2028\u2029]"
#: invisible characters, removed: every format character (Unicode category Cf, 14.0: soft
#: hyphen, zero-width space/joiners, bidi marks, overrides and isolates, word joiner, BOM,
#: interlinear annotation, tags...) plus the combining grapheme joiner and the Hangul fillers,
#: which draw nothing either; they can hide or disguise text (a task id that looks like another)
INVISIBLE = (
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
    "\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The patterns `_clean` uses, compiled on its first call (about 3 ms: most texts are
    printable ASCII and never need them, and a `get` prints none)."""
    return (
        re.compile(_ESCAPES, re.VERBOSE | re.DOTALL),
        re.compile(INVISIBLE),
        re.compile(_CONTROLS),
        re.compile(_CONTROLS_ONELINE),
    )


def clean(text: str, *, multiline: bool = True) -> str:
    """Remove escape sequences and control characters. Newlines and tabs survive when
    `multiline`; otherwise they become spaces (one-line messages, table cells). A secret the
    process holds (`redact.hold`) is redacted, also when escapes split it."""
    if text.isascii() and text.isprintable():
        # nothing to remove: every escape begins with a control character, and the invisible
        # characters and surrogates are not ASCII (a 5,000-event `log` cleans 5,000 texts)
        return scrub_held(text)
    return _clean(text, multiline)


def _clean(text: str, multiline: bool) -> str:
    """`clean` the long way, for any text."""
    escapes, invisible, controls, controls_oneline = _patterns()
    text = invisible.sub("", escapes.sub("", text_safe(text)))
    if multiline:
        return scrub_held(controls.sub("", text))
    return scrub_held(controls_oneline.sub(" ", text.replace("\r\n", " ").replace("\n", " ")))


def one_line(text: str, limit: int = 300) -> str:
    out = " ".join(clean(text, multiline=False).split())
    if len(out) > limit:
        out = out[: limit - 1] + "…"
    return out
