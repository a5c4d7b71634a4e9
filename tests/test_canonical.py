"""knoc's JSON writer gives exactly the bytes of the standard library's
`json.dumps(indent=2, ensure_ascii=False)` plus a newline."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, overload

import pytest

from knoc.output.canonical import dump_pieces, dumps

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


class _Lazy(Sequence[Any]):
    """A Sequence that is not a list, as the catalog's entries are."""

    def __init__(self, items: list[Any]) -> None:
        self._items = items

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        return self._items[i]

    def __len__(self) -> int:
        return len(self._items)


def _dumped(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False, default=list) + "\n").encode("utf-8")


@pytest.mark.parametrize("value", [v for v in VALUES if isinstance(v, dict)] + [
    {"knoc": "0", "inputs": {"a.kno": "x"}, "outputs": {}, "agents": _Lazy([{"n": 1}, {"n": [2]}])},
    {"agents": _Lazy([]), "tail": None},
])
def test_a_mapping_in_pieces_is_the_same_bytes(value: dict[str, Any]) -> None:
    assert b"".join(dump_pieces(value)) == _dumped(value) == dumps(value)


def test_large_members_are_handed_on_a_megabyte_at_a_time() -> None:
    """The manifest and catalog of 100,000 agents are never one string."""
    outputs = {f"site/agent-{i:06d}/.well-known/agent-card.json": f"{i:064x}" for i in range(40_000)}
    entries = _Lazy([{"slug": f"agent-{i:06d}", "tags": ["a", "b"]} for i in range(20_000)])
    value = {"knoc": "0", "outputs": outputs, "agents": entries}
    pieces = list(dump_pieces(value))
    assert len(pieces) > 4 and max(map(len, pieces)) < 2 << 20
    assert b"".join(pieces) == _dumped(value)
