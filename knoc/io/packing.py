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
        # The frame says its size (unpacked in one allocation) and carries a checksum of what it holds.
        self.pack = zstandard.ZstdCompressor(level=1, write_checksum=True)
        self.unpack = zstandard.ZstdDecompressor()


_contexts = _Contexts()


def pack(data: bytes) -> bytes:
    return _contexts.pack.compress(data)


def states(packed: bytes, least: int, most: int) -> bool:
    """Whether `packed` is a frame that says it holds `least` to `most`
    bytes (its header alone read: what a cache entry is checked by when it
    is read, before anything is unpacked)."""
    try:
        return least <= zstandard.frame_content_size(packed) <= most  # -1: it does not say (not `pack`'s)
    except zstandard.ZstdError:
        return False


def unpack(packed: bytes, least: int, most: int) -> bytes:
    """The bytes `pack` made `packed` from, `least` to `most` of them: else
    (a cache file forged past its checksum) CacheDamaged."""
    if not states(packed, least, most):
        raise CacheDamaged(f"a packed card does not say it holds {least:,} to {most:,} bytes", dropped=False)
    try:
        return _contexts.unpack.decompress(packed)
    except zstandard.ZstdError as exc:
        raise CacheDamaged(f"a packed card cannot be unpacked: {exc}", dropped=False) from None
