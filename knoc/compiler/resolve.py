"""Stage 4, resolve: the repo as a graph. Ids are unique, slugs unique per
kind and safe as a path segment, every reference lands on an entity, and
`extends` has no cycle. Produces the agents and domains later stages read."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Hashable, Iterable

from knoc.diagnostics import Diagnostic, JsonPath, at
from knoc.diagnostics.duplicates import duplicate
from knoc.kinds.agent import Agent
from knoc.kinds.domain import COLLECTION, Domain, Repo
from knoc.kinds.entity import Typed, is_public, kind_of
from knoc.rules import graph, ulid
from knoc.rules import slug as slugs

LINK_KINDS = ("extends", "depends_on", "composes", "related_to")
KNO_XRI = re.compile(r"^kno://([a-z0-9-]+)/(.+)$")
PSPACE_XRI = re.compile(r"^pspace://([a-z0-9-]+):(.+)$")


def resolve(typed: list[Typed], agents: dict[Typed, Agent],
            broken: frozenset[tuple[str, str]] = frozenset()) -> tuple[Repo, list[Diagnostic]]:
    """`agents`: the Agent of each agent entity in `typed`. `broken`:
    (collection, file stem) of the sources with errors of their own. A
    reference to one of them is not reported again: its file says what is
    wrong."""
    # Those with a slug and an id, by path: the first of two that claim one is the one kept.
    ok = sorted((t for t in typed if isinstance((d := t.data).get("slug"), str) and isinstance(d.get("id"), str)),
                key=_path)
    diags = [*_unique(ok, key=lambda t: t.data["id"], field_="id", code="KNO-ID-DUPLICATE", scope="the repo"),
             *_unique(ok, key=lambda t: (kind_of(t), t.data["slug"]), field_="slug", code="KNO-SLUG-DUPLICATE",
                      scope="its kind")]
    names = functools.cache(lambda: ({o.source.rel for o in ok}, {(kind_of(o), o.data["slug"]) for o in ok}))
    for t in ok:
        if t.valid and not slugs.is_slug(t.data["slug"]):  # its spec may not say so: slugs become paths
            diags.append(at(t.source, ("slug",), "KNO-SLUG-UNSAFE",
                            f"slug `{t.data['slug']}` is not safe as a path segment", f"use {slugs.WHAT}"))
        elif t.valid and (name := t.source.rel.rsplit("/", 1)[-1].removesuffix(".kno")) != t.data["slug"]:
            diags.append(at(t.source, ("slug",), "KNO-SLUG-FILE", f"slug `{t.data['slug']}` is not the file's "
                            f"name (`{name}.kno`): a reader who follows a reference to `{t.data['slug']}` looks for "
                            f"{t.data['slug']}.kno", _renamed(t, name, names())))

    index = _Index(ok, broken)
    linking = {t: links for t in ok if (links := list(_links(t)))}  # most entities link to nothing
    domain_slugs = sorted(t.data["slug"] for t in ok if t.type == "perception-domain")
    known_domains = set(domain_slugs)
    repo = Repo()
    for t in linking:
        diags += _check_links(t, linking[t], index)
    for t in ok:
        if t.type == "perception-domain":
            category = t.data.get("category")
            repo.domains.append(Domain(t.data["slug"], is_public(t), category if isinstance(category, str) else None))
        elif (agent := agents.get(t)) is not None:
            diags += _check_domains(t, agent, known_domains, domain_slugs, index)
            if agent.composes:  # the links `_check_composes` reads
                diags += _check_composes(t, index)
            repo.agents.append(agent)
    diags += _extends_cycles(linking, index)
    repo.agents.sort(key=lambda a: a.slug)
    repo.domains.sort(key=lambda d: d.slug)
    return repo, diags


def _path(t: Typed) -> str:
    return t.entity.source.rel


class _Index:
    def __init__(self, typed: list[Typed], broken: frozenset[tuple[str, str]] = frozenset()) -> None:
        self.broken = broken
        self.by_id: dict[str, Typed] = {}
        self.by_collection: dict[tuple[str, str], Typed] = {}
        self.by_type: dict[tuple[str, str], Typed] = {}
        for t in typed:
            data = t.data
            self.by_id[data["id"]] = t
            self.by_collection.setdefault((t.entity.collection, data["slug"]), t)
            self.by_type.setdefault((t.type, data["slug"]), t)

    def names_broken(self, xri: str) -> bool:
        """Whether `xri` names a file that has errors of its own."""
        m = KNO_XRI.match(xri)
        return m is not None and (m.group(1), m.group(2)) in self.broken

    def lookup(self, xri: str) -> Typed | None:
        m = KNO_XRI.match(xri)
        if m:
            return self.by_collection.get((m.group(1), m.group(2)))
        m = PSPACE_XRI.match(xri)
        if m:
            type_, ref = m.groups()
            hit = self.by_id.get(ref) if ulid.is_ulid(ref) else self.by_type.get((type_, ref))
            return hit if hit is not None and hit.type == type_ else None
        return None

    def slugs_in(self, collection: str) -> list[str]:
        return sorted(s for c, s in self.by_collection if c == collection)


def _links(t: Typed) -> Iterable[tuple[JsonPath, str, str]]:
    rels = t.data.get("relationships")
    if isinstance(rels, dict):
        for kind in LINK_KINDS:
            for i, link in enumerate(rels.get(kind) or []):
                if isinstance(link, dict) and isinstance(link.get("xri"), str):
                    yield ("relationships", kind, i, "xri"), link["xri"], kind


def _check_links(t: Typed, links: list[tuple[JsonPath, str, str]], index: _Index) -> Iterable[Diagnostic]:
    for path, xri, _kind in links:
        if index.lookup(xri) is None and not index.names_broken(xri):
            yield _unresolved(t, path, xri, index)


def _unresolved(t: Typed, path: JsonPath, xri: str, index: _Index) -> Diagnostic:
    m = KNO_XRI.match(xri)
    hint = "an xri is kno://<collection>/<slug> or pspace://<type>:<id-or-slug>"
    if m:
        near = difflib.get_close_matches(m.group(2), index.slugs_in(m.group(1)), n=1)
        hint = (f"did you mean `kno://{m.group(1)}/{near[0]}`?" if near else
                f"no entity `{m.group(2)}` in {m.group(1)}/: add it or fix the reference")
    return at(t.source, path, "KNO-RESOLVE-XRI", f"`{xri}` does not resolve to an entity", hint)


def _check_domains(t: Typed, agent: Agent, known: set[str], ordered: list[str],
                   index: _Index) -> Iterable[Diagnostic]:
    base = ("persona", "perception", "domains") if t.type == "agent-blueprint" else ("perception", "domains")
    for i, slug in enumerate(agent.domains):
        if slug not in known and not index.names_broken(f"kno://{COLLECTION}/{slug}"):
            near = difflib.get_close_matches(slug, ordered, n=1)
            hint = f"did you mean `{near[0]}`? " if near else ""
            yield at(t.source, (*base, i), "KNO-RESOLVE-DOMAIN",
                      f"perception domain `{slug}` does not exist",
                      f"{hint}add content/{COLLECTION}/{slug}.kno, or use one of: "
                      f"{', '.join(ordered) or '(none defined)'}")


def _check_composes(t: Typed, index: _Index) -> Iterable[Diagnostic]:
    links = t.data.get("composes") if t.type == "agent-blueprint" else None
    for i, link in enumerate(links if isinstance(links, list) else []):
        xri = link.get("xri") if isinstance(link, dict) else None
        if not isinstance(xri, str):
            continue
        target = index.lookup(xri)
        if target is None:
            if not index.names_broken(xri):
                yield _unresolved(t, ("composes", i, "xri"), xri, index)
        elif kind_of(target) != "agent":
            yield at(t.source, ("composes", i, "xri"), "KNO-RESOLVE-COMPOSES",
                      f"`{xri}` is a {target.type}, not an agent",
                      "an agent composes (delegates to) other agents: kno://agent-blueprints/<slug>")
        elif target is t:
            yield at(t.source, ("composes", i, "xri"), "KNO-RESOLVE-COMPOSES",
                      "an agent cannot delegate to itself", "remove this entry")


def _extends_cycles(linking: dict[Typed, list[tuple[JsonPath, str, str]]], index: _Index
                    ) -> Iterable[Diagnostic]:
    """`linking`: each entity's links, of those with any (only they can be on a cycle)."""
    parents: dict[Typed, list[tuple[JsonPath, Typed]]] = {}
    for t, links in linking.items():
        for path, xri, kind in links:
            target = index.lookup(xri) if kind == "extends" else None
            if target is not None:
                parents.setdefault(t, []).append((path, target))
    for cycle in graph.cycles(sorted(parents, key=_path), parents):
        first, path = cycle[0]
        yield at(first.source, path, "KNO-EXTENDS-CYCLE", f"`extends` forms a cycle: {graph.show(cycle)}",
                 "an entity cannot extend itself, directly or through others; remove one link")


def _unique(typed: list[Typed], key: Callable[[Typed], Hashable], field_: str, code: str, scope: str
            ) -> Iterable[Diagnostic]:
    """A finding for each entity whose `field_` an earlier file (`typed`
    is by path) already uses, pointing at that file (the edge moves it to
    the new one)."""
    first: dict[Hashable, Typed] = {}
    hint = (f"an id must be unique within {scope}: give this entity its own (`knoc id` prints a fresh one)"
            if field_ == "id" else f"a {field_} must be unique within {scope}: give this entity its own "
            f"(and its file the same name)")
    for t in typed:
        k = key(t)
        if k in first:
            yield duplicate(code, f"{field_} `{t.data[field_]}`", t.source, (field_,), first[k].source, (field_,),
                            hint)
        else:
            first[k] = t


def _renamed(t: Typed, name: str, taken: tuple[set[str], set[tuple[str, str]]]) -> str:
    """How to make an entity's slug and file name one: the renames that
    take no name another file, or entity of its kind, has (`taken`)."""
    slug, (files, kinds) = t.data["slug"], taken
    ways = [] if f"{t.source.rel.rpartition('/')[0]}/{slug}.kno" in files else [f"rename the file to {slug}.kno"]
    if slugs.is_slug(name) and (kind_of(t), name) not in kinds:
        ways.append(f"set `slug: {name}` (and what refers to it)")
    return ", or ".join(ways) or f"give the file and the slug one name ({slugs.WHAT})"
