"""The link stage: the whole repo at once, from each file's facts and
projection only (so a cached run and a fresh one cannot differ): resolve
references, publish the cards, check extension entries and delegation
chains; then, once the files that read the whole repo are rendered, where
they go (`placed`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Iterable, Iterator, MutableMapping
from dataclasses import dataclass, field

from knoc.a2a.capability import Contract
from knoc.compiler.publish import publish
from knoc.compiler.resolve import resolve
from knoc.compiler.results import FileResults
from knoc.diagnostics import Diagnostic, JsonPath, SourceFile, Span, at, diag
from knoc.kinds import delegation, extension
from knoc.kinds.agent import Agent, CardLookup, Cards, Projection, linked
from knoc.kinds.domain import Repo
from knoc.kinds.entity import Entity, Layout, Typed, is_public, kind_of
from knoc.kinds.spec import SpecSet
from knoc.output.hosting import JWKS_FILE, SITE, locate_url, site_dir
from knoc.output.linked import case_collisions, collisions
from knoc.output.pages import PAGE_FILE
from knoc.output.tree import KNOC


@dataclass(frozen=True)
class Linked:
    """What the link stage found, and what the files that read the whole
    repo are rendered from (`knoc.output.linked.render_linked`)."""

    diags: list[Diagnostic]
    agents: dict[str, str]  # slug -> source, of every agent, public or not
    published: list[tuple[str, str]]  # (slug, source) of each card to publish, in order
    roots: dict[str, str]  # host -> slug of the card also served at its root
    untwinned: list[str]  # slugs of the cards without agent.json
    repo: Repo
    cards: Cards  # the published cards' summaries (their bytes are not read here)
    typed: list[Typed]


@dataclass
class Decoded:
    """What the link stage reads of each file, decoded from its result
    (`decode`). A run decodes it afresh; `knoc lsp` keeps it across edits,
    decoding again only the files an edit changed (`knoc.incremental.live`)."""

    typed: list[Typed]
    agent_of: dict[Typed, Agent]  # the Agent of each agent in `typed`
    cards: CardLookup  # each card's summary
    contracts: MutableMapping[Agent, Contract] = field(default_factory=dict)  # as the delegation checks judge them


def decode(sources: list[SourceFile], results: FileResults, specs: SpecSet, layout: Layout) -> Decoded:
    typed, agent_of = typed_entities(sources, results, specs, layout)
    return Decoded(typed, agent_of, results.cards.summaries())


def link_repo(sources: list[SourceFile], results: FileResults, specs: SpecSet, target: str,
              layout: Layout, primary: Iterable[tuple[str, str]], decoded: Decoded | None = None,
              unread: Collection[str] = (), primary_at: Iterable[tuple[str, int, int]] = ()) -> Linked:
    """`primary`: knoc.toml's [primary] (host folder, agent slug) pairs, and
    `primary_at` where it sets each. `decoded`: each file's facts and card,
    if already decoded. `unread`: the files listed that could not be read
    (not UTF-8, say): like a file with errors, a reference to one is not
    reported again."""
    decoded = decoded if decoded is not None else decode(sources, results, specs, layout)
    typed, agent_of = decoded.typed, decoded.agent_of
    erring = [s.rel for s in sources if any(d.is_error for d in results.found(s.rel))]
    broken = frozenset((layout.collection_of(rel), rel.rsplit("/", 1)[-1].removesuffix(".kno"))
                       for rel in [*erring, *unread])
    repo, diags = resolve(typed, agent_of, broken)
    carded = set(results.carded)
    agents = [a for a in repo.agents if a.typed.source.rel in carded]
    del carded

    def projected() -> Iterator[tuple[Agent, Projection]]:  # decoded one at a time, each time
        return ((a, decoded.cards.projection(a.typed.source.rel)) for a in agents)

    published = publish(projected(), dict(primary), {host: Span(line, column) for host, line, column in primary_at},
                        {a.slug for a in repo.agents})
    found = published.diags
    known, found_ext = extension.registry(typed)
    found += found_ext + extension.check_cards(projected(), known) + delegation.check(repo.agents, target,
                                                                                     decoded.contracts)
    return Linked(diags + found, {a.slug: a.typed.source.rel for a in repo.agents}, published.cards,
                  published.roots, published.untwinned, repo, Cards(published.cards, decoded.cards),
                  typed)


def placed(linked: Linked, wanted: dict[str, list[str]]) -> list[Diagnostic]:
    """What is wrong with where the outputs go, once rendered (`wanted`:
    who wants each path, `knoc.output.linked.linked_paths`)."""
    typed = linked.typed
    return _collisions(wanted, typed, linked.repo) + _catalog_pages_taken(wanted, typed) + _pageless(typed)


def _catalog_pages_taken(wanted: dict[str, list[str]], typed: list[Typed]) -> list[Diagnostic]:
    """An extension whose page is a card host's root page: the host's tree
    then has no catalog page, and its agent pages' catalog link leads to
    the extension (a warning: the all-hosts catalog still lists them)."""
    diags = []
    for t in typed:
        host = site_dir(str(t.data.get("uri"))) if t.type == "extension" else None
        if not host or "/" in host:
            continue
        mine = wanted.get(f"{SITE}{host}/{PAGE_FILE}", [""])[0] == t.source.rel
        if f"{SITE}{host}/{JWKS_FILE}" in wanted and mine:
            diags.append(at(t.source, ("uri",), "KNO-CATALOG-PAGE-TAKEN",
                            f"this extension's page is `{host}`'s root page, where the host's catalog page "
                            "of its agents would be: that host's tree has none",
                            "give the extension a uri with a path (`https://host/extensions/name`)"))
    return diags


def _pageless(typed: list[Typed]) -> list[Diagnostic]:
    """A public extension whose uri cannot be a page under build/site/ (not
    http(s), a `.well-known` segment, a host or path knoc cannot make a
    folder of): it gets none, and says so."""
    diags = []
    for t in typed:
        if t.type != "extension" or not t.valid or not is_public(t):
            continue
        uri = str(t.data.get("uri"))
        where = locate_url(uri)
        if isinstance(where, str):
            diags.append(at(t.source, ("uri",), "KNO-EXTENSION-NO-PAGE",
                            f"no page is written for this extension: its uri `{uri}` cannot be one ({where})",
                            "cards still carry the uri; to publish its page, give it an https uri on a host "
                            "and path of its own"))
    return diags


_CHUNK = 1024  # entities decoded at once


def typed_entities(sources: list[SourceFile], results: FileResults, specs: SpecSet,
                   layout: Layout) -> tuple[list[Typed], dict[Typed, Agent]]:
    """The typed entities, from their facts, and the Agent of each agent.
    Facts are decoded a chunk at a time: one decoding shares its key
    strings ("slug", "url", ...) among a chunk's entities, and an agent's
    whole facts live only until its Agent is made (`agent.linked`)."""
    typed: list[Typed] = []
    agents: dict[Typed, Agent] = {}
    alike: dict[tuple[object, ...], dict[str, object]] = {}
    for start in range(0, len(sources), _CHUNK):
        declared = [(src, head) for src in sources[start:start + _CHUNK]
                    if (head := results.head(src.rel)).decl is not None]
        facts = json.loads(f"[{','.join(head.facts for _, head in declared)}]")
        for (src, head), data in zip(declared, facts, strict=True):
            assert head.decl is not None
            t = Typed(Entity(src, data, sys.intern(layout.collection_of(src.rel))), *head.decl,
                      specs.by_declaration["@".join(head.decl)], head.valid)
            typed.append(t)
            if kind_of(t) == "agent":
                agents[t] = linked(t, alike)
    return typed, agents


def _collisions(wanted: dict[str, list[str]], typed: list[Typed], repo: Repo) -> list[Diagnostic]:
    """Two outputs on one path (or a file where another needs a folder):
    an error at the source that asked second, naming the other; two that
    differ only in case or Unicode form, a warning."""
    found, folded = collisions(wanted), case_collisions(wanted)
    if not found and not folded:
        return []
    where: dict[str, tuple[Typed, JsonPath]] = {t.source.rel: (t, ("uri",)) for t in typed if t.type == "extension"}
    where.update({a.typed.source.rel: (a.typed, (*a.card_path, "url")) for a in repo.agents})
    diags = []
    for path, first, other_path, other in folded:
        owner = "knoc's own output" if first == KNOC else first
        message = (f"`{other_path}` and `{path}` (of {owner}) differ only in case or Unicode form: a checkout of "
                   "the build on a file system that folds them (macOS, Windows) holds one of the two")
        hint = "give it a url or uri that differs in more than case"
        diags.append(at(where[other][0].source, where[other][1], "KNO-OUTPUT-CASE", message, hint)
                     if other in where else diag("KNO-OUTPUT-CASE", message, hint=hint))
    for path, first, other in found:
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
