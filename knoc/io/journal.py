"""Updating build/ in place, in proportion to the change (as git's index
makes an update of a few files safe): the files that differ are written
aside (`.build.new-knoc<id>/`, as a whole new tree would be), a journal naming
them is committed with one rename (`.build.update-knoc<id>`), then they are
moved in, the old tree's files that are not in the new one removed, and
the journal dropped.

Why an interruption never leaves a tree anyone accepts as a build:

- Before the journal is committed, build/ is untouched: an interruption
  leaves the old tree, and the next run removes what was written aside.
- Once it is committed, the journal says all the update does, and each of
  its steps can be done again: a file moved in is no longer beside the
  tree, a file removed is not there, an emptied folder is gone. The next
  run that writes build/ (`replay`, before it reads the tree) finishes
  it: build/ becomes the new tree.
- In between, build/ is a mix. Only a kill that cannot be held off (kill
  -9) or a power cut can leave it so: Ctrl-C, SIGTERM and SIGHUP wait
  until the journal is applied. No reader accepts a mix: the manifest,
  which lists every file's sha256, is moved in last, so until it is, the
  files moved in do not match it; and `knoc check` compares every file
  with what the sources give.

A replay trusts the journal no further than the tree lets it: it removes
only files build/'s manifest lists (knoc's own), and moves a file in only
where one knoc wrote is, or where nothing is; so a journal committed to
git, or one left beside a build/ someone has since replaced, can neither
delete nor replace anyone's file. Every step goes through folder
descriptors opened without following links, on both sides: a link
planted in build/ or in the staged folder is refused, never followed; only
regular files are moved in, and only files are removed."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import NamedTuple

from knoc.io import files, tree, writing
from knoc.io.debris import beside, debris
from knoc.io.interrupts import held
from knoc.rules import jsontext
from knoc.rules.paths import path_problem

VERSION = 2
MOST_BYTES = 64 << 20  # a quarter of a million agents' changed paths fit many times over
_applying = threading.Lock()  # held while this process applies an update (see `close`)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class Update(NamedTuple):
    """What an update does to the tree: the files to move in from beside it
    (in this order: the manifest last) and the files to remove."""

    replace: list[str]
    remove: list[str]


def staged_for(journal: Path) -> Path:
    """The folder the journal's files were written into."""
    return journal.with_name(journal.name.replace(".update-", ".new-", 1))


def update_in_place(staged: Path, out: Path, update: Update) -> None:
    """Make `out` the new tree by `update`, whose files are written in
    `staged` (a folder `staging.Staging` made beside `out`): the journal
    committed, then applied, then `staged` removed. Once committed, the
    update and `staged` are the journal's: if it cannot be applied now
    (Unsafe), the next run that writes the tree applies it."""
    with _applying, held():  # the journal committed and applied, or neither
        try:
            done = commit(staged, out, update)
        except BaseException:
            shutil.rmtree(staged, ignore_errors=True)
            raise
        apply(done, out)
        shutil.rmtree(staged, ignore_errors=True)  # what is left: folders, and cards written early that did not change


def close() -> None:
    """Wait until no thread of this process is applying an update, and let
    none begin again in this process: what a command that builds on
    another thread does just before the process exits (an update begun
    after this waits until the process ends, its staged files debris the
    next run removes)."""
    _applying.acquire()


def commit(staged: Path, out: Path, update: Update) -> Path:
    """Commit the journal of `update`, whose files are written in `staged`
    (a folder `staging.Staging` made beside `out`): from here on, the
    update is done, by this run (`apply`) or by the next (`replay`)."""
    journal = out.parent / staged.name.replace(".new-", ".update-", 1)
    body = json.dumps({"journal": VERSION, "replace": update.replace, "remove": update.remove}).encode()
    fd, tmp = tempfile.mkstemp(prefix=beside(out, "new"), dir=out.parent)  # debris `swap.recover` removes
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
            os.fsync(f.fileno())  # the journal is on disk before the rename that commits it
        os.rename(tmp, journal)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return journal


def apply(journal: Path, out: Path, owned: Collection[str] | None = None) -> None:
    """Do what the committed `journal` says, then drop it (its staged
    folder is the caller's to remove). `owned`: the files of `out` knoc
    wrote, the only ones it may remove or replace (None: all of them, as
    this run's scan found). A journal that is damaged or names what knoc
    never stages is dropped with nothing done. Unsafe where build/ holds a
    link, a folder with files, or a file knoc did not write where the
    update puts one: the journal is kept, for the run after that is gone."""
    with held():
        with _folder(out) as root, _folder(staged_for(journal), missing=True) as staged:
            update = _read(journal, root, staged)
            if update is not None and root is not None and staged is not None:
                try:
                    for rel in update.remove:
                        if owned is None or rel in owned:
                            _remove(root, rel)
                    for rel in update.replace:
                        _move(staged, root, rel, owned)
                except writing.Unsafe as exc:
                    raise writing.Unsafe(f"{out.name}/ cannot be updated: {exc}",
                                         f"{exc.hint} (or remove {journal.name} beside it to drop the update)"
                                         ) from None
        journal.unlink()


def replay(out: Path, manifest: str) -> None:
    """Finish every update an interrupted run committed beside `out`,
    within the files its `manifest` lists."""
    for journal in pending(out):
        apply(journal, out, tree.written(out, manifest) or set())


def pending(out: Path) -> list[Path]:
    """The journals of the updates committed beside `out` and not yet done."""
    name = debris(out, "update")
    try:
        found = sorted(p for p in out.parent.iterdir() if name.fullmatch(p.name))
    except OSError:
        return []
    return [p for p in found if files.is_file(p)]  # a link or a folder of that name is not a journal knoc wrote


def _read(journal: Path, root: int | None, staged: int | None) -> Update | None:
    """The update a journal says, if both its folders are there, it names
    only paths that can be in the tree, and each of its files still staged
    is a regular file reached without a link; else None (then nothing of
    it is done)."""
    if root is None or staged is None:
        return None
    try:
        body = files.read_bytes(journal, MOST_BYTES + 1, follow=False)
        if len(body) > MOST_BYTES:
            return None
        raw = jsontext.parse(body)
        update = Update(raw["replace"], raw["remove"])
        if raw["journal"] != VERSION or not all(isinstance(p, list) for p in update):
            return None
    except (OSError, jsontext.Refused, KeyError, TypeError):
        return None
    paths = [*update.replace, *update.remove]
    if not all(isinstance(p, str) and path_problem(p) is None for p in paths):
        return None
    return update if all(_staged_file(staged, rel) is not False for rel in update.replace) else None


@contextlib.contextmanager
def _folder(path: Path, missing: bool = False) -> Iterator[int | None]:
    """A folder's descriptor, never through a link (None: not there, or,
    when a link or a file there counts as `missing`, that)."""
    try:
        fd = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        yield None
        return
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and missing:
            yield None
            return
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise writing.Unsafe(f"{path} is a link or a file: knoc updates only a tree it wrote",
                                 "remove it, then build again") from None
        raise
    try:
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def _parent(top: int, rel: str, make: bool = False) -> Iterator[tuple[int | None, str]]:
    """The folder `rel` lies in below `top`, never through a link (None:
    not there), and its name in it."""
    *folders, name = rel.split("/")
    try:
        fd: int | None = writing.descend(top, folders, rel, make)
    except FileNotFoundError:
        fd = None
    try:
        yield fd, name
    finally:
        if fd is not None:
            os.close(fd)


def _staged_file(staged: int, rel: str) -> bool | None:
    """Whether `rel` is staged as a regular file (None: not staged, or moved in already)."""
    try:
        with _parent(staged, rel) as (fd, name):
            return None if fd is None else stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return None
    except writing.Unsafe:
        return False


def _move(staged: int, root: int, rel: str, owned: Collection[str] | None) -> None:
    """Move the staged file `rel` into the tree (moved in already: not
    staged), over a file only where knoc wrote it (`owned`, as in `apply`)."""
    if not _staged_file(staged, rel):
        return
    with _parent(staged, rel) as (src, name), _parent(root, rel, make=True) as (dst, _):
        if owned is not None and rel not in owned and _exists(dst, name):
            raise writing.Unsafe(f"{rel} is a file knoc did not write, where the update puts one",
                                 "move it out of the output folder, then build again")
        try:
            os.rename(name, name, src_dir_fd=src, dst_dir_fd=dst)
        except (IsADirectoryError, FileExistsError, OSError) as exc:
            if not isinstance(exc, IsADirectoryError) and exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            try:
                os.rmdir(name, dir_fd=dst)  # an empty folder made by hand where the file goes
            except OSError:
                raise writing.Unsafe(f"{rel} is a folder with files in it, where knoc writes a file",
                                     "move it out of the output folder, then build again") from None
            os.rename(name, name, src_dir_fd=src, dst_dir_fd=dst)


def _exists(folder: int | None, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _remove(root: int, rel: str) -> None:
    """Remove a file of the tree (never a folder), then the folders above it
    that are left empty, the lowest first (again on a replay: a kill may
    have come between two of them)."""
    with _parent(root, rel) as (fd, name):
        if fd is not None:
            with contextlib.suppress(FileNotFoundError):
                if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    os.unlink(name, dir_fd=fd)
    folders = rel.split("/")[:-1]
    while folders:
        folder = "/".join(folders)
        folders.pop()
        with _parent(root, folder) as (fd, name):
            if fd is None:
                continue
            try:
                os.rmdir(name, dir_fd=fd)
            except FileNotFoundError:
                continue
            except OSError:  # not empty: neither is any folder above it
                return
