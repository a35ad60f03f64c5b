"""JSON that mcptask can always handle: strict in (no NaN or Infinity, no number past a double,
nothing nested past MAX_DEPTH), strict out (`allow_nan=False`).

Whatever mcptask accepts from a server it must be able to print, store and read back: a value
nested about 950 deep parses, but encoding it again overflows the stack ("RecursionError while
encoding a JSON object"), and `1e999` parses to a float that prints as bare `Infinity`, which
no JSON parser reads. So every door (the HTTP and stdio transports, the OAuth client, the task
book) parses with `loads`, which refuses both, and whatever prints or stores JSON uses `dumps`.
`too_deep` and `finite` check values built otherwise (a tool argument, say).
"""

from __future__ import annotations

import json
import math
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
    (ValueError, UnicodeDecodeError), RecursionError included as `Refused`. `finite=False`
    lets NaN and Infinity through, for a reader that bounds each number itself (an OAuth
    `expires_in` past any clock means "no expiry given", not a failed login)."""
    try:
        if finite:
            if not isinstance(data, str):  # as json.loads reads bytes
                data = data.decode(json.detect_encoding(data), "surrogatepass")
            value = _STRICT.decode(data)
        else:
            value = json.loads(data)
    except RecursionError:
        raise Refused(f"nested more than {limit} levels deep") from None
    if _brackets(data) > limit and depth_over(value, limit):
        raise Refused(f"nested more than {limit} levels deep")
    return value


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
    except ValueError as exc:
        bad = non_finite(value)
        if bad is None:
            raise
        raise Refused(f"a number that is not finite ({_word(bad)})") from exc
    except RecursionError:
        raise Refused("nested too deeply to encode") from None


def _word(number: float) -> str:
    if math.isnan(number):
        return "NaN"
    return "Infinity" if number > 0 else "-Infinity"
