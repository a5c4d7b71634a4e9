"""What the stages hand on and the cache keeps: plain, versioned records.

`FileResult` is what the one-file stages (load, validate, project) found in
one source; `LinkResult` what the link stage (resolve, publish, contract,
index) found in the whole repo. Bump a record's VERSION when its fields
change: an entry of another version is a cache miss, never a crash."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

from knoc.diagnostics import Diagnostic, from_dict
from knoc.kinds.agent import Projection, well_packed
from knoc.rules.records import (
    UNREADABLE,
    Encoded,
    Record,
    Stored,
    join_paths,
    row,
    rows,
    split_paths,
    table,
    text,
    text_table,
    texts,
)


@dataclass(slots=True)  # slots: one per source, a hundred thousand in a large repo
class FileResult(Record):
    """What the one-file stages found in one source."""

    VERSION: ClassVar[int] = 7

    diags: list[Diagnostic]
    decl: tuple[str, str] | None = None  # (type, version) when a spec accepted it
    valid: bool = False
    private: bool = False
    facts: str = "null"  # kinds.facts() of the entity, as JSON
    projection: Projection | None = None
    link_key: str = ""  # sha256 of everything the link stage reads from this file

    def __post_init__(self) -> None:
        if not self.link_key:
            summary = None if self.projection is None else self.projection.summary
            read = json.dumps([self.decl, self.valid, self.private, self.facts, summary])
            self.link_key = hashlib.sha256(read.encode("utf-8")).hexdigest()

    def encode(self) -> Encoded:
        return self.encoded(diags=[d.to_dict() for d in self.diags],
                            projection=None if self.projection is None else tuple(self.projection))

    @classmethod
    def decode(cls, raw: object) -> FileResult | None:
        try:
            diags, decl, valid, private, facts, card, link_key = cls.fields_of(raw)
            if not (text(link_key) and isinstance(valid, bool) and isinstance(private, bool)):
                raise ValueError("not a file result")
            card = None if card is None else row(card)
            if card is not None and not (len(card) == len(Projection._fields)
                                         and all(isinstance(b, bytes) and well_packed(b) for b in card[-2:])):
                raise ValueError("not a card")  # its packed bytes are handed on as they are (`compiler.results`)
            # The same few types, versions and hosts in every file: held once each.
            held = None if decl is None else _declaration(row(decl))
            projection = None if card is None else Projection._make((sys.intern(text(card[0])), *card[1:]))
            return cls(diagnostics(diags), held, valid, private, text(facts), projection, text(link_key))
        except UNREADABLE:
            return None


@dataclass
class LinkResult(Record):
    """What the link stage found."""

    VERSION: ClassVar[int] = 3

    diags: list[Diagnostic]
    agents: dict[str, str]  # slug -> source, of every agent, public or not
    published: list[tuple[str, str]]  # (slug, source) of each card to publish, in order
    # What it writes: the runtime index, catalog and extension pages. Not
    # encoded: the cache keeps them as files of their own (Cache.keep_link).
    files: Mapping[str, bytes]
    digests: dict[str, str]  # sha256 of each of `files`, kept so a warm run need not rehash megabytes
    roots: dict[str, str] = field(default_factory=dict)  # host -> slug of the card also served at its root
    untwinned: list[str] = field(default_factory=list)  # slugs of the cards without agent.json

    def encode(self) -> Encoded:
        # agents and published as two columns each: a warm run loads them in milliseconds
        return self.encoded(diags=[d.to_dict() for d in self.diags], agents=_columns(self.agents.items()),
                            published=_columns(self.published), files=None)

    @classmethod
    def decode(cls, raw: object) -> LinkResult | None:
        try:
            diags, agents, published, _, digests, roots, untwinned = cls.fields_of(raw)
            return cls(diagnostics(diags), dict(_pairs(agents)), _pairs(published), {}, text_table(digests),
                       text_table(roots), texts(untwinned))
        except UNREADABLE:
            return None

    @classmethod
    def restore(cls, stored: tuple[Stored, Mapping[str, bytes]] | None) -> LinkResult | None:
        """A result the cache kept: its findings, and its files as the cache reads them."""
        if stored is None:
            return None
        link = cls.decode(stored[0])
        if link is not None:
            link.files = stored[1]
        return link


def _columns(pairs: Collection[tuple[str, str]]) -> tuple[str, str]:
    firsts, seconds = zip(*pairs, strict=True) if pairs else ((), ())
    return join_paths(firsts), join_paths(seconds)


def _pairs(raw: Stored) -> list[tuple[str, str]]:
    firsts, seconds = row(raw)
    a, b = split_paths(text(firsts)), split_paths(text(seconds))
    if len(a) != len(b):
        raise ValueError("columns of different lengths")
    return list(zip(a, b, strict=True))


class Head(NamedTuple):
    """What the link stage reads of a result but its card."""

    decl: tuple[str, str] | None  # (type, version) when a spec accepted it
    valid: bool
    private: bool
    facts: str
    link_key: str


def _declaration(decl: tuple[Stored, ...]) -> tuple[str, str]:
    kind, version = decl
    return sys.intern(text(kind)), sys.intern(text(version))


def diagnostics(raw: Stored) -> list[Diagnostic]:
    """Findings as a record stores them (`Diagnostic.to_dict`), decoded."""
    return [from_dict(table(d)) for d in rows(raw)]
