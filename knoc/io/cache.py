"""The on-disk cache under `.knoc-cache/` (gitignored; safe to delete).

It keeps three layers, so a check redoes only what an edit affects, each
read only when a run needs it:

- per source (`sources-XX.bin`, 64 shards by path, so saving after a small
  edit rewrites a small file), what the one-file stages (load, validate,
  project) found, under the sha256 of its bytes, with its size, mtime,
  ctime and inode so an untouched file is not even read (a file changed within two seconds
  of its shard's save is hashed anyway: git's "racily clean" rule);
- for the whole repo (`link.bin`), what the link stage (resolve, publish,
  index) found, under a key made of every source's link key. An edit that
  changes no entity's facts and no card's summary (say, description or
  skill text) reuses it. Its findings also pin the bytes of the files they
  point into, since their line numbers come from there. The files it
  rendered (the index, the catalog page: tens of megabytes at 100,000
  agents) are kept as they are in `files/`, named by their sha256, and read
  only when asked for: a check that finds them unchanged never does;
- what the last run rendered (`rendered.bin`: every output's sha256, the
  sources' stats, the whole-repo files it joined), so a run after a small
  edit patches that instead of reading every source's entry
  (`knoc.incremental.warm`).

`outputs.bin`, the memo of build/, is `knoc.io.outputs`'s.

Each file carries a checksum of its payload and counts only for the same
knoc code, A2A target, primary cards, catalog url and specs/ (the salt):
anything corrupt, of another version or stale is dropped and rebuilt. The
cache is this machine's own: a cache folder made elsewhere is emptied
unread (`_here`), and one git tracks is not used (`usable`)."""

from __future__ import annotations

import os
import tempfile
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, NoReturn

from knoc.io import stored
from knoc.io.cache_folder import DIR, FILES, usable
from knoc.io.cached import Layer, Source
from knoc.io.stored import CacheDamaged, Stat, StoredFiles
from knoc.io.stored_value import read_stored, ready, write_stored
from knoc.rules.records import UNREADABLE, Encoded, Encodes, Stored, number, row, table

__all__ = ["DIR", "Cache", "CacheDamaged", "Layer", "Source", "Stat", "read_stored", "write_stored"]

SHARDS = 64
RACY_NS = 2_000_000_000  # mtimes this close to a save are not trusted


_UNREAD = Layer("", {}, None)  # a layer not read from disk yet (compared by identity)


@dataclass
class Cache:
    """All three layers, each read when first asked for. `folder` None
    means caching is off."""

    folder: Path | None
    salt: str = ""
    link: Layer | None = None
    rendered: Layer | None = None  # what the last run rendered (`knoc.incremental.warm`)
    dropped: str | None = None  # why a stored file was not used (the first one)
    _all: dict[str, Source] | None = None  # every source, once the whole set is asked for
    _shards: list[dict[str, Source] | None] = field(default_factory=lambda: [None] * SHARDS)
    _dirty: set[int] = field(default_factory=set)  # shards changed one source at a time
    _racy: set[str] = field(default_factory=set)  # sources stored with an mtime too near their save
    _spilled: set[str] = field(default_factory=set)  # stored by `spill` this run: not pruned
    _link_stored: Layer | None = None
    _rendered_stored: Layer | None = field(default_factory=lambda: _UNREAD)

    @classmethod
    def off(cls) -> Cache:
        return cls(None, _rendered_stored=None)

    @classmethod
    def open(cls, root: Path, salt: str) -> Cache:
        if not usable(root):
            return cls.off()
        cache = cls(root / DIR, salt)
        cache.link = cache._link_stored = Layer.decode(cache._load("link.bin"))
        return cache

    @property
    def sources(self) -> dict[str, Source]:
        """Every source the cache keeps, by path (all 64 shards read)."""
        if self._all is None:
            self._all = {}
            for i in range(SHARDS):
                self._all.update(self._shard(i))
        return self._all

    @sources.setter
    def sources(self, value: dict[str, Source]) -> None:
        self._all = value

    def source(self, rel: str) -> Source | None:
        """One source, reading only its shard."""
        return (self._all if self._all is not None else self._shard(_shard(rel))).get(rel)

    def put(self, rel: str, source: Source) -> None:
        """Keep one source, leaving the others as stored."""
        if self._all is not None:
            self._all[rel] = source
        else:
            self._shard(_shard(rel))[rel] = source
            self._dirty.add(_shard(rel))

    def _shard(self, i: int) -> dict[str, Source]:
        shard = self._shards[i]
        if shard is None:
            shard = {}
            value = None if self.folder is None else self._load(f"sources-{i:02x}.bin")
            try:
                saved, entries = row(value) if value is not None else (0, {})
                shard = {rel: s for rel, raw in table(entries).items() if (s := Source.decode(raw)) is not None}
                self._racy.update(rel for rel, v in shard.items() if v.mtime_ns > number(saved) - RACY_NS)
            except UNREADABLE:  # a shard knoc did not write so: its sources are compiled afresh
                shard = {}
                self.dropped = self.dropped or "corrupt (unexpected shape)"
            self._shards[i] = shard
        return shard

    def last_rendered(self) -> Layer | None:
        if self._rendered_stored is _UNREAD:
            self.rendered = self._rendered_stored = Layer.decode(self._load("rendered.bin"))
        return self.rendered

    def _load(self, name: str) -> Stored:
        """The value stored under this salt, or None (and why, in `dropped`)."""
        value, why = read_stored(self.folder / name)  # type: ignore[operator]
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

    def get(self, rel: str, digest: str) -> Stored | Encodes:
        hit = self.source(rel)
        return hit.entry if hit is not None and hit.digest == digest else None

    def get_link(self, key: str, digests: dict[str, str]) -> tuple[Stored, Mapping[str, bytes]] | None:
        """The link stage's findings and files stored under `key`, if the
        files its findings point into still have the bytes they had, and
        its own files are still as they were stored."""
        return self._get(self.link, key, digests)

    def get_rendered(self, key: str) -> tuple[Stored, Mapping[str, bytes]] | None:
        return self._get(self.last_rendered(), key, {})

    def _get(self, layer: Layer | None, key: str, digests: dict[str, str]
             ) -> tuple[Stored, Mapping[str, bytes]] | None:
        if layer is None or layer.key != key or self.folder is None:
            return None
        if any(digests.get(rel) != sha for rel, sha in layer.pinned.items()):
            return None
        if not stored.unchanged(self.folder / FILES, layer.files):
            return None
        return layer.payload, self._files(layer.files)

    def keep_link(self, key: str, pinned: dict[str, str], payload: Stored, files: Mapping[str, bytes],
                  digests: Mapping[str, str]) -> Mapping[str, bytes]:
        """Keep the link stage's findings (`payload`, stored at the next save)
        and files (stored now, as they are, under their sha256). Returns the
        files to use from now on: read back from the cache when asked for,
        so the run need not hold them (over 100 MB at 100,000 agents), or
        `files` itself when the cache is off or cannot be written."""
        kept = self._store(files, digests)
        if kept is None:  # nothing saved: a later run computes the layer again
            return files
        self.link = Layer(key, pinned, payload, kept)
        return self._files(kept)

    def keep_rendered(self, key: str, payload: Stored, files: dict[str, Stat]) -> bool:
        """Keep what a run rendered: `payload`, and `files` as stored
        (`store_file`, `stats_of`). Whether it could be kept."""
        if self.folder is None:
            return False
        self.rendered = Layer(key, {}, payload, files)
        self._store({}, {})  # drops what no layer names (best effort)
        return True

    def store_file(self, body: bytes | stored.Parts, digest: str) -> Stat | None:
        """Store one file under its sha256 (the rendered layer names it, or
        it is dropped at the next store); its size, ctime and sha256, or
        None if it cannot be."""
        if self.folder is None or not ready(self.folder):
            return None
        return stored.store_one(self.folder / FILES, body, digest, self._vouched().get(digest))

    def spill(self, files: Mapping[str, bytes], digests: Mapping[str, str], onto: Mapping[str, bytes]
              ) -> Mapping[str, bytes]:
        """Store `files` now, and hand back `onto` (what an earlier call
        handed back, or nothing) with them added, each read when asked for:
        a run need not hold the large files it renders. When they cannot be
        stored, `onto` and `files` as they are."""
        kept = self._store(files, digests) if self._can_spill(onto) else None
        return {**onto, **files} if kept is None else self._spilled_onto(onto, kept)

    def piece_writer(self, onto: Mapping[str, bytes]) -> stored.PieceWriter | None:
        """Where to store one file as its pieces are made, to be added to
        `onto` (`spilled`); None when it cannot be: then it is held."""
        if self.folder is None or not self._can_spill(onto) or not ready(self.folder):
            return None
        try:
            return stored.PieceWriter(self.folder / FILES, self._vouched())
        except OSError:
            return None

    def spilled(self, path: str, st: Stat, onto: Mapping[str, bytes]) -> Mapping[str, bytes]:
        """`onto` with the file a `piece_writer` stored."""
        return self._spilled_onto(onto, {path: st})

    def _can_spill(self, onto: Mapping[str, bytes]) -> bool:
        """Whether files can be spilled onto `onto` (nothing yet, or what was spilled)."""
        return self.folder is not None and (not onto or isinstance(onto, StoredFiles))

    def _spilled_onto(self, onto: Mapping[str, bytes], kept: dict[str, Stat]) -> StoredFiles:
        """`onto` with the files just stored (kept from pruning this run)."""
        self._spilled.update(d for _, _, d in kept.values())
        return self._files({**(self.stats_of(onto) or {}), **kept})

    def stats_of(self, files: Mapping[str, bytes]) -> dict[str, Stat] | None:
        """The stats of files this cache already stores (None: not such files)."""
        if self.folder is None or not isinstance(files, StoredFiles):
            return None
        return files.stats(self.folder / FILES)

    def entries(self, digests: Mapping[str, str], fresh: Mapping[str, Encoded]) -> Entries:
        """The results kept of sources with these sha256, as
        `knoc.kinds.agent.Packed` (`Entries`)."""
        return Entries(self, digests, fresh)

    def unpatched(self) -> NoReturn:
        """The files kept as last rendered are not what that rendering
        made: dropped (the next run takes the full path), and CacheDamaged."""
        self.forget_rendered()
        raise CacheDamaged("the cache's joined files are not as it last rendered them")

    def scratch(self) -> IO[bytes] | None:
        """A file of the cache's own with no name (gone when closed, even if
        the run is killed), for what a run would rather not hold in memory;
        None when the cache is off or cannot be written."""
        if self.folder is None or not ready(self.folder):
            return None
        try:
            return tempfile.TemporaryFile(dir=self.folder)
        except OSError:
            return None

    def rendered_files(self) -> dict[str, Stat]:
        """The files the rendered layer names, as stored."""
        return {} if self.rendered is None else self.rendered.files

    def forget_rendered(self) -> None:
        """Drop the rendered layer (on disk too): it names what is no longer kept."""
        self.rendered = self._rendered_stored = None
        if self.folder is not None:
            (self.folder / "rendered.bin").unlink(missing_ok=True)

    def _files(self, files: dict[str, Stat]) -> StoredFiles:
        assert self.folder is not None
        return StoredFiles(self.folder / FILES, files, f"{DIR}/{FILES}")

    def _store(self, files: Mapping[str, bytes], digests: Mapping[str, str]) -> dict[str, Stat] | None:
        if self.folder is None:
            return None
        already = self.stats_of(files)
        if already is not None:  # spilled: stored already
            return already
        vouched = self._vouched()  # what the stored layers name is kept
        return stored.store(self.folder / FILES, files, digests, vouched.keys() | self._spilled, vouched)

    def _vouched(self) -> stored.Vouched:
        """The size and ctime the layers keep of each stored file they name."""
        self.last_rendered()
        return {d: (size, ctime) for layer in (self.link, self._link_stored, self.rendered, self._rendered_stored)
                if layer is not None for size, ctime, d in layer.files.values()}

    def save(self) -> None:
        """Write back the shards and the layers that changed (sources that
        are gone drop out)."""
        if self.folder is None:
            return
        if self._all is not None:
            shards: list[dict[str, Source]] = [{} for _ in range(SHARDS)]
            for rel, value in self._all.items():
                shards[_shard(rel)][rel] = value
            changed = {i for i, shard in enumerate(shards) if _differs(shard, self._shard(i))}
        else:
            shards, changed = [s or {} for s in self._shards], self._dirty
        now = time.time_ns()
        for i in sorted(changed):
            write_stored(self.folder / f"sources-{i:02x}.bin",
                         (self.salt, (now, {rel: v.encode() for rel, v in shards[i].items()})))
        if self.link is not self._link_stored and self.link is not None:
            write_stored(self.folder / "link.bin", (self.salt, self.link.encode()))
        if self.rendered is not self._rendered_stored and self.rendered is not None:
            write_stored(self.folder / "rendered.bin", (self.salt, self.rendered.encode()))


def _differs(new: dict[str, Source], old: dict[str, Source]) -> bool:
    return new.keys() != old.keys() or any(v is not old[k] for k, v in new.items())


def _shard_shape(value: Stored) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict)


def _shard(rel: str) -> int:
    return zlib.crc32(rel.encode("utf-8")) % SHARDS


class Entries:
    """The encoded results the cache keeps of the sources with these sha256
    (`digests`), but for those just compiled (`fresh`), by path. One that
    is gone, or lacks what is asked of it, is CacheDamaged, and the rendered
    layer is dropped: the next run takes the full path."""

    def __init__(self, cache: Cache, digests: Mapping[str, str], fresh: Mapping[str, Encoded]) -> None:
        self._cache, self._digests, self._fresh = cache, digests, fresh

    def value(self, key: str) -> Encoded:
        entry = self._fresh[key] if key in self._fresh else self._cache.get(key, self._digests[key])
        if not isinstance(entry, tuple):
            self.lacks(key)
        return entry

    def get(self, key: str) -> tuple[Encoded, tuple[bytes, ...]]:
        return self.value(key), ()

    def lacks(self, key: str) -> NoReturn:
        self._cache.forget_rendered()
        raise CacheDamaged(f"the cache no longer holds the card of {key}")
