"""knoc's JSON writer gives exactly the bytes of the standard library's
`json.dumps(indent=2, ensure_ascii=False)` plus a newline."""

from __future__ import annotations

import json
from typing import Any

import pytest

from knoc.output.canonical import dumps

VALUES: list[Any] = [
    {},
    [],
    {"a": "b", "c": "d"},  # the all-strings fast path
    {"ünïcode": "\"quoted\"\n\ttabbed \u2028 \x00", "emoji": "🙂"},
    {"nested": {"list": [1, 2.5, -0.0, True, False, None, "x"], "empty": {}, "none": []}},
    [{"a": [[], [{}]]}, "s", 10**20],
    {"mixed": {"s": "x", "n": 1}},
]


@pytest.mark.parametrize("value", VALUES)
def test_bytes_equal_the_standard_library(value: Any) -> None:
    assert dumps(value) == (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


@pytest.mark.parametrize("bad", [{1: "x"}, {1: 2}, {"f": float("nan")}, {"o": object()}])
def test_what_json_cannot_hold_is_refused(bad: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        dumps(bad)
