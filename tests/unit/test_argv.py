"""Target options before the command move after it; only id-like words get the `--` hint."""

from __future__ import annotations

import pytest

from mcptask.cli.argv_order import hoist, looks_like_task_id


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (["--url", "U", "list"], ["list", "--url", "U"]),
        (["--url=U", "-o", "json", "get", "ID"], ["get", "--url=U", "-o", "json", "ID"]),
        (["-uU", "--trace", "watch", "A", "B"], ["watch", "-uU", "--trace", "A", "B"]),
        (["-s", "prod", "list", "--local"], ["list", "-s", "prod", "--local"]),
        (["--jq", ".status", "get", "ID"], ["get", "--jq", ".status", "ID"]),
        # nothing to move, or not ours to move: Click answers as before
        (["list", "--url", "U"], ["list", "--url", "U"]),
        (["--version"], ["--version"]),
        (["--help", "list"], ["--help", "list"]),
        (["--url", "U", "--bogus", "list"], ["--url", "U", "--bogus", "list"]),
        (["--url"], ["--url"]),
        (["--url", "U"], ["--url", "U"]),
        (["--url", "U", "--", "list"], ["--url", "U", "--", "list"]),
        ([], []),
    ],
)
def test_hoist(given: list[str], expected: list[str]) -> None:
    assert hoist(given) == expected


def test_hoist_past_a_subcommand() -> None:
    assert hoist(["--url", "U", "auth", "login"], groups={"auth"}) == [
        "auth",
        "login",
        "--url",
        "U",
    ]
    assert hoist(["--url", "U", "auth"], groups={"auth"}) == ["auth", "--url", "U"]


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("-kE3xYzAbCdEfGh", True),
        ("-PZoERzdB6AnEGn5bRsu3XBnrIuaxHc2Tv4K9hUqxIAo", True),
        ("--url", False),
        ("--urll", False),
        ("-x", False),
        ("-kE3xYz", True),
        ("-abc", False),
        ("-with.dot", False),
    ],
)
def test_which_words_look_like_task_ids(word: str, expected: bool) -> None:
    assert looks_like_task_id(word) is expected
