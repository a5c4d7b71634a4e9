"""Every source's `FileResult` for one run, held compact.

Decoded, the results of 100,000 agents (each a card's strings, tuples and
packed bytes, as Python objects) would hold several hundred MiB. Here each is one `bytes`
(its encoded record, marshalled), and the card's packed bytes, which only
the writing and the catalogs read, go to a scratch file of the cache
(`Cache.scratch`): a record is decoded when a stage asks for it, and
dropped once that stage is done with it. The findings, which every run
reports, are held decoded."""

from __future__ import annotations

import sys
from typing import IO, Any

from knoc.codec.records import Encodes
from knoc.compiler.records import FileResult, Head
from knoc.diagnostics import Diagnostic, from_dict
from knoc.io.held import Held
from knoc.kinds.agent import Projection

# Where an encoded FileResult keeps these fields; where its projection keeps its packed bytes.
_DIAGS, _DECL, _VALID, _PRIVATE, _FACTS, _CARD, _LINK_KEY = (
    FileResult.position(name) for name in ("diags", "decl", "valid", "private", "facts", "projection", "link_key"))
_BYTES = Projection._fields.index("packed")


class Results:
    """Results by source path. `scratch`: where the card bytes go (None:
    held in memory too)."""

    def __init__(self, scratch: IO[bytes] | None = None) -> None:
        self._held = Held(scratch)
        self._found: dict[str, list[Diagnostic]] = {}
        self.carded: list[str] = []  # the sources with a card, in the order added

    def add(self, rel: str, entry: Any) -> list[Diagnostic]:
        """Hold an encoded FileResult (checked by whoever made it); its findings."""
        card = entry[_CARD]
        if card:
            self._held.put(rel, (*entry[:_CARD], card[:_BYTES], *entry[_CARD + 1:]), tuple(card[_BYTES:]))
            self.carded.append(rel)
        else:
            self._held.put(rel, entry)
        found = [from_dict(d) for d in entry[_DIAGS]]
        if found:
            self._found[rel] = found
        return found

    def add_result(self, rel: str, result: FileResult) -> None:
        self.add(rel, result.encode())

    def entry(self, rel: str) -> Any:
        """The encoded FileResult, card bytes and all (what the cache stores)."""
        entry, card_bytes = self._held.get(rel)
        if not card_bytes:
            return entry
        return (*entry[:_CARD], (*entry[_CARD], *card_bytes), *entry[_CARD + 1:])

    def head(self, rel: str) -> Head:
        """All of a result but its findings and card, without decoding those."""
        value = self._held.value(rel)
        decl = value[_DECL]
        return Head((sys.intern(decl[0]), sys.intern(decl[1])) if decl else None, value[_VALID], value[_PRIVATE],
                    value[_FACTS], value[_LINK_KEY])

    def found(self, rel: str) -> list[Diagnostic]:
        """The findings in one source (read without decoding its result)."""
        return self._found.get(rel, [])

    def kept(self, rel: str) -> Encodes:
        """A stand-in for the encoded result that the cache stores as it saves."""
        return _Kept(self, rel)

    def projection(self, rel: str) -> Projection:
        """A source's card, decoded (KeyError: it has none)."""
        value, card_bytes = self._held.get(rel)  # not the whole FileResult: the link stage asks a dozen times
        return _card(rel, value, card_bytes)

    def summary(self, rel: str) -> Projection:
        """A source's card without its written bytes (left empty, and
        never unpacked): all the link stage reads, without reading the
        scratch file."""
        return _card(rel, self._held.value(rel), ())


def publishable(entry: Any) -> Projection | None:
    """The card of an encoded FileResult whose agent is valid and public:
    what a build may write before the link stage says whether it is
    published. A private agent's card never reaches the disk, not even
    for a moment."""
    card = entry[_CARD]
    return Projection(*card) if card and entry[_VALID] and not entry[_PRIVATE] else None


def _card(rel: str, value: Any, card_bytes: tuple[bytes, ...]) -> Projection:
    if not value[_CARD]:
        raise KeyError(rel)
    return Projection(*value[_CARD], *card_bytes)


class _Kept(Encodes):
    __slots__ = ("_rel", "_results")

    def __init__(self, results: Results, rel: str) -> None:
        self._results, self._rel = results, rel

    def encode(self) -> tuple[Any, ...]:
        entry: tuple[Any, ...] = self._results.entry(self._rel)
        return entry

