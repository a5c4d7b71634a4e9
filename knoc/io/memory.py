"""How the process's allocator hands memory back. glibc's malloc serves a
block over 128 KiB with its own mapping, returned to the system when freed,
but each such free raises that threshold up to the block's size: after a
build's first multi-megabyte payload, later ones (the cache layers, the
joined whole-repo files, a megabyte at a time) come from the heap, whose
freed pages stay resident. At 100,000 agents that is about 30 MiB more at
the peak. Pinning the threshold keeps large blocks mapped, so a freed one
leaves at once."""

from __future__ import annotations

import ctypes
import sys

_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
_THRESHOLD = 128 * 1024  # glibc's own starting value


def pin_mmap_threshold() -> bool:
    """Keep large blocks mapped (glibc on Linux; elsewhere nothing). Whether it did."""
    if sys.platform != "linux":
        return False
    try:
        return bool(ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, _THRESHOLD))  # the C library the interpreter runs on
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
