"""Every source's `FileResult` in one run, as the link stage and the
renderer read them.

Decoded, the results of 100,000 agents (each a card's strings, tuples and
packed bytes, as Python objects) would hold several hundred MiB. So each is
held encoded, in a store the engine chooses (`knoc.io.held.Held`: with a
cache, a scratch file, each record read back when asked for; the card's
written bytes, which only the writing and the catalogs read, apart from
the rest): a record is decoded when a stage asks for it, and dropped once
that stage is done with it. The findings, which every run reports, are
held decoded."""

from __future__ import annotations

import sys
from typing import Protocol

from knoc.compiler.records import FileResult, Head, diagnostics
from knoc.diagnostics import Diagnostic
from knoc.kinds.agent import Packed, Projection, Projections
from knoc.rules.records import Encoded, Encodes, row, text

# Where an encoded FileResult keeps these fields; where its projection keeps its written bytes.
_DIAGS, _DECL, _VALID, _PRIVATE, _FACTS, _CARD, _LINK_KEY = (
    FileResult.position(name) for name in ("diags", "decl", "valid", "private", "facts", "projection", "link_key"))
_BYTES = Projection._fields.index("packed")


class Store(Packed, Protocol):
    """Where the encoded results are held (`knoc.io.held.Held`, made with `FileResults.TAIL`)."""

    def put(self, key: str, value: Encoded) -> None: ...

    def ref(self, key: str) -> Encodes:
        """A stand-in for the value as put, tail and all, encoded when asked."""
        ...


class FileResults:
    """Results by source path, held in `store`."""

    TAIL = (_CARD, _BYTES)  # what of an encoded result the store keeps apart: the card's written bytes

    def __init__(self, store: Store) -> None:
        self._store = store
        self._found: dict[str, list[Diagnostic]] = {}
        self._carded: dict[str, None] = {}  # the sources with a card, in the order added
        self.cards = Projections(store, _CARD)

    @property
    def carded(self) -> list[str]:
        return list(self._carded)

    def add(self, rel: str, entry: Encoded) -> list[Diagnostic]:
        """Hold an encoded FileResult (checked by whoever made it), in place
        of any `rel` had (a file edited: `knoc.incremental.live`); its findings."""
        self._store.put(rel, entry)
        if entry[_CARD]:
            self._carded[rel] = None
        else:
            self._carded.pop(rel, None)
        found = diagnostics(entry[_DIAGS])
        if found:
            self._found[rel] = found
        else:
            self._found.pop(rel, None)
        return found

    def add_result(self, rel: str, result: FileResult) -> None:
        self.add(rel, result.encode())

    def head(self, rel: str) -> Head:
        """All of a result but its findings and card, without decoding those."""
        value = self._store.value(rel)
        decl = row(value[_DECL]) if value[_DECL] else None
        return Head((sys.intern(text(decl[0])), sys.intern(text(decl[1]))) if decl else None, bool(value[_VALID]),
                    bool(value[_PRIVATE]), text(value[_FACTS]), text(value[_LINK_KEY]))

    def found(self, rel: str) -> list[Diagnostic]:
        """The findings in one source (read without decoding its result)."""
        return self._found.get(rel, [])

    def kept(self, rel: str) -> Encodes:
        """A stand-in for the encoded result, which the cache stores as it saves."""
        return self._store.ref(rel)


def publishable(entry: Encoded) -> Projection | None:
    """The card of an encoded FileResult whose agent is valid and public:
    what a build may write before the link stage says whether it is
    published. A private agent's card never reaches the disk, not even
    for a moment."""
    card = entry[_CARD]
    return Projection._make(row(card)) if card and entry[_VALID] and not entry[_PRIVATE] else None
