"""The one JSON encoding knoc writes, so equal values give equal bytes.

The bytes are exactly `json.dumps(value, indent=2, ensure_ascii=False)`
plus a newline (a test holds it to that). The standard library falls back to
its pure-Python encoder whenever `indent` is set; this writer keeps the
string escaping in C and is several times faster on the large index and
manifest files a warm check re-renders."""

from __future__ import annotations

import hashlib
import io
import math
from collections.abc import Iterable, Iterator, Sequence
from json.encoder import encode_basestring  # the C version when available
from typing import Any

from knoc.io.stored import PIECE


def dumps(value: Any) -> bytes:
    out = _Out()
    _write(value, "\n", out)
    out.append("\n")
    out.flush()
    return out.done.getvalue()


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


def _write(v: Any, nl: str, out: _Out) -> None:
    if isinstance(v, str):
        out.append(encode_basestring(v))
    elif isinstance(v, dict):
        if not v:
            out.append("{}")
            return
        inner, sep = nl + "  ", "{"
        if set(map(type, v.values())) == {str}:  # the manifest's big maps: one join
            if set(map(type, v)) != {str}:
                raise TypeError("JSON keys must be strings")
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
    elif isinstance(v, (list, tuple)) or (isinstance(v, Sequence) and not isinstance(v, (bytes, bytearray))):
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
