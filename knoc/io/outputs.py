"""The memo of build/ (`.knoc-cache/outputs.bin`): the size, ctime and
sha256 of each file and the ctime of each folder as knoc last wrote or read
them, so an unchanged tree is compared without being read (as git's index
avoids rehashing the work tree). The ctime, not the mtime: every write,
rename, link and utime sets it and no call sets it back, where `touch -r`,
`cp -p` or tar put an old mtime on new bytes (or on a folder given a new
entry). And the inode, as git's index keeps it too: two files of one size
written in the same clock tick share a ctime, and could trade places.

Two things keep a check of a large tree cheap:

- The memo is stored as columns in path order (a few long strings and
  arrays): at 180,000 files it loads in milliseconds, where a dict of
  tuples took a quarter of a second, and the scan compares against the
  columns without building one.
- It says which rendering its digests follow from: `base`, the token of
  the cache's rendered layer (`knoc.incremental.warm`), and `overrides`, the
  files whose sha256 differs from that rendering's. A scan then sends back
  only what differs from that base (`Seen`), and a check that compiled
  from the same rendering compares only those files and the few it
  patched, instead of sending and comparing every digest."""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from array import array
from collections.abc import ItemsView, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, TypeVar

from knoc.io import files
from knoc.io.cache import DIR, read_stored, write_stored
from knoc.io.cache_folder import usable
from knoc.rules.records import Encoded, Stored, count_paths, join_paths, paths_piece, row, split_paths, text, text_table

VERSION = 4
ROOT = "."  # the tree's own folder, as the memo names it (a lone "" would join to no path at all)
V = TypeVar("V")
GONE = ""  # an override's sha256 for a file that is not there
# A file of the tree as knoc last wrote or read it: (size, ctime, sha256, inode).
TreeStat = tuple[int, int, str, int]
NOT_A_FILE = "0" * 64  # the sha256 the scan gives a fifo or a device: one no file's bytes have
# ... and a file of a mode knoc never writes: executable (git commits that bit), set-id, or unreadable to its
# owner (a web server behind a copy of it could not serve it). A build writes it anew.
ODD_MODE = "1" * 64
REBASE_MOST = 1000  # overrides beyond which comparing every digest costs less than looking each up


@dataclass
class Snapshot:
    """A tree as knoc last wrote or read it: each file's `TreeStat` and
    each folder's ctime, by path relative to the tree (ROOT is the tree itself)."""

    files: dict[str, TreeStat] = field(default_factory=dict)
    dirs: dict[str, int] = field(default_factory=dict)


class Base(NamedTuple):
    """The rendering a tree's digests follow from: its token, every output's
    sha256 in it, the outputs whose sha256 may differ from it, and of
    those the ones whose sha256 surely does (known before it is computed).
    `parent`: the rendering this one was patched from and stored in place
    of (what build/'s memo still follows, until the build writes)."""

    token: str
    digests: Mapping[str, str]
    touched: frozenset[str] = frozenset()
    moved: frozenset[str] = frozenset()
    parent: Base | None = None

    def unlike(self) -> dict[str, str]:
        """Each moved output's sha256 in the base: one it no longer has."""
        return {p: self.digests[p] for p in self.moved}

    def overrides(self, digests: Mapping[str, str]) -> dict[str, str]:
        """Where `digests` (which follow from this base) differ from it."""
        return {p: d for p in self.touched if (d := digests.get(p, GONE)) != self.digests.get(p, GONE)}


class Seen(NamedTuple):
    """What a scan of build/ found, small enough to send back between
    processes: the memo's base, the memo's own overrides of it, and each
    file whose sha256 is not the memo's (GONE: no longer there)."""

    base: str
    overrides: dict[str, str]
    changed: dict[str, str]


class Columns:
    """A snapshot as stored: paths in order, with their stats side by side.
    The joined paths are split when first asked for: a scan of the files
    never needs the folders', and the other way round."""

    def __init__(self, paths: str, sizes: array[int], ctimes: array[int], inodes: array[int], digests: str,
                 dirs: str, dir_ctimes: array[int]) -> None:
        self._paths, self._dirs = paths, dirs
        self.sizes, self.ctimes, self.inodes, self.digests = sizes, ctimes, inodes, digests
        self.dir_ctimes = dir_ctimes

    @functools.cached_property
    def paths(self) -> list[str]:
        return split_paths(self._paths)

    @functools.cached_property
    def dirs(self) -> list[str]:
        return split_paths(self._dirs)

    def file_piece(self, k: int, pieces: int) -> tuple[slice, list[str]]:
        """The rows and paths of the `k`-th of `pieces` runs of the files
        (`paths_piece`: a scan's piece splits only its own paths)."""
        first, paths = paths_piece(self._paths, k, pieces)
        return slice(first, first + len(paths)), paths

    def dir_piece(self, k: int, pieces: int) -> tuple[slice, list[str]]:
        """The same of the folders."""
        first, dirs = paths_piece(self._dirs, k, pieces)
        return slice(first, first + len(dirs)), dirs

    @classmethod
    def of(cls, snapshot: Snapshot) -> Columns:
        paths, dirs = sorted(snapshot.files), sorted(snapshot.dirs)
        files = snapshot.files
        return cls(join_paths(paths), array("q", [files[p][0] for p in paths]),
                   array("q", [files[p][1] for p in paths]), array("q", [files[p][3] for p in paths]),
                   "".join(files[p][2] for p in paths), join_paths(dirs), array("q", [snapshot.dirs[d] for d in dirs]))

    def snapshot(self) -> Snapshot:
        stats = zip(self.sizes, self.ctimes, self.digest_list(), self.inodes, strict=True)
        return Snapshot(dict(zip(self.paths, stats, strict=True)), dict(zip(self.dirs, self.dir_ctimes, strict=True)))

    def stat_at(self, i: int) -> TreeStat:
        return self.sizes[i], self.ctimes[i], self.digests[64 * i:64 * i + 64], self.inodes[i]

    def digest_list(self) -> list[str]:
        return [self.digests[i:i + 64] for i in range(0, len(self.digests), 64)]

    def encode(self) -> Encoded:
        return (self._paths, self.sizes.tobytes(), self.ctimes.tobytes(), self.inodes.tobytes(), self.digests,
                self._dirs, self.dir_ctimes.tobytes())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Columns) and self.encode() == other.encode()

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def decode(cls, raw: Stored) -> Columns:
        paths, sizes, ctimes, inodes, digests, dirs, dir_ctimes = row(raw)
        out = cls(text(paths), _ints(sizes), _ints(ctimes), _ints(inodes), text(digests), text(dirs),
                  _ints(dir_ctimes))
        files, folders = count_paths(out._paths), count_paths(out._dirs)
        if not (files == len(out.sizes) == len(out.ctimes) == len(out.inodes) == len(out.digests) // 64
                and folders == len(out.dir_ctimes)):
            raise ValueError("columns of different lengths")
        return out


def _ints(raw: Stored) -> array[int]:
    if not isinstance(raw, bytes):
        raise ValueError("not a column of numbers")
    values = array("q")
    values.frombytes(raw)
    return values


EMPTY = Columns("", array("q"), array("q"), array("q"), "", "", array("q"))


@dataclass
class OutputMemo:
    """The memo of build/, kept between runs. `path` None: not kept.
    `owned`: every file it lists is one a knoc build wrote there (a tree
    it wrote, as scans have followed it since), so the next build need not
    list the tree and read its manifest to know it may replace it."""

    path: Path | None
    columns: Columns = field(default_factory=lambda: EMPTY)
    base: str = ""
    overrides: dict[str, str] = field(default_factory=dict)
    owned: bool = False

    @classmethod
    def open(cls, root: Path, enabled: bool = True) -> OutputMemo:
        if not enabled or not usable(root):
            return cls(None)
        memo = cls(root / DIR / "outputs.bin")
        value, _ = read_stored(memo.path)  # type: ignore[arg-type]
        try:
            version, base, overrides, owned, raw = row(value)
            if version == VERSION and isinstance(owned, bool):
                memo.columns, memo.base, memo.overrides = Columns.decode(raw), text(base), text_table(overrides)
                memo.owned = owned
        except (TypeError, ValueError):
            pass  # damaged or of another version: as if there were none
        return memo

    @property
    def snapshot(self) -> Snapshot:
        return self.columns.snapshot()

    def digests(self) -> dict[str, str]:
        """Each file's sha256, by path."""
        return dict(zip(self.columns.paths, self.columns.digest_list(), strict=True))

    def seen(self, changed: dict[str, str]) -> Seen:
        return Seen(self.base, self.overrides, changed)

    def update(self, snapshot: Snapshot, changed: Mapping[str, str]) -> None:
        """Keep what a scan found: `snapshot`, in which `changed` (each file
        whose stat changed since the memo, with its sha256) override the base."""
        if changed:
            self.overrides = {**self.overrides, **changed}
        if self.owned and snapshot.files.keys() - set(self.columns.paths):
            self.owned = False  # a file knoc did not write
        self._keep(Columns.of(snapshot), bool(changed))

    def rebased(self, base: Base, digests: Mapping[str, str]) -> None:
        """Follow from the rendering `base` from now on, if the tree differs
        from it in at most REBASE_MOST files (a check that compiled afresh:
        its next run then compares only those). `digests`: the memo's own."""
        if self.path is None or not base.token:
            return
        overrides = {p: digests.get(p, GONE) for p, _ in digests.items() ^ base.digests.items()}
        if len(overrides) > REBASE_MOST:
            return
        self.base, self.overrides = base.token, overrides
        self._keep(self.columns, True)

    def written(self, columns: Columns, digests: Mapping[str, str], base: Base | None) -> None:
        """Keep the tree a build just wrote, with these `digests`, from the
        rendering `base` (None: from none the cache keeps)."""
        self.base, self.overrides = ("", {}) if base is None else (base.token, base.overrides(digests))
        self.owned = True
        self._keep(columns, True)

    def _keep(self, columns: Columns, changed: bool) -> None:
        if (changed or columns != self.columns) and self.path is not None:
            write_stored(self.path, (VERSION, self.base, self.overrides, self.owned, columns.encode()))
        self.columns = columns


class Overlay(Mapping[str, str]):
    """Digests by path as `base` has them, but for `changed` (GONE: not there)."""

    def __init__(self, base: Mapping[str, str], changed: Mapping[str, str]) -> None:
        self._base, self._changed = base, changed

    def __getitem__(self, path: str) -> str:
        digest = self._changed.get(path)
        if digest is None:
            return self._base[path]
        if digest == GONE:
            raise KeyError(path)
        return digest

    def __contains__(self, path: object) -> bool:
        digest = self._changed.get(path)  # type: ignore[call-overload]
        return path in self._base if digest is None else digest != GONE

    def flat(self) -> dict[str, str]:
        """The same as a plain dict (compared in C, where every file counts)."""
        flat = dict(self._base.items())
        for path, digest in self._changed.items():
            if digest == GONE:
                flat.pop(path, None)
            else:
                flat[path] = digest
        return flat

    def items(self) -> ItemsView[str, str]:
        return self.flat().items()

    def __iter__(self) -> Iterator[str]:
        yield from (p for p in self._base if self._changed.get(p) != GONE)
        yield from (p for p, d in self._changed.items() if d != GONE and p not in self._base)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def fresh(base: str, rel: str, known: TreeStat | None) -> TreeStat:
    """A file's `TreeStat`, hashed only if `known` is not its stat. A link
    is never followed: it is not a file knoc wrote."""
    st = os.lstat(base + rel)
    if known is not None and seen_as(st, known) and stat.S_ISREG(st.st_mode):
        return known
    if not stat.S_ISREG(st.st_mode):  # a link, a FIFO or a device: drift, never read
        return (st.st_size, st.st_ctime_ns, NOT_A_FILE, st.st_ino)
    if st.st_mode & 0o7111 or not st.st_mode & stat.S_IRUSR:
        return (st.st_size, st.st_ctime_ns, ODD_MODE, st.st_ino)
    with files.opened(base + rel, follow=False) as f:  # hashed a piece at a time: agents.js is 100 MB at 100,000 agents
        return (st.st_size, st.st_ctime_ns, hashlib.file_digest(f, "sha256").hexdigest(), st.st_ino)


def seen_as(st: os.stat_result, known: TreeStat) -> bool:
    """Whether a file's stat is the one `known` was taken with."""
    return (st.st_size, st.st_ctime_ns, st.st_ino) == (known[0], known[1], known[3])


# What a stat of each file gives the memo's columns, side by side (`files.stats`).
STAT_FIELDS = ("st_size", "st_ctime_ns", "st_ino")
