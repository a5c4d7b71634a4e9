"""The build tree on disk: written aside and swapped in, so a failed or
interrupted build leaves the old tree as it was; scanned through a memo of
stats, so an unchanged tree is compared without being read."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from knoc.io import pool, swap
from knoc.io.cache import Snapshot, Stat
from knoc.rules.paths import path_problem


class OutputError(Exception):
    """The output directory cannot be written without losing someone's file."""


def check_owned(out: Path, manifest: str) -> None:
    """Refuse to replace a directory holding files knoc did not write: every
    file in it must be listed in its `manifest` (a JSON object whose
    `outputs` names them)."""
    if not out.exists():
        return
    if not out.is_dir():
        raise OutputError(f"{out} exists and is not a directory")
    present = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() or p.is_symlink()}
    if not present:
        return
    try:
        old = json.loads((out / manifest).read_text(encoding="utf-8"))
        known = set(old["outputs"]) | {manifest}
    except (OSError, ValueError, KeyError, TypeError):
        raise OutputError(f"{out} has files but no knoc {manifest}; knoc will not replace it") from None
    foreign = sorted(present - known)
    if foreign:
        shown = ", ".join(foreign[:3]) + (" ..." if len(foreign) > 3 else "")
        raise OutputError(f"{out} holds files knoc did not write: {shown}")


def write_tree(out: Path, files: Mapping[str, bytes], manifest: str = "manifest.json", writers: int = 0) -> None:
    """Write `files` (paths relative to `out`) as the new tree at `out`:
    written aside, then swapped in (knoc.io.swap). OutputError when a path
    would leave the tree or `out` holds files knoc did not write. The
    files are written on `writers` threads (0: one per core, at least
    two): creating a file is mostly kernel time, which threads overlap."""
    unsafe = next(((rel, p) for rel in files if (p := path_problem(rel)) is not None), None)
    if unsafe is not None:  # every path was checked where it was made: this is the proof
        raise OutputError(f"refusing to write `{unsafe[0]}`: {unsafe[1]}")
    out.parent.mkdir(parents=True, exist_ok=True)
    swap.recover(out)
    check_owned(out, manifest)
    new = swap.staging(out)
    paths = list(files)
    n = writers or max(2, pool.cores())
    size = -(-len(paths) // n) or 1  # contiguous runs: a card and its twin share a folder
    stop = threading.Event()
    try:
        with ThreadPoolExecutor(n) as threads:
            try:
                for done in [threads.submit(_write_files, f"{new}/", files, paths[i:i + size], stop)
                             for i in range(0, len(paths), size)]:
                    done.result()
            finally:
                stop.set()  # on the way out early (an error, Ctrl-C): the others stop too
        os.chmod(new, 0o755)
        swap.swap_in(new, out)
    except BaseException:
        swap.remove(new)
        raise


def _write_files(base: str, files: Mapping[str, bytes], paths: list[str], stop: threading.Event) -> None:
    """`base` is a fresh private folder (mkdtemp): nothing else is in it."""
    made: set[str] = set()
    for rel in paths:
        if stop.is_set():
            return
        folder, _, _ = rel.rpartition("/")
        if folder and folder not in made:
            os.makedirs(base + folder, exist_ok=True)  # another thread may make it too
            made.add(folder)
        fd = os.open(base + rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # less the umask, as open() does
        try:
            left = memoryview(files[rel])
            while left:
                left = left[os.write(fd, left):]
        finally:
            os.close(fd)


def read(out: Path, rel: str) -> bytes:
    """One file of the tree (OSError when it is not there)."""
    with open(out / rel, "rb") as f:
        return f.read()


def trees(site: Path) -> list[str]:
    """The names of the folders directly under `site`."""
    return sorted(p.name for p in site.iterdir() if p.is_dir()) if site.is_dir() else []


def stat_tree(out: Path, digests: dict[str, str]) -> Snapshot:
    """The snapshot of a tree just written with these files and digests."""
    base = f"{out}/"
    snap = Snapshot()
    for rel, digest in digests.items():
        st = os.stat(base + rel)
        snap.files[rel] = (st.st_size, st.st_mtime_ns, digest)
    for rel in {""} | _parents(digests):
        snap.dirs[rel] = os.stat(base + rel).st_mtime_ns
    return snap


def scan_tree(out: Path, known: Snapshot) -> Snapshot:
    """Every file under `out` with its size, mtime and sha256.

    A file whose size and mtime match `known` is not read again. When no
    directory's mtime changed, no entry was added or removed anywhere (POSIX
    updates a directory's mtime on both), so only the known files are
    stat'ed and the tree is not listed. (Paths are plain strings here:
    pathlib's joins cost more than the stat calls on a large tree.)"""
    base = f"{out}/"
    if known.dirs:
        try:
            if all(os.stat(base + rel).st_mtime_ns == m for rel, m in known.dirs.items()):
                return Snapshot({rel: _fresh(base, rel, known) for rel in known.files}, dict(known.dirs))
        except FileNotFoundError:
            pass
    snap = Snapshot()
    pending = [""] if out.is_dir() else []
    while pending:  # iteratively: a deep tree cannot exhaust the stack
        prefix = pending.pop()
        snap.dirs[prefix.rstrip("/")] = os.stat(base + prefix).st_mtime_ns
        with os.scandir(base + prefix) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    pending.append(prefix + e.name + "/")
                else:
                    snap.files[prefix + e.name] = _fresh(base, prefix + e.name, known)
    return snap


def _fresh(base: str, rel: str, known: Snapshot) -> Stat:
    st = os.stat(base + rel)
    memo = known.files.get(rel)
    if memo is not None and memo[0] == st.st_size and memo[1] == st.st_mtime_ns:
        return memo
    with open(base + rel, "rb") as f:
        return (st.st_size, st.st_mtime_ns, hashlib.sha256(f.read()).hexdigest())


def _parents(files: Iterable[str]) -> set[str]:
    dirs: set[str] = set()
    for rel in files:
        parts = rel.split("/")[:-1]
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return dirs
