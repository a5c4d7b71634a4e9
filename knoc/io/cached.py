"""What the cache keeps, as records: each source as last compiled
(`Source`) and what a whole-repo stage found (`Layer`), each read back
through checking readers, so a value of the wrong type is a miss."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import ClassVar

from knoc.io.stored import SHA256, Stat
from knoc.rules.records import UNREADABLE, Encoded, Encodes, Record, Stored, number, row, table, text, text_table


@dataclass(slots=True)
class Source(Record):
    """One source as last compiled: its bytes' sha256, the stat fields that
    change when the file does (git's index keeps the same), and what the
    one-file stages found (their own record, encoded; or decoded, so a run
    that uses it does not hold it twice)."""

    VERSION: ClassVar[int] = 2

    digest: str
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    entry: Stored | Encodes

    def encode(self) -> Encoded:
        # `entry` may be held decoded or elsewhere: encoded as it is saved
        return self.encoded(entry=self.entry.encode() if isinstance(self.entry, Encodes) else self.entry)

    @classmethod
    def decode(cls, raw: object) -> Source | None:
        try:
            digest, size, mtime_ns, ctime_ns, inode, entry = cls.fields_of(raw)
            return cls(text(digest), number(size), number(mtime_ns), number(ctime_ns), number(inode), entry)
        except UNREADABLE:
            return None

    @classmethod
    def of(cls, digest: str, st: os.stat_result, entry: Encoded) -> Source:
        return cls(digest, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, entry)

    def same_stat(self, st: os.stat_result) -> bool:
        return (self.size == st.st_size and self.mtime_ns == st.st_mtime_ns and self.ctime_ns == st.st_ctime_ns
                and self.inode == st.st_ino)


@dataclass(slots=True)
class Layer(Record):
    """What a whole-repo stage found, under the key of its inputs, with the
    sha256 of each source its findings point into (their line numbers come
    from there), and the files it rendered, stored as they are: the size,
    ctime and sha256 of each, by path."""

    VERSION: ClassVar[int] = 2

    key: str
    pinned: dict[str, str]
    payload: Stored
    files: dict[str, Stat] = field(default_factory=dict)

    @classmethod
    def decode(cls, raw: object) -> Layer | None:
        try:
            key, pinned, payload, files = cls.fields_of(raw)
            return cls(text(key), text_table(pinned), payload, {path: _stat(f) for path, f in table(files).items()})
        except UNREADABLE:
            return None


def _stat(raw: Stored) -> Stat:
    size, ctime, name = row(raw)
    if not SHA256.fullmatch(text(name)):  # a stored name is a sha256, never a path elsewhere
        raise ValueError("not a stored file")
    return number(size), number(ctime), text(name)
