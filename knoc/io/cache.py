"""The on-disk cache under `.knoc-cache/` (gitignored; safe to delete).

It keeps two layers, so a check redoes only what an edit affects:

- per source (`sources-XX.bin`, 64 shards by path, so saving after a small
  edit rewrites a small file), what the one-file stages (load, validate,
  project) found, under the sha256 of its bytes, with its size and mtime
  so an untouched file is not even read (a file changed within two seconds
  of its shard's save is hashed anyway: git's "racily clean" rule);
- for the whole repo (`link.bin`), what the link stage (resolve, publish,
  index) found, under a key made of every source's link key. An edit that
  changes no entity's facts and no card's summary (say, description or
  skill text) reuses it. Its findings also pin the bytes of the files they
  point into, since their line numbers come from there. The files it
  rendered (the index, the catalog page: tens of megabytes at 100,000
  agents) are kept as they are in `files/`, named by their sha256, and read
  only when asked for: a check that finds them unchanged never does.

`outputs.bin` keeps the size, mtime and sha256 of each file under build/,
so an unchanged build/ is compared without reading it (as git's index
avoids rehashing the work tree).

Nothing is trusted blindly. Each file carries a checksum of its payload and
counts only for the same knoc code, A2A target and specs/ (the salt).
Anything corrupt, foreign or stale is dropped and rebuilt."""

from __future__ import annotations

import gc
import hashlib
import marshal
import os
import re
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from knoc.io.files import atomic_write, stat
from knoc.io.pool import collector_paused
from knoc.io.records import Record

DIR = ".knoc-cache"
MAGIC = b"knoc-cache 10\n"  # bump when the file layout changes; records carry their own versions
SHARDS = 64
FILES = "files"  # the link stage's rendered files, by sha256
_SHA256 = re.compile(r"[0-9a-f]{64}")
KEEP_NS = 600_000_000_000  # a stored file no link layer names is dropped once it is ten minutes old
RACY_NS = 2_000_000_000  # mtimes this close to a save are not trusted

# Per output file: (size, mtime_ns, sha256) as last written or read.
Stat = tuple[int, int, str]


@dataclass(slots=True)
class Source(Record):
    """One source as last compiled: its bytes' sha256, the stat fields that
    change when the file does (git's index keeps the same), and what the
    one-file stages found (their own record, encoded)."""

    VERSION: ClassVar[int] = 2

    digest: str
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    entry: Any

    @classmethod
    def of(cls, digest: str, st: os.stat_result, entry: Any) -> Source:
        return cls(digest, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, entry)

    def same_stat(self, st: os.stat_result) -> bool:
        return (self.size == st.st_size and self.mtime_ns == st.st_mtime_ns and self.ctime_ns == st.st_ctime_ns
                and self.inode == st.st_ino)


@dataclass(slots=True)
class Linked(Record):
    """The link stage's findings under the key of every source's link key,
    with the sha256 of each file its findings point into, and the files it
    rendered: the size, mtime and sha256 of each, by path, as stored in `files/`."""

    VERSION: ClassVar[int] = 2

    key: str
    pinned: dict[str, str]
    payload: Any
    files: dict[str, Stat] = field(default_factory=dict)

    @classmethod
    def _from_fields(cls, values: list[Any]) -> Linked:
        key, pinned, payload, files = values
        if not (isinstance(pinned, dict) and isinstance(files, dict)
                and all(isinstance(f, tuple) and len(f) == 3 and _SHA256.fullmatch(str(f[2])) for f in files.values())):
            raise ValueError("not a link layer")  # a stored name is a sha256, never a path elsewhere
        return cls(key, pinned, payload, files)


class CacheDamaged(Exception):
    """A stored file read too late to compute it afresh is not what was stored."""


class StoredFiles(Mapping[str, bytes]):
    """The link stage's files as the cache keeps them, each read when asked
    for and checked against its sha256. One that fails is removed, so the
    next run computes it afresh, and CacheDamaged is raised."""

    def __init__(self, folder: Path, files: dict[str, Stat]) -> None:
        self._folder, self._files = folder, files

    def __getitem__(self, path: str) -> bytes:
        blob = self._folder / self._files[path][2]
        try:
            data = blob.read_bytes()
        except OSError as exc:
            data, why = b"", exc.strerror
        else:
            why = "its bytes no longer match its sha256"
        if hashlib.sha256(data).hexdigest() != blob.name:
            blob.unlink(missing_ok=True)
            raise CacheDamaged(f"{DIR}/{FILES}/{blob.name} ({path}) is damaged: {why}")
        return data

    def __contains__(self, path: object) -> bool:  # Mapping's would read the file
        return path in self._files

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


@dataclass
class Cache:
    """Both layers. `folder` None means caching is off."""

    folder: Path | None
    salt: str = ""
    sources: dict[str, Source] = field(default_factory=dict)
    link: Linked | None = None
    dropped: str | None = None  # why a stored file was not used (the first one)
    _racy: set[str] = field(default_factory=set)  # sources stored with an mtime too near their save
    _stored: list[dict[str, Source]] = field(default_factory=lambda: [{} for _ in range(SHARDS)])
    _link_stored: Linked | None = None

    @classmethod
    def off(cls) -> Cache:
        return cls(None)

    @classmethod
    def open(cls, root: Path, salt: str) -> Cache:
        cache = cls(root / DIR, salt)
        for i in range(SHARDS):
            value = cache._load(f"sources-{i:02x}.bin")
            if value is not None:
                saved, stored = value
                shard = {rel: s for rel, raw in stored.items() if (s := Source.decode(raw)) is not None}
                cache._stored[i] = shard
                cache.sources.update(shard)
                cache._racy.update(rel for rel, v in shard.items() if v.mtime_ns > saved - RACY_NS)
        cache.link = cache._link_stored = Linked.decode(cache._load("link.bin"))
        return cache

    def _load(self, name: str) -> Any:
        """The value stored under this salt, or None (and why, in `dropped`)."""
        value, why = _read(self.folder / name)  # type: ignore[operator]
        expected = _shard_shape if name.startswith("sources-") else (lambda _: True)
        if value is not None and not (isinstance(value, tuple) and len(value) == 2 and expected(value[1])):
            value, why = None, "corrupt (unexpected shape)"
        elif value is not None and value[0] != self.salt:
            value, why = None, "stale (knoc version, A2A target or specs/ changed)"
        self.dropped = self.dropped or why
        return None if value is None else value[1]

    def vouches(self, rel: str, stored: Source, st: os.stat_result) -> bool:
        """Whether the file's bytes are those `stored` hashed: the same size,
        mtime, ctime and inode as then (a file swapped in by rename or
        restored with its old mtime differs in the last two), and that mtime
        old enough to be trusted."""
        return stored.same_stat(st) and rel not in self._racy

    def get(self, rel: str, digest: str) -> Any:
        hit = self.sources.get(rel)
        return hit.entry if hit is not None and hit.digest == digest else None

    def get_link(self, key: str, digests: dict[str, str]) -> tuple[Any, Mapping[str, bytes]] | None:
        """The link stage's findings and files stored under `key`, if the
        files its findings point into still have the bytes they had, and
        its own files are still as they were stored."""
        link = self.link
        if link is None or link.key != key or self.folder is None:
            return None
        if any(digests.get(rel) != sha for rel, sha in link.pinned.items()):
            return None
        for size, mtime, digest in link.files.values():
            st = stat(self.folder / FILES / digest)
            if st is None or (st.st_size, st.st_mtime_ns) != (size, mtime):
                return None
        return link.payload, StoredFiles(self.folder / FILES, link.files)

    def keep_link(self, key: str, pinned: dict[str, str], payload: Any, files: Mapping[str, bytes],
                  digests: Mapping[str, str]) -> Mapping[str, bytes]:
        """Keep the link stage's findings (`payload`, stored at the next save)
        and files (stored now, as they are, under their sha256). Returns the
        files to use from now on: read back from the cache when asked for,
        so the run need not hold them (over 100 MB at 100,000 agents), or
        `files` itself when the cache is off or cannot be written."""
        folder = self.folder
        stored = None if folder is None else self._store_files(files, digests)
        if folder is None or stored is None:  # nothing saved: a later run computes the layer again
            return files
        self.link = Linked(key, pinned, payload, stored)
        return StoredFiles(folder / FILES, stored)

    def save(self) -> None:
        """Write back the shards and the link layer that changed (sources
        that are gone drop out)."""
        if self.folder is None:
            return
        shards: list[dict[str, Source]] = [{} for _ in range(SHARDS)]
        for rel, value in self.sources.items():
            shards[_shard(rel)][rel] = value
        now = time.time_ns()
        for i, shard in enumerate(shards):
            old = self._stored[i]
            if shard.keys() != old.keys() or any(v is not old[k] for k, v in shard.items()):
                _write(self.folder / f"sources-{i:02x}.bin",
                       (self.salt, (now, {rel: v.encode() for rel, v in shard.items()})))
        if self.link is not self._link_stored and self.link is not None:
            _write(self.folder / "link.bin", (self.salt, self.link.encode()))

    def _store_files(self, files: Mapping[str, bytes], digests: Mapping[str, str]) -> dict[str, Stat] | None:
        """Write the link stage's files as they are (no copy into link.bin),
        and drop those neither this link layer nor the one it replaces names,
        once they are old enough that no other run still reads them. The
        size, mtime and sha256 of each as stored, by path; None if they
        could not be stored."""
        assert self.folder is not None
        store = self.folder / FILES
        if self.folder.is_symlink() or store.is_symlink():  # files are dropped in there: only in our own folder
            return None
        stored: dict[str, Stat] = {}
        try:
            for path, body in files.items():
                blob = store / digests[path]
                st = stat(blob)
                if st is None or st.st_size != len(body):
                    atomic_write(blob, body)
                    st = os.stat(blob)
                stored[path] = (st.st_size, st.st_mtime_ns, digests[path])
            kept = {d for _, _, d in stored.values()}
            kept |= {d for _, _, d in self._link_stored.files.values()} if self._link_stored else set()
            young = time.time_ns() - KEEP_NS  # another run may be about to read what it stored just now
            for old in store.iterdir():
                if _SHA256.fullmatch(old.name) and old.name not in kept and old.lstat().st_mtime_ns < young:
                    old.unlink(missing_ok=True)
        except OSError:  # best effort, as every write here (a read-only checkout still compiles)
            return None
        return stored


def _shard_shape(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict)


def _shard(rel: str) -> int:
    return zlib.crc32(rel.encode("utf-8")) % SHARDS


@dataclass
class Snapshot(Record):
    """A tree as knoc last wrote or read it: each file's (size, mtime, sha256)
    and each directory's mtime, by path relative to the tree ("" is its root)."""

    files: dict[str, Stat] = field(default_factory=dict)
    dirs: dict[str, int] = field(default_factory=dict)


@dataclass
class OutputMemo:
    """The snapshot of build/, kept between runs. `path` None: not kept."""

    path: Path | None
    snapshot: Snapshot = field(default_factory=Snapshot)

    @classmethod
    def open(cls, root: Path, enabled: bool = True) -> OutputMemo:
        if not enabled:
            return cls(None)
        memo = cls(root / DIR / "outputs.bin")
        value, _ = _read(memo.path)  # type: ignore[arg-type]
        snapshot = Snapshot.decode(value)
        if snapshot is not None and isinstance(snapshot.files, dict) and isinstance(snapshot.dirs, dict):
            memo.snapshot = snapshot
        return memo

    def update(self, snapshot: Snapshot) -> None:
        """Keep this snapshot, writing it only if it differs from the stored one."""
        if snapshot != self.snapshot and self.path is not None:
            _write(self.path, snapshot.encode())
        self.snapshot = snapshot


def salt(*parts: str) -> str:
    return hashlib.sha256("\0".join((code_fingerprint(), *parts)).encode("utf-8")).hexdigest()


def code_fingerprint() -> str:
    """knoc's own files by name, size and mtime: an install of other code
    under the same version number (a git checkout, an edited template) must
    not reuse what the old code found. Stat only; about a hundred files."""
    package = Path(__file__).resolve().parent.parent
    seen = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.suffix in {".py", ".j2", ".kno"}:
            st = path.stat()
            seen.update(f"{path.relative_to(package)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return seen.hexdigest()


def _read(path: Path) -> tuple[Any, str | None]:
    """The stored value, or None and why not."""
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"unreadable: {exc.strerror}"
    head = len(MAGIC) + 4
    payload = memoryview(blob)[head:]
    if not blob.startswith(MAGIC) or zlib.crc32(payload).to_bytes(4, "big") != blob[len(MAGIC):head]:
        return None, "corrupt (checksum mismatch)"
    # Loading makes a million objects and no cycles: pause the collector,
    # then move them out of its sight (it would rescan them on every pass).
    with collector_paused():
        try:
            return marshal.loads(payload), None
        except (EOFError, ValueError, TypeError):
            return None, "corrupt (unreadable payload)"
        finally:
            gc.freeze()


def _write(path: Path, value: Any) -> None:
    """Atomically. Best effort: a read-only checkout still compiles, uncached.
    The checksum is a CRC: it is there to catch damage, not an adversary
    (the cache is as trusted as the sources beside it)."""
    payload = marshal.dumps(value)
    try:
        path.parent.mkdir(exist_ok=True)
        ignore = path.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# written by knoc: this folder is a cache\n*\n", encoding="utf-8")
        atomic_write(path, MAGIC + zlib.crc32(payload).to_bytes(4, "big"), payload)
    except OSError:
        pass
