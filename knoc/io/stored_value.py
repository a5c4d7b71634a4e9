"""The cache's own files (`.knoc-cache/*.bin`): one marshalled value each,
behind a magic line and a checksum, written atomically."""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import zlib
from pathlib import Path
from typing import Any

from knoc.io.files import atomic_write
from knoc.io.pool import collector_paused

MAGIC = b"knoc-cache 11\n"  # bump when the file layout changes; records carry their own versions


def read_stored(path: Path) -> tuple[Any, str | None]:
    """The stored value, or None and why not."""
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"unreadable: {exc.strerror}"
    head = len(MAGIC) + 4
    payload = memoryview(blob)[head:]
    if not blob.startswith(MAGIC) or zlib.crc32(payload).to_bytes(4, "big") != blob[len(MAGIC):head]:
        return None, "corrupt (checksum mismatch)"
    # Loading makes a million objects and no cycles: pause the collector,
    # then move them out of its sight (it would rescan them on every pass).
    with collector_paused():
        try:
            return marshal.loads(payload), None
        except (EOFError, ValueError, TypeError):
            return None, "corrupt (unreadable payload)"
        finally:
            gc.freeze()


def write_stored(path: Path, value: Any) -> None:
    """Atomically. Best effort: a read-only checkout still compiles, uncached.
    The checksum is a CRC: it is there to catch damage, not an adversary
    (the cache is as trusted as the sources beside it)."""
    payload = marshal.dumps(value)
    if ready(path.parent):
        with contextlib.suppress(OSError):
            atomic_write(path, MAGIC + zlib.crc32(payload).to_bytes(4, "big"), payload)


def ready(folder: Path) -> bool:
    """Make the cache's folder, marked as one for git; whether it could be."""
    try:
        folder.mkdir(exist_ok=True)
        ignore = folder / ".gitignore"
        if not os.path.lexists(ignore):  # not through a link either
            ignore.write_text("# written by knoc: this folder is a cache\n*\n", encoding="utf-8")
    except OSError:
        return False
    return True
