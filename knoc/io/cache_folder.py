"""Whether knoc uses the cache folder, `.knoc-cache/`, in a repo: only
one of its own, made on this machine and not committed. Results are found
by each source's sha256, and a checksum guards against damage, not an
adversary, so a cache anyone else could have written is never read."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import stat
from pathlib import Path

from knoc.io import git
from knoc.io.stored_value import OWNER, create_in, mark

DIR = ".knoc-cache"
FILES = "files"  # the files the layers rendered, by sha256 (`knoc.io.stored`)


def usable(root: Path) -> bool:
    """Whether knoc reads and writes `.knoc-cache/` in this repo: a folder
    of its own, not a link (knoc writes only there), nothing in it
    committed (`committed`), and made here (`_here`): `unused` says why not."""
    return unused(root) is None


def _here(folder: Path) -> bool:
    """Whether `folder` is none yet, or the one knoc made on this machine:
    marked with its own device and inode (`OWNER`). Results are found by
    each source's sha256, and a checksum guards against damage, not an
    adversary: a cache folder unpacked, cloned, copied or restored from
    elsewhere is a new folder, whose files anyone could have written. It
    is emptied of the files knoc names, unread (`_unlink_files`), and marked; the run
    compiles every file. The check and the emptying go through the folder
    opened once, never through a link, and read no file but a small
    regular one. (What the run writes later goes by path: see the cache
    guide on a folder swapped meanwhile.)"""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return not os.path.lexists(folder)  # none yet: made, and marked, when first written
    except OSError:  # a link, a file, a FIFO: not a folder of knoc's own
        return False
    try:
        mine = mark(os.fstat(fd))
        if _owner(fd) == mine:
            return True
        _unlink_files(fd)
        inner = os.open(FILES, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        try:
            _unlink_files(inner, f"{DIR}/{FILES}/")
        finally:
            os.close(inner)
        create_in(fd, OWNER, mine)
        return True
    except FileNotFoundError:  # no `files/`: what was there is gone all the same
        create_in(fd, OWNER, mine)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


# The names knoc writes in `.knoc-cache/` and `files/`, and the temporary ones it writes them by (mkstemp's).
# Whatever its case (in ASCII): a file system that folds case opens `LINK.BIN` as `link.bin`. (`files` too, when
# it is no folder.)
_OWN_NAME = re.compile(r"\.?(?:owner|\.gitignore|files|(?:link|listing|outputs|rendered|sources-[0-9a-f]{2})\.bin"
                       r"|[0-9a-f]{64}|pieces)(?:\.\w{8})?", re.I | re.A)


def _unlink_files(fd: int, where: str = f"{DIR}/") -> None:
    """Remove every entry of the folder open at `fd` (`where`, as an error
    names it) that bears a name knoc writes and is no folder (links
    themselves, never what they lead to). Folders stay, and are never
    descended into, and so do files of other names: knoc reads only its own
    names, all files, and a folder could be another file system mounted there."""
    for entry in os.scandir(fd):
        if _OWN_NAME.fullmatch(entry.name) and not entry.is_dir(follow_symlinks=False):
            try:
                os.unlink(entry.name, dir_fd=fd)
            except OSError as exc:
                exc.filename = where + entry.name
                raise


def clear(root: Path) -> list[str] | None:
    """Remove `.knoc-cache/`, as `knoc clean` does: the files of knoc's
    names in it and in `files/`, then each folder left empty (a link in
    its place is removed itself). What is not knoc's stays: returns its
    names (a file that stands where the folder would, as `.knoc-cache`
    itself), [] when all is gone, None when there was nothing."""
    folder = root / DIR
    if not os.path.lexists(folder):
        return None
    if folder.is_symlink():
        os.unlink(folder)
        return []
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except NotADirectoryError:
        return [DIR]
    left: list[str] = []
    try:
        _unlink_files(fd)
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            inner = os.open(FILES, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            try:
                _unlink_files(inner, f"{DIR}/{FILES}/")
                left = _names(inner, f"{FILES}/")
            finally:
                os.close(inner)
            if not left:
                os.rmdir(FILES, dir_fd=fd)
        left = sorted(left + [name for name in _names(fd, "") if name != f"{FILES}/" or not left])
    finally:
        os.close(fd)
    if not left:
        os.rmdir(folder)
    return [f"{DIR}/{name}" for name in left]


def _names(fd: int, prefix: str) -> list[str]:
    """The entries of the folder open at `fd`, each folder's with its `/`."""
    return [prefix + e.name + ("/" if e.is_dir(follow_symlinks=False) else "") for e in os.scandir(fd)]


def _owner(fd: int) -> bytes | None:
    """What `OWNER` holds in the folder open at `fd`, if it is a small regular file."""
    try:
        owner = os.open(OWNER, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    except OSError:
        return None
    try:
        return os.read(owner, 64) if stat.S_ISREG(os.fstat(owner).st_mode) else None
    finally:
        os.close(owner)


def unused(root: Path) -> tuple[str, str] | None:
    """Why `.knoc-cache/` is not used here, and what to do: git tracks it,
    something else stands in its place, or it is not this machine's and
    could not be emptied (read-only, another user's, a mount inside)."""
    folder = root / DIR
    if os.path.lexists(folder) and (folder.is_symlink() or not folder.is_dir()):
        return f"{DIR} is a link or a file, not a folder of knoc's own", "remove it"
    if committed(root):
        return f"git tracks files in {DIR}/, which anyone can commit", f"untrack it: `git rm -r --cached {DIR}`"
    if not _here(folder):
        return (f"{DIR}/ was not made by knoc on this machine, and could not be emptied (read-only, another "
                "user's, or a file system mounted inside)", "remove it, or run `knoc clean --cache-only`")
    return None


def committed(root: Path) -> bool:
    """Whether git tracks a file in `.knoc-cache/`. A committed cache is
    anyone's: its results, found by each source's sha256, could be forged
    to give a build and a check what no source says."""
    return (root / DIR).is_dir() and _tracked(root.resolve())


@functools.lru_cache(maxsize=16)
def _tracked(root: Path) -> bool:  # once per run: the listing, the cache and the memo of build/ each ask
    return git.tracks(root, DIR)
