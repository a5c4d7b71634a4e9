"""The files of a new build tree, one at a time: each created exclusively
(never through what was there), or hard-linked from the old tree where it
holds the same bytes, on the writer threads of `knoc.io.staging`."""

from __future__ import annotations

import contextlib
import os
import queue
import stat
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from knoc.io import pool
from knoc.io.outputs import TreeStat, seen_as
from knoc.io.stored import Parts, StoredFiles
from knoc.rules.paths import path_problem

# What a file of the tree holds: its bytes, the cache's stored files that
# hold it under its path (copied into the tree without being held), or its parts.
Content = bytes | StoredFiles | Parts

POLL = 0.05  # seconds a writer or the caller waits before looking whether the other failed


def unlink_made(new: Path, rel: str) -> None:
    """Remove a file of the new tree and the folders it leaves empty."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(new / rel)
    folder = (new / rel).parent
    while folder != new:
        try:
            folder.rmdir()
        except OSError:  # not empty
            return
        folder = folder.parent


def unsafe(files: Iterable[str]) -> tuple[str, str] | None:
    """The first path that cannot be in the tree, and why (`path_problem`)."""
    return next(((rel, p) for rel in files if (p := path_problem(rel)) is not None), None)


BATCH = 64  # paths a writer takes at a time; even: a card and its twin (next to each other) share a folder


def link_files(base: str, old: str, paths: pool.Batches[str], stop: threading.Event,
                reuse: Mapping[str, TreeStat], unlinked: set[str]) -> None:
    """Hard-link each path from the old tree while it holds what the scan
    saw there; `unlinked` gets those it no longer does (written afresh).
    `base` is a fresh private folder (mkdtemp): nothing else is in it."""
    made: set[str] = set()
    while batch := paths.take():
        for rel in batch:
            if stop.is_set():
                return
            make_folder(base, rel, made)
            if not link_seen(old + rel, base + rel, reuse[rel]):
                unlinked.add(rel)  # one set, many threads: a set's add is atomic


def write_files(base: str, batches: queue.Queue[list[tuple[str, Content]] | None], stop: threading.Event) -> None:
    """Write each batch handed over until the end mark (None)."""
    made: set[str] = set()
    while not stop.is_set():
        try:
            batch = batches.get(timeout=POLL)
        except queue.Empty:
            continue
        if batch is None:
            return
        for rel, content in batch:
            if stop.is_set():
                return
            make_folder(base, rel, made)
            with created(base + rel) as fd:
                if isinstance(content, bytes):
                    write_all(fd, content)
                elif isinstance(content, list):
                    for part in content:
                        write_all(fd, part)
                elif not content.write_to(rel, fd):
                    write_all(fd, content[rel])


def make_folder(base: str, rel: str, made: set[str]) -> None:
    """Make the folder of `rel` under `base`, from the deepest one `made`
    says was made: a card's two new folders are two mkdirs, where
    os.makedirs would look at each level first."""
    missing = []
    folder = rel.rpartition("/")[0]
    while folder and folder not in made:
        missing.append(folder)
        folder = folder.rpartition("/")[0]
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another thread or worker made it
            os.mkdir(base + folder)
        made.add(folder)


@contextlib.contextmanager
def created(path: str) -> Iterator[int]:
    """A new file's descriptor: never one that was there (a symlink planted
    in its place included)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # less the umask, as open() does
    try:
        yield fd
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes | memoryview) -> None:
    left = memoryview(data)
    while left:
        left = left[os.write(fd, left):]


# Hard-linking the old tree's file at `new` instead of writing the same
# bytes again: less to write, less to free when the old tree goes, and
# git's index still knows the file (same inode, same mtime). Only a regular
# file with no other link; and if it was swapped for another file (or a
# symlink) between the look and the link, the link is undone and the
# caller writes the bytes.

def link_seen(old: str, new: str, seen: TreeStat) -> bool:
    """Link `old` if it has the stat the scan that hashed it saw."""
    try:
        st = os.lstat(old)
    except OSError:
        return False
    return seen_as(st, seen) and _link(old, new, st)


def _link(old: str, new: str, st: os.stat_result) -> bool:
    """Link `old`, looked at as `st`, at `new`: only if it is still that
    file, unchanged, a regular one, and has no other link."""
    if st.st_nlink != 1 or not stat.S_ISREG(st.st_mode):
        return False
    try:
        os.link(old, new)  # a symlink is linked as itself, never followed: caught below
        got = os.lstat(new)
    except OSError:
        return False
    if (got.st_ino, got.st_dev, got.st_size, got.st_mtime_ns) == (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns) \
            and stat.S_ISREG(got.st_mode):
        return True
    os.unlink(new)
    return False
