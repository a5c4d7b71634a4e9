"""Swapping a new build tree in for the old one with no moment where
neither is there, and cleaning up after a run that was killed.

On Linux, renameat2(RENAME_EXCHANGE) swaps two folders in one step: a kill
at any point leaves either the old tree or the new one in place. Where it
is missing or the file system refuses it, the old tree is first moved
aside (`.<name>.old-knoc*/tree`) and the new one renamed in; a kill between
those two renames leaves no tree, and the next run puts the old one back
(`recover`) before doing anything else."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from knoc.io import journal, pool
from knoc.io.debris import beside, debris

AT_FDCWD = -100
RENAME_EXCHANGE = 2
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV}


@functools.cache  # looked up on first use: only a build that replaces a tree needs it
def _renameat2() -> Callable[..., int] | None:
    """libc's renameat2; None where there is none."""
    import ctypes

    try:
        found: Callable[..., int] = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    return found


def staging(out: Path) -> Path:
    """A fresh folder beside `out` to write the new tree into."""
    return Path(tempfile.mkdtemp(prefix=beside(out, "new"), dir=out.parent))


def swap_in(new: Path, out: Path) -> None:
    """Make `new` the tree at `out`; the old tree, if any, is removed. A
    link at `out` is never swapped (what it points to is not knoc's)."""
    if out.is_symlink():
        raise IsADirectoryError(errno.EISDIR, "it is a link, which knoc never replaces", str(out))
    if not out.exists():
        os.rename(new, out)
        return
    if exchange(new, out):
        remove(new)  # now the old tree
        return
    retired = Path(tempfile.mkdtemp(prefix=beside(out, "old"), dir=out.parent))
    os.rename(out, retired / "tree")
    os.rename(new, out)  # a kill before this line leaves no `out`: recover() restores it
    remove(retired)


SPREAD = 64  # subtrees enough to keep every thread busy


def remove(tree: Path, threads: int = 4) -> None:
    """Delete a tree knoc owns (a retired or half-written build), never
    following a link: a link in its place is removed itself, and nothing it
    points to. Its subtrees are removed on several threads: unlinking is
    kernel time, which threads overlap (a 100,000-agent tree has 270,000
    entries). A kill midway leaves debris `recover` removes."""
    if not _real_folder(tree):
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            os.unlink(tree)
        return
    level = [str(tree)]
    for _ in range(4):  # down to where the subtrees are many (site/<host>/<path>/<agent>)
        below = [e.path for d in level for e in _entries(d) if e.is_dir(follow_symlinks=False)]
        if not below:
            break
        level = below
        if len(level) >= SPREAD:
            break
    if len(level) > 1:
        subtrees, stop = pool.Batches(level), threading.Event()

        def work() -> None:
            while not stop.is_set() and (batch := subtrees.take()):
                shutil.rmtree(batch[0], ignore_errors=True)

        pool.on_threads(work, threads, stop)
    shutil.rmtree(tree, ignore_errors=True)


def _entries(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []


def exchange(a: Path, b: Path) -> bool:
    """Swap two folders atomically; False where the system cannot."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    if renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    import ctypes

    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), str(b))


def recover(out: Path, manifest: str = "manifest.json") -> None:
    """Undo what an interrupted run left beside `out`: finish an update in
    place it committed (`knoc.io.journal`; within the files `out`'s
    `manifest` lists), put back an old tree that was moved aside but never
    replaced, and remove every half-written new tree and every retired one."""
    if not out.parent.is_dir():
        return
    journal.replay(out, manifest)  # a committed update finished, before its folder is taken for debris
    # only the names `beside` gives knoc's own: `.build.old-mine` or `.build.old-20240101` is someone's
    ours = debris(out, "new|old")
    left = sorted(p for p in out.parent.iterdir() if ours.fullmatch(p.name))
    if not out.exists() and not out.is_symlink():  # only a real folder knoc moved aside, never a link planted there
        aside = [p / "tree" for p in left
                 if p.name.startswith(beside(out, "old")) and _real_folder(p) and _real_folder(p / "tree")]
        if aside:
            os.rename(max(aside, key=lambda p: p.lstat().st_mtime_ns), out)
    for path in left:
        remove(path)


def _real_folder(path: Path) -> bool:
    """A folder, not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
