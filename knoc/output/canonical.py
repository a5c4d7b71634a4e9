"""The one JSON encoding knoc writes, so equal values give equal bytes.

The bytes are exactly `json.dumps(value, indent=2, ensure_ascii=False)`
plus a newline (a test holds it to that). The standard library falls back to
its pure-Python encoder whenever `indent` is set; this writer keeps the
string escaping in C and is several times faster on the large index and
manifest files a warm check re-renders. Each agent's small files (its card,
`agent.json` and AI Catalog entry) are written faster still by pydantic's
serializer, where its bytes are certainly the same (`dumps_serialized`)."""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from json.encoder import encode_basestring  # the C version when available
from typing import NoReturn, TypeGuard

from pydantic_core import to_json

from knoc.io.stored import PIECE


def dumps(value: object) -> bytes:
    out = _Out()
    _write(value, "\n", out)
    out.append("\n")
    out.flush()
    return out.done.getvalue()


def dumps_serialized(serialized: bytes, value: Callable[[], object]) -> bytes:
    """`dumps(value())`, given what pydantic's serializer wrote for it with
    indent=2: several times faster than `dumps`, for the cards and catalog
    entries of every agent. Only for a value knoc made, whose keys are all
    strings (pydantic would turn any key into one). pydantic writes some
    floats otherwise than Python (`0.00001` for `1e-05`), and how depends
    on its version: a text holding any float is made by `dumps`."""
    try:
        _NO_FLOATS.decode(serialized.decode("utf-8"))
    except _Float:
        return dumps(value())
    return serialized + b"\n"


class _Float(Exception):
    pass


def _float(_: str) -> NoReturn:
    raise _Float


_NO_FLOATS = json.JSONDecoder(parse_float=_float, parse_constant=_float)


def dump_entry(value: Mapping[str, object]) -> bytes:
    """`dumps(value)` of a small mapping knoc made (keys all strings)."""
    return dumps_serialized(to_json(value, indent=2, inf_nan_mode="constants"), lambda: value)


def dump_pieces(value: Mapping[str, object]) -> Iterator[bytes]:
    """`dumps(value)` of a mapping, handed on about a megabyte at a time.
    Its members that are lazy Sequences (the catalog's entries) or maps of
    strings (the manifest's inputs and outputs) are written an entry at a
    time: at 100,000 agents neither those nor the text is ever held whole."""
    out, sep = _Out(), "{"
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError(f"JSON keys must be strings, not {type(key).__name__}")
        out += (sep, "\n  ", encode_basestring(key), ": ")
        sep = ","
        if _is_str_map(item):
            lines = (f"\n    {encode_basestring(k)}: {encode_basestring(v)}" for k, v in item.items())
            entries: Iterator[tuple[str, object]] = ((line, None) for line in lines)
            opener, closer = "{", "\n  }"
        elif _is_lazy(item) and item:
            entries, opener, closer = (("\n    ", entry) for entry in item), "[", "\n  ]"
        else:
            _write(item, "\n  ", out)
            continue
        between = opener
        for text, entry in entries:
            out += (between, text)
            if entry is not None:
                _write(entry, "\n    ", out)
            between = ","
            if len(out) > 4096:
                out.flush()
                if out.done.tell() > PIECE:
                    yield out.take()
        out.append(closer)
    out.append("\n}\n" if sep == "," else "{}\n")
    out.flush()
    yield out.take()


def _is_str_map(v: object) -> TypeGuard[dict[str, str]]:
    return isinstance(v, dict) and bool(v) and set(map(type, v.values())) == {str} and set(map(type, v)) == {str}


def _is_lazy(v: object) -> TypeGuard[Sequence[object]]:
    return isinstance(v, Sequence) and not isinstance(v, (str, bytes, bytearray, list, tuple))


class _Out(list[str]):
    """The pieces written so far, turned into UTF-8 a few thousand at a
    time: the index of 100,000 agents would otherwise be millions of small
    strings at once, then the whole text, then its bytes."""

    def __init__(self) -> None:
        super().__init__()
        self.done = io.BytesIO()  # its getvalue() hands over its buffer: no second copy

    def flush(self) -> None:
        self.done.write("".join(self).encode("utf-8"))
        self.clear()

    def take(self) -> bytes:
        """The bytes done so far, handed on."""
        piece, self.done = self.done.getvalue(), io.BytesIO()
        return piece


def _write(v: object, nl: str, out: _Out) -> None:
    if isinstance(v, str):
        out.append(encode_basestring(v))
    elif isinstance(v, dict):
        if not v:
            out.append("{}")
            return
        inner, sep = nl + "  ", "{"
        if _is_str_map(v):  # the manifest's big maps: one join
            out += ("{", ",".join(f"{inner}{encode_basestring(k)}: {encode_basestring(i)}"
                                  for k, i in v.items()), nl, "}")
            return
        for key, item in v.items():
            if not isinstance(key, str):
                raise TypeError(f"JSON keys must be strings, not {type(key).__name__}")
            out += (sep, inner, encode_basestring(key), ": ")
            _write(item, inner, out)
            sep = ","
            if len(out) > 4096:
                out.flush()
        out += (nl, "}")
    elif isinstance(v, (list, tuple)) or _is_lazy(v):
        if not v:  # a lazy Sequence is walked as a list: the catalog's 100,000 entries are never all held
            out.append("[]")
            return
        inner, sep = nl + "  ", "["
        for item in v:
            out += (sep, inner)
            _write(item, inner, out)
            sep = ","
            if len(out) > 4096:
                out.flush()
        out += (nl, "]")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif v is None:
        out.append("null")
    elif isinstance(v, int):
        out.append(int.__repr__(v))
    elif isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{v} is not valid JSON")
        out.append(float.__repr__(v))
    else:
        raise TypeError(f"{type(v).__name__} is not JSON serialisable")


def joined_pieces(head: bytes, items: Iterable[bytes], sep: bytes, tail: bytes) -> Iterator[bytes]:
    """`head + sep.join(items) + tail`, handed on about a megabyte at a time:
    the whole-repo files of 100,000 agents are never held whole."""
    out, size, between = [head], 0, b""
    for item in items:
        out += (between, item)
        size, between = size + len(item), sep
        if size > PIECE:
            yield b"".join(out)
            out, size = [], 0
    out.append(tail)
    yield b"".join(out)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
