"""Updating build/ in place, in proportion to the change (as git's index
makes an update of a few files safe): the files that differ are written
aside (`.build.new-<id>/`, as a whole new tree would be), a journal naming
them is committed with one rename (`.build.update-<id>`), then they are
moved in, the old tree's files that are not in the new one removed, and
the journal dropped.

Why an interruption never leaves a tree anyone accepts as a build:

- Before the journal is committed, build/ is untouched: an interruption
  leaves the old tree, and the next run removes what was written aside.
- Once it is committed, the journal says all the update does, and each of
  its steps can be done again: a file moved in is no longer beside the
  tree, a file removed is not there. The next run that writes build/
  (`replay`, before it reads the tree) finishes it: build/ becomes the new
  tree.
- In between, build/ is a mix. Only a kill -9 or a power cut can leave it
  so (Ctrl-C is held while the journal is applied), and no reader accepts
  it: the manifest, which lists every file's sha256, is moved in last, so
  until it is, the files moved in do not match it; and `knoc check`
  compares every file with what the sources give.

Every step goes through folder descriptors opened without following
links: a link planted in build/ is refused, never written through."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from knoc.io import files, writing
from knoc.io.interrupts import ctrl_c_held
from knoc.rules import jsontext
from knoc.rules.paths import path_problem

VERSION = 1
MOST_BYTES = 64 << 20  # a quarter of a million agents' changed paths fit many times over
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
    with ctrl_c_held():  # the journal committed and applied, or neither
        try:
            done = commit(staged, out, update)
        except BaseException:
            shutil.rmtree(staged, ignore_errors=True)
            raise
        apply(done, out)
        shutil.rmtree(staged, ignore_errors=True)  # what is left: folders, and cards written early that did not change


def commit(staged: Path, out: Path, update: Update) -> Path:
    """Commit the journal of `update`, whose files are written in `staged`
    (a folder `staging.Staging` made beside `out`): from here on, the
    update is done, by this run (`apply`) or by the next (`replay`)."""
    journal = out.parent / staged.name.replace(".new-", ".update-", 1)
    body = json.dumps({"journal": VERSION, "replace": update.replace, "remove": update.remove}).encode()
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.new-", dir=out.parent)  # debris `swap.recover` removes
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
            os.fsync(f.fileno())  # the journal is on disk before the rename that commits it
        os.rename(tmp, journal)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return journal


def apply(journal: Path, out: Path) -> None:
    """Do what the committed `journal` says, then drop it (its staged
    folder is the caller's to remove). Ctrl-C waits until it is done.
    Unsafe where build/ holds a link or a folder in a file's place: the
    journal is kept, for the run after the link is gone."""
    with ctrl_c_held():
        update = _read(journal)
        if update is not None:
            with _folder(out) as root, _folder(staged_for(journal)) as staged:
                if root is None:  # no tree to update (removed since): the next build writes one whole
                    journal.unlink()
                    return
                for rel in update.remove:
                    _remove(root, rel)
                for rel in update.replace:
                    if staged is not None:
                        _move(staged, root, rel)
        journal.unlink()


def replay(out: Path) -> None:
    """Finish every update an interrupted run committed beside `out`."""
    for journal in pending(out):
        apply(journal, out)


def pending(out: Path) -> list[Path]:
    """The journals of the updates committed beside `out` and not yet done."""
    name = re.compile(rf"\.{re.escape(out.name)}\.update-[a-z0-9_]{{8}}")
    try:
        found = sorted(p for p in out.parent.iterdir() if name.fullmatch(p.name))
    except OSError:
        return []
    return [p for p in found if files.is_file(p)]  # a link or a folder of that name is not a journal knoc wrote


def _read(journal: Path) -> Update | None:
    """The update a journal says; None for one that is damaged or names a
    path that cannot be in the tree (then nothing of it is done)."""
    try:
        body = files.read_bytes(journal, MOST_BYTES + 1, follow=False)
        if len(body) > MOST_BYTES:
            return None
        raw = jsontext.parse(body)
        update = Update(raw["replace"], raw["remove"])
        if raw["journal"] != VERSION or not all(isinstance(paths, list) for paths in update):
            return None
    except (OSError, jsontext.Refused, KeyError, TypeError):
        return None
    paths = [*update.replace, *update.remove]
    return update if all(isinstance(p, str) and path_problem(p) is None for p in paths) else None


@contextlib.contextmanager
def _folder(path: Path) -> Iterator[int | None]:
    """A folder's descriptor, never through a link (None: not there)."""
    try:
        fd = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        yield None
        return
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise writing.Unsafe(f"{path} is a link or a file: knoc updates only a tree it wrote",
                                 "remove it, then build again") from None
        raise
    try:
        yield fd
    finally:
        os.close(fd)


def _move(staged: int, root: int, rel: str) -> None:
    """Move the staged file `rel` into the tree (done already: not staged)."""
    try:
        os.stat(rel, dir_fd=staged, follow_symlinks=False)
    except FileNotFoundError:
        return
    *folders, name = rel.split("/")
    fd = writing.descend(root, folders, rel)
    try:
        os.rename(rel, name, src_dir_fd=staged, dst_dir_fd=fd)
    except IsADirectoryError:
        raise writing.Unsafe(f"{rel} is a folder where knoc writes a file", "remove it, then build again") from None
    finally:
        os.close(fd)


def _remove(root: int, rel: str) -> None:
    """Remove a file of the tree, and the folders that leaves empty."""
    *folders, name = rel.split("/")
    try:
        fd = writing.descend(root, folders, rel, make=False)
    except FileNotFoundError:
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)
    while folders:
        name = folders.pop()
        try:
            fd = writing.descend(root, folders, rel, make=False)
        except OSError:
            return
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError:  # not empty: neither is any folder above it
            return
        finally:
            os.close(fd)
