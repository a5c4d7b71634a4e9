"""What the link stage reads of each file, decoded once and kept across
edits (`knoc lsp`): the typed entity and Agent of each file, its card's
summary and its delegation contract. An edit replaces its file's source,
so a file whose source is still the one decoded is never decoded again;
the link stage then finds what it would from a fresh decoding
(`tests/test_live_link.py`)."""

from __future__ import annotations

from knoc.a2a.capability import Contract
from knoc.compiler.link import Decoded, typed_entities
from knoc.compiler.results import FileResults
from knoc.diagnostics import SourceFile
from knoc.kinds.agent import Agent, CardLookup, Projection
from knoc.kinds.entity import Layout, Typed
from knoc.kinds.spec import SpecSet


class KeptDecoding:
    """The decodings of one compiled repo (a spec changed: start a new one)."""

    def __init__(self) -> None:
        self._entities: dict[str, tuple[SourceFile, Typed | None, Agent | None]] = {}
        self._contracts: dict[Agent, Contract] = {}
        self._cards = _KeptCards()

    def decoded(self, sources: dict[str, SourceFile], results: FileResults, specs: SpecSet,
                layout: Layout) -> Decoded:
        """For the link stage over `sources` as `results` holds them now."""
        stale = [s for s in sources.values() if (k := self._entities.get(s.rel)) is None or k[0] is not s]
        typed, agents = typed_entities(stale, results, specs, layout)
        fresh = {t.source.rel: t for t in typed}
        for s in stale:
            t = fresh.get(s.rel)
            self._entities[s.rel] = (s, t, agents.get(t) if t is not None else None)
        self._entities = {rel: self._entities[rel] for rel in sources}  # a file gone: forgotten
        kept = self._entities.values()
        agent_of = {t: a for _, t, a in kept if t is not None and a is not None}
        self._contracts = {a: c for a, c in self._contracts.items() if agent_of.get(a.typed) is a}
        self._cards.now(sources, results)
        return Decoded([t for _, t, _ in kept if t is not None], agent_of, self._cards, self._contracts)


class _KeptCards(CardLookup):
    """Each card's summary, decoded when first asked for while its source is the same."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[SourceFile, Projection]] = {}
        self._sources: dict[str, SourceFile] = {}
        self._results: FileResults | None = None

    def now(self, sources: dict[str, SourceFile], results: FileResults) -> None:
        """For a run over `sources`: a summary whose source is not the one now is dropped."""
        self._sources, self._results = sources, results
        self._kept = {rel: k for rel, k in self._kept.items() if sources.get(rel) is k[0]}

    def projection(self, rel: str) -> Projection:
        kept = self._kept.get(rel)
        if kept is None:
            assert self._results is not None
            kept = self._kept[rel] = (self._sources[rel], self._results.cards.summary(rel))
        return kept[1]
