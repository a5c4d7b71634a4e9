"""Watching the sources for `knoc serve --watch` (watchfiles: inotify and
its kin). Every batch of changes to `.kno` files calls back once; whatever
the callback raises is handed to `failed`, and the watching goes on."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from knoc.io.files import SOURCE_SUFFIX, discover

READY_SECONDS = 10.0  # how long to wait for the watch to be in place


def fingerprint(root: Path, folders: list[str]) -> tuple[tuple[str, int, int], ...]:
    """The size and ctime (which no call can put back) of each source file a compile reads."""
    out = []
    for rel in discover(root, folders):
        try:
            st = os.stat(root / rel)
        except OSError:  # removed since the listing
            continue
        out.append((rel, st.st_ctime_ns, st.st_size))
    return tuple(out)


def in_background(root: Path, folders: list[str], since: object, rebuild: Callable[[], None],
                  failed: Callable[[Exception], object]) -> threading.Event:
    """Watch in a daemon thread; set the returned event to stop it. Returns
    once the watch is in place, after a rebuild if the sources changed since
    the `since` fingerprint (taken before the first build)."""
    stop, ready = threading.Event(), threading.Event()
    paths = [root / f for f in folders if (root / f).is_dir()] or [root]
    threading.Thread(target=_watch, args=(root, paths, _guarded(rebuild, failed), stop, ready), daemon=True).start()
    ready.wait(READY_SECONDS)
    if fingerprint(root, folders) != since:  # an edit made before the watch was in place
        _guarded(rebuild, failed)()
    return stop


def _guarded(rebuild: Callable[[], None], failed: Callable[[Exception], object]) -> Callable[[], None]:
    def run() -> None:
        try:
            rebuild()
        except Exception as exc:  # a failed rebuild is reported; the watcher lives on
            failed(exc)
    return run


def _watch(root: Path, paths: list[Path], rebuild: Callable[[], None], stop: threading.Event,
           ready: threading.Event) -> None:
    import watchfiles  # only `serve --watch` needs it

    def sources(_: object, path: str) -> bool:
        """A source, by its path inside the repo: the repo itself may lie
        under a hidden folder (~/.config/agents) and still be watched."""
        try:
            inside = Path(path).relative_to(root).as_posix()
        except ValueError:
            return False
        return inside.endswith(SOURCE_SUFFIX) and not any(part.startswith(".") for part in inside.split("/"))

    for changes in watchfiles.watch(*paths, watch_filter=sources, stop_event=stop, debounce=200,
                                    rust_timeout=200, yield_on_timeout=True, raise_interrupt=False):
        ready.set()  # the first (empty) batch comes once the watch is in place
        if changes:
            rebuild()
