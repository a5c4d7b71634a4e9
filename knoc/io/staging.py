"""The build tree written aside and swapped in, so a failed or interrupted
build leaves the old tree as it was (`knoc.io.swap`): cards written early
by the workers that compile them, the rest on writer threads from the
bytes the caller hands them, the old tree's unchanged files hard-linked."""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import stat
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path

from knoc.io import files, pool, swap
from knoc.io.outputs import Columns
from knoc.io.stored import Stat, StoredFiles
from knoc.io.tree import folders_unchanged, walk, written
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
    present = {prefix + name for prefix, _, names in walk(out) for name in names}
    if not present:
        return
    known = written(out, manifest)
    if known is None:
        raise OutputError(f"{out} has files but no knoc {manifest}; knoc will not replace it")
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
    forked after it, then `written_early`); `writing` (or `finish`, from
    a mapping) writes the rest, on `writers` threads (0: one per core, at
    least two). A file the old tree at `out` already holds with the same
    bytes is hard-linked from it instead (see `_link_seen` and
    `_link_same`). Until it is swapped in, the tree is a hidden folder
    beside `out`, which `abort` (or the next run's `swap.recover`) removes."""

    def __init__(self, out: Path, manifest: str = "manifest.json", writers: int = 0) -> None:
        self.out, self.manifest = out, manifest
        self.writers = writers or max(2, pool.cores())
        self.new: Path | None = None
        self.early: Collection[str] = ()  # what write_card wrote, as `written_early` was told
        self._writing: Writing | None = None
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

    def written_early(self, paths: Collection[str]) -> None:
        """What `write_card` wrote: the files `finish` keeps where they are
        what the tree holds, and removes where not."""
        self.early = paths

    def finish(self, files: Mapping[str, bytes], unchanged: Collection[str] = (),
               reuse: Mapping[str, Stat] | None = None, owned: Columns | None = None) -> None:
        """Make `files` the tree at `out` (`writing`, its files read from
        `files`)."""
        try:
            writing = self.writing(list(files), unchanged, reuse, owned)
            for batch in writing.needed():
                writing.put([(rel, files[rel]) for rel in batch])
            writing.commit()
        finally:
            self.abort()

    def writing(self, paths: list[str], unchanged: Collection[str] = (), reuse: Mapping[str, Stat] | None = None,
                owned: Columns | None = None) -> Writing:
        """Begin to make the tree at `out` hold `paths`: the caller hands
        over the bytes of each path `needed` asks for (`put`), then
        `commit`s. `unchanged`: the paths written early that hold what
        the tree holds there; `reuse`: the files of the old tree that hold
        what the new one does at their path, as the scan of it saw them
        (size, mtime, sha256), hard-linked; `owned`: the folders of `out`
        when it held only files knoc wrote (the memo's): while none has
        changed since, `out` need not be listed and its manifest read
        (`check_owned`, seconds at 100,000 agents). OutputError when a path
        would leave the tree or `out` holds files knoc did not write."""
        try:
            self.begin()
            assert self.new is not None
            if self.out.is_symlink() or owned is None or not folders_unchanged(self.out, owned):
                check_owned(self.out, self.manifest)
            kept = {p for p in self.early if p in unchanged}
            rest = [p for p in paths if p not in kept]
            unsafe = _unsafe(rest)
            if unsafe is not None:  # every path was checked where it was made: this is the proof
                raise OutputError(f"refusing to write `{unsafe[0]}`: {unsafe[1]}")
            for path in set(self.early) - kept:  # written early, but not (or not so) in the tree
                _unlink(self.new, path)
            self._writing = Writing(self, rest, reuse or {})
            return self._writing
        except BaseException:
            self.abort()
            raise

    def _swap_in(self) -> None:
        assert self.new is not None
        try:
            os.chmod(self.new, 0o755)
            swap.swap_in(self.new, self.out)
            self.new, self._made = None, []
        finally:
            self.abort()

    def abort(self) -> None:
        """Stop writing and remove the new tree (nothing once finished)."""
        self._stop.set()
        if self._writing is not None:
            self._writing.stop()
            self._writing = None
        self.early = ()  # nor held past this
        if self.new is not None:
            swap.remove(self.new)
            self.new = None
        for folder in self._made:  # a failed build leaves no `dist/` behind for `output = "dist/build"`
            try:
                folder.rmdir()
            except OSError:  # not empty (someone else's now), or gone
                break
        self._made = []


# What a file of the tree holds: its bytes, or the cache's stored files
# that hold it under its path (copied into the tree without being held).
Content = bytes | StoredFiles


class Writing:
    """A new tree being written on `staging.writers` threads: creating a
    file is mostly kernel time, which threads overlap. The files the old
    tree holds with the same bytes are hard-linked from it first (see
    `_link_seen`); the others, as the caller hands them over (`put`),
    a batch at a time, while it makes the next. A batch is a few paths in
    a row: a card and its twin share a folder."""

    def __init__(self, staging: Staging, paths: list[str], reuse: Mapping[str, Stat]) -> None:
        assert staging.new is not None
        self._staging, self._stop = staging, staging._stop
        self._base, self._old = f"{staging.new}/", f"{staging.out}/"
        self._paths, self._reuse = paths, reuse
        self._queue: queue.Queue[list[tuple[str, Content]] | None] = queue.Queue(staging.writers * 4)
        self._writers: pool.Threads | None = None

    def needed(self) -> Iterator[list[str]]:
        """The paths to hand over, a batch at a time (those the old tree
        holds are linked from it first, on the writer threads)."""
        unlinked: set[str] = set()  # of the reusable ones: few, if any
        reusable = [p for p in self._paths if p in self._reuse]
        if reusable:
            work = functools.partial(_link_files, self._base, self._old, pool.Batches(reusable, BATCH), self._stop,
                                     self._reuse, unlinked)
            pool.on_threads(work, self._staging.writers, self._stop)
        del reusable
        self._writers = pool.Threads(functools.partial(_write_files, self._base, self._queue, self._stop),
                                     self._staging.writers, self._stop)
        batch: list[str] = []
        for rel in self._paths:
            if rel not in self._reuse or rel in unlinked:
                batch.append(rel)
                if len(batch) == BATCH:
                    yield batch
                    batch = []
        if batch:
            yield batch

    def put(self, files: list[tuple[str, Content]]) -> None:
        """Hand a batch of files to the writers (waiting while they are
        behind); a writer's failure is raised here."""
        self._hand(files)

    def commit(self) -> None:
        """Wait for the writers, then swap the new tree in."""
        if self._writers is not None:
            for _ in range(self._staging.writers):
                self._hand(None)  # one end mark per writer
            self._writers.join()
        self._staging._writing = None
        self._staging._swap_in()

    def _hand(self, item: list[tuple[str, Content]] | None) -> None:
        while True:
            if self._stop.is_set():
                if self._writers is not None:
                    self._writers.join()  # raises what a writer raised
                raise OutputError("the build was stopped while writing")
            try:
                self._queue.put(item, timeout=POLL)
                return
            except queue.Full:
                continue

    def stop(self) -> None:
        """Stop the writers and wait for them (the caller removes the tree)."""
        self._stop.set()
        if self._writers is not None:
            with contextlib.suppress(Exception):  # a writer's failure, raised already
                self._writers.join()


POLL = 0.05  # seconds a writer or the caller waits before looking whether the other failed


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


def _link_files(base: str, old: str, paths: pool.Batches[str], stop: threading.Event,
                reuse: Mapping[str, Stat], unlinked: set[str]) -> None:
    """Hard-link each path from the old tree while it holds what the scan
    saw there; `unlinked` gets those it no longer does (written afresh).
    `base` is a fresh private folder (mkdtemp): nothing else is in it."""
    made: set[str] = set()
    while batch := paths.take():
        for rel in batch:
            if stop.is_set():
                return
            _make_folder(base, rel, made)
            if not _link_seen(old + rel, base + rel, reuse[rel]):
                unlinked.add(rel)  # one set, many threads: a set's add is atomic


def _write_files(base: str, batches: queue.Queue[list[tuple[str, Content]] | None], stop: threading.Event) -> None:
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
            _make_folder(base, rel, made)
            with _created(base + rel) as fd:
                if isinstance(content, bytes):
                    _write_all(fd, content)
                elif not content.write_to(rel, fd):
                    _write_all(fd, content[rel])


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
