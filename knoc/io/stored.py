"""Files the cache keeps as they are, in `.knoc-cache/files/`, each named by
its sha256: the large outputs a layer rendered (the index, the catalog
page, the manifest: tens of megabytes at 100,000 agents), read only when a
run asks for them. A check that finds them unchanged never does."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable

from knoc.io.files import Refused, atomic_write, opened, stat

SHA256 = re.compile(r"[0-9a-f]{64}")
PIECE = 1 << 20  # bytes handed on at a time: copied (StoredFiles.write_to), joined (canonical.joined_pieces)
KEEP_NS = 600_000_000_000  # a stored file no layer names is dropped once it is ten minutes old

# Per file: (size, ctime_ns, sha256) as last written or read (the ctime: knoc.io.outputs says why).
Stat = tuple[int, int, str]
Vouched = Mapping[str, tuple[int, int]]  # the (size, ctime) a layer kept of each stored file, by name

Parts = list[bytes | memoryview]  # a file as the pieces it joins to, in order (written in turn, never joined)


class CacheDamaged(Exception):
    """A stored file read too late to compute it afresh is not what was
    stored. `dropped`: whether it was dropped (the next run then computes
    it afresh); a value that passed the file's checks and still does not
    unpack is not, and the cache is the user's to delete."""

    def __init__(self, message: str, dropped: bool = True) -> None:
        super().__init__(message)
        self.dropped = dropped


@runtime_checkable
class Streams(Protocol):
    """Files some of which can be copied into a file without being held
    whole: `write_to` says whether it did (False: read the bytes)."""

    def write_to(self, path: str, fd: int) -> bool: ...


class StoredFiles(Mapping[str, bytes]):
    """Stored files by output path, each read when asked for and checked
    against its sha256. One that fails is removed, so the next run
    computes it afresh, and CacheDamaged is raised."""

    def __init__(self, folder: Path, files: dict[str, Stat], shown: str) -> None:
        self._folder, self._files, self._shown = folder, files, shown

    def stats(self, folder: Path) -> dict[str, Stat] | None:
        """Each file's stat as stored, if they are stored in `folder`."""
        return self._files if folder == self._folder else None

    def __getitem__(self, path: str) -> bytes:
        return b"".join(self.pieces(path, self._files[path][0] + 1))  # one piece: read once, never copied

    def write_to(self, path: str, fd: int) -> bool:
        """Copy the stored file into `fd` a piece at a time, checked as it
        goes: the catalog page of 100,000 agents is never held whole. (A
        failure to write is the output's, a full disk say: raised as it is.)"""
        for piece in self.pieces(path):
            left = memoryview(piece)
            while left:
                left = left[os.write(fd, left):]
        return True

    def pieces(self, path: str, piece: int = PIECE) -> Iterator[bytes]:
        """The stored file a piece at a time, then CacheDamaged (and the file
        dropped) if it is not what was stored. Opened only as a regular file
        and never through a link (`.knoc-cache` is the repo's too: a FIFO
        there would block, a link read another file), and read no further
        than one byte past its stored size."""
        size, _, digest = self._files[path]
        blob, seen, why = self._folder / digest, hashlib.sha256(), None
        try:
            with opened(blob, follow=False) as f:
                left = size + 1
                while left and (part := f.read(min(piece, left))):
                    left -= len(part)
                    seen.update(part)
                    yield part
        except Refused:
            why = "it is not a regular file"
        except OSError as exc:
            why = exc.strerror
        if why is None and seen.hexdigest() != digest:
            why = "its bytes no longer match its sha256"
        if why is not None:
            blob.unlink(missing_ok=True)
            raise CacheDamaged(f"{self._shown}/{blob.name} ({path}) is damaged: {why}")

    def __contains__(self, path: object) -> bool:  # Mapping's would read the file
        return path in self._files

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


def unchanged(folder: Path, files: dict[str, Stat]) -> bool:
    """Whether every stored file still has the size and ctime it was stored with."""
    for size, ctime, digest in files.values():
        st = stat(folder / digest)
        if st is None or (st.st_size, st.st_ctime_ns) != (size, ctime):
            return False
    return True


class PieceWriter:
    """One file stored as its pieces are written, hashed as they come, then
    named by that sha256 (`close`). OSError from any call if it cannot be
    (`folder` a link, say: only in a folder of our own); `abort` then."""

    def __init__(self, folder: Path, vouched: Vouched | None = None) -> None:
        if folder.is_symlink():
            raise OSError(f"{folder} is a link")
        folder.mkdir(exist_ok=True)
        self._folder, self._vouched = folder, vouched or {}
        fd, self._tmp = tempfile.mkstemp(prefix=".pieces.", dir=folder)
        self._file = os.fdopen(fd, "wb")
        self._seen = hashlib.sha256()

    def write(self, piece: bytes) -> None:
        self._seen.update(piece)
        self._file.write(piece)

    def close(self) -> Stat:
        """The file stored: its size, ctime and sha256."""
        try:
            self._file.close()
            blob = self._folder / self._seen.hexdigest()
            if _holds(blob, os.stat(self._tmp).st_size, self._vouched.get(blob.name)):
                Path(self._tmp).unlink()
            else:
                os.replace(self._tmp, blob)
            st = os.stat(blob)
        except BaseException:
            self.abort()
            raise
        return st.st_size, st.st_ctime_ns, blob.name

    def abort(self) -> None:
        self._file.close()
        Path(self._tmp).unlink(missing_ok=True)


def store(folder: Path, files: Mapping[str, bytes], digests: Mapping[str, str], keep: set[str],
          vouched: Vouched | None = None) -> dict[str, Stat] | None:
    """Write `files` as they are (unless one stored so already holds them), and
    drop the stored files that are not in `keep` once they are old enough
    that no other run still reads them. The size, ctime and sha256 of each as
    stored, by path; None if they could not be stored, or `folder` is a
    link (files are dropped in there: only in a folder of our own)."""
    if folder.is_symlink():  # (the cache folder itself is never a link: Cache.open)
        return None
    stored: dict[str, Stat] = {}
    try:
        for path, body in files.items():
            stored[path] = _store_one(folder, body, digests[path], (vouched or {}).get(digests[path]))
        keep = keep | {d for _, _, d in stored.values()}
        young = time.time_ns() - KEEP_NS  # another run may be about to read what it stored just now
        for old in folder.iterdir():
            if SHA256.fullmatch(old.name) and old.name not in keep and old.lstat().st_mtime_ns < young:
                old.unlink(missing_ok=True)
    except OSError:  # best effort, as every write to the cache (a read-only checkout still compiles)
        return None
    return stored


def store_one(folder: Path, body: bytes | Parts, digest: str, vouched: tuple[int, int] | None = None
              ) -> Stat | None:
    """Write one file under its sha256 (unless one stored so already holds it): its size,
    ctime and sha256; None if it cannot be, or `folder` is a link. `body`:
    its bytes, or its parts."""
    if folder.is_symlink():
        return None
    try:
        folder.mkdir(exist_ok=True)
        return _store_one(folder, body, digest, vouched)
    except OSError:
        return None


def _store_one(folder: Path, body: bytes | Parts, digest: str, vouched: tuple[int, int] | None) -> Stat:
    blob = folder / digest
    parts = [body] if isinstance(body, bytes) else body
    if not _holds(blob, sum(map(len, parts)), vouched):
        atomic_write(blob, pieces=parts)
    st = os.stat(blob)
    return st.st_size, st.st_ctime_ns, digest


def _holds(blob: Path, size: int, vouched: tuple[int, int] | None) -> bool:
    """Whether a stored file is there with the bytes its name (their sha256)
    says, and `size` of them: its name says what it held, not what it holds,
    so it is read to see, unless it has the size and ctime a layer kept of
    it (`vouched`). One that does is kept as it is (its ctime unmoved)."""
    st = stat(blob)
    if st is None or st.st_size != size:
        return False
    if vouched is not None and (st.st_size, st.st_ctime_ns) == vouched:
        return True
    try:
        with opened(blob, follow=False) as f:
            return hashlib.file_digest(f, "sha256").hexdigest() == blob.name
    except (OSError, Refused):
        return False
