"""Watching the sources for `knoc serve --watch`: poll the size and mtime
of every source file a compile reads, and call back on a change."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from knoc.io.files import discover


def fingerprint(root: Path, folders: list[str]) -> tuple[tuple[str, int, int], ...]:
    """What changes when an author saves, adds or removes a source: the
    size and mtime of each file a compile reads (the list `discover` gives)."""
    out = []
    for rel in discover(root, folders):
        try:
            st = os.stat(root / rel)
        except OSError:  # removed since the listing: the next poll sees it gone
            continue
        out.append((rel, st.st_mtime_ns, st.st_size))
    return tuple(out)


def watch(current: Callable[[], object], rebuild: Callable[[], None], stop: threading.Event,
          interval: float = 0.5) -> None:
    """Call `rebuild` whenever `current()` changes, until `stop` is set."""
    last = current()
    while not stop.wait(interval):
        now = current()
        if now != last:
            time.sleep(0.1)  # let an editor finish writing
            last = current()
            rebuild()


def in_background(root: Path, folders: list[str], rebuild: Callable[[], None]) -> threading.Event:
    """Watch in a daemon thread; set the returned event to stop it."""
    stop = threading.Event()
    sources = lambda: fingerprint(root, folders)
    threading.Thread(target=watch, args=(sources, rebuild, stop), daemon=True).start()
    return stop
