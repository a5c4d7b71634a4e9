"""The compiler: load -> specs -> validate -> project (per file), then
link: resolve -> publish -> index (whole repo), then render.

What the per-file stages find (`FileResult`) depends on one source and the
specs; what the link stage finds depends only on every file's link key
(its facts and card summary). The cache keeps both, so an edit redoes its
own file and, only if it changed a link key, the link stage. Pure up to
`render`: it returns the files a build would write and what was found;
writing is the caller's choice."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

from knoc import __version__, contract, delegation
from knoc.cache import Cache, Entry, Source, salt
from knoc.canonical import sha256
from knoc.config import Config
from knoc.diagnostics import Diagnostic, Report, from_dict
from knoc.emit import Input, render, render_linked
from knoc.load import Entity, collection_of, discover, parse_source, read_source
from knoc.project import Card, Projection, project, publish
from knoc.resolve import agent_of, facts, is_public, kind_of, resolve
from knoc.source import SourceFile
from knoc.specs import SpecSet, compile_specs
from knoc.validate import Typed, check, declaration


@dataclass
class FileResult:
    """What the one-file stages found in one source."""

    diags: list[Diagnostic]
    decl: tuple[str, str] | None = None  # (type, version) when a spec accepted it
    valid: bool = False
    private: bool = False
    facts: str = "null"  # resolve.facts() of the entity, as JSON
    projection: Projection | None = None
    link_key: str = ""  # sha256 of everything the link stage reads from this file

    def __post_init__(self) -> None:
        if not self.link_key:
            summary = None if self.projection is None else self.projection.summary
            read = json.dumps([self.decl, self.valid, self.private, self.facts, summary])
            self.link_key = hashlib.sha256(read.encode("utf-8")).hexdigest()

    def to_entry(self) -> Entry:
        card = None if self.projection is None else tuple(self.projection)
        return ([d.to_dict() for d in self.diags], self.decl, self.valid, self.private, self.facts, card,
                self.link_key)

    @classmethod
    def from_entry(cls, entry: Entry) -> "FileResult | None":
        """None for an entry of another shape (written by another knoc)."""
        try:
            diags, decl, valid, private, facts_, card, link_key = entry
            return cls([from_dict(d) for d in diags], tuple(decl) if decl else None, valid, private,
                       facts_, Projection._make(card) if card else None, link_key)
        except (TypeError, ValueError, KeyError):
            return None


@dataclass
class Link:
    """What the link stage found: plain data, kept by the cache."""

    diags: list[Diagnostic]
    agents: dict[str, str]  # slug -> source, of every agent, public or not
    published: list[tuple[str, str]]  # (slug, source) of each card to publish, in order
    files: dict[str, bytes]  # what it writes: the runtime index, catalog and extension pages
    digests: dict[str, str]  # sha256 of each of `files`, kept so a warm run need not rehash megabytes

    def to_payload(self) -> tuple[Any, ...]:
        return ([d.to_dict() for d in self.diags], self.agents, self.published, self.files, self.digests)

    @classmethod
    def from_payload(cls, payload: Any) -> "Link | None":
        """None for a payload of another shape (written by another knoc)."""
        try:
            diags, agents, published, files, digests = payload
            return cls([from_dict(d) for d in diags], agents, [tuple(p) for p in published], files, digests)
        except (TypeError, ValueError, KeyError):
            return None


@dataclass
class Result:
    report: Report
    inputs: list[str] = field(default_factory=list)  # every source read, repo-relative
    cards: list[Card] = field(default_factory=list)
    agents: dict[str, str] = field(default_factory=dict)  # slug -> source, of every agent
    files: dict[str, bytes] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)  # sha256 of each of `files`
    cache: Cache = field(default_factory=Cache.off)

    @property
    def ok(self) -> bool:
        return self.report.errors == 0


def compile_repo(config: Config, use_cache: bool = False) -> Result:
    report = Report()
    paths = discover(config.root, [config.specs, config.content])
    spec_sources = [s for p in paths if collection_of(p) == "specs" if (s := _read(config, p, report))]
    loaded = {s.rel: parse_source(s) for s in spec_sources}
    specs, found = compile_specs([e for e in loaded.values() if isinstance(e, Entity)])
    report.extend(found)
    cache = (Cache.open(config.root, salt(__version__, config.a2a, *(f"{s.rel}\0{s.digest}" for s in spec_sources)))
             if use_cache else Cache.off())

    # Specs are read and checked every time; content goes through the cache.
    results = {s.rel: one_file(s, loaded[s.rel], specs, config.a2a) for s in spec_sources}
    sources = spec_sources + _each_file(config, [p for p in paths if p not in loaded], specs, cache, results, report)
    sources.sort(key=lambda s: s.rel)
    for src in sources:
        report.extend(results[src.rel].diags)
    link = _link(sources, results, specs, cache, config.a2a)
    report.extend(link.diags)

    cards = [Card(slug, rel, results[rel].projection)  # type: ignore[arg-type]
             for slug, rel in link.published]
    result = Result(report, inputs=paths, cards=cards, agents=link.agents, cache=cache)
    if result.ok:
        inputs: list[Input] = [(s.rel, s.digest, results[s.rel].private) for s in sources
                               if results[s.rel].decl is not None]
        result.files, result.digests = render(cards, link.files, link.digests, inputs, config.a2a)
    return result


def _each_file(config: Config, paths: list[str], specs: SpecSet, cache: Cache,
               results: dict[str, FileResult], report: Report) -> list[SourceFile]:
    """The one-file stages for each path, or what the cache kept for its
    bytes. A file whose size and mtime the cache vouches for is not read."""
    sources: list[SourceFile] = []
    kept: dict[str, Source] = {}
    for rel in paths:
        path = f"{config.root}/{rel}"
        try:
            st = os.stat(path)
        except OSError:
            st = None
        old = cache.sources.get(rel)
        src: SourceFile | None
        entry: Entry | None
        if st is not None and old is not None and cache.vouches(rel, old, st.st_size, st.st_mtime_ns):
            src, entry = SourceFile(path, rel, None, old[0]), old[3]  # not even read
        else:
            src = _read(config, rel, report)
            if src is None:
                continue
            entry = cache.get(rel, src.digest)  # the same bytes with a new mtime, say after a checkout
        if entry is None or (cached := FileResult.from_entry(entry)) is None:
            cached = one_file(src, parse_source(src), specs, config.a2a)
            entry = cached.to_entry()
        sources.append(src)
        results[rel] = cached
        if st is not None:  # keep the stored tuple when nothing changed: its shard stays unwritten
            new = (src.digest, st.st_size, st.st_mtime_ns, entry)
            kept[rel] = old if old is not None and old[3] is entry and old[:3] == new[:3] else new
    cache.sources = kept
    return sources


def _link(sources: list[SourceFile], results: dict[str, FileResult], specs: SpecSet, cache: Cache,
          target: str) -> Link:
    """The link stage's findings, reused when no link key changed and no file
    its findings point into changed."""
    digests = {s.rel: s.digest for s in sources}
    key = hashlib.sha256("\n".join(f"{s.rel}\0{results[s.rel].link_key}" for s in sources)
                         .encode("utf-8")).hexdigest()
    link = Link.from_payload(cache.get_link(key, digests))
    if link is None:
        link = link_repo(sources, results, specs, target)
        pinned = {d.file: digests[d.file] for d in link.diags if d.file in digests}
        cache.link = (key, pinned, link.to_payload())
    return link


def one_file(source: SourceFile, loaded: Entity | Diagnostic, specs: SpecSet, target: str) -> FileResult:
    """Load, validate and project one source: everything that depends on
    that file (and the specs) alone."""
    if isinstance(loaded, Diagnostic):
        return FileResult([loaded])
    t = declaration(loaded, specs)
    if isinstance(t, Diagnostic):
        return FileResult([t])
    diags = list(check(t, specs))
    t.valid = not any(d.is_error for d in diags)
    projection = None
    if kind_of(t) == "agent":
        projection, found = project(agent_of(t), target)
        diags += found
    return FileResult(diags, (t.type, t.version), t.valid, not is_public(t),
                      json.dumps(facts(loaded.data), ensure_ascii=False, default=repr), projection)


def link_repo(sources: list[SourceFile], results: dict[str, FileResult], specs: SpecSet, target: str) -> Link:
    """Resolve, publish and index the whole repo, check its capability
    contract and delegation chains, from each file's facts and projection
    only, so a cached run and a fresh one cannot differ."""
    typed: list[Typed] = []
    for src in sources:
        fr = results[src.rel]
        if fr.decl is not None:
            ent = Entity(src, json.loads(fr.facts), collection_of(src.rel))
            typed.append(Typed(ent, *fr.decl, specs.by_declaration["@".join(fr.decl)], fr.valid))
    repo, diags = resolve(typed)
    projected = [(a, p) for a in repo.agents if (p := results[a.typed.entity.source.rel].projection) is not None]
    cards, found = publish(projected)
    known, found_ext = contract.registry(typed)
    found += found_ext + contract.check_cards(projected, known) + delegation.check(repo.agents, target)
    files = render_linked(repo, cards, typed)
    return Link(diags + found, {a.slug: a.typed.entity.source.rel for a in repo.agents},
                [(c.slug, c.source) for c in cards], files, {path: sha256(body) for path, body in files.items()})


def _read(config: Config, rel: str, report: Report) -> SourceFile | None:
    read = read_source(config.root, rel)
    if isinstance(read, Diagnostic):
        report.add(read)
        return None
    return read
