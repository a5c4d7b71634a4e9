"""Persisted records: versioned dataclasses stored as plain tuples (what
marshal carries fast). A stored value that does not decode, or was written
by another version of its record, is a miss: the caller recomputes it."""

from __future__ import annotations

import bisect
import dataclasses
import functools
from collections.abc import ItemsView, Iterable, Iterator, Mapping, Sequence
from typing import ClassVar, TypeAlias, TypeVar

R = TypeVar("R", bound="Record")
# What reading a stored value that is not the record it should be raises.
UNREADABLE = (TypeError, ValueError, KeyError, AttributeError, IndexError)
# Many paths are kept as one string, split when first needed: joined by
# NUL, the one character no file name can hold (a newline can).
PATHS_SEP = "\0"


def join_paths(paths: Iterable[str]) -> str:
    return PATHS_SEP.join(paths)


class JoinedPaths:
    """`join_paths(paths)` as a value to store, made a piece at a time as
    it is written (`knoc.io.stored_value`), never whole: 15 MB for the
    outputs of 100,000 agents, beside the paths themselves. It reads back
    as that string. Only as a member of a tuple, which `write_stored`
    writes a member at a time (marshal cannot carry it)."""

    __slots__ = ("paths",)

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = paths

    def pieces(self, size: int) -> Iterator[str]:
        for i in range(0, len(self.paths), size):
            piece = join_paths(self.paths[i:i + size])
            yield piece + PATHS_SEP if i + size < len(self.paths) else piece


# What a record is stored as: the values marshal carries, as knoc stores them.
# (A JoinedPaths only on its way to a file: it reads back as a string.)
Stored: TypeAlias = (bool | int | float | str | bytes | Sequence["Stored"] | Mapping[str, "Stored"] | JoinedPaths
                     | None)
Encoded: TypeAlias = tuple[Stored, ...]  # a record as its plain tuple


def split_paths(joined: str) -> list[str]:
    return joined.split(PATHS_SEP) if joined else []


def count_paths(joined: str) -> int:
    return joined.count(PATHS_SEP) + 1 if joined else 0


def paths_piece(joined: str, k: int, pieces: int) -> tuple[int, list[str]]:
    """Of the paths `joined` holds, the `k`-th of `pieces` runs (cut by
    characters, at the path after each cut: no piece needs the others
    split), and the index of its first path. The runs cover every path once."""
    def start(at: int) -> int:  # where the first path at or after character `at` begins (past the end: none)
        if at <= 0:
            return 0
        i = joined.find(PATHS_SEP, at - 1)
        return len(joined) + 1 if i < 0 else i + 1
    begin, end = start(len(joined) * k // pieces), start(len(joined) * (k + 1) // pieces)
    first = joined.count(PATHS_SEP, 0, begin)
    return first, split_paths(joined[begin:end - 1]) if end > begin else []


def text(value: Stored) -> str:
    """A stored value that must be a string (ValueError if not)."""
    if not isinstance(value, str):
        raise ValueError("not a string")
    return value


def number(value: Stored) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError("not a number")
    return value


def row(value: Stored) -> tuple[Stored, ...]:
    """A stored tuple (what marshal gives back for one)."""
    if not isinstance(value, tuple):
        raise ValueError("not a tuple")
    return value


def rows(value: Stored) -> list[Stored]:
    if not isinstance(value, list):
        raise ValueError("not a list")
    return value


def table(value: Stored) -> dict[str, Stored]:
    if not isinstance(value, dict):
        raise ValueError("not a table")
    return value


def texts(value: Stored) -> list[str]:
    return [text(v) for v in rows(value)]


def text_table(value: Stored) -> dict[str, str]:
    return {k: text(v) for k, v in table(value).items()}


class Encodes:
    """What the cache stores: `encode()` gives its plain tuple."""

    __slots__ = ()

    def encode(self) -> Encoded:
        raise NotImplementedError


class Record(Encodes):
    """Mix into a dataclass; bump VERSION when its fields change."""

    __slots__ = ()  # a record with slots=True then has no __dict__ at all

    VERSION: ClassVar[int] = 1

    def encode(self) -> Encoded:
        """This record as its plain tuple (a record that stores a field
        otherwise than as it holds it says how, through `encoded`)."""
        return self.encoded()

    def encoded(self, **stored: Stored) -> Encoded:
        """The plain tuple: the record's name, its version, then each field
        as it is held, or as `stored` gives it."""
        return (type(self).__name__, self.VERSION,
                *(stored[f.name] if f.name in stored else getattr(self, f.name)
                  for f in dataclasses.fields(self)))  # type: ignore[arg-type]

    @classmethod
    def position(cls, name: str) -> int:
        """Where `encode` puts the field `name` in the tuple (after the
        record's name and version): for a reader of the plain tuple."""
        return 2 + [f.name for f in dataclasses.fields(cls)].index(name)  # type: ignore[arg-type]

    @classmethod
    def decode(cls: type[R], raw: object) -> R | None:
        """The record `raw` encodes (or `raw` itself, already decoded). A
        record that reads a field otherwise than as stored decodes itself,
        from `fields_of`."""
        if isinstance(raw, cls):
            return raw
        try:
            return cls(*cls.fields_of(raw))
        except UNREADABLE:
            return None

    @classmethod
    def fields_of(cls, raw: object) -> list[Stored]:
        """The stored fields of `raw`, if it encodes this record at this
        version (each for the record to check); one of UNREADABLE if not."""
        if isinstance(raw, Encodes):  # held elsewhere or already decoded: encoded when asked for
            raw = raw.encode()
        if not isinstance(raw, tuple) or raw[:2] != (cls.__name__, cls.VERSION):
            raise ValueError(f"not a {cls.__name__} of version {cls.VERSION}")
        return list(raw[2:])


class Digests(Mapping[str, str]):
    """sha256 by path, stored as two columns: the sorted paths joined, and
    their digests side by side. A warm run that looks up a few of 180,000
    loads them in milliseconds (as a dict, a sixth of a second), and
    splits the paths only when first asked."""

    def __init__(self, paths: str | list[str], digests: str) -> None:
        """`paths`: joined (split when first asked for), or a list in order
        (joined only when encoded)."""
        self.__dict__["paths" if isinstance(paths, list) else "_joined"], self._digests = paths, digests

    @classmethod
    def of(cls, digests: Mapping[str, str]) -> Digests:
        if isinstance(digests, Digests):
            return digests
        paths = sorted(digests)
        return cls.of_rows(paths, "".join(digests[p] for p in paths))

    @classmethod
    def of_rows(cls, paths: list[str], digests: str) -> Digests:
        """Of paths in order and their digests side by side."""
        return cls(paths, digests)

    @functools.cached_property
    def paths(self) -> list[str]:
        """In order."""
        return split_paths(self._joined)

    @functools.cached_property
    def _joined(self) -> str:
        return join_paths(self.paths)

    def index(self, path: object) -> int:
        """Its row (-1: not here)."""
        paths = self.paths
        i = bisect.bisect_left(paths, path) if isinstance(path, str) else len(paths)
        return i if i < len(paths) and paths[i] == path else -1

    def at(self, i: int) -> str:
        """The digest in row `i`."""
        return self._digests[64 * i:64 * i + 64]

    def listed(self) -> list[str]:
        """Every digest, in order (one list, made in one C loop)."""
        return [self._digests[i:i + 64] for i in range(0, len(self._digests), 64)]

    def replaced(self, digests: Mapping[str, str]) -> Digests:
        """These with `digests` (of paths among them) in place of theirs."""
        out = bytearray(self._digests, "ascii")
        for path, digest in digests.items():
            i = self.index(path)
            if i < 0:
                raise KeyError(path)
            out[64 * i:64 * i + 64] = digest.encode("ascii")
        found = Digests(self.__dict__.get("_joined") or self.paths, out.decode("ascii"))
        if "paths" in self.__dict__:
            found.__dict__["paths"] = self.paths  # split already: not again
        return found

    def __getitem__(self, path: str) -> str:
        i = self.index(path)
        if i < 0:
            raise KeyError(path)
        return self.at(i)

    def __contains__(self, path: object) -> bool:
        return self.index(path) >= 0

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def items(self) -> ItemsView[str, str]:
        """As a dict's: compared with another's in C, not a lookup per path."""
        return dict(zip(self.paths, self.listed(), strict=True)).items()

    def __len__(self) -> int:
        return len(self._digests) // 64

    def encode(self) -> tuple[str, str]:
        return self._joined, self._digests

    def stored(self) -> tuple[str | JoinedPaths, str]:
        """`encode()`, to be written: the paths not joined here if they are
        not yet (they read back as `encode()` gives them)."""
        return self.__dict__.get("_joined") or JoinedPaths(self.paths), self._digests

    @classmethod
    def decode(cls, raw: object) -> Digests:
        paths, digests = raw if isinstance(raw, tuple) else ()
        if not (isinstance(paths, str) and isinstance(digests, str)
                and len(digests) == 64 * count_paths(paths)):
            raise ValueError("not digests by path")
        return cls(paths, digests)
