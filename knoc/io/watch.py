"""Watching the sources for `knoc serve --watch` (watchfiles: inotify and
its kin). Every batch of changes to `.kno` files calls back once; whatever
the callback raises is handed to `failed`, and the watching goes on. The
callback learns that the watch is stopping from its progress callback
(`Watch.progress`), so that a rebuild under way unwinds cleanly.

Each folder of the sources is watched on its own, as a build lists them:
never through a link out of the repo (a link to `/` is not a watch on the
whole disk), and a folder added or removed sets the watch anew (an edit
made meanwhile is caught by comparing the sources once it is set). A watch
that cannot go on (the system's limit on watches) is handed to `lost`, once.
Files named at the repo's root (`settings`: knoc.toml) are watched too."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from knoc.io.files import SOURCE_SUFFIX, discover

READY_SECONDS = 10.0  # how long to wait for the watch to be in place


def fingerprint(root: Path, folders: list[str], settings: tuple[str, ...] = ()) -> tuple[tuple[str, int, int], ...]:
    """The size and ctime (which no call can put back) of each source file
    a compile reads, and of the `settings` files at the root."""
    out = []
    for rel in (*discover(root, folders), *settings):
        try:
            st = os.stat(root / rel)
        except OSError:  # removed since the listing
            continue
        out.append((rel, st.st_ctime_ns, st.st_size))
    return tuple(out)


class Stopped(BaseException):
    """What a rebuild raises at its next checkpoint (`Watch.progress`)
    once the watch is stopping: it unwinds as an interrupted build does,
    removing what it wrote aside, and is not reported as a failure."""


class Watch:
    """A watch on a daemon thread (`start`), and how its rebuilds learn
    that it is stopping (`progress`, their progress callback)."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def progress(self, stage: str, done: int, total: int) -> None:
        """A rebuild's progress: where it stops once `stop` was called."""
        if self._stop.is_set():
            raise Stopped

    def start(self, root: Path, folders: list[str], settings: tuple[str, ...], since: object,
              rebuild: Callable[[], None], failed: Callable[[Exception], object],
              lost: Callable[[Exception], object]) -> None:
        """Watch; returns once the watch is in place, after a rebuild if the
        sources changed since the `since` fingerprint (taken before the first build)."""
        ready = threading.Event()
        self._thread = threading.Thread(target=_watch, args=(root, folders, settings, _guarded(rebuild, failed),
                                                             self._stop, ready, lost), daemon=True)
        self._thread.start()
        ready.wait(READY_SECONDS)
        if fingerprint(root, folders, settings) != since:  # an edit made before the watch was in place
            _guarded(rebuild, failed)()

    def stop(self, wait: float) -> bool:
        """Stop watching, and wait up to `wait` seconds for a rebuild under
        way to reach its next checkpoint and unwind; whether it is done."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(wait)
        return self._thread is None or not self._thread.is_alive()


def _guarded(rebuild: Callable[[], None], failed: Callable[[Exception], object]) -> Callable[[], None]:
    def run() -> None:
        try:
            rebuild()
        except Exception as exc:  # a failed rebuild is reported; the watcher lives on
            failed(exc)
    return run


def _watch(root: Path, folders: list[str], settings: tuple[str, ...], rebuild: Callable[[], None],
           stop: threading.Event, ready: threading.Event, lost: Callable[[Exception], object]) -> None:
    try:
        since: object = None  # the sources when the last watch ended: changed before the next is set, rebuilt
        while not stop.is_set():
            done, since = _watch_once(root, folders, settings, rebuild, stop, ready, since)
            if done:
                return
    except Exception as exc:  # the watch itself failed (inotify's limits): said, and serving stops
        ready.set()
        lost(exc)


def _watch_once(root: Path, folders: list[str], settings: tuple[str, ...], rebuild: Callable[[], None],
                stop: threading.Event, ready: threading.Event, since: object) -> tuple[bool, object]:
    """Watch the folders of the sources until a folder comes or goes
    (False, and the sources' fingerprint then: watch anew) or the watch
    stops (True). `since`: the fingerprint the last watch ended with."""
    import watchfiles  # only `serve --watch` needs it

    sources, ways = _folders(root, folders)
    known = {str(f) for f in sources}
    on_the_way = {str(f) for f in ways}
    at_root = {str(root / name) for name in settings}

    def wanted(_: object, path: str) -> bool:
        """A source or a folder in a folder of the sources; in a folder on the
        way to a source folder, that folder (or one on its way), come or gone."""
        parent, name = os.path.split(path)
        if path in at_root:
            return True
        if name.startswith("."):
            return False
        if parent in known:
            return path.endswith(SOURCE_SUFFIX) or path in known or os.path.isdir(path)
        inside = Path(path).relative_to(root).as_posix() if parent in on_the_way else None
        return inside is not None and any(f == inside or f.startswith(inside + "/") for f in folders)

    for changes in watchfiles.watch(*sources, *ways, watch_filter=wanted, stop_event=stop, debounce=200,
                                    rust_timeout=200, yield_on_timeout=True, raise_interrupt=False,
                                    recursive=False, ignore_permission_denied=True):
        ready.set()  # the first (empty) batch comes once the watch is in place
        missed = since is not None and fingerprint(root, folders, settings) != since  # an edit while set anew
        since = None
        if changes or missed:
            anew = any(path not in at_root and (path in known or os.path.isdir(path)
                                                or os.path.dirname(path) in on_the_way)
                       for _, path in changes)  # a folder came or went
            mark = fingerprint(root, folders, settings) if anew else None  # before the rebuild: a later edit differs
            try:
                rebuild()
            except Stopped:
                return True, None
            if anew:
                return False, mark
    return True, None


def _folders(root: Path, folders: list[str]) -> tuple[list[Path], list[Path]]:
    """Each folder of the sources, as a build lists them: no hidden folder,
    and a link only to a folder inside the repo (watched where it leads,
    once). And the folders on the way to each source folder, from the repo
    down (the nearest one there, for a source folder not there yet): a
    source folder renamed, removed or made is seen there."""
    real_root = root.resolve()
    sources: list[Path] = []
    seen: set[Path] = set()
    ways: list[Path] = []
    for folder in folders:
        top = root / folder
        ways += [up for up in reversed(top.parents) if up == root or up.is_relative_to(root)]
        if not top.is_dir() or top.is_symlink():
            continue
        for here, dirs, _ in os.walk(top, followlinks=True):
            real = Path(here).resolve()
            if real in seen or not real.is_relative_to(real_root):  # a loop, or out of the repo
                dirs[:] = []
                continue
            seen.add(real)
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            sources.append(real)
    return sources, [w for w in dict.fromkeys(ways) if w.is_dir() and not w.is_symlink() and w.resolve() not in seen]
