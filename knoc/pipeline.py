"""The compiler: load -> specs -> validate -> resolve -> project -> render.

Load, validate and project read one file each; their results per file
(`FileResult`) are what the cache keeps. Resolve and render read the whole
repo and always run, on facts. Pure up to `render`: it returns the files a
build would write and what was found; writing is the caller's choice."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from knoc import __version__
from knoc.cache import Cache, Entry, salt
from knoc.diagnostics import Diagnostic, Report, from_dict
from knoc.emit import render
from knoc.config import Config
from knoc.load import Entity, collection_of, discover, parse_source, read_source
from knoc.project import Card, Projection, project, publish
from knoc.resolve import Repo, agent_of, facts, kind_of, resolve
from knoc.source import SourceFile
from knoc.specs import SpecSet, compile_specs
from knoc.validate import Typed, check, declaration


@dataclass
class FileResult:
    """What the one-file stages found in one source."""

    digest: str
    diags: list[Diagnostic]
    decl: tuple[str, str] | None = None  # (type, version) when a spec accepted it
    valid: bool = False
    facts: dict[str, Any] = field(default_factory=dict)
    projection: Projection | None = None

    def to_entry(self) -> Entry:
        p = self.projection
        card = None if p is None else (p.host, p.path, p.body, p.name, p.url, p.tags)
        return (self.digest, [d.to_dict() for d in self.diags], self.decl, self.valid, self.facts, card)

    @classmethod
    def from_entry(cls, entry: Entry) -> "FileResult":
        digest, diags, decl, valid, facts_, card = entry
        return cls(digest, [from_dict(d) for d in diags], tuple(decl) if decl else None, valid,
                   facts_, Projection(*card) if card else None)


@dataclass
class Result:
    report: Report
    inputs: list[str] = field(default_factory=list)  # every source read, repo-relative
    cards: list[Card] = field(default_factory=list)
    repo: Repo = field(default_factory=Repo)
    files: dict[str, bytes] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)  # sha256 of each of `files`
    cache: Cache = field(default_factory=Cache.off)

    @property
    def ok(self) -> bool:
        return self.report.errors == 0


def compile_repo(config: Config, use_cache: bool = False) -> Result:
    report = Report()
    paths = discover(config.root, [config.specs, config.content])
    sources: list[SourceFile] = []
    for path in paths:
        read = read_source(config.root, path)
        if isinstance(read, Diagnostic):
            report.add(read)
        else:
            sources.append(read)

    spec_files = {s.rel: parse_source(s) for s in sources if collection_of(s.rel) == "specs"}
    specs, found = compile_specs([e for e in spec_files.values() if isinstance(e, Entity)])
    report.extend(found)
    spec_digest = salt(*(f"{s.rel}\0{s.digest}" for s in sources if s.rel in spec_files))
    cache = (Cache.open(config.root, salt(__version__, config.a2a, spec_digest)) if use_cache
             else Cache.off())

    results: dict[str, FileResult] = {}
    for src in sources:
        entry = None if src.rel in spec_files else cache.get(src.rel, src.digest)
        if entry is not None:
            results[src.rel] = FileResult.from_entry(entry)
        else:
            loaded = spec_files.get(src.rel) or parse_source(src)
            results[src.rel] = one_file(src, loaded, specs, config.a2a)
        report.extend(results[src.rel].diags)

    entities: list[Entity] = []
    typed: list[Typed] = []
    for src in sources:
        fr = results[src.rel]
        if fr.decl is None:
            continue
        ent = Entity(src, fr.facts, collection_of(src.rel))
        entities.append(ent)
        typed.append(Typed(ent, *fr.decl, specs.by_declaration["@".join(fr.decl)], fr.valid))
    repo, found = resolve(typed)
    report.extend(found)
    cards, found = publish((a, p) for a in repo.agents
                           if (p := results[a.typed.entity.source.rel].projection) is not None)
    report.extend(found)
    # Sources that are gone drop out; the caller saves the cache.
    cache.entries = {rel: fr.to_entry() for rel, fr in results.items() if rel not in spec_files}

    result = Result(report, inputs=paths, cards=cards, repo=repo, cache=cache)
    if result.ok:
        result.files, result.digests = render(repo, cards, entities, config.a2a)
    return result


def one_file(source: SourceFile, loaded: Entity | Diagnostic, specs: SpecSet, target: str) -> FileResult:
    """Load, validate and project one source: everything that depends on
    that file (and the specs) alone."""
    if isinstance(loaded, Diagnostic):
        return FileResult(source.digest, [loaded])
    t = declaration(loaded, specs)
    if isinstance(t, Diagnostic):
        return FileResult(source.digest, [t])
    diags = list(check(t, specs))
    t.valid = not any(d.is_error for d in diags)
    projection = None
    if kind_of(t) == "agent":
        projection, found = project(agent_of(t), target)
        diags += found
    return FileResult(source.digest, diags, (t.type, t.version), t.valid, facts(loaded.data), projection)
