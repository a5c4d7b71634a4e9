"""Values held compact: each marshalled, end to end, and with a scratch
file, out of memory: written to it a megabyte at a time, each value read
back (one pread) when asked for. A hundred thousand small records cost
their bytes, and those bytes are the kernel's to keep or drop (the page
cache), not the process's: not Python's overhead for each string and
tuple in them, nor a hundred thousand small blocks for the allocator to
fragment. The large byte strings that go with a value (those a run reads
once or twice, late) are held apart from it, so that reading the value
does not read them."""

from __future__ import annotations

import os
from array import array
from typing import IO, NoReturn

from knoc.io.stored import CacheDamaged
from knoc.io.stored_value import dumps, loads
from knoc.rules.records import Encoded, Encodes, Stored

_FLUSH = 1 << 20  # bytes gathered before they go to the scratch file
_WINDOW = 1 << 16  # bytes read from it at once


class Held:
    """Values by key. `scratch`: where they go (None: held in memory).
    `tail`: where in a value its pieces are, (i, j): `value[i][j:]`, a
    tuple of bytes, is held apart from it; `value[i]` may be empty."""

    def __init__(self, scratch: IO[bytes] | None = None, tail: tuple[int, int] = (0, 0)) -> None:
        # Everything held, end to end: its first `_flushed` bytes are in the
        # scratch file, the rest in `_buffer` (all of it, without a file).
        self._buffer = bytearray()
        self._flushed = 0
        self._starts, self._ends = array("Q"), array("Q")  # where each value starts and ends
        self._index: dict[str, int] = {}  # key -> its value's number
        self._scratch = scratch
        self._spill = scratch is not None  # whether to write to it still
        self._window: tuple[int, bytes] = (0, b"")  # the bytes last read from the file, and where they start
        self._tail = tail

    def put(self, key: str, value: Encoded) -> None:
        """Hold `value` (what marshal carries), the bytes at its tail apart."""
        i, j = self._tail
        inner = value[i]
        if isinstance(inner, tuple) and inner:
            self._put(key, (*value[:i], inner[:j], *value[i + 1:]), tuple(_bytes(b) for b in inner[j:]))
        else:
            self._put(key, value, ())

    def _put(self, key: str, value: Encoded, pieces: tuple[bytes, ...]) -> None:
        # The value, then its pieces: one read brings both.
        number = len(self._ends)
        self._starts.append(self._size)
        self._buffer += dumps((value, tuple(map(len, pieces))))
        self._ends.append(self._size)
        for piece in pieces:
            self._buffer += piece
        self._index[key] = number  # a key held again: its new value, once whole
        if self._spill and len(self._buffer) >= _FLUSH:
            self._flush()

    @property
    def _size(self) -> int:
        return self._flushed + len(self._buffer)

    def _load(self, key: str) -> tuple[Encoded, Encoded, int]:
        """The value, its pieces' sizes, and where they start."""
        i = self._index[key]
        start, end = self._starts[i], self._ends[i]
        loaded = loads(self._read(start, end - start, key))
        if not (isinstance(loaded, tuple) and len(loaded) == 2):
            raise TypeError("not what `_put` held")
        value, sizes = loaded
        if not (isinstance(value, tuple) and isinstance(sizes, tuple)):
            raise TypeError("not what `_put` held")
        return value, sizes, end

    def value(self, key: str) -> Encoded:
        """The value, without its pieces."""
        return self._load(key)[0]

    def get(self, key: str) -> tuple[Encoded, tuple[bytes, ...]]:
        """The value and its pieces."""
        value, held, at = self._load(key)
        if not held:
            return value, ()
        sizes = [_number(n) for n in held]
        data = self._read(at, sum(sizes), key)
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

    def _read(self, at: int, size: int, key: str) -> bytes:
        """The `size` bytes held at `at` (the value or pieces of `key`)."""
        if at >= self._flushed:
            return bytes(self._buffer[at - self._flushed:at - self._flushed + size])
        start, window = self._window
        if not start <= at <= at + size <= start + len(window):
            # The stages read the results mostly in the order they were held:
            # one read of the file brings the next few dozen with this one.
            assert self._scratch is not None
            want = min(max(size, _WINDOW), self._flushed - at)
            window = os.pread(self._scratch.fileno(), want, at)
            if len(window) < size:  # the scratch file has no name: only a process of ours could touch it
                raise CacheDamaged(f"the cache's scratch file lost what it held for {key}")
            start, self._window = at, (at, window)
        return window[at - start:at - start + size]

    def _flush(self) -> None:
        """What `_buffer` gathered, to the end of the scratch file. A file
        that cannot take it (a full disk, a file size limit) is written no
        more: what follows is held in memory, as without a cache."""
        assert self._scratch is not None
        at = self._flushed
        with memoryview(self._buffer) as view:
            try:
                while at - self._flushed < len(view):
                    at += os.pwrite(self._scratch.fileno(), view[at - self._flushed:], at)
            except OSError:
                self._spill = False
                return
        self._flushed, self._buffer = at, bytearray()


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
