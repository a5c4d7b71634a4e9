"""The build tree written aside, so a failed or interrupted build leaves
the old tree as it was: cards written early by the workers that compile
them, the rest on writer threads from the bytes the caller hands them.
Then either the whole new tree is swapped in (`knoc.io.swap`), the old
tree's unchanged files hard-linked into it; or, when few files change,
the old tree is updated in place through a journal (`knoc.io.journal`)."""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import threading
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

from knoc.io import journal, pool, swap, tree_files
from knoc.io.journal import Update
from knoc.io.outputs import Columns, TreeStat
from knoc.io.tree import folders_unchanged, walk, written


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


IN_PLACE_SHARE = 4  # a change to at most a quarter of the tree's files is made in place


class Staging:
    """A new tree written beside `out`, then swapped in, or only the files
    that changed, then moved in (`update`). Cards can be
    written early, each as soon as its file is compiled, by the pool
    worker that compiled it (`begin`, then `write_card` in any process
    forked after it, then `written_early`); `writing` (or `finish`, from
    a mapping) writes the rest, on `writers` threads (0: one per core, at
    least two). A file the old tree at `out` already holds with the same
    bytes, as its scan saw it, is hard-linked from it instead
    (`tree_files.link_seen`). Until it is swapped in, the tree is a hidden folder
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
        self._folders: set[str] = set()  # the new tree's folders this process made for `write_card`
        self.update: Update | None = None  # what the tree is updated by in place (None: swapped whole)

    def begin(self) -> None:
        """Make the new tree's folder (before forking the processes that
        will `write_card` into it)."""
        if self.new is None:
            missing = [p for p in (self.out.parent, *self.out.parent.parents) if not p.exists()]
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self._made = missing  # innermost first: what abort removes again, if still empty
            swap.recover(self.out, self.manifest)  # before our own folder exists: it would be taken for debris
            self.new = swap.staging(self.out)
            self._old = self.out.is_dir()

    def write_card(self, files: Mapping[str, bytes]) -> bool:
        """Write one card's files into the new tree. From this process or
        one forked after `begin`: nothing is shared but the folder, and each
        file is created exclusively, so two cards at one path cannot mix.
        Never a link to the old tree's file, even of the same bytes: the
        build may end up leaving that tree as it is (nothing to write, or an
        update in place), and the link, made and undone, would have moved
        that file's ctime, which its memo goes by.
        False, with none of them left, when any cannot be written (unsafe,
        taken, the disk full): `finish` writes it, and says what is wrong."""
        if self.new is None or tree_files.unsafe(files) is not None:
            return False
        base, made = f"{self.new}/", []
        try:
            for rel, data in files.items():
                tree_files.make_folder(base, rel, self._folders)
                with tree_files.created(base + rel) as fd:  # FileExistsError: taken, and not ours to remove
                    made.append(rel)  # ours from here: a write that fails halfway leaves a file too
                    tree_files.write_all(fd, data)
        except OSError:
            for rel in made:
                tree_files.unlink_made(self.new, rel)
            self._folders.clear()  # unlink_made removed the folders it left empty
            return False
        return True

    def written_early(self, paths: Collection[str]) -> None:
        """What `write_card` wrote: the files `finish` keeps where they are
        what the tree holds, and removes where not."""
        self.early = paths

    def finish(self, files: Mapping[str, bytes], unchanged: Collection[str] = (),
               reuse: Mapping[str, TreeStat] | None = None, owned: Columns | None = None) -> None:
        """Make `files` the tree at `out` (`writing`, its files read from
        `files`)."""
        try:
            writing = self.writing(list(files), unchanged, reuse, owned)
            for batch in writing.needed():
                writing.put([(rel, files[rel]) for rel in batch])
            writing.commit()
        finally:
            self.abort()

    def writing(self, paths: list[str], unchanged: Collection[str] = (), reuse: Mapping[str, TreeStat] | None = None,
                owned: Columns | None = None, update: Update | None = None) -> Writing:
        """Begin to make the tree at `out` hold `paths`: the caller hands
        over the bytes of each path `needed` asks for (`put`), then
        `commit`s. `unchanged`: the paths written early that hold what
        the tree holds there; `owned`: the folders of `out` when it held
        only files knoc wrote (the memo's, as this run's scan of it saw
        them): while none has changed since, `out` need not be listed and
        its manifest read (`check_owned`, seconds at 100,000 agents);
        `update`: what updates the old tree in place (`in_place`). Else
        the whole tree is written aside, and `reuse` gives the files of the
        old tree that hold what the new one does at their path, as the
        scan saw them (size, ctime, sha256), hard-linked. OutputError when
        a path would leave the tree or `out` holds files knoc did not
        write."""
        try:
            self.begin()
            assert self.new is not None
            self.update = update if self._old else None
            # In place, this run's scan (which found what differs) is trusted to have seen every folder.
            if self.out.is_symlink() or owned is None or (
                    self.update is None and not folders_unchanged(self.out, owned)):
                check_owned(self.out, self.manifest)
            kept = {p for p in self.early if p in unchanged}
            # in place, only the files that differ are written, and nothing is linked
            rest = [p for p in (paths if self.update is None else self.update.replace) if p not in kept]
            unsafe = tree_files.unsafe(rest)
            if unsafe is not None:  # every path was checked where it was made: this is the proof
                raise OutputError(f"refusing to write `{unsafe[0]}`: {unsafe[1]}")
            for path in self.early:
                if path not in kept:  # written early, but not (or not so) in the tree
                    tree_files.unlink_made(self.new, path)
            self._writing = Writing(self, rest, (reuse or {}) if self.update is None else {})
            return self._writing
        except BaseException:
            self.abort()
            raise

    def in_place(self, paths: list[str], changed: Collection[str]) -> Update | None:
        """The update that makes the old tree hold `paths`, given where it
        differs from them (`changed`, its files not among them included,
        as the scan saw it), when that is few enough of its files (None:
        the new tree is swapped in whole)."""
        if not self.out.is_dir() or len(changed) * IN_PLACE_SHARE > len(paths):
            return None
        new = set(paths)
        replace = sorted(p for p in changed if p in new and p != self.manifest)
        remove = sorted(p for p in changed if p not in new)
        if tree_files.unsafe(remove) is not None:  # not a tree knoc wrote: swapped whole, if check_owned allows
            return None
        return Update(replace + [self.manifest] * (self.manifest in changed and self.manifest in new), remove)

    def _swap_in(self) -> None:
        assert self.new is not None
        try:
            if self.update is not None:
                staged, self.new = self.new, None  # the journal's, or debris the next run removes
                journal.update_in_place(staged, self.out, self.update)
            else:
                os.chmod(self.new, 0o755)
                swap.swap_in(self.new, self.out)
                self.new = None
            self._made = []
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


class Writing:
    """A new tree being written on `staging.writers` threads: creating a
    file is mostly kernel time, which threads overlap. The files the old
    tree holds with the same bytes are hard-linked from it first (see
    `tree_files.link_seen`); the others, as the caller hands them over (`put`),
    a batch at a time, while it makes the next. A batch is a few paths in
    a row: a card and its twin share a folder."""

    def __init__(self, staging: Staging, paths: list[str], reuse: Mapping[str, TreeStat]) -> None:
        assert staging.new is not None
        self._staging, self._stop = staging, staging._stop
        self._base, self._old = f"{staging.new}/", f"{staging.out}/"
        self._paths, self._reuse = paths, reuse
        self._queue: queue.Queue[list[tuple[str, tree_files.Content]] | None] = queue.Queue(staging.writers * 4)
        self._writers: pool.Threads | None = None

    def needed(self) -> Iterator[list[str]]:
        """The paths to hand over, a batch at a time (those the old tree
        holds are linked from it first, on the writer threads)."""
        unlinked: set[str] = set()  # of the reusable ones: few, if any
        reusable = [p for p in self._paths if p in self._reuse]
        if reusable:
            work = functools.partial(tree_files.link_files, self._base, self._old,
                                     pool.Batches(reusable, tree_files.BATCH), self._stop, self._reuse, unlinked)
            pool.on_threads(work, self._staging.writers, self._stop)
        del reusable
        self._writers = pool.Threads(functools.partial(tree_files.write_files, self._base, self._queue, self._stop),
                                     self._staging.writers, self._stop)
        batch: list[str] = []
        for rel in self._paths:
            if rel not in self._reuse or rel in unlinked:
                batch.append(rel)
                if len(batch) == tree_files.BATCH:
                    yield batch
                    batch = []
        if batch:
            yield batch

    def put(self, files: list[tuple[str, tree_files.Content]]) -> None:
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

    def _hand(self, item: list[tuple[str, tree_files.Content]] | None) -> None:
        while True:
            if self._stop.is_set():
                if self._writers is not None:
                    self._writers.join()  # raises what a writer raised
                raise OutputError("the build was stopped while writing")
            try:
                self._queue.put(item, timeout=tree_files.POLL)
                return
            except queue.Full:
                continue

    def stop(self) -> None:
        """Stop the writers and wait for them (the caller removes the tree)."""
        self._stop.set()
        if self._writers is not None:
            with contextlib.suppress(Exception):  # a writer's failure, raised already
                self._writers.join()



