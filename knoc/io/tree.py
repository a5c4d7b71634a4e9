"""The build tree on disk: written aside and swapped in, so a failed or
interrupted build leaves the old tree as it was; scanned through a memo of
stats, so an unchanged tree is compared without being read."""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path

from knoc.codec.records import join_paths
from knoc.io import files, pool, swap
from knoc.io.outputs import GONE, ROOT, Columns, Snapshot, fresh
from knoc.io.stored import Stat, Streams
from knoc.rules import jsontext
from knoc.rules.paths import path_problem


class OutputError(Exception):
    """The output directory cannot be written without losing someone's file."""


def check_owned(out: Path, manifest: str) -> None:
    """Refuse to replace a directory holding files knoc did not write: every
    file in it must be listed in its `manifest` (a JSON object whose
    `outputs` names them)."""
    if out.is_symlink():
        raise OutputError(f"{out} is a link: knoc never replaces what a link points to")
    if not out.exists():
        return
    if not out.is_dir():
        raise OutputError(f"{out} exists and is not a directory")
    present = {prefix + name for prefix, _, names in _walk(out) for name in names}
    if not present:
        return
    try:
        old = jsontext.parse(files.read_bytes(out / manifest))
        known = set(old["outputs"]) | {manifest}
    except (OSError, jsontext.Refused, KeyError, TypeError):
        raise OutputError(f"{out} has files but no knoc {manifest}; knoc will not replace it") from None
    foreign = sorted(present - known)
    if foreign:
        shown = ", ".join(foreign[:3]) + (" ..." if len(foreign) > 3 else "")
        raise OutputError(f"{out} holds files knoc did not write: {shown}")


def write_tree(out: Path, files: Mapping[str, bytes], manifest: str = "manifest.json", writers: int = 0) -> None:
    """Write `files` (paths relative to `out`) as the new tree at `out`:
    written aside, then swapped in (knoc.io.swap). OutputError when a path
    would leave the tree or `out` holds files knoc did not write."""
    Staging(out, manifest, writers).finish(files)


class Staging:
    """A new tree written beside `out`, then swapped in. Cards can be
    written early, each as soon as its file is compiled, by the pool
    worker that compiled it (`begin`, then `write_card` in any process
    forked after it, then `written_early`); `finish` writes the rest.

    `finish` writes on `writers` threads (0: one per core, at least two):
    creating a file is mostly kernel time, which threads overlap. A file
    the old tree at `out` already holds with the same bytes is hard-linked
    from it instead (see `_link_seen` and `_link_same`). Until `finish`
    swaps it in, the tree is a hidden folder beside `out`, which `abort`
    (or the next run's `swap.recover`) removes."""

    def __init__(self, out: Path, manifest: str = "manifest.json", writers: int = 0) -> None:
        self.out, self.manifest = out, manifest
        self.writers = writers or max(2, pool.cores())
        self.new: Path | None = None
        self.early: Mapping[str, bytes] = {}  # what write_card wrote, as `written_early` was told
        self._stop = threading.Event()
        self._old = False  # whether `out` was a folder when the new tree was begun
        self._made: list[Path] = []  # the folders above `out` this run created

    def begin(self) -> None:
        """Make the new tree's folder (before forking the processes that
        will `write_card` into it)."""
        if self.new is None:
            missing = [p for p in (self.out.parent, *self.out.parent.parents) if not p.exists()]
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self._made = missing  # innermost first: what abort removes again, if still empty
            swap.recover(self.out)  # before our own folder exists: it would be taken for debris
            self.new = swap.staging(self.out)
            self._old = self.out.is_dir()

    def write_card(self, files: Mapping[str, bytes]) -> bool:
        """Write one card's files into the new tree, or hard-link the old
        tree's where it holds the same bytes. From this process or one
        forked after `begin`: nothing is shared but the folder, and each
        file is created exclusively, so two cards at one path cannot mix.
        False, with none of them left, when any cannot be written (unsafe,
        taken, the disk full): `finish` writes it, and says what is wrong."""
        if self.new is None or _unsafe(files) is not None:
            return False
        base, old, made, folders = f"{self.new}/", f"{self.out}/", [], set[str]()
        try:
            for rel, data in files.items():
                _make_folder(base, rel, folders)
                if self._old and _link_same(old + rel, base + rel, data):
                    made.append(rel)
                    continue
                with _created(base + rel) as fd:  # FileExistsError: taken, and not ours to remove
                    made.append(rel)  # ours from here: a write that fails halfway leaves a file too
                    _write_all(fd, data)
        except OSError:
            for rel in made:
                _unlink(self.new, rel)
            return False
        return True

    def written_early(self, files: Mapping[str, bytes]) -> None:
        """What `write_card` wrote: the files `finish` keeps where they are
        what the tree holds, and removes where not."""
        self.early = files

    def finish(self, files: Mapping[str, bytes], unchanged: Collection[str] = (),
               reuse: Mapping[str, Stat] | None = None, owned: Columns | None = None) -> None:
        """Make `files` the tree at `out`. `unchanged`: the paths written
        early that hold what `files` holds there; `reuse`: the files of the
        old tree that hold what `files` does at their path, as the scan of
        it saw them (size, mtime, sha256); `owned`: the folders of `out` when
        it held only files knoc wrote (the memo's): while none has changed
        since, `out` need not be listed and its manifest read (`check_owned`,
        seconds at 100,000 agents)."""
        try:
            self.begin()
            assert self.new is not None
            if self.out.is_symlink() or owned is None or not folders_unchanged(self.out, owned):
                check_owned(self.out, self.manifest)
            kept = {p for p in self.early if p in unchanged}
            rest = [p for p in files if p not in kept]
            unsafe = _unsafe(rest)
            if unsafe is not None:  # every path was checked where it was made: this is the proof
                raise OutputError(f"refusing to write `{unsafe[0]}`: {unsafe[1]}")
            for path in self.early.keys() - kept:  # written early, but not (or not so) in the tree
                _unlink(self.new, path)
            work = functools.partial(_write_files, f"{self.new}/", files, pool.Batches(rest, BATCH), self._stop,
                                     f"{self.out}/", reuse or {})
            pool.on_threads(work, self.writers, self._stop)
            os.chmod(self.new, 0o755)
            swap.swap_in(self.new, self.out)
            self.new, self._made = None, []
        finally:
            self.abort()

    def abort(self) -> None:
        """Stop writing and remove the new tree (nothing once finished)."""
        self._stop.set()
        self.early = {}  # nor held past this
        if self.new is not None:
            swap.remove(self.new)
            self.new = None
        for folder in self._made:  # a failed build leaves no `dist/` behind for `output = "dist/build"`
            try:
                folder.rmdir()
            except OSError:  # not empty (someone else's now), or gone
                break
        self._made = []


def _unlink(new: Path, rel: str) -> None:
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


def _unsafe(files: Iterable[str]) -> tuple[str, str] | None:
    """The first path that cannot be in the tree, and why (`path_problem`)."""
    return next(((rel, p) for rel in files if (p := path_problem(rel)) is not None), None)


BATCH = 64  # paths a writer takes at a time; even: a card and its twin (next to each other) share a folder


def _write_files(base: str, files: Mapping[str, bytes], paths: pool.Batches[str], stop: threading.Event,
                 old: str, reuse: Mapping[str, Stat]) -> None:
    """`base` is a fresh private folder (mkdtemp): nothing else is in it."""
    made: set[str] = set()
    while batch := paths.take():
        for rel in batch:
            if stop.is_set():
                return
            _make_folder(base, rel, made)
            if rel in reuse and _link_seen(old + rel, base + rel, reuse[rel]):
                continue
            with _created(base + rel) as fd:
                if not (isinstance(files, Streams) and files.write_to(rel, fd)):
                    _write_all(fd, files[rel])


def _make_folder(base: str, rel: str, made: set[str]) -> None:
    """Make the folder of `rel` under `base`, unless `made` says it was."""
    folder = rel.rpartition("/")[0]
    if folder and folder not in made:
        os.makedirs(base + folder, exist_ok=True)  # another thread or worker may make it too
        made.add(folder)


@contextlib.contextmanager
def _created(path: str) -> Iterator[int]:
    """A new file's descriptor: never one that was there (a symlink planted
    in its place included)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # less the umask, as open() does
    try:
        yield fd
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    left = memoryview(data)
    while left:
        left = left[os.write(fd, left):]


# Hard-linking the old tree's file at `new` instead of writing the same
# bytes again: less to write, less to free when the old tree goes, and
# git's index still knows the file (same inode, same mtime). Only a regular
# file with no other link; and if it was swapped for another file (or a
# symlink) between the look and the link, the link is undone and the
# caller writes the bytes.

def _link_seen(old: str, new: str, seen: Stat) -> bool:
    """Link `old` if it has the size and mtime the scan that hashed it saw."""
    try:
        st = os.lstat(old)
    except OSError:
        return False
    return (st.st_size, st.st_mtime_ns) == seen[:2] and _link(old, new, st)


def _link_same(old: str, new: str, data: bytes) -> bool:
    """Link `old` if it holds `data` (read to compare: no scan saw it)."""
    try:
        with files.opened(old, follow=False) as f:
            st = os.fstat(f.fileno())
            if st.st_size != len(data) or f.read(len(data) + 1) != data:
                return False
    except OSError:  # not there, a symlink, a FIFO: written anew
        return False
    return _link(old, new, st)


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


def read(out: Path, rel: str, most: int = -1) -> bytes:
    """One file of the tree, or its first `most` bytes (OSError when it is
    not there or not a regular file)."""
    return files.read_bytes(out / rel, most)


def trees(site: Path) -> list[str]:
    """The names of the folders directly under `site`."""
    return sorted(p.name for p in site.iterdir() if p.is_dir()) if site.is_dir() else []


def stat_tree(out: Path, digests: Mapping[str, str]) -> Columns:
    """The memo's columns of a tree just written with these files and
    digests, stat'ed straight into them (no snapshot of 180,000 tuples)."""
    paths, dirs = sorted(digests), sorted({ROOT} | _parents(digests))
    with files.stat_in(out) as st:
        stats = files.stats(paths, ("st_size", "st_mtime_ns"), st)
        dir_mtimes = files.stats(dirs, ("st_mtime_ns",), st)
    if stats is None or dir_mtimes is None:
        raise FileNotFoundError(f"{out} lost a file as it was written")
    return Columns(join_paths(paths), stats[0::2], stats[1::2], "".join(digests[p] for p in paths), join_paths(dirs),
                   dir_mtimes)


def scan_tree(out: Path, known: Snapshot) -> Snapshot:
    """Every file under `out` with its size, mtime and sha256, listing the
    whole tree. A file whose size and mtime match `known` is not read again.
    (Paths are plain strings here: pathlib's joins cost more than the stat
    calls on a large tree.)"""
    base = f"{out}/"
    snap = Snapshot()
    for prefix, mtime, names in _walk(out, stat_folders=True):
        snap.dirs[prefix.rstrip("/") or ROOT] = mtime
        for name in names:
            snap.files[prefix + name] = fresh(base, prefix + name, known.files.get(prefix + name))
    return snap


NOT_THERE = (FileNotFoundError, NotADirectoryError)  # a path with no file, or with a file where a folder was


def folders_unchanged(out: Path, known: Columns, rows: slice = slice(None)) -> bool:
    """Whether every folder under `out` that `known` lists (of these `rows`)
    has the mtime it had then, so that no entry was added or removed
    anywhere (POSIX updates a folder's mtime on both) and `changed_files`
    sees every change. False when there is no memo: the tree must be
    listed (`scan_tree`)."""
    if not known.dirs:
        return False
    try:
        with files.stat_in(out) as st:
            return files.stats(known.dirs[rows], ("st_mtime_ns",), st) == known.dir_mtimes[rows]
    except NOT_THERE:
        return False


def changed_files(out: Path, known: Columns, rows: slice = slice(None)) -> dict[str, Stat | None]:
    """The files `known` lists (of these `rows`) whose size or mtime
    changed, with their new stat and sha256 (None: gone). With
    `folders_unchanged`, all the work of comparing a large tree with its
    memo: a stat per folder and per file."""
    paths = known.paths[rows]
    first = rows.indices(len(known.paths))[0]
    try:
        with files.stat_in(out) as st:
            now = files.stats(paths, ("st_size", "st_mtime_ns"), st)
    except NOT_THERE:  # no tree at all (or a file in its place)
        return dict.fromkeys(paths)
    rows_changed = (range(len(paths)) if now is None  # one is gone: look at each
                    else sorted(set(files.differing_rows(now[0::2], known.sizes[rows]))
                                | set(files.differing_rows(now[1::2], known.mtimes[rows]))))
    changed: dict[str, Stat | None] = {}
    for i in rows_changed:
        rel, memo = paths[i], known.stat_at(first + i)
        try:
            found = fresh(f"{out}/", rel, memo)  # the memo itself back if its stat is unchanged
        except (*NOT_THERE, IsADirectoryError):  # gone (or now a folder): its folder's mtime changed too
            changed[rel] = None
            continue
        if found is not memo:
            changed[rel] = found
    return changed


def digest_changes(before: Snapshot, now: Snapshot) -> dict[str, str]:
    """Each file whose sha256 in `now` is not `before`'s (GONE: not in `now`)."""
    changed = {rel: st[2] for rel, st in now.files.items() if (old := before.files.get(rel)) is None or old[2] != st[2]}
    changed.update((rel, GONE) for rel in before.files.keys() - now.files.keys())
    return changed


def _walk(out: Path, stat_folders: bool = False) -> Iterator[tuple[str, int, list[str]]]:
    """Each folder of the tree at `out` ("" for `out`, else "a/b/"), its
    mtime (read before it is listed; 0 unless `stat_folders`) and the names
    of everything in it that is not a folder. Iteratively: a deep tree
    cannot exhaust the stack; and with plain strings and scandir, which on
    a 270,000-entry tree is five times faster than pathlib's rglob."""
    base = f"{out}/"
    pending = [""] if out.is_dir() else []
    while pending:
        prefix = pending.pop()
        mtime = os.stat(base + prefix).st_mtime_ns if stat_folders else 0
        names = []
        with os.scandir(base + prefix) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    pending.append(prefix + e.name + "/")
                else:
                    names.append(e.name)
        yield prefix, mtime, names


def _parents(files: Iterable[str]) -> set[str]:
    dirs: set[str] = set()
    for rel in files:
        parts = rel.split("/")[:-1]
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return dirs
