"""Files of the content repo: listing and reading sources, and writing
files so that a crash never leaves one half-written."""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import operator
import os
import shutil
import stat as stat_
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from io import BufferedReader
from pathlib import Path
from typing import NamedTuple

from knoc.rules import limits
from knoc.rules.text import escaped, unshown

SOURCE_SUFFIX = ".kno"


class Exists(Exception):
    """The file to write is already there (and replacing it was not asked for)."""


class Refused(OSError):
    """A file knoc will not read: not a regular file, a link leaving the
    repo, or over its size limit."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


def discover(root: Path, dirs: list[str]) -> list[str]:
    """Repo-relative paths (forward slashes) of every source file under
    `dirs`, sorted (`listed`, without what it refuses)."""
    return listed(root, dirs).found


class Listing(NamedTuple):
    found: list[str]  # source paths, sorted
    folders: list[tuple[str, int]]  # each folder listed, with its ctime read before it was listed
    refused: list[tuple[str, str]]  # (path as shown, why) of what is there but not read


def listed(root: Path, dirs: list[str]) -> Listing:
    """The sources under `dirs` (files ending in .kno), and each folder
    listed with its ctime, read before it was listed (so a file added
    meanwhile changes it). Hidden folders (`.git`, an editor's) are skipped.
    A link to a folder inside the repo is followed, once its target is not a
    folder listed already (the real folders are listed first, so which path
    a folder is read under never depends on the order of a listing); any
    other link to a folder, a link to nothing, a folder that cannot be
    listed, a `.KNO` name and a name that is not UTF-8 or holds a character
    no terminal shows (a line break, an escape) are refused, never
    dropped without a word."""
    found: list[str] = []
    folders: list[tuple[str, int]] = []
    refused: list[tuple[str, str]] = []
    real_root = os.path.realpath(root)
    seen: set[str] = set()  # the real paths of the folders listed
    for d in dirs:
        pending, links = [Path(d).as_posix()], list[str]()
        if not (root / d).is_dir():  # what creates it changes the folder above's ctime
            pending, above = [], Path(d).parent
            while not (root / above).is_dir() and above != above.parent:  # `.` is its own parent
                above = above.parent
            with contextlib.suppress(OSError):
                folders.append((above.as_posix(), os.stat(root / above).st_ctime_ns))
        while pending or links:
            if not pending:  # every real folder is listed: now the links, in order
                link = links.pop(0)
                target = os.path.realpath(f"{root}/{link}")
                if not within(target, real_root):
                    refused.append((link, "a link to a folder outside the repo: copy the folder in, or remove "
                                          "the link"))
                elif target in seen:
                    refused.append((link, "a link to a folder knoc already reads (a loop, or a second path to "
                                          "it): remove the link"))
                else:
                    pending.append(link)
                continue
            rel = pending.pop()
            try:
                ctime = os.stat(f"{root}/{rel}").st_ctime_ns
                real = os.path.realpath(f"{root}/{rel}")
                with os.scandir(f"{root}/{rel}") as listing:
                    entries = list(listing)
            except FileNotFoundError:  # gone since it was listed
                continue
            except OSError as exc:  # there, but not to be listed: never a silent drop
                refused.append((rel, f"the folder cannot be listed ({exc.strerror}): fix its permissions"))
                continue
            seen.add(real)
            folders.append((rel, ctime))
            # A hundred thousand sources in one folder: comprehensions, not
            # a loop, and a type read from the listing unless only a stat tells.
            try:
                subfolders = {e.name for e in entries if e.is_dir()}
            except OSError:
                subfolders = {e.name for e in entries if _is_dir(e)}
            if not all(e.name.isascii() and e.name.isprintable() for e in entries):  # else: each looked at
                entries = _showable_names(rel, entries, refused)
            found += [f"{rel}/{e.name}" for e in entries
                      if e.name.endswith(SOURCE_SUFFIX) and e.name not in subfolders]
            refused += [(f"{rel}/{e.name}", f"only names ending in {SOURCE_SUFFIX} (lowercase) are sources: "
                                            "rename it") for e in entries
                        if e.name.lower().endswith(SOURCE_SUFFIX) and not e.name.endswith(SOURCE_SUFFIX)]
            refused += [(f"{rel}/{e.name}", "a link to nothing: remove it, or restore what it points to")
                        for e in entries if e.is_symlink() and not e.name.endswith(SOURCE_SUFFIX)
                        and e.name not in subfolders and not os.path.exists(e.path)]
            inside = [e for e in entries if e.name in subfolders and not e.name.startswith(".")]
            pending += [f"{rel}/{e.name}" for e in inside if not e.is_symlink()]
            links += sorted(f"{rel}/{e.name}" for e in inside if e.is_symlink())
    return Listing(sorted(found), folders, sorted(refused))


def _showable_names(rel: str, entries: list[os.DirEntry[str]],
                    refused: list[tuple[str, str]]) -> list[os.DirEntry[str]]:
    """The entries whose names are UTF-8 text a terminal shows as it is; the
    others are refused (a name that is not UTF-8 cannot be shown, compared
    or written into JSON; one holding a line break, an escape or another
    character no terminal shows would forge or hide lines of a message)."""
    kept = []
    for e in entries:
        try:
            e.name.encode("utf-8")
        except UnicodeEncodeError:
            shown = e.name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            refused.append((f"{rel}/{shown}", "its name is not UTF-8: rename it"))
            continue
        hidden = unshown(e.name)
        if hidden is not None:
            refused.append((f"{rel}/{escaped(e.name)}", f"its name holds {hidden}, a character no terminal shows "
                                                        "as it is: rename it"))
            continue
        kept.append(e)
    return kept


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def read_bytes(path: str | Path, most: int = -1, follow: bool = True) -> bytes:
    """A regular file's bytes, or its first `most` (OSError when it cannot
    be read, Refused when it is not a regular file; `follow`: nor a link)."""
    with opened(path, follow) as f:
        return f.read(most)


@contextmanager
def opened(path: str | Path, follow: bool = True) -> Iterator[BufferedReader]:
    """A regular file open to read (`follow`: a symlink to one too). Opened
    without waiting: a FIFO put where a file was (in build/, say) would
    otherwise block knoc forever."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags if follow else flags | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat_.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(f"{path} is not a regular file (a FIFO, socket or device)", "remove it")
        yield f


def source_refusal(path: str, root: str) -> Refused | None:
    """Why `read_source` would refuse the file at `path` whatever it holds
    (a link out of `root`, not a regular file), without reading it; None
    when it would not, or nothing is there."""
    try:
        st = os.lstat(path)
        if stat_.S_ISLNK(st.st_mode):
            if not within(os.path.realpath(path), os.path.realpath(root)):
                return _linked_out()
            st = os.stat(path)
    except OSError:
        return None
    return None if stat_.S_ISREG(st.st_mode) else _not_regular()


def _linked_out() -> Refused:
    return Refused("the file is a link to a file outside the repo", "copy the file into the repo, or remove the link")


def _not_regular() -> Refused:
    return Refused("not a regular file (a folder, FIFO, socket or device)",
                   "sources are plain files: remove it, or rename it so it does not end in .kno")


def read_source(path: str, root: str | None = None, limit: int = limits.SOURCE_BYTES) -> bytes:
    """The bytes of a source file: only a regular file (a FIFO would block
    forever, /dev/zero never ends), only inside `root` once links are
    followed, and at most `limit` bytes. OSError when it cannot be read,
    Refused when it must not be."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:  # the common case, a plain file, costs no extra call
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        if root is not None and not within(os.path.realpath(path), os.path.realpath(root)):
            raise _linked_out() from None
        fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat_.S_ISREG(st.st_mode):
            raise _not_regular()
        if root is not None and not _opened_within(fd, root):
            raise _linked_out()
        if st.st_size > limit:
            raise too_large(st.st_size, limit)
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:  # it grew while being read
                raise Refused(f"the file has more than {limit:,} bytes", "split the entity")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _opened_within(fd: int, root: str) -> bool:
    """Whether the file at `fd` lies in `root` where the kernel found it: a folder swapped for a link out
    of the repo after the listing (O_NOFOLLOW guards only the last step). Without /proc: as listed."""
    try:
        return within(os.readlink(f"/proc/self/fd/{fd}"), _real(root))
    except OSError:
        return True


_real = functools.lru_cache(maxsize=16)(os.path.realpath)


def too_large(size: int, limit: int = limits.SOURCE_BYTES) -> Refused:
    """Why a source of `size` bytes is not read."""
    return Refused(f"the file is {size:,} bytes; a source may have at most {limit:,}",
                   "split the entity, or move large text out of it")


def resource(package: str, name: str) -> bytes:
    """A data file shipped inside a knoc package (a descriptor, a template)."""
    from importlib import resources

    return resources.files(package).joinpath(name).read_bytes()


def unlinked(top: Path, rel: str) -> str | None:
    """What lies at `rel` under `top`, reached without following any link
    (`top` included): "file", "folder", or None (missing, a link on the
    way, or anything else). What `knoc serve` may send."""
    here = top
    for part in ["", *[p for p in rel.split("/") if p]]:
        here = here / part if part else here
        try:
            mode = os.lstat(here).st_mode
        except OSError:
            return None
        if stat_.S_ISLNK(mode):
            return None
    return "file" if stat_.S_ISREG(mode) else "folder" if stat_.S_ISDIR(mode) else None


def within(path: str, root: str) -> bool:
    """Whether `path` is `root` or lies below it (both already resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def dangling(path: Path) -> bool:
    """Whether `path` is a link to nothing."""
    return path.is_symlink() and not path.exists()


def is_link(path: Path) -> bool:
    return path.is_symlink()


def present(path: Path) -> bool:
    """Whether anything is at `path`, a link (even a dangling one) included."""
    return os.path.lexists(path)


def is_file(path: Path) -> bool:
    return path.is_file()


def first_below(folder: Path, names: tuple[str, ...], repo: Path) -> Path | None:
    """The first entry called one of `names` (of any kind) below `folder`,
    in name order, following links to folders inside `repo` as a listing of
    the repo does (each folder once); None if there is none."""
    inside, seen = str(repo.resolve()), set()
    for top, dirs, found in os.walk(folder, followlinks=True):
        hit = next((n for n in names if n in found or n in dirs), None)
        if hit is not None:
            return Path(top, hit)
        kept = []
        for name in sorted(dirs):
            real = os.path.realpath(os.path.join(top, name))
            if within(real, inside) and real not in seen:
                seen.add(real)
                kept.append(name)
        dirs[:] = kept
    return None


def is_dir(path: Path) -> bool:
    return path.is_dir()


def stats(paths: Iterable[str], fields: tuple[str, ...], stat_one: Callable[[str], os.stat_result] = os.stat
          ) -> array[int] | None:
    """These fields of each path's stat, side by side in one array; None if
    one is not there. The loop runs in C (map, attrgetter): on 100,000
    paths, Python's own loop would cost a third as much again as the stats."""
    try:
        return array("q", itertools.chain.from_iterable(map(operator.attrgetter(*fields), map(stat_one, paths)))
                     if len(fields) > 1 else map(operator.attrgetter(fields[0]), map(stat_one, paths)))
    except OSError:
        return None


def differing_rows(a: array[int], b: array[int], width: int = 1) -> list[int]:
    """The rows (of `width` values) where two arrays of the same length
    differ, found by halving with C comparisons: a few changed rows among
    hundreds of thousands cost a few hundred comparisons."""
    rows: list[int] = []
    pending = [(0, len(a) // width)]
    while pending:
        lo, hi = pending.pop()
        if a[lo * width:hi * width] == b[lo * width:hi * width]:
            continue
        if hi - lo == 1:
            rows.append(lo)
        else:
            mid = (lo + hi) // 2
            pending += [(mid, hi), (lo, mid)]
    return sorted(rows)


@contextmanager
def stat_in(folder: Path, follow: bool = True) -> Iterator[Callable[[str], os.stat_result]]:
    """`os.stat` of paths relative to `folder`, through an open descriptor
    of it: the kernel walks a path from there, not from `/`, and a hundred
    thousand stats cost a tenth less. Without `follow`, a link is stat'ed
    itself (as `lstat` does)."""
    if os.stat not in os.supports_dir_fd:
        yield lambda rel: os.stat(f"{folder}/{rel}", follow_symlinks=follow)
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        yield functools.partial(os.stat, dir_fd=fd, follow_symlinks=follow)
    finally:
        os.close(fd)


def stat(path: str | Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def atomic_write(path: Path, *data: bytes, pieces: Iterable[bytes | memoryview] = ()) -> None:
    """Write aside, then rename over: readers see the old file or the new
    one, never a part (the one definition of an atomic file write). Given
    several pieces (`data`, then `pieces` as they come), writes them in
    turn: joining a large payload first would hold it twice."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            for piece in itertools.chain(data, pieces):
                f.write(piece)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def scratch_copy(root: Path, parts: list[str]) -> Iterator[Path]:
    """A throwaway copy of `parts` (folders or files) of `root`, removed on exit."""
    with tempfile.TemporaryDirectory(prefix="knoc-scratch-") as tmp:
        scratch = Path(tmp)
        for part in parts:
            src = root / part
            if src.is_dir():
                shutil.copytree(src, scratch / part)
            elif src.is_file():
                shutil.copy(src, scratch / part)
        yield scratch
