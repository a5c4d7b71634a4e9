"""The engine's driver: it lists and reads a repo's sources, runs the
compiler's stages over them (load -> specs -> validate -> project per
file, on the worker pool; then the link stage: resolve -> publish ->
contract -> index), then renders.

What the per-file stages find (`FileResult`) depends on one source and the
specs; what the link stage finds depends only on every file's link key
(its facts and card summary). The cache keeps both, so an edit redoes its
own file and, only if it changed a link key, the link stage; and after an
edit that changed no link key, a run patches what the last one rendered
instead (`knoc.incremental.warm`). It reads the sources and keeps the
cache, and writes nothing to build/: it returns the files a build would
write and what was found; writing them is the caller's choice, and so is
where the workers write each card as soon as it is made (`Early`)."""

from __future__ import annotations

import contextlib
import hashlib
from array import array
from collections.abc import Callable, Collection, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from knoc.compiler.link import Decoded, link_repo, placed
from knoc.compiler.load import parse_source
from knoc.compiler.records import FileResult, LinkResult
from knoc.compiler.results import FileResults, publishable
from knoc.compiler.specs import compile_specs
from knoc.compiler.unit import one_file
from knoc.config import Config
from knoc.diagnostics import Diagnostic, Report, SourceFile, diag
from knoc.diagnostics.internal import has_internal, internal
from knoc.diagnostics.progress import Progress, quiet
from knoc.incremental import warm
from knoc.incremental.sources import compile_source, source_at
from knoc.io import files, pool, source_list
from knoc.io.cache import DIR, Cache, Source
from knoc.io.cache_folder import unused
from knoc.io.fingerprint import salt
from knoc.io.held import Held
from knoc.io.outputs import Base
from knoc.kinds.agent import Card, Cards
from knoc.kinds.entity import BUILTIN, Entity, Layout
from knoc.kinds.spec import BUILTIN_SPECS, SpecSet
from knoc.output.linked import linked_paths, render_linked
from knoc.output.tree import Tree, card_files, render
from knoc.rules.heads import Input
from knoc.rules.records import Digests, Encoded
from knoc.version import __version__

if TYPE_CHECKING:
    from knoc.output.signed import CardSigner


@dataclass
class Result:
    report: Report
    inputs: list[str] = field(default_factory=list)  # every source read, repo-relative
    cards: Sequence[Card] = field(default_factory=list)  # in `published` order
    published: list[tuple[str, str]] = field(default_factory=list)  # (slug, source) of each card
    agents: dict[str, str] = field(default_factory=dict)  # slug -> source, of every agent
    untwinned: list[str] = field(default_factory=list)  # slugs of the cards without agent.json
    files: Mapping[str, bytes] = field(default_factory=dict)
    digests: Mapping[str, str] = field(default_factory=dict)  # sha256 of each of `files`
    cache: Cache = field(default_factory=Cache.off)
    base: Base | None = None  # the rendering kept in the cache that `digests` follow from
    early: Mapping[str, bytes] = field(default_factory=dict)  # the cards written early (`Early`), by path
    roots: dict[str, str] = field(default_factory=dict)  # host -> slug of the card also served at its root

    @property
    def ok(self) -> bool:
        return self.report.errors == 0


class Early(Protocol):
    """Where a build writes each card as soon as its file is compiled, from
    the worker that compiled it, so that the disk works while the compile
    goes on (`knoc.io.staging.Staging`). The link stage may still refuse to
    publish a card, or fail the build: the build then removes it."""

    def begin(self) -> None:
        """Called here, before the workers are forked."""

    def write_card(self, files: Mapping[str, bytes]) -> bool:
        """Called in a worker: write one card's files; whether it did."""

    def written_early(self, paths: Collection[str]) -> None:
        """Called here, after the one-file stage: the paths of the cards
        written (`Result.early` holds them)."""


def compile_repo(config: Config, use_cache: bool = False, progress: Progress = quiet,
                 signer: CardSigner | None = None, early: Early | None = None,
                 lazy: bool = False, keep: bool = False) -> Result:
    """`early`, when given, is where the card of each valid, public agent
    compiled in this run is written as soon as it is made. `lazy`: the
    caller mostly compares digests (`knoc check`): a patched run joins its
    large files only when they are read. `keep`: the caller writes build/ from the result: a
    patched run's rendering is stored too (`warm.patch`)."""
    with pool.collector_paused():  # hundreds of thousands of results, entities and pieces; few cycles
        result = _compile_repo(config, use_cache, progress, signer, early, lazy, keep)
    if signer is None:  # what only a signed card is concerned by
        result.report.drop("KNO-SIGNING-UNPROTECTED")
    return result


def _compile_repo(config: Config, use_cache: bool, progress: Progress, signer: CardSigner | None,
                  early: Early | None, lazy: bool, keep: bool) -> Result:
    report = Report()
    spec_paths, content_paths, paths = _listed(config, use_cache, report)
    spec_sources, specs, cache, results = _spec_stage(config, spec_paths, use_cache, report, scratch=True)
    spec_inputs = _inputs(spec_sources, results)
    if use_cache and signer is None:
        patched = warm.patch(config, content_paths, specs, spec_inputs, cache, config.host, lazy, keep)
        if patched is not None:
            report.extend(patched.diags)
            return Result(report, paths, patched.cards, patched.published, patched.agents, patched.untwinned,
                          patched.files, patched.digests, cache, patched.base, roots=patched.roots)
    content, written = _each_file(config, content_paths, specs, cache, results, report, progress, early)
    content.sort(key=lambda s: s.rel)
    for src in content:
        report.extend(results.found(src.rel))
    sources = sorted(spec_sources + content, key=lambda s: s.rel)
    unread = sorted(set(content_paths).difference(s.rel for s in content))  # each said why, in `report`
    link, link_key = _link(sources, results, specs, cache, config, unread)
    report.extend(link.diags)

    cards = Cards(link.published, results.cards)
    result = Result(report, paths, cards, link.published, link.agents, link.untwinned, cache=cache, early=written,
                    roots=link.roots)
    if result.ok:
        inputs = spec_inputs + _inputs(content, results)
        tree, digests = render(cards, link.files, link.digests, inputs, config.a2a, config.host, signer, cache,
                               link.roots)
        # As columns, as the rendered layer and build/'s memo keep them: the dict is 27 MB at 100,000 agents.
        result.files, result.digests = tree, Digests.of(digests)
        del digests
        if signer is None and cache.link is not None and cache.link.key == link_key:
            result.base = warm.remember(cache, link_key, config.host, content_paths, results, cards, tree,
                                        result.digests, inputs)
    return result


@dataclass
class Files:
    """The one-file stages' results of every source of a repo, held in
    memory (`compile_files`): what a language server keeps, and updates a
    file at a time."""

    config: Config
    specs: SpecSet
    sources: dict[str, SourceFile]  # every source compiled, specs and content, by path
    results: FileResults
    report: Report  # what the listing and the specs found, and the sources that could not be read
    listed: frozenset[str]  # every source the repo's listing gave, read or not


def listed_paths(config: Config) -> frozenset[str]:
    """The sources a build of the repo reads, as it lists them now."""
    return frozenset(_listed(config, False, Report())[2])


def compile_files(config: Config, use_cache: bool = True) -> Files:
    """The one-file stages over the whole repo (through the cache, when
    `use_cache`: kept results are reused, new ones are not kept)."""
    report = Report()
    spec_paths, content_paths, paths = _listed(config, use_cache, report)
    spec_sources, specs, cache, results = _spec_stage(config, spec_paths, use_cache, report, scratch=False)
    content, _ = _each_file(config, content_paths, specs, cache, results, report, quiet, None)
    return Files(config, specs, {s.rel: s for s in sorted(spec_sources + content, key=lambda s: s.rel)}, results,
                 report, frozenset(paths))


def link_files(files: Files, decoded: Callable[[], Decoded] | None = None) -> LinkResult:
    """The link stage's findings over `files`, as a build without a cache
    finds them (only where the outputs go is asked: nothing is rendered).
    `decoded`: what it reads of each file, kept decoded (`knoc.incremental.kept`)."""
    sources = list(files.sources.values())
    try:
        return _linked(sources, files.results, files.specs, Cache.off(), files.config,
                       files.listed - files.sources.keys(), render=False,
                       decoded=decoded() if decoded is not None else None)
    except Exception as exc:  # a bug: reported
        return LinkResult([internal(exc)], {}, [], {}, {})


def _listed(config: Config, use_cache: bool, report: Report) -> tuple[list[str], list[str], list[str]]:
    """The repo's spec and content paths, and both in one sorted list."""
    spec_paths, content_paths, refused = source_list.sources(config.root, config.specs, config.content, use_cache)
    report.extend(diag("KNO-IO-REFUSED", f"knoc does not read this: {why}", file=shown) for shown, why in refused)
    specs_too = source_list.shared(spec_paths, content_paths)  # specs/ inside content/: a spec is not content too
    if specs_too:
        content_paths = [p for p in content_paths if p not in specs_too]
    return spec_paths, content_paths, source_list.merged(spec_paths, content_paths)


def _spec_stage(config: Config, spec_paths: list[str], use_cache: bool, report: Report, scratch: bool
                ) -> tuple[list[SourceFile], SpecSet, Cache, FileResults]:
    """The specs, read and checked every time (content goes through the
    cache), the cache salted with them, and the results they begin."""
    spec_sources, loaded, specs = _specs(config, spec_paths, report)
    if use_cache and (unused_why := unused(config.root)) is not None:
        why, fix = unused_why
        report.add(diag("KNO-CACHE-UNUSED", f"{why}: knoc does not use it, and compiles every file", file=f"{DIR}/",
                        hint=fix))
    cache = (Cache.open(config.root, salt(__version__, config.a2a, repr(config.primary), config.catalog_url,
                                          *(f"{s.rel}\0{s.digest}" for s in spec_sources)))
             if use_cache else Cache.off())
    results = FileResults(Held(cache.scratch() if scratch else None, FileResults.TAIL))
    for s in spec_sources:
        results.add_result(s.rel, one_file(s, loaded[s.rel], specs, config.a2a, config.layout))
        report.extend(results.found(s.rel))
    return spec_sources, specs, cache, results


def _inputs(sources: list[SourceFile], results: FileResults) -> list[Input]:
    """The sources a spec declared, as the manifest lists them."""
    heads = ((s, results.head(s.rel)) for s in sources)
    return [(s.rel, s.digest, head.private) for s, head in heads if head.decl is not None]


def _each_file(config: Config, paths: list[str], specs: SpecSet, cache: Cache, results: FileResults,
               report: Report, progress: Progress, early: Early | None) -> tuple[list[SourceFile], Tree]:
    """The one-file stages for each path, or what the cache kept for its
    bytes. A file whose size and mtime the cache vouches for is not read;
    the others are compiled on `config.jobs` processes (`_compile`), which
    write their cards to `early`. Returns the sources, and the cards written early."""
    sources: list[SourceFile] = []
    kept: dict[str, Source] = {}
    misses: list[str] = []
    # Per miss, as columns: size, mtime, ctime, inode (-1: not stat'ed); no stat_result held.
    sizes, mtimes, ctimes, inodes = array("q"), array("q"), array("q"), array("q")
    for rel in paths:
        st = files.stat(f"{config.root}/{rel}")
        old = cache.sources.get(rel)
        if (st is not None and old is not None and cache.vouches(rel, old, st) and isinstance(old.entry, tuple)
                and FileResult.decode(old.entry) is not None):
            sources.append(SourceFile(f"{config.root}/{rel}", rel, None, old.digest))  # not even read
            results.add(rel, old.entry)
            old.entry = results.kept(rel)  # held once, compact
            kept[rel] = old
            continue
        misses.append(rel)
        sizes.append(-1 if st is None else st.st_size)
        mtimes.append(-1 if st is None else st.st_mtime_ns)
        ctimes.append(-1 if st is None else st.st_ctime_ns)
        inodes.append(-1 if st is None else st.st_ino)
    if early is not None and misses:
        early.begin()
    job = _Job(config, specs, cache, early)
    written: list[str] = []
    # Closed even on the way out of an error: no worker is left writing.
    jobs = config.jobs or pool.cores()
    each = pool.each(_compile, job, misses, jobs) if pool.forks(jobs, len(misses)) else _here(job, misses)
    with contextlib.closing(each) as compiled:
        for done, (rel, (got, wrote)) in enumerate(zip(misses, compiled, strict=True), 1):
            if done % 256 == 0:
                progress("compiling", done, len(misses))
            if isinstance(got, Diagnostic):
                report.add(got)
                continue
            digest, entry = got
            sources.append(SourceFile(f"{config.root}/{rel}", rel, None, digest))
            found = results.add(rel, entry)  # checked as it was encoded (`compile_source`)
            if wrote:
                written.append(rel)
            i = done - 1
            if sizes[i] >= 0 and not has_internal(found):  # never keep a bug's outcome
                kept[rel] = Source(digest, sizes[i], mtimes[i], ctimes[i], inodes[i], results.kept(rel))
    early_cards = Tree.of_cards(written, results.cards)
    if early is not None and written:
        early.written_early(list(early_cards))
    cache.sources = kept
    return sources, early_cards


@dataclass(frozen=True)
class _Job:
    """What each worker compiles its files with."""

    config: Config
    specs: SpecSet
    cache: Cache
    early: Early | None


def _here(job: _Job, rels: list[str]) -> Generator[tuple[tuple[str, Encoded] | Diagnostic, bool], None, None]:
    """`_compile` each file in this process, as a worker would."""
    with pool.collecting():
        yield from (_compile(job, rel) for rel in rels)


def _compile(job: _Job, rel: str) -> tuple[tuple[str, Encoded] | Diagnostic, bool]:
    """One file, in a worker; and its card, written early if it may be."""
    config, specs, cache, early = job.config, job.specs, job.cache, job.early
    got = compile_source(config, specs, cache, rel)
    if early is None or isinstance(got, Diagnostic) or (card := publishable(got[1])) is None:
        return got, False
    return got, early.write_card(card_files(card))


def _link(sources: list[SourceFile], results: FileResults, specs: SpecSet, cache: Cache,
          config: Config, unread: list[str]) -> tuple[LinkResult, str]:
    """The link stage's findings, reused when no link key changed and no file
    its findings point into changed; and the key they are kept under.
    `unread`: the content files listed that could not be read."""
    digests = {s.rel: s.digest for s in sources}
    key = hashlib.sha256("\n".join([*(f"{s.rel}\0{results.head(s.rel).link_key}" for s in sources),
                                    *(f"{rel}\0unread" for rel in unread),
                                    repr(config.primary_at)]).encode("utf-8")).hexdigest()  # where its findings are
    link = LinkResult.restore(cache.get_link(key, digests))
    if link is None:
        try:
            link = _linked(sources, results, specs, cache, config, unread)
        except Exception as exc:  # a bug: reported, never cached
            return LinkResult([internal(exc)], {}, [], {}, {}), key
        pinned = {d.file: digests[d.file] for d in link.diags if d.file in digests}
        link.files = cache.keep_link(key, pinned, link.encode(), link.files, link.digests)
    return link, key


def _linked(sources: list[SourceFile], results: FileResults, specs: SpecSet, cache: Cache, config: Config,
            unread: Collection[str], render: bool = True, decoded: Decoded | None = None) -> LinkResult:
    """The link stage, then the files that read the whole repo, rendered
    (or, without `render`, only where they go: all its findings need)."""
    linked = link_repo(sources, results, specs, config.a2a, config.layout, config.primary, decoded, unread,
                       config.primary_at)
    files: Mapping[str, bytes] = {}
    digests: dict[str, str] = {}
    if render:
        joined, wanted = render_linked(linked.repo, linked.cards, linked.roots, linked.typed, cache,
                                       config.catalog_url or None)
        files, digests = joined.files, joined.digests
    else:
        wanted = linked_paths(linked.cards, linked.roots, linked.typed)
    return LinkResult(linked.diags + placed(linked, wanted), linked.agents, linked.published, files, digests,
                      linked.roots, linked.untwinned)


def spec_set(config: Config) -> tuple[SpecSet, Report]:
    """The specs a build of the repo at `config.root` checks entities
    against (knoc's own where the repo has no spec of a slug), and what is
    wrong with them."""
    report = Report()
    listing = files.listed(config.root, [config.specs])
    report.extend(diag("KNO-IO-REFUSED", f"knoc does not read this: {why}", file=shown)
                  for shown, why in listing.refused)
    _, loaded, specs = _specs(config, listing.found, report)
    report.extend(d for d in loaded.values() if isinstance(d, Diagnostic))  # a spec that does not parse
    return specs, report


def _specs(config: Config, paths: list[str], report: Report
           ) -> tuple[list[SourceFile], dict[str, Entity | Diagnostic], SpecSet]:
    sources = [s for p in paths if (s := _read(config, p, report))]
    loaded = {s.rel: parse_source(s, config.layout) for s in sources}
    sources += _builtin_specs(loaded, config.layout)
    specs, found = compile_specs([e for e in loaded.values() if isinstance(e, Entity)])
    report.extend(found)
    return sources, loaded, specs


def _builtin_specs(loaded: dict[str, Entity | Diagnostic], layout: Layout) -> list[SourceFile]:
    """knoc's own specs for every type the repo's specs/ does not define (a
    repo spec overrides the built-in one of the same slug); each is added
    to `loaded` as it is parsed. A built-in spec's file is named after its
    slug, so an overridden one is not even read."""
    taken = {e.slug for e in loaded.values() if isinstance(e, Entity)}
    out = []
    for rel in files.discover(BUILTIN_SPECS.parent, [BUILTIN_SPECS.name]):
        if rel.rsplit("/", 1)[-1].removesuffix(".kno") in taken:
            continue
        source = source_at(BUILTIN_SPECS.parent, rel, shown=f"{BUILTIN}{rel}")
        if isinstance(source, Diagnostic):  # an installation that lost files: knoc's bug, not the author's
            raise RuntimeError(f"knoc's built-in spec {rel} cannot be read: {source.message}")
        entity = parse_source(source, layout)
        if isinstance(entity, Entity) and entity.slug not in taken:
            loaded[source.rel] = entity
            out.append(source)
    return out


def _read(config: Config, rel: str, report: Report) -> SourceFile | None:
    read = source_at(config.root, rel)
    if isinstance(read, Diagnostic):
        report.add(read)
        return None
    return read
