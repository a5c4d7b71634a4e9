"""The warm path: what the last run rendered, patched with the few sources
that changed since, when none of them changed what the link stage reads.

At 100,000 agents the full path decodes every source's cached entry and
joins every whole-repo file again, even after a one-word edit. Here a run
stats the sources against what the last run rendered (`Rendered`, the
cache's third layer), compiles the few that changed and patches the files
that join every card (`knoc.output.patch`); a card left as it was is read
from the cache only if asked for. Anything else (a file added or removed,
a changed link key, a file the link stage's findings point into, signing,
more than `MAX_CHANGED` edits, anything not as stored) is the full path's:
`patch` returns None. Both paths give the same bytes (tests/test_warm.py)."""

from __future__ import annotations

import json
import os
import secrets
import time
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from knoc.compiler.records import FileResult, LinkResult, diagnostics
from knoc.compiler.results import FileResults
from knoc.config import Config
from knoc.diagnostics import Diagnostic
from knoc.diagnostics.internal import has_internal
from knoc.incremental.sources import compile_source
from knoc.io import files
from knoc.io.cache import RACY_NS, Cache, CacheDamaged, Source, Stat
from knoc.io.outputs import Base
from knoc.kinds.agent import Card, Cards, Projections
from knoc.kinds.spec import SpecSet
from knoc.output.patch import Edit
from knoc.output.patch import patch as patch_files
from knoc.output.tree import Parted, Tree, all_paths, sources_digest
from knoc.output.views import Previous, plain
from knoc.rules.heads import Heads, Input
from knoc.rules.records import UNREADABLE, Digests, Encoded, Record, Stored, number, table, text, texts

MAX_CHANGED = 16  # more edits than this: the full path, which compiles them on every core (and stores them)

@dataclass(slots=True)
class Rendered(Record):
    """What a run rendered, kept so the next run can patch it."""

    VERSION: ClassVar[int] = 4

    token: str  # names this rendering, for the memo of build/ (knoc.io.outputs.Base)
    saved: int  # when (ns): a source whose mtime is this recent is hashed again
    sources: Heads  # every content source, in path order
    diags: dict[str, Stored]  # each content source's findings (encoded), of those with any
    sites: list[str]  # each published card's folder under site/, in the link stage's order
    digests: Mapping[str, str]  # sha256 of every output (a dict or Digests: `plain`)
    sources_digest: str  # the manifest's

    def encode(self) -> Encoded:
        return self.encoded(sources=self.sources.encode(), digests=Digests.of(self.digests).stored())

    @classmethod
    def decode(cls, raw: object) -> Rendered | None:
        try:
            token, saved, sources, diags, sites, digests, sources_digest = cls.fields_of(raw)
            return cls(text(token), number(saved), Heads.decode(sources), dict(table(diags)), texts(sites),
                       Digests.decode(digests), text(sources_digest))
        except UNREADABLE:
            return None


@dataclass
class Patched:
    """The run's outcome, as the full path would have found it."""

    diags: list[Diagnostic]  # the content sources' and the link stage's
    published: list[tuple[str, str]]
    agents: dict[str, str]
    untwinned: list[str]
    cards: Sequence[Card]
    files: Tree
    digests: Mapping[str, str]
    base: Base
    roots: dict[str, str]  # host -> slug of the card also served at its root


def key(link_key: str, operator: tuple[tuple[str, str], ...]) -> str:
    return json.dumps([link_key, operator])


def remember(cache: Cache, link_key: str, operator: tuple[tuple[str, str], ...], content: list[str],
             results: FileResults, cards: Sequence[Card], tree: Tree, digests: Mapping[str, str],
             inputs: list[Input]) -> Base | None:
    """Keep what the full path rendered, if the cache vouches for every
    source; the rendering kept."""
    # Straight into the columns the memo keeps (`content` is in path order, as listed):
    # no tuple of each of 100,000 sources on the way.
    sha256s, stats, declared = [], array("q"), bytearray()
    for rel in content:
        s = cache.source(rel)
        if s is None:
            return None
        sha256s.append(s.digest)
        stats.extend((s.size, s.mtime_ns, s.ctime_ns, s.inode))
        declared.append(results.head(rel).decl is not None)
    heads = Heads(Digests.of_rows(content, "".join(sha256s)), stats, bytes(declared))
    del sha256s
    found: dict[str, Stored] = {rel: [d.to_dict() for d in diags] for rel in content
                                if (diags := results.found(rel))}
    memo = Rendered(secrets.token_hex(16), time.time_ns(), heads, found,
                    [c.projection.site_dir for c in cards], digests, sources_digest(inputs))
    return _keep(cache, key(link_key, operator), memo, tree.rendered)


def _keep(cache: Cache, key: str, memo: Rendered, files: Mapping[str, bytes],
          already: dict[str, Stat] | None = None) -> Base | None:
    """Store `memo` as the rendered layer, with `files` (and the stored
    files of `already`); the rendering it now is, if stored."""
    stats = cache.stats_of(files)  # the cache's own stored files: stored already
    if stats is None:
        stats = {}
        for path in files:  # one at a time, a patched one as its parts: the catalog alone is 100 MB
            st = cache.store_file(files.parts(path) if isinstance(files, Parted) else files[path], memo.digests[path])
            if st is None:
                return None
            stats[path] = st
    kept = cache.keep_rendered(key, memo.encode(), {**(already or {}), **stats})
    return Base(memo.token, memo.digests) if kept else None


@dataclass
class _Update:
    rel: str
    st: os.stat_result
    digest: str
    entry: Encoded
    old: FileResult
    new: FileResult


def patch(config: Config, content: list[str], specs: SpecSet, spec_inputs: list[Input], cache: Cache,
          operator: tuple[tuple[str, str], ...], lazy: bool = False, keep: bool = False) -> Patched | None:
    """The run's outcome patched from the last one's, or None. `lazy`: the
    files that join every card are patched only when read (a check, which
    mostly needs to know which outputs moved, `Base.moved`); a failure to
    patch them is then CacheDamaged, not the full path. `keep`: store what
    an edit rendered (a build)."""
    link = cache.link
    found = None if link is None else cache.get_rendered(key(link.key, operator))
    memo = None if found is None else Rendered.decode(found[0])
    if link is None or found is None or memo is None or memo.sources.paths != content:
        return None
    updates = _updates(config, specs, cache, memo, link.pinned)
    if updates is None:
        return None
    pinned = {rel: memo.sources.digest(rel) for rel in link.pinned if rel in memo.sources}  # all get_link compares
    linked = LinkResult.restore(cache.get_link(link.key, pinned | {rel: d for rel, d, _ in spec_inputs}))
    if linked is None:
        return None
    heads = memo.sources.updated({u.rel: (u.digest, u.st.st_size, u.st.st_mtime_ns, u.st.st_ctime_ns, u.st.st_ino,
                                          u.new.decl is not None) for u in updates})
    edited = [u for u in updates if u.digest != memo.sources.digest(u.rel)]
    wanted = {u.rel for u in edited}
    slugs = {rel: slug for slug, rel in linked.published if rel in wanted}
    cards = [(u.rel, slugs[u.rel], u.old.projection, u.new.projection) for u in edited if u.rel in slugs]
    changed = [(slug, old, new) for _, slug, old, new in cards if old is not None and new is not None]
    if len(changed) != len(cards):
        return None
    patched: Mapping[str, bytes] = {}
    latest: Callable[[], str] = lambda: memo.sources_digest
    digests: Mapping[str, str] = memo.digests
    moved: frozenset[str] = frozenset()
    if edited:
        public = [(u.rel, memo.sources.digest(u.rel), u.digest) for u in edited if u.new.decl and not u.new.private]
        done = patch_files(found[1], memo.digests,
                           Edit(changed, public, (memo.sources_digest, spec_inputs, heads), _root_of(linked.roots)),
                           cache.unpatched)
        if done is None:
            return None
        if not lazy or len(updates) > MAX_CHANGED // 2:
            try:
                done.joined()
            except CacheDamaged:
                return None
        patched, digests, moved, latest = done.files, done.digests, done.moved, done.sources_digest
    projections = Projections(cache.entries(memo.sources.digests, {u.rel: u.entry for u in updates}),
                              FileResult.position("projection"))
    root_of = _root_of(linked.roots)
    previous = Previous(digests, found[1], linked.files, projections, linked.published, memo.sites, linked.roots)
    rel_of = dict(linked.published)
    tree = Tree.of_cards([rel for rel, *_ in cards], projections, patched, previous,
                         {rel_of[slug]: host for slug, host in root_of.items()})
    base = Base(memo.token, memo.digests,
                frozenset(patched).union(*(all_paths(new, root_of, slug) for slug, _, new in changed)), moved)
    updated = {u.rel for u in updates}
    found_in: dict[str, Stored] = {rel: raw for rel, raw in memo.diags.items() if rel not in updated}
    found_in.update({u.rel: [d.to_dict() for d in u.new.diags] for u in updates if u.new.diags})
    # A few edits are patched in again next time: that costs less than
    # storing tens of megabytes anew at each run. A build keeps them: the
    # build/ it writes is then this rendering, not one with overrides,
    # and the next check learns what its edit moved without reading.
    if len(updates) > MAX_CHANGED // 2 or (keep and edited):
        for u in updates:
            cache.put(u.rel, Source.of(u.digest, u.st, u.entry))
        kept = Rendered(secrets.token_hex(16), time.time_ns(), heads, found_in, memo.sites, plain(digests), latest())
        stored = _keep(cache, key(link.key, operator), kept, patched, cache.rendered_files())
        base = base if stored is None else stored._replace(parent=base)
    diags = [d for raw in found_in.values() for d in diagnostics(raw)] + linked.diags
    return Patched(diags, linked.published, linked.agents, linked.untwinned, Cards(linked.published, projections),
                   tree, digests, base, linked.roots)


def _root_of(roots: dict[str, str]) -> dict[str, str]:
    """slug -> host of each host's primary agent."""
    return {slug: host for host, slug in roots.items()}


def _updates(config: Config, specs: SpecSet, cache: Cache, memo: Rendered, pinned: dict[str, str]
             ) -> list[_Update] | None:
    """Each source whose stat changed since it was rendered (or is too
    recent to trust), compiled; None when the warm path cannot take them."""
    heads, racy = memo.sources, memo.saved - RACY_NS
    try:
        with files.stat_in(config.root) as stat_one:
            now = files.stats(heads.paths, ("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino"), stat_one)
    except OSError:
        return None
    if now is None:  # a source is gone
        return None
    rows = set(files.differing_rows(now, heads.stats, 4))
    mtimes = heads.stats[1::4]
    if max(mtimes, default=0) > racy:  # some too recent to trust (looked for only then: a loop over every source)
        rows.update(i for i, mtime in enumerate(mtimes) if mtime > racy)
    if len(rows) > MAX_CHANGED:
        return None
    changed = []
    for i in sorted(rows):  # each stat'ed again for its whole result (`_Update`)
        st = files.stat(f"{config.root}/{heads.paths[i]}")
        if st is None:
            return None
        changed.append((heads.paths[i], st))
    updates = []
    for rel, st in changed:
        got = compile_source(config, specs, cache, rel)
        if isinstance(got, Diagnostic):
            return None
        digest, entry = got
        old = FileResult.decode(cache.get(rel, memo.sources.digest(rel)))
        new = FileResult.decode(entry)
        if (old is None or new is None or new.link_key != old.link_key
                or has_internal(new.diags) or (rel in pinned and digest != memo.sources.digest(rel))):
            return None
        updates.append(_Update(rel, st, digest, entry, old, new))
    return updates
