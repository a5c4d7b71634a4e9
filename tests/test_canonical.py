"""knoc's JSON writer gives exactly the bytes of the standard library's
`json.dumps(indent=2, ensure_ascii=False)` plus a newline."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, overload

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knoc.a2a.wire import AgentExtension
from knoc.output.canonical import dump_entry, dump_pieces, dumps, dumps_serialized
from knoc.rules import limits

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


# JSON values as knoc makes them: string keys, finite numbers of every size.
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)


@given(st.dictionaries(st.text(max_size=8), _JSON, max_size=6))
def test_pydantic_serialized_bytes_are_the_standard_librarys(value: dict[str, Any]) -> None:
    """The cards and catalog entries are written by pydantic's serializer,
    and must still be exactly the standard library's bytes (floats like
    1e-05 are where the two differ)."""
    assert dump_entry(value) == (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


@pytest.mark.parametrize("params", [{"tiny": 1e-05, "small": 1.5e-07}, {"big": 1e16, "huge": 10**25},
                                    {"text": "1e-05 0.00001 NaN"}, {"x": "ü\u2028\x00"}, {}])
def test_a_wire_model_gives_the_bytes_of_its_json_dict(params: dict[str, Any]) -> None:
    model = AgentExtension(uri="https://example.com/ext", required=False, params=params)
    assert dumps_serialized(model.serialized(), model.to_json_dict) == dumps(model.to_json_dict())


def test_a_value_nested_as_deep_as_a_file_may_nest_is_written_alike() -> None:
    """pydantic's serializer has a depth bound of its own: a card holds
    nothing nested deeper than knoc's own bound, which it stays above."""
    nested: Any = "x"
    for _ in range(limits.NESTING_DEPTH):
        nested = {"a": [nested]}
    model = AgentExtension(uri="https://example.com/ext", params={"deep": nested})
    assert dumps_serialized(model.serialized(), model.to_json_dict) == dumps(model.to_json_dict())


@pytest.mark.parametrize("number", [float("nan"), float("inf")])
def test_a_number_json_cannot_carry_is_refused_in_a_wire_model(number: float) -> None:
    model = AgentExtension(uri="https://example.com/ext", params={"n": number})
    with pytest.raises(ValueError):
        dumps_serialized(model.serialized(), model.to_json_dict)


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
