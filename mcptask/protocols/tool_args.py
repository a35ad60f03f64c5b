"""`call TOOL k=v k:=JSON --args JSON`: build a tool's arguments, coercing `k=v` values to the
types the tool's `inputSchema` declares (so `ambiguous=true` sends a boolean)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from mcptask.errors import UsageError


def schema_types(prop: Any) -> list[str]:
    if not isinstance(prop, dict):
        return []
    t = prop.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    for key in ("anyOf", "oneOf"):
        alts = prop.get(key)
        if isinstance(alts, list):
            return [x for alt in alts for x in schema_types(alt)]
    return []


def _loads(text: str) -> Any:
    """JSON as the standard defines it: NaN, Infinity and numbers past a double (`1e999`)
    are refused, as is nesting past `jsonsafe.MAX_DEPTH`."""
    from mcptask.text import jsonsafe

    return jsonsafe.loads(text)


def coerce(key: str, value: str, prop: Any) -> Any:
    types = schema_types(prop)
    if not types or "string" in types:
        return value
    for t in types:
        if t == "boolean":
            low = value.lower()
            if low in ("true", "yes", "1", "on"):
                return True
            if low in ("false", "no", "0", "off"):
                return False
        elif t == "integer":
            try:
                return int(value)
            except ValueError:
                pass
        elif t == "number":
            try:
                number = int(value) if value.lstrip("-").isdigit() else float(value)
            except ValueError:
                continue
            if math.isfinite(number):  # nan and inf are not JSON
                return number
        elif t == "null" and value == "null":
            return None
        elif t in ("array", "object"):
            try:
                parsed = _loads(value)
            except (ValueError, RecursionError):
                continue
            if isinstance(parsed, list if t == "array" else dict):
                return parsed
    raise UsageError(f"argument {key}={value!r}: the tool expects {' or '.join(types)}")


def build(pairs: list[str], args_json: str | None, schema: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if args_json:
        try:
            base = _loads(args_json)
        except (ValueError, RecursionError) as exc:
            raise UsageError(f"--args is not valid JSON: {exc}") from None
        if not isinstance(base, dict):
            raise UsageError("--args must be a JSON object")
        out.update(base)
    props = (schema or {}).get("properties") or {}
    if not isinstance(props, dict):  # the server's schema: anything may be there
        props = {}
    for pair in pairs:
        if ":=" in pair and ("=" not in pair or pair.index(":=") < pair.index("=")):
            key, raw = pair.split(":=", 1)
            try:
                out[key] = _loads(raw)
            except (ValueError, RecursionError) as exc:
                raise UsageError(f"argument {key}:= is not valid JSON: {exc}") from None
        elif "=" in pair:
            key, value = pair.split("=", 1)
            out[key] = coerce(key, value, props.get(key))
        else:
            raise UsageError(f"argument {pair!r}: write key=value or key:=JSON")
        if not key:
            raise UsageError(f"argument {pair!r} has no name")
    return out


def _summary(props: dict[str, Any], required: list[str]) -> str:
    """`a* (number), b* (number), note (string)`: what the tool takes."""
    parts = []
    for name, prop in props.items():
        types = "/".join(schema_types(prop)) or "any"
        parts.append(f"{name}{'*' if name in required else ''} ({types})")
    return ", ".join(parts) or "no arguments"


def check(
    tool: str,
    args: dict[str, Any],
    schema: dict[str, Any] | None,
    warn: Callable[[str], None],
) -> None:
    """The arguments against the tool's `inputSchema`, before anything is sent: a required
    argument missing is a usage error naming it; a key the schema does not know is one when
    the schema says `additionalProperties: false`, else a warning. (The values' types are
    the server's to judge: `k=v` was coerced already.)"""
    if not isinstance(schema, dict):
        return
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    req = schema.get("required")
    required = [r for r in req if isinstance(r, str)] if isinstance(req, list) else []
    missing = [r for r in required if r not in args]
    if missing:
        names = ", ".join(missing)
        raise UsageError(
            f"tool {tool!r} needs argument{'s' if len(missing) > 1 else ''} {names} "
            f"(it takes: {_summary(props, required)})"
        )
    for key, value in args.items():
        problem = constraint_problem(value, props.get(key))
        if problem:
            raise UsageError(f"argument {key}={_shown(value)}: {problem}")
    unknown = [k for k in args if k not in props]
    if not unknown or (not props and schema.get("additionalProperties") is not False):
        return
    names = ", ".join(unknown)
    what = f"tool {tool!r} takes no argument {names} (it takes: {_summary(props, required)})"
    if schema.get("additionalProperties") is False:
        raise UsageError(what)
    warn(f"{what}; sent anyway")


def _shown(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


def constraint_problem(value: Any, prop: Any) -> str | None:
    """What a value breaks of its property's schema (`enum`, `const`, bounds, lengths),
    checked before sending as missing arguments are; None when nothing (or the schema is not
    one mcptask reads)."""

    if not isinstance(prop, dict):
        return None
    enum = prop.get("enum")
    if isinstance(enum, list) and enum and value not in enum:
        return "the tool expects one of " + ", ".join(_shown(e) for e in enum[:20])
    options = [o for o in prop.get("oneOf", []) if isinstance(o, dict) and "const" in o]
    if options and value not in [o["const"] for o in options]:
        return "the tool expects one of " + ", ".join(_shown(o["const"]) for o in options[:20])
    if "const" in prop and value != prop["const"]:
        return f"the tool expects {_shown(prop['const'])}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for key, word in (
            ("minimum", "at least"),
            ("maximum", "at most"),
            ("exclusiveMinimum", "more than"),
            ("exclusiveMaximum", "less than"),
        ):
            bound = _finite(prop.get(key))
            if bound is not None and not _within(key, value, bound):
                return f"the tool expects a number {word} {bound:g}"
    if isinstance(value, str):
        low, high = prop.get("minLength"), prop.get("maxLength")
        if isinstance(low, int) and len(value) < low:
            return f"the tool expects at least {low} characters"
        if isinstance(high, int) and len(value) > high:
            return f"the tool expects at most {high} characters"
        # `pattern` is the server's to judge: a server's regular expression may backtrack
        # for ever on a short text (no ReDoS from a hostile schema)
    return None


def _within(key: str, value: float, bound: float) -> bool:
    if key == "minimum":
        return value >= bound
    if key == "maximum":
        return value <= bound
    if key == "exclusiveMinimum":
        return value > bound
    return value < bound


def _finite(bound: Any) -> float | None:
    """A schema's bound as a finite float (None: no number, or none a float holds)."""
    if isinstance(bound, bool) or not isinstance(bound, (int, float)):
        return None
    try:
        number = float(bound)
    except OverflowError:  # a 400-digit integer
        return None
    return number if math.isfinite(number) else None
