"""Answers to what a task asks: the form a server's `requestedSchema` describes, filled on a
terminal or checked when it comes as `--json`.

MCP elicitation forms are flat objects whose properties are strings (`minLength`, `maxLength`,
`format` email / uri / date / date-time), numbers and integers (`minimum`, `maximum`), booleans,
single choices (`enum`, with the legacy `enumNames`, or `oneOf`/`anyOf` of `{const, title}`) and
multiple choices (`type: array` whose `items` hold `enum` or `anyOf`), each with an optional
`default`; `required` names the fields that must be given. Anything else is read as JSON.

The terminal form reads stdin's file descriptor directly (no Python buffer, so a form left
open in a thread can never hold a lock at exit) in the terminal's line mode, in a daemon thread:
the event loop goes on (a watch keeps polling its other tasks). Ctrl-C (in `answer`) and end of
input dismiss the form; an empty answer to a required field, or an answer that does not fit,
asks again. Server text is cleaned of escape sequences before it is shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import re
import select
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mcptask.errors import Interrupted
from mcptask.text.sanitize import clean, one_line

if TYPE_CHECKING:
    from rich.console import Console

    from mcptask.model.inputs import InputRequest

Response = dict[str, Any]
#: no value: a field without a default, or an optional field left empty (left out)
_MISSING: Any = object()


class Invalid(ValueError):
    """An answer that does not fit the form; the message says why, for a person."""


class Dismissed(Exception):
    """The person left the form (end of input, Ctrl-C, or the run ending)."""


# -- the form's fields ---------------------------------------------------------------------------


@dataclass
class Choice:
    value: Any
    label: str


@dataclass
class Field:
    name: str
    kind: str  # string number integer boolean choice choices any
    title: str = ""
    description: str = ""
    required: bool = False
    default: Any = _MISSING
    choices: list[Choice] = field(default_factory=list)
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    format: str | None = None

    @property
    def label(self) -> str:
        return self.title or self.name

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # a huge integer from a server
        return None
    return number if math.isfinite(number) else None


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _choices(spec: dict[str, Any]) -> list[Choice]:
    """`enum` (+ legacy `enumNames`), or `oneOf`/`anyOf` of `{const, title}`."""
    if isinstance(spec.get("enum"), list):
        names = spec.get("enumNames")
        names = names if isinstance(names, list) else []
        out = []
        for i, value in enumerate(spec["enum"]):
            label = names[i] if i < len(names) and isinstance(names[i], str) else str(value)
            out.append(Choice(value, label))
        return out
    for key in ("oneOf", "anyOf"):
        options = spec.get(key)
        if isinstance(options, list):
            out = []
            for option in options:
                if isinstance(option, dict) and "const" in option:
                    title = option.get("title")
                    label = title if isinstance(title, str) and title else str(option["const"])
                    out.append(Choice(option["const"], label))
            if out:
                return out
    return []


def fields(schema: Any) -> list[Field]:
    """The fields of a `requestedSchema`, in the server's order; anything malformed is read
    leniently (a property that is not an object is a free field)."""
    if not isinstance(schema, dict):
        return []
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = schema.get("required")
    required_names = (
        {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    )
    out = []
    for name, spec in props.items():
        spec = spec if isinstance(spec, dict) else {}
        kind = spec.get("type")
        f = Field(name=str(name), kind="any", required=name in required_names)
        title, description = spec.get("title"), spec.get("description")
        f.title = title if isinstance(title, str) else ""
        f.description = description if isinstance(description, str) else ""
        if "default" in spec:
            f.default = spec["default"]
        choices = _choices(spec)
        items = spec.get("items")
        if kind == "array" and isinstance(items, dict) and _choices(items):
            f.kind, f.choices = "choices", _choices(items)
            f.min_items, f.max_items = _count(spec.get("minItems")), _count(spec.get("maxItems"))
        elif choices:
            f.kind, f.choices = "choice", choices
        elif kind in ("string", "number", "integer", "boolean"):
            f.kind = kind
        f.minimum, f.maximum = _number(spec.get("minimum")), _number(spec.get("maximum"))
        f.min_length, f.max_length = _count(spec.get("minLength")), _count(spec.get("maxLength"))
        fmt = spec.get("format")
        f.format = fmt if isinstance(fmt, str) else None
        out.append(f)
    return out


# -- checking values ---------------------------------------------------------------------------


def short_value(value: Any) -> str:
    return one_line(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), 80)


def _choice_list(f: Field) -> str:
    return ", ".join(short_value(c.value) for c in f.choices)


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
#: RFC 3339 `full-date` and `date-time`, the shapes JSON Schema's formats name (Python's
#: `fromisoformat` also takes other ISO 8601 shapes: `20260101`, week dates, no time zone)
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATE_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def check(f: Field, value: Any) -> Any:
    """The value if it fits the field, else `Invalid`."""
    if f.kind == "string":
        if not isinstance(value, str):
            raise Invalid("must be text")
        if f.min_length is not None and len(value) < f.min_length:
            raise Invalid(f"must be at least {f.min_length} characters")
        if f.max_length is not None and len(value) > f.max_length:
            raise Invalid(f"must be at most {f.max_length} characters")
        _check_format(f.format, value)
        return value
    if f.kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Invalid("must be a number" if f.kind == "number" else "must be a whole number")
        if isinstance(value, float) and not math.isfinite(value) and f.kind == "number":
            raise Invalid("must be a finite number")  # `--json` reads NaN and Infinity
        if f.kind == "integer":
            if isinstance(value, float) and not value.is_integer():
                raise Invalid("must be a whole number")
            value = int(value)
        if f.minimum is not None and value < f.minimum:
            raise Invalid(f"must be at least {f.minimum:g}")
        if f.maximum is not None and value > f.maximum:
            raise Invalid(f"must be at most {f.maximum:g}")
        return value
    if f.kind == "boolean":
        if not isinstance(value, bool):
            raise Invalid("must be true or false")
        return value
    if f.kind == "choice":
        if not any(c.value == value and type(c.value) is type(value) for c in f.choices):
            raise Invalid(f"{short_value(value)} is not one of {_choice_list(f)}")
        return value
    if f.kind == "choices":
        if not isinstance(value, list):
            raise Invalid(f"must be a list of {_choice_list(f)}")
        for item in value:
            if not any(c.value == item and type(c.value) is type(item) for c in f.choices):
                raise Invalid(f"{short_value(item)} is not one of {_choice_list(f)}")
        if f.min_items is not None and len(value) < f.min_items:
            raise Invalid(f"needs at least {f.min_items} choices")
        if f.max_items is not None and len(value) > f.max_items:
            raise Invalid(f"takes at most {f.max_items} choices")
        return value
    return value


def _check_format(fmt: str | None, value: str) -> None:
    if fmt == "email" and not _EMAIL.match(value):
        raise Invalid("must be an email address")
    if fmt == "uri":
        try:
            u = urlsplit(value)  # raises on a bad IPv6 host (`http://[x]/`)
        except ValueError:
            raise Invalid("must be a URI (scheme:...)") from None
        if not u.scheme or not (u.netloc or u.path):
            raise Invalid("must be a URI (scheme:...)")
    if fmt == "date":
        try:
            if not _DATE.fullmatch(value):
                raise ValueError
            date.fromisoformat(value)
        except ValueError:
            raise Invalid("must be a date (YYYY-MM-DD)") from None
    if fmt == "date-time":
        try:
            if not _DATE_TIME.fullmatch(value):
                raise ValueError
            datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
        except ValueError:
            raise Invalid("must be a date and time (YYYY-MM-DDTHH:MM:SSZ)") from None


def validate(schema: Any, content: Any) -> dict[str, Any]:
    """`--json CONTENT` against the form: an object, only the form's fields, every required
    one, each value fitting its field. `Invalid` names the field and what is wrong."""
    if not isinstance(content, dict):
        raise Invalid("the answer must be a JSON object of the form's fields")
    form = fields(schema)
    known = {f.name: f for f in form}
    unknown = [k for k in content if k not in known]
    if unknown and form:
        raise Invalid(f"unknown field {unknown[0]!r}")
    missing = [f.name for f in form if f.required and f.name not in content]
    if missing:
        raise Invalid(f"missing required field {', '.join(missing)}")
    out = dict(content)
    for name, value in content.items():
        if name in known:
            try:
                out[name] = check(known[name], value)
            except Invalid as exc:
                raise Invalid(f"{name}: {exc}") from None
    return out


def with_defaults(schema: Any, content: dict[str, Any]) -> dict[str, Any]:
    """`content` plus the schema's `default` for every field it leaves out (SEP-1034: a
    client that accepts fills in the defaults the person did not change)."""
    out = dict(content)
    for f in fields(schema):
        if f.name not in out and f.has_default:
            out[f.name] = f.default
    return out


def text_content(schema: Any, text: str) -> dict[str, Any]:
    """`--text TEXT` where the form has one text field (A2A's question; a one-field MCP form)."""
    form = fields(schema)
    if len(form) != 1 or form[0].kind not in ("string", "any"):
        names = ", ".join(f.name for f in form) or "none"
        raise Invalid(
            f"--text fills a form with one text field; this one has: {names} (use --json)"
        )
    return validate(schema, {form[0].name: text})


# -- parsing typed text ------------------------------------------------------------------------

_YES = {"y", "yes", "true", "t", "1", "on"}
_NO = {"n", "no", "false", "f", "0", "off"}


def _pick(f: Field, word: str) -> Any:
    word = word.strip()
    if word.isdigit() and 1 <= int(word) <= len(f.choices):
        return f.choices[int(word) - 1].value
    for c in f.choices:
        if word == str(c.value):
            return c.value
    for c in f.choices:
        if word.casefold() in (str(c.value).casefold(), c.label.casefold()):
            return c.value
    raise Invalid(f"choose a number from 1 to {len(f.choices)} (or type a value)")


def parse(f: Field, text: str) -> Any:
    """What a person typed for a field (not empty), as the field's type; `Invalid` if not."""
    text = text.strip()
    if f.kind == "boolean":
        if text.lower() in _YES:
            return True
        if text.lower() in _NO:
            return False
        raise Invalid("answer y or n")
    if f.kind in ("number", "integer"):
        try:
            value: Any = int(text) if re.fullmatch(r"[+-]?\d+", text) else float(text)
        except ValueError:
            raise Invalid(
                "type a number" if f.kind == "number" else "type a whole number"
            ) from None
        if value != value or value in (float("inf"), float("-inf")):
            raise Invalid("type a finite number")
        return check(f, value)
    if f.kind == "choice":
        return check(f, _pick(f, text))
    if f.kind == "choices":
        picked = [_pick(f, w) for w in text.split(",") if w.strip()]
        return check(f, list(dict.fromkeys(picked)))
    if f.kind == "any":
        try:
            return json.loads(text)
        except ValueError:
            return text
    return check(f, text)


# -- the terminal form ---------------------------------------------------------------------------

Read = Callable[[], str]


class LineReader:
    """Lines from a terminal's file descriptor, read with `os.read` (the terminal's line mode
    does the editing). `stop` (set from another thread) ends a read with `Dismissed`."""

    def __init__(self, fd: int = 0, stop: threading.Event | None = None) -> None:
        self.fd = fd
        self.stop = stop or threading.Event()
        self._buffer = b""

    def __call__(self) -> str:
        while b"\n" not in self._buffer:
            if self.stop.is_set():
                raise Dismissed
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.1)
            except InterruptedError:
                continue
            if not ready:
                continue
            chunk = os.read(self.fd, 4096)
            if not chunk:
                if self._buffer:  # end of input after a partial line: that line, then EOF
                    line, self._buffer = self._buffer, b""
                    return line.decode("utf-8", "replace")
                raise Dismissed
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", "replace").rstrip("\r")


def _text(value: str, style: str = "") -> Any:
    from rich.text import Text

    return Text(value, style=style)


class Form:
    """Asks one input request's fields on a console, reading lines with `read`."""

    def __init__(self, request: InputRequest, console: Console, read: Read) -> None:
        self.request = request
        self.console = console
        self.read = read

    def ask(self, prompt: str) -> str:
        self.console.print(_text(prompt, "bold"), end="")
        return self.read()

    def run(self) -> Response | None:
        """The answer, or None when the person left (end of input, Ctrl-C)."""
        try:
            return self._run()
        except (Dismissed, EOFError, KeyboardInterrupt):
            self.console.print()
            self.console.print(_text("dismissed", "yellow"))
            return None

    def _run(self) -> Response:
        req = self.request
        self.console.print(_text(f"{one_line(req.who, 80)} asks:", "bold yellow"))
        message = clean(req.message).strip() or "(no message)"
        self.console.print(_text(message))
        url = req.params.get("url")
        if isinstance(url, str) and url:
            self.console.print(_text(f"open: {one_line(url, 500)}", "underline"))
        content = self._fields()
        if not req.can_decline:
            # an A2A answer is a message: confirmed like a form's (a `y` typed for a
            # confirmation that never comes would land in the shell), or typed again
            while True:
                self.console.print()
                word = self.ask("send this answer? [Y]es, [e]dit: ").strip().lower()
                if word in ("", "y", "yes", "s", "send"):
                    return {"action": "accept", "content": content}
                if word in ("e", "edit", "n", "no"):
                    content = self._fields()
                    continue
                self._complain("answer y or e (Ctrl-C: send nothing)")
        self.console.print()
        while True:
            word = self.ask("send this answer? [Y]es, [d]ecline, [c]ancel: ").strip().lower()
            if word in ("", "y", "yes", "s", "send"):
                if req.params.get("mode") == "url":  # done at the URL: nothing to send
                    return {"action": "accept"}
                return {"action": "accept", "content": content}
            if word in ("d", "decline", "n", "no"):
                return {"action": "decline"}
            if word in ("c", "cancel"):
                return {"action": "cancel"}
            self._complain("answer y, d or c")

    def _fields(self) -> dict[str, Any]:
        content: dict[str, Any] = {}
        for f in fields(self.request.schema):
            value = self._field(f)
            if value is not _MISSING:
                content[f.name] = value
        return content

    def _complain(self, message: str) -> None:
        self.console.print(_text(f"  ✖ {message}", "red"))

    def _field(self, f: Field) -> Any:
        self.console.print()
        head = one_line(f.label, 120)
        if f.title and f.title != f.name:
            head += f" ({one_line(f.name, 60)})"
        self.console.print(_text(head + (" *" if f.required else ""), "bold cyan"))
        if f.description:
            self.console.print(_text("  " + clean(f.description).strip(), "dim"))
        hint = self._hint(f)
        for i, c in enumerate(f.choices, 1):
            extra = "" if c.label == str(c.value) else f"  [{short_value(c.value)}]"
            self.console.print(_text(f"  {i}) {one_line(c.label, 100)}{extra}"))
        default = ""
        if f.has_default:
            default = f" (default: {self._default_text(f)})"
        prompt = f"  {hint}{default}: "
        while True:
            typed = self.ask(prompt)
            if not typed.strip():
                if f.has_default:
                    try:
                        return check(f, f.default)
                    except Invalid:
                        return f.default  # the server's own default: sent as it gave it
                if f.required:
                    self._complain("this field is required")
                    continue
                return _MISSING
            try:
                return parse(f, typed)
            except Invalid as exc:
                self._complain(str(exc))

    @staticmethod
    def _default_text(f: Field) -> str:
        if f.kind == "boolean" and isinstance(f.default, bool):
            return "y" if f.default else "n"
        # a choice's title, as the list shows it (never `2) Title` inside the parentheses)
        titles = {short_value(c.value): one_line(c.label, 40) for c in f.choices}
        if f.choices and isinstance(f.default, list):
            picked = [titles.get(short_value(v)) for v in f.default]
            if picked and all(picked):
                return ", ".join(t for t in picked if t)
        for c in f.choices:
            if c.value == f.default:
                return one_line(c.label, 40)
        return short_value(f.default)

    @staticmethod
    def _hint(f: Field) -> str:
        if f.kind == "boolean":
            return "y/n"
        if f.kind == "choice":
            return f"choose 1-{len(f.choices)}"
        if f.kind == "choices":
            return f"choose any of 1-{len(f.choices)}, separated by commas"
        bounds = []
        if f.minimum is not None:
            bounds.append(f"≥ {f.minimum:g}")
        if f.maximum is not None:
            bounds.append(f"≤ {f.maximum:g}")
        if f.kind in ("number", "integer"):
            what = "a number" if f.kind == "number" else "a whole number"
            return what + (f" ({', '.join(bounds)})" if bounds else "")
        if f.kind == "string":
            what = {
                "email": "an email address",
                "uri": "a URI",
                "date": "a date (YYYY-MM-DD)",
                "date-time": "a date and time (ISO 8601)",
            }.get(f.format or "", "text")
            if f.min_length is not None or f.max_length is not None:
                lo, hi = f.min_length or 0, f.max_length
                what += f" ({lo}-{hi} characters)" if hi is not None else f" (≥ {lo} characters)"
            return what
        return "a value (JSON or text)"


async def ask(
    request: InputRequest, console: Console, *, fd: int = 0, interrupt_dismisses: bool = False
) -> Response | None:
    """Run the form in a daemon thread so that the event loop goes on; the answer, or None
    when the person left it (end of input). `interrupt_dismisses`: Ctrl-C closes the form and
    raises `Interrupted` (`answer`); else
    Ctrl-C is the caller's (a watch ends, cancelling this, which closes the form)."""
    loop = asyncio.get_running_loop()
    stop = threading.Event()
    interrupted = threading.Event()
    result: asyncio.Future[Response | None] = loop.create_future()

    def settle(value: Response | None, error: BaseException | None) -> None:
        if result.done():
            return
        if error is not None:
            result.set_exception(error)
        else:
            result.set_result(value)

    def deliver(value: Response | None, error: BaseException | None) -> None:
        # the run may be over (a cancelled form): then nobody waits, and the loop is closed
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, value, error)

    def work() -> None:
        try:
            value = Form(request, console, LineReader(fd, stop)).run()
        except Exception as exc:  # a bug in the form: reported by the caller
            deliver(None, exc)
        else:
            deliver(value, None)

    def on_sigint() -> None:
        interrupted.set()
        stop.set()

    previous: Any = None
    if interrupt_dismisses:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            previous = signal.getsignal(signal.SIGINT)
            loop.add_signal_handler(signal.SIGINT, on_sigint)
    thread = threading.Thread(target=work, name="mcptask-form", daemon=True)
    thread.start()
    try:
        answer = await result
        if interrupted.is_set():
            raise Interrupted("interrupted: the form was dismissed")
        return answer
    finally:
        stop.set()  # the form closes at its next read (a watch that ended, a cancellation)
        if previous is not None:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGINT)
                signal.signal(signal.SIGINT, previous)
