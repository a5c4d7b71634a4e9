"""The runtime index: perception domain -> agents, and the agent catalog.

`build_domains` / `build_catalog` compute them at compile time; `DomainIndex`
reads `build/index/domains.json` at run time (seed 004's
getAgentsForDomain), so routing names a domain, never an agent."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, overload

from knoc.a2a.fields import DEFAULT_TRANSPORT, CardFields
from knoc.io.files import read_bytes
from knoc.kinds.agent import Agent, Card, Cards
from knoc.kinds.domain import Repo
from knoc.output.canonical import joined_pieces
from knoc.rules import jsontext

# Seed 000: inference reads skills.tags only, never names; principal first.
INFERENCE = (
    ("principal", frozenset({"play", "game", "diplomacy"})),
    ("utility", frozenset({"api", "search", "discovery", "feed", "index"})),
)


class CatalogEntry(TypedDict):
    """One agent of `index/agents.json`."""

    slug: str
    id: str
    name: str
    url: str
    card: str  # its card's path under site/
    domains: list[str]  # the public domains it perceives
    service_class: dict[str, str]  # `class`, and its `source`: declared, inferred or unknown


def service_class(declared: str | None, tags: set[str]) -> dict[str, str]:
    if declared:
        return {"class": declared, "source": "declared"}
    for cls, signal in INFERENCE:
        if tags & signal:
            return {"class": cls, "source": "inferred"}
    return {"class": "unknown", "source": "unknown"}


def card_details(fields: CardFields) -> bytes:
    """What the catalog pages show of one card beyond the index entry: what
    it does, where and how to reach it. Only published card fields, so a
    private value cannot reach the pages through it."""
    interfaces = [{"url": fields.url, "binding": fields.transport, "versions": list(fields.main_versions)}]
    interfaces += [{"url": i["url"], "binding": i.get("transport") or DEFAULT_TRANSPORT,
                    "versions": list(i.get("protocol_versions") or ())} for i in fields.interfaces]
    flags = {"streaming": fields.streaming, "push notifications": fields.push_notifications,
             "extended card": fields.extended_agent_card}
    details = {
        "description": fields.description,
        "version": fields.version,
        "interfaces": interfaces,
        "capabilities": [name for name, on in flags.items() if on],
        "provider": fields.provider.organization if fields.provider else None,
        "documentation": fields.documentation_url,
        "security": sorted(fields.schemes),
        "modes": {"input": fields.input_modes, "output": fields.output_modes},
        "skills": [{"name": s.name, "description": s.description, "tags": s.tags, "examples": s.examples or []}
                   for s in fields.skills],
    }
    return json.dumps(details, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


# Each data script adds to one object, whichever loads first: a tree's
# catalog loads its own, the all-hosts catalog every host's.
_CATALOG = b'(window.KNOC_CATALOG = window.KNOC_CATALOG || {"index": {"agents": []}, "details": {}})'


def index_script(entries: Iterable[CatalogEntry]) -> Iterator[bytes]:
    """A host's `_catalog/index.js`: its agents' index entries (as
    index/agents.json has them), for the catalog pages (a script, not JSON:
    the pages work opened from disk, where a browser refuses `fetch`)."""
    pieces = (json.dumps(e, ensure_ascii=False, sort_keys=True).encode("utf-8") for e in entries)
    return joined_pieces(_CATALOG + b".index.agents.push(\n", pieces, b",\n", b"\n);\n")


def details_script(details: Iterable[tuple[str, bytes]]) -> Iterator[bytes]:
    """A host's `_catalog/agents.js`: each of its cards' details by slug (in
    slug order), spliced from the pieces the cache keeps, a megabyte at a
    time (`Joined.add_pieces`); an edit patches its card's piece alone."""
    return joined_pieces(b"Object.assign(" + _CATALOG + b".details, {\n",
                         (script_piece(slug, body) for slug, body in details), b",\n", b"\n});\n")


def script_piece(slug: str, details: bytes) -> bytes:
    """One card's bytes in the catalog script."""
    return json.dumps(slug).encode("utf-8") + b":" + details


def build_domains(repo: Repo, published: Iterable[str]) -> dict[str, dict[str, list[str]]]:
    """The domain index of the agents whose cards are `published` (by slug)."""
    agents = repo.agents_by_slug()
    index: dict[str, set[str]] = {slug: set() for slug in sorted(repo.public_domains())}
    for agent in published:
        for slug in agents[agent].domains:
            if slug in index:
                index[slug].add(agent)
    return {"domains": {k: sorted(v) for k, v in index.items()}}


def build_catalog(repo: Repo, cards: Sequence[Card], card_file: str) -> dict[str, CatalogEntries]:
    return {"agents": CatalogEntries(repo, cards, card_file)}  # walked as it is written (canonical.dumps)


def _rows(cards: Sequence[Card], rows: list[int]) -> Sequence[Card]:
    """These rows of `cards`, looked up as they are read when `cards` is."""
    if isinstance(cards, Cards):
        return Cards([cards.published[i] for i in rows], cards.cards)
    return [cards[i] for i in rows]


class CatalogEntries(Sequence[CatalogEntry]):
    """The catalog's entries, in the cards' order (slug order), made anew
    each time they are walked: the catalog page walks them without holding
    100,000 dicts (nor, with lazy `cards`, their projections)."""

    def __init__(self, repo: Repo, cards: Sequence[Card], card_file: str,
                 agents: tuple[dict[str, Agent], set[str]] | None = None) -> None:
        self._repo, self._card_file, self._cards = repo, card_file, cards
        if agents is not None:  # the whole catalog's, shared by each host's part of it
            self.__dict__["_agents"] = agents

    def __len__(self) -> int:
        return len(self._cards)

    @overload
    def __getitem__(self, i: int) -> CatalogEntry: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[CatalogEntry]: ...

    def __getitem__(self, i: int | slice) -> CatalogEntry | Sequence[CatalogEntry]:
        if isinstance(i, slice):
            return [self._entry(c) for c in self._cards[i]]
        return self._entry(self._cards[i])

    def __iter__(self) -> Iterator[CatalogEntry]:
        return map(self._entry, self._cards)

    def by_host(self, hosts: Iterable[str]) -> dict[str, CatalogEntries]:
        """The entries of the cards on each host, in the same order, given
        each card's host (`hosts`, in the cards' order)."""
        rows: dict[str, list[int]] = {}  # not the cards: a hundred thousand of them held would be 150 MB
        for i, host in enumerate(hosts):
            rows.setdefault(host, []).append(i)
        return {h: CatalogEntries(self._repo, _rows(self._cards, its), self._card_file, self._agents)
                for h, its in sorted(rows.items())}

    def with_skills(self) -> Iterator[tuple[CatalogEntry, tuple[str, ...]]]:
        """Each entry and its card's skill names (for the catalog page)."""
        for card in self._cards:
            yield self._entry(card), card.projection.skills

    @functools.cached_property
    def _agents(self) -> tuple[dict[str, Agent], set[str]]:
        return self._repo.agents_by_slug(), self._repo.public_domains()

    def _entry(self, card: Card) -> CatalogEntry:
        agents, public = self._agents
        a, p = agents[card.slug], card.projection
        return {
            "slug": a.slug,
            "id": a.id,
            "name": p.name,
            "url": p.url,
            "card": f"{p.site_dir}/{self._card_file}",
            "domains": sorted({d for d in a.domains if d in public}),
            "service_class": service_class(a.service_class, set(p.tags)),
        }


@dataclass(frozen=True)
class DomainIndex:
    """Which public agents watch a perception domain."""

    domains: dict[str, tuple[str, ...]]

    @classmethod
    def load(cls, path: str | Path) -> DomainIndex:
        """The index in a build's `index/domains.json` (read under the JSON
        input rule: ValueError for anything but a domain index)."""
        data = jsontext.parse_value(read_bytes(path))
        domains = data.get("domains") if isinstance(data, dict) else None
        if not isinstance(domains, dict):
            raise ValueError(f"{path} is not a knoc domain index")
        index: dict[str, tuple[str, ...]] = {}
        for domain, slugs in domains.items():
            if not isinstance(slugs, list) or not all(isinstance(s, str) for s in slugs):
                raise ValueError(f"{path} is not a knoc domain index")
            index[domain] = tuple(str(s) for s in slugs)  # each a string
        return cls(index)

    def agents_for(self, domain: str) -> list[str]:
        """Slugs of the agents watching `domain`; KeyError for an unknown domain."""
        return list(self.domains[domain])

    def __contains__(self, domain: object) -> bool:
        return domain in self.domains
