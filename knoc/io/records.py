"""Persisted records: versioned dataclasses stored as plain tuples (what
marshal carries fast). A stored value that does not decode, or was written
by another version of its record, is a miss: the caller recomputes it."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, TypeVar

R = TypeVar("R", bound="Record")


class Encodes:
    """What the cache stores: `encode()` gives its plain tuple."""

    __slots__ = ()

    def encode(self) -> tuple[Any, ...]:
        raise NotImplementedError


class Record(Encodes):
    """Mix into a dataclass; bump VERSION when its fields change."""

    __slots__ = ()  # a record with slots=True then has no __dict__ at all

    VERSION: ClassVar[int] = 1

    def encode(self) -> tuple[Any, ...]:
        return (type(self).__name__, self.VERSION,
                *(self._encode_field(f.name) for f in dataclasses.fields(self)))  # type: ignore[arg-type]

    def _encode_field(self, name: str) -> Any:
        return getattr(self, name)

    @classmethod
    def decode(cls: type[R], raw: Any) -> R | None:
        """The record `raw` encodes (or `raw` itself, already decoded)."""
        if isinstance(raw, cls):
            return raw
        if isinstance(raw, Encodes):  # held elsewhere, encoded when asked for
            raw = raw.encode()
        try:
            name, version, *values = raw
            if name != cls.__name__ or version != cls.VERSION:
                return None
            return cls._from_fields(values)
        except (TypeError, ValueError, KeyError, AttributeError, IndexError):
            return None

    @classmethod
    def _from_fields(cls: type[R], values: list[Any]) -> R:
        return cls(*values)
