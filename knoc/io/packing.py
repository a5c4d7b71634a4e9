"""Bytes kept compact: each card's files and catalog entries, packed with
zstd at its fastest level (a card and its agent.json twin share most of
their text: packed together they shrink about fivefold). zstd packs a card
about three times faster than zlib's fastest level, and smaller. A zstd
context serves one call at a time, so each thread has its own."""

from __future__ import annotations

import threading

import zstandard

from knoc.io.stored import CacheDamaged


class _Contexts(threading.local):
    def __init__(self) -> None:
        self.pack = zstandard.ZstdCompressor(level=1)  # the frame says its size: unpacked in one allocation
        self.unpack = zstandard.ZstdDecompressor()


_contexts = _Contexts()


def pack(data: bytes) -> bytes:
    return _contexts.pack.compress(data)


def unpack(packed: bytes, most: int) -> bytes:
    """The bytes `pack` made `packed` from, if at most `most` of them:
    else (a cache file forged to say otherwise) CacheDamaged."""
    try:
        size = zstandard.frame_content_size(packed)
        if not 0 <= size <= most:  # -1: a frame that does not say (not one `pack` made)
            raise CacheDamaged(f"a packed card would be {size:,} bytes, past its bound of {most:,}")
        return _contexts.unpack.decompress(packed)
    except zstandard.ZstdError as exc:
        raise CacheDamaged(f"a packed card cannot be unpacked: {exc}") from None
