"""The cache's own files (`.knoc-cache/*.bin`): one marshalled value each,
behind a magic line and a checksum, written atomically."""

from __future__ import annotations

import contextlib
import gc
import marshal
import mmap
import os
import shutil
import stat
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from knoc.io.files import atomic_write
from knoc.io.pool import collector_paused
from knoc.rules.records import JoinedPaths, Stored

MAGIC = b"knoc-cache 14\n"  # bump when the file layout changes; records carry their own versions
# After the magic line, the value: a tuple as its length and then its
# members, a long string as its UTF-8, anything else marshalled, each
# behind a tag and a byte count; then the CRC of all that. Written a
# member at a time, and a long string a piece at a time, a layer of tens
# of megabytes is never marshalled whole beside itself (the rendered
# layer's 180,000 joined paths are 15 MB).
_TUPLE, _VALUE, _TEXT = b"T", b"M", b"S"
_TEXT_LEAST = 1 << 20  # characters from which a string is written as _TEXT
_PATHS_AT_ONCE = 4096  # paths of a `JoinedPaths` encoded at a time
_COUNT = struct.Struct(">Q")


def dumps(value: Stored) -> bytes:
    """`value` marshalled. Stored names its containers by what they are
    read as (Sequence, Mapping); knoc stores only tuples, lists and dicts."""
    return marshal.dumps(value)  # type: ignore[arg-type]  # see above


def loads(data: bytes | bytearray | memoryview) -> Stored:
    """A value `dumps` made (ValueError, EOFError or TypeError if not)."""
    loaded: Stored = marshal.loads(data)
    return loaded


def read_stored(path: Path) -> tuple[Stored, str | None]:
    """The stored value, or None and why not. The file is mapped, not read:
    a copy of tens of megabytes costs a warm check more than its checksum.
    (knoc replaces these files by rename and never shortens one in place,
    the one thing that could pull a mapped page from under the reader.)"""
    try:  # not blocking on a FIFO put in its place
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"unreadable: {exc.strerror}"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, "unreadable: not a regular file"
        blob = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if st.st_size else None
    except OSError as exc:
        return None, f"unreadable: {exc.strerror}"
    finally:
        os.close(fd)  # the mapping keeps the file
    if blob is None:
        return None, "corrupt (checksum mismatch)"
    try:
        return _checked_value(blob)
    finally:
        with contextlib.suppress(BufferError):  # a view left alive: the mapping goes with it
            blob.close()


def _checked_value(blob: mmap.mmap) -> tuple[Stored, str | None]:
    with memoryview(blob) as whole:
        if (len(whole) < len(MAGIC) + 4 or whole[:len(MAGIC)] != MAGIC
                or zlib.crc32(whole[len(MAGIC):-4]).to_bytes(4, "big") != whole[-4:]):
            return None, "corrupt (checksum mismatch)"
        # Loading makes a million objects and no cycles: pause the collector,
        # then move them out of its sight (it would rescan them on every pass).
        with collector_paused(), whole[len(MAGIC):-4] as payload:
            try:
                value, end = _load(payload, 0)
                if end != len(payload):
                    raise ValueError("trailing bytes")
                return value, None
            except (EOFError, ValueError, TypeError, struct.error, RecursionError):
                return None, "corrupt (unreadable payload)"
            finally:
                gc.freeze()


def _load(payload: memoryview, at: int) -> tuple[Stored, int]:
    tag, (count,) = payload[at:at + 1], _COUNT.unpack_from(payload, at + 1)
    at += 1 + _COUNT.size
    if tag == _VALUE:
        return loads(payload[at:at + count]), at + count
    if tag == _TEXT:
        return str(payload[at:at + count], "utf-8", "surrogatepass"), at + count
    if tag != _TUPLE or count > len(payload):
        raise ValueError("not a stored value")
    members: list[Stored] = []
    for _ in range(count):
        member, at = _load(payload, at)
        members.append(member)
    return tuple(members), at


def _parts(value: Stored) -> Iterator[bytes]:
    if isinstance(value, tuple):
        yield _TUPLE + _COUNT.pack(len(value))
        for member in value:
            yield from _parts(member)
    elif isinstance(value, str) and len(value) >= _TEXT_LEAST:
        yield from _text(lambda: (value[i:i + _TEXT_LEAST] for i in range(0, len(value), _TEXT_LEAST)))
    elif isinstance(value, JoinedPaths):
        yield from _text(lambda: value.pieces(_PATHS_AT_ONCE))
    else:
        data = dumps(value)
        yield _VALUE + _COUNT.pack(len(data))
        yield data


def _text(pieces: Callable[[], Iterable[str]]) -> Iterator[bytes]:
    """A string as _TEXT, from its pieces, made twice: for its length, then for its bytes."""
    yield _TEXT + _COUNT.pack(sum(len(piece.encode("utf-8", "surrogatepass")) for piece in pieces()))
    yield from (piece.encode("utf-8", "surrogatepass") for piece in pieces())


def _checked(parts: Iterator[bytes]) -> Iterator[bytes]:
    crc = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
        yield part
    yield crc.to_bytes(4, "big")


def write_stored(path: Path, value: Stored) -> None:
    """Atomically. Best effort: a read-only checkout still compiles, uncached.
    The checksum is a CRC: it is there to catch damage, not an adversary
    (the cache is as trusted as the sources beside it)."""
    if ready(path.parent):
        with contextlib.suppress(OSError):
            _clear_way(path)
            atomic_write(path, MAGIC, pieces=_checked(_parts(value)))


def _clear_way(path: Path) -> None:
    """Remove a folder standing where the file goes, through its parent
    opened without following a link (a link swapped in for it leads
    nowhere: OSError, and this file is not kept)."""
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if stat.S_ISDIR(os.stat(path.name, dir_fd=fd, follow_symlinks=False).st_mode):
            shutil.rmtree(path.name, dir_fd=fd)
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)


OWNER = "owner"  # the cache folder's device and inode, as knoc wrote them (`knoc.io.cache_folder`)


def ready(folder: Path) -> bool:
    """Make the cache's folder, marked as one for git, and as this
    machine's (`OWNER`, when not marked yet); whether it could be."""
    try:
        folder.mkdir(exist_ok=True)
        ignore = folder / ".gitignore"
        if not os.path.lexists(ignore):  # not through a link either
            ignore.write_text("# written by knoc: this folder is a cache\n*\n", encoding="utf-8")
        if not os.path.lexists(folder / OWNER):
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                create_in(fd, OWNER, mark(os.fstat(fd)))
            finally:
                os.close(fd)
    except OSError:
        return False
    return True


def create_in(fd: int, name: str, data: bytes) -> None:
    """A new file `name` in the folder open at `fd`, never through a link (FileExistsError if one is there)."""
    out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=fd)
    with os.fdopen(out, "wb") as f:
        f.write(data)


def mark(folder: os.stat_result) -> bytes:
    """What `OWNER` holds in the cache folder: its device and inode on this machine."""
    return f"{folder.st_dev}:{folder.st_ino}\n".encode("ascii")
