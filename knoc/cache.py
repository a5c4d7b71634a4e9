"""The on-disk cache under `.knoc-cache/` (gitignored; safe to delete).

`sources.bin` keeps what the one-file stages (load, validate, project)
learned about each source, so a check after a one-file change redoes only
that file; resolve and render read the whole repo and run every time, on
the cached facts. `outputs.bin` keeps the size, mtime and sha256 of each
file under build/, so an unchanged build/ is compared without reading it
(the way git's index avoids rehashing the work tree).

Nothing is trusted blindly. Each file carries a checksum of its payload;
source entries count only for the same knoc version, A2A target and specs/
(the salt) and only for the exact bytes (sha256) of their source. Anything
corrupt, foreign or stale is dropped and rebuilt."""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DIR = ".knoc-cache"
MAGIC = b"knoc-cache 1\n"

# Per source: (sha256 of its bytes, then the stage results as plain values;
# see pipeline.FileResult.to_entry).
Entry = tuple[Any, ...]
# Per output file: (size, mtime_ns, sha256) as last written or read.
Stat = tuple[int, int, str]


@dataclass
class Cache:
    """Per-source entries. `path` None means caching is off."""

    path: Path | None
    salt: str = ""
    entries: dict[str, Entry] = field(default_factory=dict)
    dropped: str | None = None  # why an existing cache was not used

    @classmethod
    def off(cls) -> "Cache":
        return cls(None)

    @classmethod
    def open(cls, root: Path, salt: str) -> "Cache":
        cache = cls(root / DIR / "sources.bin", salt)
        value, cache.dropped = _read(cache.path)  # type: ignore[arg-type]
        if value is None:
            return cache
        if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict)):
            cache.dropped = "corrupt (unexpected shape)"
        elif value[0] != salt:
            cache.dropped = "stale (knoc version, A2A target or specs/ changed)"
        else:
            cache.entries = value[1]
        return cache

    def get(self, rel: str, digest: str) -> Entry | None:
        entry = self.entries.get(rel)
        return entry if isinstance(entry, tuple) and entry and entry[0] == digest else None

    def save(self) -> None:
        if self.path is not None:
            _write(self.path, (self.salt, self.entries))


@dataclass
class Snapshot:
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
    def open(cls, root: Path, enabled: bool = True) -> "OutputMemo":
        if not enabled:
            return cls(None)
        memo = cls(root / DIR / "outputs.bin")
        value, _ = _read(memo.path)  # type: ignore[arg-type]
        if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, dict) for v in value):
            memo.snapshot = Snapshot(*value)
        return memo

    def save(self) -> None:
        if self.path is not None:
            _write(self.path, (self.snapshot.files, self.snapshot.dirs))


def salt(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def _read(path: Path) -> tuple[Any, str | None]:
    """The stored value, or None and why not."""
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"unreadable: {exc.strerror}"
    digest, payload = blob[len(MAGIC):len(MAGIC) + 32], blob[len(MAGIC) + 32:]
    if not blob.startswith(MAGIC) or hashlib.sha256(payload).digest() != digest:
        return None, "corrupt (checksum mismatch)"
    try:
        return marshal.loads(payload), None
    except (EOFError, ValueError, TypeError):
        return None, "corrupt (unreadable payload)"


def _write(path: Path, value: Any) -> None:
    """Atomically. Best effort: a read-only checkout still compiles, uncached."""
    payload = marshal.dumps(value)
    tmp = None
    try:
        path.parent.mkdir(exist_ok=True)
        ignore = path.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# written by knoc: this folder is a cache\n*\n", encoding="utf-8")
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
