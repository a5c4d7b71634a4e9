"""How the process's allocator hands memory back. glibc's malloc serves a
block over 128 KiB with its own mapping, returned to the system when freed,
but each such free raises that threshold up to the block's size: after a
build's first multi-megabyte payload, later ones (the cache layers, the
joined whole-repo files, a megabyte at a time) come from the heap, whose
freed pages stay resident, and the peak grows. Pinning the threshold keeps large blocks mapped, so a freed one
leaves at once.

And how the process leaves: once a command has reported, freeing what it
held is work no one waits for (`leave`)."""

from __future__ import annotations

import atexit
import ctypes
import os
import sys
import threading

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


def leave(code: int) -> None:
    """Exit with `code` without tearing the interpreter down, once nothing
    else runs: a check of 100,000 agents would spend a twentieth of a
    second freeing what it held. The exit handlers still run. Returns
    (for the usual exit) when another thread runs or the output cannot be
    flushed (a closed pipe, which the usual exit reports)."""
    if threading.active_count() > 1:
        return
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        return
    os._exit(code)
