"""JSON that mcptask can always handle: strict in (no NaN or Infinity, no number past a double,
nothing nested past MAX_DEPTH), strict out (`allow_nan=False`).

Whatever mcptask accepts from a server it must be able to print, store and read back: a value
nested about 950 deep parses, but encoding it again overflows the stack ("RecursionError while
encoding a JSON object"), and `1e999` parses to a float that prints as bare `Infinity`, which
no JSON parser reads. So every door (the HTTP and stdio transports, the OAuth client, the task
book) parses with `loads`, which refuses both, and whatever prints or stores JSON uses `dumps`.
`too_deep` and `finite` check values built otherwise (a tool argument, say).

Unicode: JSON may escape half of a surrogate pair alone (`"\\ud800"`), which is valid JSON but no
text: UTF-8 cannot encode it (SQLite refuses to bind it; stdout would write bytes that are not
UTF-8, or fail). One policy, applied at the door and again where text leaves: every lone
surrogate becomes U+FFFD (the replacement character), in keys and values alike (`loads`,
`text_safe`, `unicode_safe`); the task book and the JSON output apply it too, for values that
did not come through `loads`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

#: the deepest nesting accepted from outside (arrays and objects, one level each); JSON
#: Schema-shaped results are a few dozen deep at most
MAX_DEPTH = 256


class Refused(ValueError):
    """JSON (or a value) mcptask does not accept; the message says why, in a few words."""


def depth_over(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests lists and dicts more than `limit` levels deep (iterative: safe
    on any depth)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        level += 1
        if level > limit:
            return True
        stack.extend((child, level) for child in children if isinstance(child, dict | list | tuple))
    return False


def non_finite(value: Any) -> float | None:
    """The first NaN or infinite float inside `value`, or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None


#: a lone surrogate (and also each half of a pair: only a str built from bad input holds one)
_SURROGATE = re.compile("[\ud800-\udfff]")
#: text that may decode to a surrogate: one already there, or a `\\uD800`-`\\uDFFF` escape
_MAYBE_SURROGATE = re.compile("[\ud800-\udfff]|\\\\u[dD][89abcdefABCDEF]")
#: the same in UTF-8 bytes (a surrogate encoded as UTF-8 anyway is ED A0-BF xx)
_MAYBE_SURROGATE_BYTES = re.compile(rb"\xed[\xa0-\xbf]|\\u[dD][89abcdefABCDEF]")


def text_safe(text: str) -> str:
    """`text` with every lone surrogate (which no UTF-8 can encode) replaced by U+FFFD."""
    if not _has_surrogate(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def _has_surrogate(text: str) -> bool:
    """Whether `text` holds a surrogate, at C speed: ASCII holds none, and UTF-8 encodes
    anything else but a surrogate (a regex search walks every character: 30,000 of a page
    of tasks took 0.3 ms)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def unicode_safe(value: Any) -> Any:
    """JSON data whose strings (keys too) are all encodable as UTF-8 (`text_safe`): the value
    itself when none needed it (found by one pass of the C encoder), else a copy."""
    if isinstance(value, str):
        return text_safe(value)
    if isinstance(value, dict | list | tuple) and not _holds_surrogate(value):
        return value
    return _unicode_copy(value)


def holds_surrogate(value: Any) -> bool:
    """Whether a string, or any string in JSON data (keys too), holds a surrogate (what
    `unicode_safe` would replace); True when it cannot tell."""
    if isinstance(value, str):
        return _has_surrogate(value)
    return _holds_surrogate(value)


def _holds_surrogate(value: Any) -> bool:
    """Whether any string in `value` (keys too) holds a surrogate; True when it cannot tell
    (a key or value the encoder does not take)."""
    try:
        text = _ENCODE(value)
    except (TypeError, ValueError, RecursionError):
        return True
    return _has_surrogate(text)


def encoder(
    *,
    ensure_ascii: bool = True,
    allow_nan: bool = True,
    separators: tuple[str, str] = (", ", ": "),
    default: Callable[[Any], Any] | None = None,
) -> Callable[[Any], str]:
    """`json.JSONEncoder(...).encode` with these options, minus its cost per call: the C
    encoder made once, not once a call (`JSONEncoder.iterencode` makes it anew each time:
    1.3 us of a 7 us line; a list of 100,000 tasks encodes 200,000 values). Cycles are not
    checked (JSON data has none; a cycle would end as RecursionError, as nesting too deep
    does). Where the C encoder is missing, the JSONEncoder's own `encode`."""
    from json import encoder as std

    fallback = json.JSONEncoder(
        ensure_ascii=ensure_ascii,
        allow_nan=allow_nan,
        separators=separators,
        check_circular=False,
        default=default,
    )
    # not in the stubs: CPython's C accelerators, None where `_json` is missing
    c_make = getattr(std, "c_make_encoder", None)
    c_string = getattr(
        std, "c_encode_basestring_ascii" if ensure_ascii else "c_encode_basestring", None
    )
    if c_make is None or c_string is None:
        return fallback.encode
    make = c_make(
        None,
        fallback.default,
        c_string,
        None,
        separators[1],
        separators[0],
        False,
        False,
        allow_nan,
    )

    def encode(value: Any) -> str:
        return "".join(make(value, 0))

    return encode


#: the C encoder, strings kept as they are (a surrogate stays one, to be found)
_ENCODE = encoder(ensure_ascii=False, default=repr)


def _unicode_copy(value: Any) -> Any:
    if isinstance(value, str):
        return text_safe(value)
    if isinstance(value, dict):
        return {
            (text_safe(k) if isinstance(k, str) else k): _unicode_copy(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_unicode_copy(v) for v in value]
    return value


def parsed_safe(text: str | bytes | bytearray, value: Any) -> Any:
    """`value`, parsed from `text` by any JSON parser, with its lone surrogates replaced
    (`unicode_safe`, walked only when the text could hold one)."""
    if isinstance(text, str):
        found = "\\u" in text and _MAYBE_SURROGATE.search(text) is not None
        found = found or _has_surrogate(text)
    else:  # a substring test first: most answers hold neither escapes nor ED bytes
        found = (b"\\u" in text or b"\xed" in text) and (
            _MAYBE_SURROGATE_BYTES.search(text) is not None
        )
    return unicode_safe(value) if found else value


def check(value: Any, limit: int = MAX_DEPTH) -> Any:
    """`value` itself, or `Refused` when it nests past `limit` or holds a non-finite number."""
    if depth_over(value, limit):
        raise Refused(f"nested more than {limit} levels deep")
    bad = non_finite(value)
    if bad is not None:
        raise Refused(f"a number that is not finite ({_word(bad)})")
    return value


def _constant(name: str) -> Any:
    raise Refused(f"{name} is not JSON")


def _float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise Refused(f"the number {text[:40]} is too large for a double")
    return number


def loads(data: str | bytes | bytearray, limit: int = MAX_DEPTH, *, finite: bool = True) -> Any:
    """Parse strict JSON: `Refused` (a ValueError) for NaN/Infinity, for numbers past a
    double, and for nesting past `limit`; other bad JSON raises what `json.loads` raises
    (ValueError, UnicodeDecodeError), RecursionError included as `Refused`. A lone surrogate
    comes out as U+FFFD (`unicode_safe`). `finite=False`
    lets NaN and Infinity through, for a reader that bounds each number itself (an OAuth
    `expires_in` past any clock means "no expiry given", not a failed login)."""
    try:
        if not isinstance(data, str):  # as json.loads reads bytes
            data = data.decode(json.detect_encoding(data), "surrogatepass")
        value = _STRICT.decode(data) if finite else json.loads(data)
    except RecursionError:
        raise Refused(f"nested more than {limit} levels deep") from None
    if _brackets(data) > limit and depth_over(value, limit):
        raise Refused(f"nested more than {limit} levels deep")
    return parsed_safe(data, value)


#: one decoder for every strict parse (json.loads with hooks makes a new one each time)
_STRICT = json.JSONDecoder(parse_constant=_constant, parse_float=_float)


def _brackets(data: str | bytes | bytearray) -> int:
    """How many arrays and objects the text opens (C speed): no deeper than that."""
    if isinstance(data, str):
        return data.count("[") + data.count("{")
    return data.count(b"[") + data.count(b"{")


def dumps(value: Any, **options: Any) -> str:
    """Strict JSON text of `value`: never NaN or Infinity (`Refused` instead, as for too deep:
    neither can come from `loads`, only from a value built in mcptask)."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except (ValueError, RecursionError) as exc:
        refused = _refused(exc, [value])
        if refused is None:
            raise
        raise refused from None


def lines(values: list[Any]) -> str:
    """Strict JSON text of each value (`ensure_ascii=False`, as `dumps`), a line each, as one
    text whose lone surrogates are U+FFFD (`text_safe`): one encoder and one check for a
    page of documents."""
    try:
        text = "".join([_UTF8_LINE(value) + "\n" for value in values])
    except (ValueError, RecursionError) as exc:
        refused = _refused(exc, values)
        if refused is None:
            raise
        raise refused from None
    return text_safe(text)


#: the strict encoder `lines` uses (made once: `json.dumps` with options makes one per call)
_UTF8_LINE = encoder(ensure_ascii=False, allow_nan=False)


def _refused(exc: ValueError | RecursionError, values: list[Any]) -> Refused | None:
    """What an encoder's failure means: `Refused` for a number that is not finite or nesting
    too deep; None for anything else (raised as it was)."""
    if isinstance(exc, RecursionError):
        return Refused("nested too deeply to encode")
    bad = non_finite(values)
    if bad is None:
        return None
    return Refused(f"a number that is not finite ({_word(bad)})")


def _word(number: float) -> str:
    if math.isnan(number):
        return "NaN"
    return "Infinity" if number > 0 else "-Infinity"
