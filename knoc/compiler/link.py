"""The link stage: the whole repo at once, from each file's facts and
projection only (so a cached run and a fresh one cannot differ): resolve
references, publish the cards, check extension entries and delegation
chains, and render the files that read the whole repo."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

from knoc.compiler.project import publish
from knoc.compiler.records import LinkResult
from knoc.compiler.resolve import resolve
from knoc.compiler.results import Results
from knoc.diagnostics import Diagnostic, JsonPath, SourceFile, at, diag
from knoc.kinds import delegation, extension
from knoc.kinds.agent import Agent, Cards, Projection
from knoc.kinds.domain import Repo
from knoc.kinds.entity import Entity, Layout, Typed
from knoc.kinds.spec import SpecSet
from knoc.output.tree import KNOC, Spill, collisions, render_linked


def link_repo(sources: list[SourceFile], results: Results, specs: SpecSet, target: str,
              layout: Layout, spill: Spill | None = None) -> LinkResult:
    declared: list[tuple[SourceFile, tuple[str, str], bool]] = []
    pieces: list[str] = []
    for src in sources:
        head = results.head(src.rel)
        if head.decl is not None:
            declared.append((src, head.decl, head.valid))
            pieces.append(head.facts)
    # One decoding for all: its key strings ("slug", "a2a_projection", ...)
    # are then shared, not made anew for each of a hundred thousand entities.
    joined = f"[{','.join(pieces)}]"
    del pieces
    facts = json.loads(joined)
    del joined
    typed = [Typed(Entity(src, data, sys.intern(layout.collection_of(src.rel))), *decl,
                   specs.by_declaration["@".join(decl)], valid)
             for (src, decl, valid), data in zip(declared, facts, strict=True)]
    del declared, facts
    broken = frozenset((layout.collection_of(s.rel), s.rel.rsplit("/", 1)[-1].removesuffix(".kno"))
                       for s in sources if any(d.is_error for d in results.found(s.rel)))
    repo, diags = resolve(typed, broken)
    carded = set(results.carded)
    agents = [a for a in repo.agents if a.typed.source.rel in carded]
    del carded

    def projected() -> Iterator[tuple[Agent, Projection]]:  # decoded one at a time, each time
        return ((a, results.projection(a.typed.source.rel)) for a in agents)

    published, found = publish(projected())
    cards = Cards(published, results.projection)
    known, found_ext = extension.registry(typed)
    found += found_ext + extension.check_cards(projected(), known) + delegation.check(repo.agents, target)
    files, wanted = render_linked(repo, cards, typed, spill)
    found += _collisions(wanted, typed, repo)
    return LinkResult(diags + found, {a.slug: a.typed.source.rel for a in repo.agents}, published,
                      files.files, files.digests)


def _collisions(wanted: dict[str, list[str]], typed: list[Typed], repo: Repo) -> list[Diagnostic]:
    """Two outputs on one path (or a file where another needs a folder):
    an error at the source that asked second, naming the other."""
    where: dict[str, tuple[Typed, JsonPath]] = {t.source.rel: (t, ("uri",)) for t in typed if t.type == "extension"}
    where.update({a.typed.source.rel: (a.typed, (*a.card_path, "url")) for a in repo.agents})
    diags = []
    for path, first, other in collisions(wanted):
        owner = "knoc's own output" if first == KNOC else first
        message = f"`{path}` would be written for both {owner} and this entity"
        hint = "give it a url or uri of its own: a published path holds one file"
        if other in where:
            t, at_path = where[other]
            diags.append(at(t.source, at_path, "KNO-OUTPUT-COLLISION", message, hint))
        else:
            diags.append(diag("KNO-OUTPUT-COLLISION", f"`{path}` would be written for both {owner} and {other}",
                              hint=hint))
    return diags
