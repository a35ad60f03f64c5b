"""Forms on their own: reading a `requestedSchema`, checking `--json` and `--text` answers,
parsing what a person types for each kind of field, and the terminal form driven by a scripted
`read` on a recording console."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from rich.console import Console

from mcptask.errors import Interrupted
from mcptask.model.inputs import TEXT_FORM, InputRequest
from mcptask.output.forms import (
    Choice,
    Dismissed,
    Field,
    Form,
    Invalid,
    LineReader,
    ask,
    check,
    fields,
    parse,
    text_content,
    validate,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 2, "maxLength": 5},
        "email": {"type": "string", "format": "email"},
        "copies": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "agree": {"type": "boolean", "default": False},
        "colour": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
        "tags": {
            "type": "array",
            "items": {"anyOf": [{"const": "a", "title": "Alpha"}, {"const": "b"}]},
            "minItems": 1,
            "maxItems": 2,
        },
        "extra": {"description": "anything at all"},
    },
    "required": ["name", "colour"],
}


def field(spec: dict[str, Any], *, required: bool = False) -> Field:
    (f,) = fields({"properties": {"x": spec}, "required": ["x"] if required else []})
    return f


# -- reading the schema -------------------------------------------------------------------------


def test_fields_in_the_server_s_order_with_their_kinds() -> None:
    form = fields(SCHEMA)
    assert [(f.name, f.kind, f.required) for f in form] == [
        ("name", "string", True),
        ("email", "string", False),
        ("copies", "integer", False),
        ("ratio", "number", False),
        ("agree", "boolean", False),
        ("colour", "choice", True),
        ("size", "choice", False),
        ("tags", "choices", False),
        ("extra", "any", False),
    ]
    name, email, copies, ratio, agree, colour, size, tags, extra = form
    assert (name.label, name.min_length, name.max_length) == ("Your name", 2, 5)
    assert email.label == "email" and email.format == "email"
    assert (copies.minimum, copies.maximum, copies.default) == (1, 10, 1)
    assert copies.has_default and not ratio.has_default
    assert agree.default is False
    assert colour.choices == [Choice("r", "Red"), Choice("g", "Green")]
    assert size.choices == [Choice("s", "Small"), Choice("l", "Large")]
    assert tags.choices == [Choice("a", "Alpha"), Choice("b", "b")]
    assert (tags.min_items, tags.max_items) == (1, 2)
    assert extra.description == "anything at all"


@pytest.mark.parametrize(
    "schema", [None, "form", [], {}, {"properties": []}, {"properties": {}, "required": "x"}]
)
def test_a_schema_without_properties_has_no_fields(schema: Any) -> None:
    assert fields(schema) == []


def test_malformed_properties_are_read_leniently() -> None:
    form = fields(
        {
            "properties": {
                "plain": "not an object",
                "weird": {"type": "uuid", "title": 5, "description": ["x"]},
                "n": {"type": "number", "minimum": "0", "maximum": 10**400},
                "s": {"type": "string", "minLength": -1, "maxLength": True, "format": 7},
                "e": {"enum": [1, 2], "enumNames": ["one"]},
                "empty": {"oneOf": [{"title": "no const"}]},
                "arr": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["plain", 3],
        }
    )
    by_name = {f.name: f for f in form}
    assert by_name["plain"].kind == "any" and by_name["plain"].required
    assert (by_name["weird"].kind, by_name["weird"].title, by_name["weird"].description) == (
        "any",
        "",
        "",
    )
    assert by_name["n"].minimum is None and by_name["n"].maximum is None
    s = by_name["s"]
    assert (s.min_length, s.max_length, s.format) == (None, None, None)
    assert by_name["e"].choices == [Choice(1, "one"), Choice(2, "2")]
    assert by_name["empty"].kind == "any"
    assert by_name["arr"].kind == "any"


# -- checking values ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "value", "error"),
    [
        ({"type": "string"}, 5, "must be text"),
        ({"type": "string", "minLength": 3}, "ab", "must be at least 3 characters"),
        ({"type": "string", "maxLength": 3}, "abcd", "must be at most 3 characters"),
        ({"type": "string", "format": "email"}, "not an address", "must be an email address"),
        ({"type": "string", "format": "email"}, "a@b@c", "must be an email address"),
        ({"type": "string", "format": "uri"}, "no-scheme", "must be a URI (scheme:...)"),
        ({"type": "string", "format": "uri"}, "http://", "must be a URI (scheme:...)"),
        ({"type": "string", "format": "uri"}, "http://[::1/x", "must be a URI (scheme:...)"),
        ({"type": "string", "format": "uri"}, "http://[x]/", "must be a URI (scheme:...)"),
        ({"type": "string", "format": "date"}, "2026-13-01", "must be a date (YYYY-MM-DD)"),
        ({"type": "string", "format": "date"}, "20260101", "must be a date (YYYY-MM-DD)"),
        ({"type": "string", "format": "date"}, "2026-W01-1", "must be a date (YYYY-MM-DD)"),
        ({"type": "string", "format": "date"}, "tomorrow", "must be a date (YYYY-MM-DD)"),
        ({"type": "string", "format": "date-time"}, "2026-01-01", "must be a date and time"),
        ({"type": "string", "format": "date-time"}, "2026-01-01T10:00", "must be a date and"),
        ({"type": "string", "format": "date-time"}, "2026-01-01T25:00:00Z", "must be a date"),
        ({"type": "string", "format": "date-time"}, "20260101T100000Z", "must be a date and"),
        ({"type": "number"}, "5", "must be a number"),
        ({"type": "number"}, True, "must be a number"),
        ({"type": "number"}, float("nan"), "must be a finite number"),
        ({"type": "number"}, float("inf"), "must be a finite number"),
        ({"type": "number", "minimum": 0}, float("-inf"), "must be a finite number"),
        ({"type": "integer"}, "5", "must be a whole number"),
        ({"type": "integer"}, 2.5, "must be a whole number"),
        ({"type": "integer"}, float("inf"), "must be a whole number"),
        ({"type": "integer"}, False, "must be a whole number"),
        ({"type": "number", "minimum": 1.5}, 1, "must be at least 1.5"),
        ({"type": "integer", "maximum": 10}, 11, "must be at most 10"),
        ({"type": "boolean"}, "true", "must be true or false"),
        ({"type": "boolean"}, 1, "must be true or false"),
        ({"enum": ["r", "g"]}, "b", "b is not one of r, g"),
        ({"enum": [1, 2]}, True, "true is not one of 1, 2"),
        ({"enum": [1, 2]}, "1", "1 is not one of 1, 2"),
        ({"oneOf": [{"const": "s"}, {"const": "l"}]}, "m", "m is not one of s, l"),
        ({"type": "array", "items": {"enum": ["a", "b"]}}, "a", "must be a list of a, b"),
        ({"type": "array", "items": {"enum": ["a", "b"]}}, ["a", "c"], "c is not one of a, b"),
        ({"type": "array", "items": {"enum": ["a"]}, "minItems": 1}, [], "needs at least 1"),
        (
            {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 1},
            ["a", "b"],
            "takes at most 1 choices",
        ),
    ],
)
def test_check_rejects_what_does_not_fit(spec: dict[str, Any], value: Any, error: str) -> None:
    with pytest.raises(Invalid, match="^" + re.escape(error)):
        check(field(spec), value)


@pytest.mark.parametrize(
    ("spec", "value", "kept"),
    [
        ({"type": "string", "minLength": 2, "maxLength": 2}, "ab", "ab"),
        ({"type": "string", "format": "email"}, "ann@example.com", "ann@example.com"),
        ({"type": "string", "format": "uri"}, "https://example.com/x", "https://example.com/x"),
        ({"type": "string", "format": "uri"}, "urn:isbn:0451450523", "urn:isbn:0451450523"),
        ({"type": "string", "format": "date"}, "2026-02-28", "2026-02-28"),
        ({"type": "string", "format": "date-time"}, "2026-01-01T10:00:00Z", "2026-01-01T10:00:00Z"),
        (
            {"type": "string", "format": "date-time"},
            "2026-01-01t10:00:00.250+02:00",
            "2026-01-01t10:00:00.250+02:00",
        ),
        ({"type": "string", "format": "hostname"}, "anything", "anything"),  # not checked
        ({"type": "number", "minimum": 0, "maximum": 1}, 0.5, 0.5),
        ({"type": "number", "minimum": 0, "maximum": 1}, 1, 1),
        ({"type": "integer"}, 3.0, 3),
        ({"type": "integer", "minimum": -5}, -5, -5),
        ({"type": "boolean"}, False, False),
        ({"enum": ["r", "g"]}, "g", "g"),
        ({"enum": [1, 2]}, 2, 2),
        ({"oneOf": [{"const": None, "title": "none"}]}, None, None),
        ({"type": "array", "items": {"enum": ["a", "b"]}}, ["b", "a"], ["b", "a"]),
        ({"type": "array", "items": {"enum": ["a", "b"]}}, [], []),
        ({}, {"any": ["json"]}, {"any": ["json"]}),
    ],
)
def test_check_keeps_what_fits(spec: dict[str, Any], value: Any, kept: Any) -> None:
    result = check(field(spec), value)
    assert result == kept and type(result) is type(kept)


# -- --json and --text answers --------------------------------------------------------------------


def test_validate_checks_each_field_and_keeps_the_rest_as_given() -> None:
    content = {"name": "Ann", "colour": "r", "copies": 3.0, "tags": ["b"], "extra": [1]}
    assert validate(SCHEMA, content) == {
        "name": "Ann",
        "colour": "r",
        "copies": 3,
        "tags": ["b"],
        "extra": [1],
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (["not", "an", "object"], "the answer must be a JSON object of the form's fields"),
        ("text", "the answer must be a JSON object of the form's fields"),
        ({"name": "Ann"}, "missing required field colour"),
        ({}, "missing required field name, colour"),
        ({"name": "Ann", "colour": "r", "nick": "A"}, "unknown field 'nick'"),
        ({"name": "A", "colour": "r"}, "name: must be at least 2 characters"),
        ({"name": "Ann", "colour": "blue"}, "colour: blue is not one of r, g"),
        ({"name": "Ann", "colour": "r", "email": "x"}, "email: must be an email address"),
        ({"name": "Ann", "colour": "r", "ratio": 2}, "ratio: must be at most 1"),
        ({"name": "Ann", "colour": "r", "ratio": float("nan")}, "ratio: must be a finite number"),
        ({"name": "Ann", "colour": "r", "agree": "yes"}, "agree: must be true or false"),
        ({"name": "Ann", "colour": "r", "tags": ["a", "b", "a"]}, "tags: takes at most 2 choices"),
    ],
)
def test_validate_names_what_is_wrong(content: Any, message: str) -> None:
    with pytest.raises(Invalid) as caught:
        validate(SCHEMA, content)
    assert str(caught.value) == message


def test_a_form_without_fields_takes_any_object() -> None:
    assert validate({"type": "object", "properties": {}}, {"free": 1}) == {"free": 1}
    assert validate(None, {}) == {}


def test_text_fills_a_one_text_field_form() -> None:
    assert text_content(TEXT_FORM, "blue") == {"text": "blue"}
    free: dict[str, Any] = {"properties": {"answer": {}}}
    assert text_content(free, "anything") == {"answer": "anything"}
    short = {"properties": {"code": {"type": "string", "maxLength": 3}}}
    with pytest.raises(Invalid, match=r"^code: must be at most 3 characters$"):
        text_content(short, "toolong")


@pytest.mark.parametrize(
    ("schema", "names"),
    [
        (SCHEMA, "name, email, copies, ratio, agree, colour, size, tags, extra"),
        ({"properties": {"n": {"type": "integer"}}}, "n"),
        ({"properties": {}}, "none"),
    ],
)
def test_text_refuses_other_forms(schema: dict[str, Any], names: str) -> None:
    with pytest.raises(Invalid) as caught:
        text_content(schema, "blue")
    assert str(caught.value) == (
        f"--text fills a form with one text field; this one has: {names} (use --json)"
    )


# -- parsing what a person typed ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "typed", "value"),
    [
        ({"type": "boolean"}, "y", True),
        ({"type": "boolean"}, " YES ", True),
        ({"type": "boolean"}, "on", True),
        ({"type": "boolean"}, "1", True),
        ({"type": "boolean"}, "N", False),
        ({"type": "boolean"}, "false", False),
        ({"type": "boolean"}, "off", False),
        ({"type": "integer"}, " 7 ", 7),
        ({"type": "integer"}, "+3", 3),
        ({"type": "integer"}, "4.0", 4),
        ({"type": "integer"}, str(10**30), 10**30),
        ({"type": "number"}, "-2.5", -2.5),
        ({"type": "number"}, "1e3", 1000.0),
        ({"type": "number"}, "12", 12),
        ({"enum": ["r", "g"], "enumNames": ["Red", "Green"]}, "2", "g"),
        ({"enum": ["r", "g"], "enumNames": ["Red", "Green"]}, "green", "g"),
        ({"enum": ["r", "g"], "enumNames": ["Red", "Green"]}, "R", "r"),
        ({"enum": [10, 20]}, "20", 20),  # a value, not a position
        ({"enum": [10, 20]}, "1", 10),  # a position
        ({"oneOf": [{"const": "s", "title": "Small"}, {"const": "l"}]}, "small", "s"),
        ({"type": "array", "items": {"enum": ["a", "b", "c"]}}, "1, c", ["a", "c"]),
        ({"type": "array", "items": {"enum": ["a", "b", "c"]}}, "b,b,2", ["b"]),
        ({"type": "array", "items": {"enum": ["a", "b"]}}, " , ", []),
        ({}, '{"k": [1]}', {"k": [1]}),
        ({}, "not json", "not json"),
        ({"type": "string"}, "  padded  ", "padded"),
    ],
)
def test_parse_reads_typed_text_as_the_field_s_type(
    spec: dict[str, Any], typed: str, value: Any
) -> None:
    result = parse(field(spec), typed)
    assert result == value and type(result) is type(value)


@pytest.mark.parametrize(
    ("spec", "typed", "error"),
    [
        ({"type": "boolean"}, "maybe", "answer y or n"),
        ({"type": "integer"}, "abc", "type a whole number"),
        ({"type": "number"}, "abc", "type a number"),
        ({"type": "number"}, "nan", "type a finite number"),
        ({"type": "number"}, "-inf", "type a finite number"),
        ({"type": "number"}, "1e400", "type a finite number"),
        ({"type": "integer"}, "2.5", "must be a whole number"),
        ({"type": "integer", "minimum": 1}, "0", "must be at least 1"),
        ({"type": "number", "maximum": 1}, "1.01", "must be at most 1"),
        ({"enum": ["r", "g"]}, "3", "choose a number from 1 to 2 (or type a value)"),
        ({"enum": ["r", "g"]}, "0", "choose a number from 1 to 2 (or type a value)"),
        ({"enum": ["r", "g"]}, "blue", "choose a number from 1 to 2 (or type a value)"),
        ({"type": "array", "items": {"enum": ["a"]}}, "a, z", "choose a number from 1 to 1"),
        ({"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 1}, "1,2", "takes at most"),
        ({"type": "string", "format": "email"}, "nobody", "must be an email address"),
        ({"type": "string", "minLength": 3}, " ab ", "must be at least 3 characters"),
    ],
)
def test_parse_says_what_to_type_instead(spec: dict[str, Any], typed: str, error: str) -> None:
    with pytest.raises(Invalid, match="^" + re.escape(error)):
        parse(field(spec), typed)


# -- the terminal form ----------------------------------------------------------------------------


def script(*lines: str) -> Callable[[], str]:
    """A `read` that answers with these lines, then ends the input."""
    pending = list(lines)

    def read() -> str:
        if not pending:
            raise Dismissed
        return pending.pop(0)

    return read


def console() -> Console:
    return Console(file=io.StringIO(), width=100, record=True, color_system=None)


def request(
    schema: dict[str, Any] | None = None, *, can_decline: bool = True, **params: Any
) -> InputRequest:
    params.setdefault("message", "Please fill this in")
    if schema is not None:
        params["requestedSchema"] = schema
    return InputRequest(
        task_id="t1", method="elicitation/create", params=params, can_decline=can_decline
    )


def run_form(req: InputRequest, *lines: str) -> tuple[dict[str, Any] | None, str]:
    c = console()
    answer = Form(req, c, script(*lines)).run()
    return answer, c.export_text()


def test_a_form_asks_each_field_and_sends_the_answer() -> None:
    answer, shown = run_form(
        request(SCHEMA),
        "Ann",  # name
        "",  # email: optional, left out
        "",  # copies: its default
        "0.25",  # ratio
        "y",  # agree
        "green",  # colour
        "2",  # size
        "1,2",  # tags
        '{"k": 1}',  # extra
        "",  # send (the default)
    )
    assert answer == {
        "action": "accept",
        "content": {
            "name": "Ann",
            "copies": 1,
            "ratio": 0.25,
            "agree": True,
            "colour": "g",
            "size": "l",
            "tags": ["a", "b"],
            "extra": {"k": 1},
        },
    }
    assert shown.startswith("task t1 asks:\nPlease fill this in\n")
    for prompt in (
        "Your name (name) *",
        "  text (2-5 characters): ",
        "  an email address: ",
        "  a whole number (≥ 1, ≤ 10) (default: 1): ",
        "  a number (≥ 0, ≤ 1): ",
        "  y/n (default: n): ",
        "colour *",
        "  1) Red  [r]",
        "  2) Green  [g]",
        "  choose 1-2: ",
        "  choose any of 1-2, separated by commas: ",
        "  anything at all",
        "  a value (JSON or text): ",
        "send this answer? [Y]es, [d]ecline, [c]ancel: ",
    ):
        assert prompt in shown, prompt


def test_a_wrong_answer_is_asked_again_with_the_reason() -> None:
    schema = {
        "properties": {
            "n": {"type": "integer", "minimum": 1},
            "when": {"type": "string", "format": "date"},
            "link": {"type": "string", "format": "uri"},
        },
        "required": ["n"],
    }
    answer, shown = run_form(
        request(schema),
        *("", "zero", "0", "3"),
        *("May 1st", "2026-05-01"),
        *("http://[oops/", "https://example.com/"),
        "y",
    )
    assert answer == {
        "action": "accept",
        "content": {"n": 3, "when": "2026-05-01", "link": "https://example.com/"},
    }
    # (each complaint follows its prompt: the person's newline is the terminal's echo)
    assert re.findall(r"✖ [^\n]*", shown) == [
        "✖ this field is required",
        "✖ type a whole number",
        "✖ must be at least 1",
        "✖ must be a date (YYYY-MM-DD)",
        "✖ must be a URI (scheme:...)",
    ]
    assert "a date (YYYY-MM-DD): " in shown


@pytest.mark.parametrize(
    ("word", "action"),
    [("d", "decline"), ("no", "decline"), ("c", "cancel"), ("CANCEL", "cancel")],
)
def test_the_person_may_decline_or_cancel(word: str, action: str) -> None:
    answer, _ = run_form(request(TEXT_FORM), "blue", word)
    assert answer == {"action": action}


def test_an_unknown_choice_at_the_end_is_asked_again() -> None:
    answer, shown = run_form(request(TEXT_FORM), "blue", "maybe", "yes")
    assert answer == {"action": "accept", "content": {"text": "blue"}}
    assert "✖ answer y, d or c" in shown


def test_an_a2a_answer_is_confirmed_like_a_form() -> None:
    """Issue 38: the A2A text answer asks before sending, as the MCP form does (a `y` typed
    for a confirmation would otherwise land in the shell); `e` types it again."""
    answer, shown = run_form(request(TEXT_FORM, can_decline=False), "blue", "y")
    assert answer == {"action": "accept", "content": {"text": "blue"}}
    assert "send this answer? [Y]es, [e]dit: " in shown
    answer, shown = run_form(request(TEXT_FORM, can_decline=False), "blue", "e", "green", "")
    assert answer == {"action": "accept", "content": {"text": "green"}}
    answer, shown = run_form(request(TEXT_FORM, can_decline=False), "blue", "d", "y")
    assert answer == {"action": "accept", "content": {"text": "blue"}}
    assert "✖ answer y or e" in shown


def test_a_url_form_shows_the_address_and_accepts_without_content() -> None:
    req = request(
        None, mode="url", url="https://example.com/auth?x=1\x1b[2J", message="Sign in there"
    )
    answer, shown = run_form(req, "")
    assert answer == {"action": "accept"}
    assert "open: https://example.com/auth?x=1" in shown and "\x1b" not in shown


def test_a_form_without_a_message_says_so() -> None:
    answer, shown = run_form(request({"properties": {}}, message=""), "y")
    assert answer == {"action": "accept", "content": {}}
    assert "(no message)" in shown


def test_end_of_input_dismisses_the_form() -> None:
    answer, shown = run_form(request(SCHEMA), "Ann")
    assert answer is None
    assert shown.rstrip().endswith("dismissed")


@pytest.mark.parametrize("error", [EOFError, KeyboardInterrupt])
def test_ctrl_c_and_eof_dismiss_the_form(error: type[BaseException]) -> None:
    def read() -> str:
        raise error

    c = console()
    assert Form(request(TEXT_FORM), c, read).run() is None
    assert "dismissed" in c.export_text()


def test_defaults_are_sent_as_the_server_gave_them() -> None:
    schema = {
        "properties": {
            "mode": {"enum": ["fast", "slow"], "default": "slow"},
            "level": {"type": "integer", "minimum": 5, "default": 1},  # out of its own bounds
            "on": {"type": "boolean", "default": True},
        }
    }
    answer, shown = run_form(request(schema), "", "", "", "")
    assert answer == {"action": "accept", "content": {"mode": "slow", "level": 1, "on": True}}
    assert "choose 1-2 (default: slow): " in shown  # balanced, the title
    assert "(default: 1): " in shown and "y/n (default: y): " in shown


def test_server_text_in_a_form_is_cleaned() -> None:
    hostile = "hi\x1b]0;owned\x07\x1b[2J\x9b1m\u202e"
    schema = {
        "properties": {
            "f" + hostile: {
                "title": "T" + hostile,
                "description": "D" + hostile,
                "enum": ["v" + hostile],
                "enumNames": ["L" + hostile],
            }
        }
    }
    req = InputRequest(
        task_id="t" + hostile,
        method="elicitation/create",
        params={"message": "M" + hostile, "requestedSchema": schema},
    )
    c = Console(file=io.StringIO(), width=200, record=True, color_system=None)
    answer = Form(req, c, script("1", "y")).run()
    assert answer == {"action": "accept", "content": {"f" + hostile: "v" + hostile}}
    shown = c.export_text()
    for part in ("task thi asks:", "Mhi", "Thi (fhi)", "Dhi", "1) Lhi  [vhi]"):
        assert part in shown, part
    assert "owned" not in shown
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", shown)


# -- reading a terminal's lines, and the form in a thread ----------------------------------------


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        with contextlib.suppress(OSError):
            os.close(fd)


def test_line_reader_reads_lines_from_a_file_descriptor(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    os.write(write_fd, b"first\r\nsecond\ncaf\xc3\xa9 \xff\nlast without newline")
    os.close(write_fd)
    read = LineReader(read_fd)
    assert [read(), read(), read(), read()] == [
        "first",
        "second",
        "café \ufffd",
        "last without newline",
    ]
    with pytest.raises(Dismissed):
        read()


def test_line_reader_stops_when_told(pipe: tuple[int, int]) -> None:
    read_fd, _ = pipe
    stop = threading.Event()
    stop.set()
    with pytest.raises(Dismissed):
        LineReader(read_fd, stop)()


def _ask(pipe: tuple[int, int], lines: bytes, **options: Any) -> tuple[dict[str, Any] | None, str]:
    read_fd, write_fd = pipe
    c = console()

    async def main() -> dict[str, Any] | None:
        answer = asyncio.create_task(ask(request(TEXT_FORM), c, fd=read_fd, **options))
        await asyncio.sleep(0)  # the loop goes on while the form waits
        os.write(write_fd, lines)
        return await answer

    return asyncio.run(main()), c.export_text()


def test_ask_runs_the_form_in_a_thread(pipe: tuple[int, int]) -> None:
    answer, shown = _ask(pipe, b"blue\ny\n")
    assert answer == {"action": "accept", "content": {"text": "blue"}}
    assert "task t1 asks:" in shown


def test_ask_returns_none_at_the_end_of_input(pipe: tuple[int, int]) -> None:
    os.close(pipe[1])
    c = console()
    assert asyncio.run(ask(request(TEXT_FORM), c, fd=pipe[0])) is None
    assert "dismissed" in c.export_text()


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_ask_closes_the_form_when_cancelled(pipe: tuple[int, int]) -> None:
    async def main() -> None:
        answer = asyncio.create_task(ask(request(TEXT_FORM), console(), fd=pipe[0]))
        await asyncio.sleep(0)
        answer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await answer

    asyncio.run(main())
    form_threads = [t for t in threading.enumerate() if t.name == "mcptask-form"]
    for t in form_threads:
        t.join(5)
    assert not any(t.is_alive() for t in form_threads)


def test_ctrl_c_during_ask_dismisses_and_raises_interrupted(pipe: tuple[int, int]) -> None:
    before = signal.getsignal(signal.SIGINT)

    async def main() -> None:
        answer = asyncio.create_task(
            ask(request(TEXT_FORM), console(), fd=pipe[0], interrupt_dismisses=True)
        )
        await asyncio.sleep(0)
        assert signal.getsignal(signal.SIGINT) is not before  # the form's handler is in place
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(Interrupted, match="the form was dismissed"):
            await answer

    asyncio.run(main())
    assert signal.getsignal(signal.SIGINT) is before


def test_a_bug_in_the_form_reaches_the_caller(pipe: tuple[int, int]) -> None:
    broken = request({"properties": {"x": {"type": "string"}}})
    broken.params["requestedSchema"] = BrokenSchema()
    with pytest.raises(RuntimeError, match="broken schema"):
        asyncio.run(ask(broken, console(), fd=pipe[0]))


class BrokenSchema(dict[str, Any]):
    def get(self, *args: Any) -> Any:
        raise RuntimeError("broken schema")


def test_a_default_choice_shows_as_its_title_in_balanced_brackets() -> None:
    schema = {
        "properties": {
            "size": {"oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]}
            | {"default": "l"},
            "colours": {
                "type": "array",
                "items": {
                    "anyOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]
                },
                "default": ["r", "g"],
            },
        }
    }
    answer, shown = run_form(request(schema), "", "", "")
    assert answer == {"action": "accept", "content": {"size": "l", "colours": ["r", "g"]}}
    assert "choose 1-2 (default: Large): " in shown
    assert "(default: Red, Green): " in shown
    for line in shown.splitlines():
        if "default" in line:  # the prompts
            assert line.count("(") == line.count(")") and line.count("[") == line.count("]")
