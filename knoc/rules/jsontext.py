"""The one rule for JSON that knoc did not write itself: cards, key sets,
manifests on disk, imports. Python's parser accepts what no A2A client can
use and what would crash knoc later: nesting deep enough to exhaust the
stack, integers past JSON's safe range (2**53), `Infinity` and `NaN`,
numbers that overflow to infinity, and lone surrogates (`"\\ud800"`),
which cannot be written out as UTF-8. Each is refused here with a message
that says which; past this point, a value is safe to walk, canonicalize
and print."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any, NoReturn

from knoc.rules.json import JsonValue

MAX_DEPTH = 128  # objects and arrays inside each other (a2a-sdk's own canonical-form bound)
SAFE_INTEGER = 2**53 - 1  # RFC 8785 and every JavaScript client: the integers a double holds exactly


class Refused(ValueError):
    """JSON that knoc will not take; the message says why (and where, when the parser knows)."""


def parse(raw: bytes, *, depth: int = MAX_DEPTH) -> Any:
    """`parse_value`, for a caller that indexes into the value as it expects
    it and catches the KeyError or TypeError of another shape."""
    return parse_value(raw, depth=depth)


def parse_value(raw: bytes, *, depth: int = MAX_DEPTH) -> JsonValue:
    """The JSON value in `raw` (UTF-8, a byte-order mark allowed), or Refused."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Refused(f"it is not UTF-8 text (byte {exc.start})") from None
    try:
        value: JsonValue = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as exc:
        raise Refused(f"it is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise Refused(f"it is nested deeper than {depth} objects and arrays") from None
    _walk(value, depth)
    return value


def _constant(name: str) -> NoReturn:
    raise Refused(f"it holds {name}, which is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise Refused(f"the number {text[:40]} is too large for a JSON number (it would be infinite)")
    return value


def _int(text: str) -> int:
    value = int(text) if len(text.lstrip("-")) <= 16 else None  # more digits are out of range (and slow to convert)
    if value is None or abs(value) > SAFE_INTEGER:
        raise Refused(f"the integer {text[:40]}{'...' if len(text) > 40 else ''} is outside JSON's safe range "
                      f"(at most 2**53 - 1 either way): clients cannot hold it exactly")
    return value


def inexact_integers(value: object, at: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Where `value` (a source's plain data, nested at most as deep as a
    source may be) holds an integer outside JSON's safe range: one every
    JavaScript client, and knoc's own reader, cannot hold exactly."""
    return (path for path, leaf in _leaves(value, at)
            if isinstance(leaf, int) and not isinstance(leaf, bool) and abs(leaf) > SAFE_INTEGER)


def strings(value: object, at: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Each string `value` (a source's plain data) holds, and each key of
    its mappings (a text as much as a value is), with its place."""
    return ((path, leaf) for path, leaf in _leaves(value, at, keys=True) if isinstance(leaf, str))


def _leaves(value: object, at: tuple[str | int, ...], keys: bool = False
            ) -> Iterator[tuple[tuple[str | int, ...], object]]:
    """Each value of `value` that is no mapping or list (and with `keys`,
    each key), with its place."""
    if isinstance(value, dict):
        for key, item in value.items():
            if keys:
                yield (*at, str(key)), str(key)
            yield from _leaves(item, (*at, str(key)), keys)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _leaves(item, (*at, i), keys)
    else:
        yield at, value


def _walk(value: JsonValue, depth: int) -> None:
    """Nesting and strings, without recursion (a deep value must not crash the check of it)."""
    pending = [(value, 1)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict):
            if level > depth:
                raise Refused(f"it is nested deeper than {depth} objects and arrays")
            for key, child in item.items():
                _text(key)
                pending.append((child, level + 1))
        elif isinstance(item, list):
            if level > depth:
                raise Refused(f"it is nested deeper than {depth} objects and arrays")
            pending.extend((child, level + 1) for child in item)
        elif isinstance(item, str):
            _text(item)


def _text(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise Refused("a string holds a lone surrogate (such as \\ud800), which is not Unicode text") from None
