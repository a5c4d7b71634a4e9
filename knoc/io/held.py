"""Values held compact: each marshalled, end to end in one buffer, and the
large byte strings that go with it (those a run reads once or twice, late)
in a scratch file rather than in memory. A hundred thousand small records
cost their bytes: not Python's overhead for each string and tuple in them,
nor a hundred thousand small blocks for the allocator to fragment."""

from __future__ import annotations

import os
from array import array
from typing import IO, NoReturn

from knoc.io.stored import CacheDamaged
from knoc.io.stored_value import dumps, loads
from knoc.rules.records import Encoded, Encodes, Stored


class Held:
    """Values by key. `scratch`: where the pieces go (None: held too).
    `tail`: where in a value its pieces are, (i, j): `value[i][j:]`, a
    tuple of bytes, is held out of memory; `value[i]` may be empty."""

    def __init__(self, scratch: IO[bytes] | None = None, tail: tuple[int, int] = (0, 0)) -> None:
        self._buffer = bytearray()
        self._ends = array("Q")  # where each value ends in the buffer
        self._index: dict[str, int] = {}  # key -> its value's number
        self._scratch, self._end = scratch, 0
        self._tail = tail

    def put(self, key: str, value: Encoded) -> None:
        """Hold `value` (what marshal carries), the bytes at its tail out of memory."""
        i, j = self._tail
        inner = value[i]
        if isinstance(inner, tuple) and inner:
            self._put(key, (*value[:i], inner[:j], *value[i + 1:]), tuple(_bytes(b) for b in inner[j:]))
        else:
            self._put(key, value, ())

    def _put(self, key: str, value: Encoded, pieces: tuple[bytes, ...]) -> None:
        where: tuple[int, ...] | tuple[bytes, ...] = pieces
        if self._scratch is not None and pieces:
            where = (self._end, *map(len, pieces))
            self._write(b"".join(pieces))
        self._buffer += dumps((value, where))
        self._index[key] = len(self._ends)  # a key held again: its new value
        self._ends.append(len(self._buffer))

    def _load(self, key: str) -> tuple[Encoded, Encoded]:
        i = self._index[key]
        loaded = loads(self._buffer[self._ends[i - 1] if i else 0:self._ends[i]])
        if not (isinstance(loaded, tuple) and len(loaded) == 2):
            raise TypeError("not what `_put` held")
        value, where = loaded
        if not (isinstance(value, tuple) and isinstance(where, tuple)):
            raise TypeError("not what `_put` held")
        return value, where

    def value(self, key: str) -> Encoded:
        """The value, without its pieces."""
        return self._load(key)[0]

    def get(self, key: str) -> tuple[Encoded, tuple[bytes, ...]]:
        """The value and its pieces."""
        value, where = self._load(key)
        if not where:
            return value, ()
        if isinstance(where[0], bytes):  # held here (`_put` held only bytes so)
            return value, tuple(map(_bytes, where))
        assert self._scratch is not None
        at, *sizes = (_number(n) for n in where)
        data = os.pread(self._scratch.fileno(), sum(sizes), at)
        if len(data) != sum(sizes):  # the scratch file has no name: only a process of ours could touch it
            raise CacheDamaged(f"the cache's scratch file lost what it held for {key}")
        out, start = [], 0
        for size in sizes:
            out.append(data[start:start + size])
            start += size
        return value, tuple(out)

    def lacks(self, key: str) -> NoReturn:
        """What is asked of the value under `key` is not in it."""
        raise KeyError(key)

    def whole(self, key: str) -> Encoded:
        """The value as put, its tail and all."""
        value, pieces = self.get(key)
        if not pieces:
            return value
        i = self._tail[0]
        inner: Stored = value[i]
        assert isinstance(inner, tuple)  # `put` took the pieces from there
        return (*value[:i], (*inner, *pieces), *value[i + 1:])

    def ref(self, key: str) -> Encodes:
        """A stand-in for the value as put, for a record that stores it (`Encodes`)."""
        return _Ref(self, key)

    def _write(self, data: bytes) -> None:
        assert self._scratch is not None
        view = memoryview(data)
        while view:
            done = os.pwrite(self._scratch.fileno(), view, self._end)
            view, self._end = view[done:], self._end + done


class _Ref(Encodes):
    __slots__ = ("_held", "_key")

    def __init__(self, held: Held, key: str) -> None:
        self._held, self._key = held, key

    def encode(self) -> Encoded:
        return self._held.whole(self._key)


def _bytes(value: Stored) -> bytes:
    if not isinstance(value, bytes):
        raise TypeError("a tail holds bytes")
    return value


def _number(value: Stored) -> int:
    if not isinstance(value, int):
        raise TypeError("a tail's place holds numbers")
    return value
