"""Values held compact: each marshalled into one `bytes`, and the large
byte strings that go with it (those a run reads once or twice, late) in a
scratch file rather than in memory. A hundred thousand small records cost
their bytes, not Python's overhead for each string and tuple in them."""

from __future__ import annotations

import marshal
import os
from collections.abc import Iterator
from typing import IO, Any

from knoc.io.stored import CacheDamaged


class Held:
    """Values by key. `scratch`: where the pieces go (None: held too)."""

    def __init__(self, scratch: IO[bytes] | None = None) -> None:
        self._values: dict[str, bytes] = {}
        self._scratch, self._end = scratch, 0

    def put(self, key: str, value: Any, pieces: tuple[bytes, ...] = ()) -> None:
        """Hold `value` (what marshal carries), and `pieces` out of memory."""
        if self._scratch is None or not pieces:
            self._values[key] = marshal.dumps((value, pieces))
            return
        at = self._end
        self._write(b"".join(pieces))
        self._values[key] = marshal.dumps((value, (at, *map(len, pieces))))

    def value(self, key: str) -> Any:
        """The value, without its pieces."""
        return marshal.loads(self._values[key])[0]

    def get(self, key: str) -> tuple[Any, tuple[bytes, ...]]:
        """The value and its pieces."""
        value, pieces = marshal.loads(self._values[key])
        if not pieces or isinstance(pieces[0], bytes):  # held here
            return value, pieces
        assert self._scratch is not None
        at, *sizes = pieces
        data = os.pread(self._scratch.fileno(), sum(sizes), at)
        if len(data) != sum(sizes):  # the scratch file has no name: only a process of ours could touch it
            raise CacheDamaged(f"the cache's scratch file lost what it held for {key}")
        out, start = [], 0
        for size in sizes:
            out.append(data[start:start + size])
            start += size
        return value, tuple(out)

    def _write(self, data: bytes) -> None:
        assert self._scratch is not None
        view = memoryview(data)
        while view:
            done = os.pwrite(self._scratch.fileno(), view, self._end)
            view, self._end = view[done:], self._end + done

    def __contains__(self, key: str) -> bool:
        return key in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)
