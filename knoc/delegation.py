"""Part of the link stage: delegation chains (seed 001, multi-agent
orchestration). A `composes` link with `requires` promises that the whole
chain below it can do what it requires: each agent reached through it is
judged by the same capability contract discovery uses. Every link needs a
protocol version both ends speak, and delegation cycles are reported."""

from __future__ import annotations

import difflib
from collections import deque
from typing import Any, Iterable, NamedTuple

from knoc import capability
from knoc.capability import Contract
from knoc.diagnostics import Diagnostic, warning
from knoc.project import SERVICE_CLASS_URI
from knoc.resolve import Agent, Edges, at, cycles
from knoc.source import JsonPath


class Link(NamedTuple):
    source: Agent
    position: int  # in the source's `composes`
    target: Agent
    requires: tuple[str, ...]


def check(agents: list[Agent], target: str) -> list[Diagnostic]:
    by_slug = {a.slug: a for a in agents}
    contracts = {a.slug: contract_of(a.card, a.service_class, target) for a in agents}
    links: dict[str, list[Link]] = {}
    diags: list[Diagnostic] = []
    for agent in agents:
        for link in _links(agent, by_slug):
            links.setdefault(agent.slug, []).append(link)
            diags += _vocabulary(link)
    for chain_links in links.values():
        for link in chain_links:
            if link.requires:
                diags += _requirements(link, links, contracts)
            diags += _protocol(link, contracts)
    edges: Edges = {id(a.typed): [((*_at(link), "xri"), link.target.typed) for link in links.get(a.slug, [])]
                    for a in agents}
    for first, path, chain in cycles([a.typed for a in agents], edges):
        diags.append(at(first, path, "KNO-COMPOSES-CYCLE", f"delegation cycle: {chain}",
                        "a task handed round this loop can come back forever; break one link, "
                        "or make sure the agents stop delegating", make=warning))
    return diags


def contract_of(card: dict[str, Any], service_class: str | None, target: str) -> Contract:
    """An authored card's contract, with the extension entries its card will carry."""
    authored = (card.get("capabilities") or {}).get("extensions") or []
    uris = [str(e.get("uri")) for e in authored if isinstance(e, dict)]
    if service_class is not None:
        uris.append(SERVICE_CLASS_URI)
    return capability.from_card(card, target, uris)


def _links(agent: Agent, by_slug: dict[str, Agent]) -> Iterable[Link]:
    """The agent's resolved `composes` links (resolve reports the others)."""
    entries = agent.typed.data.get("composes") if agent.typed.type == "agent-blueprint" else None
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        xri = entry.get("xri") if isinstance(entry, dict) else None
        target = by_slug.get(xri.rsplit("/", 1)[-1]) if isinstance(xri, str) and xri.startswith("kno://") else None
        if target is not None and target is not agent:
            requires = entry.get("requires")
            names = tuple(r for r in requires if isinstance(r, str)) if isinstance(requires, list) else ()
            yield Link(agent, i, target, names)


def _at(link: Link) -> JsonPath:
    return ("composes", link.position)


def _vocabulary(link: Link) -> Iterable[Diagnostic]:
    for j, name in enumerate(link.requires):
        where = (*_at(link), "requires", j)
        if not capability.known_requirement(name):
            near = difflib.get_close_matches(name, capability.vocabulary(), n=1)
            yield at(link.source.typed, where, "KNO-CAP-UNKNOWN", f"`{name}` is not a capability",
                     (f"did you mean `{near[0]}`? " if near else "")
                     + "requires names a capability flag, or ext:<uri> for an extension")
        elif name in capability.DEPRECATED:
            yield at(link.source.typed, where, "KNO-CAP-DEPRECATED",
                     f"this link relies on `{name}`, a deprecated capability (tier 3)",
                     f"require `{capability.DEPRECATED[name]}`, which replaces it", make=warning)


def _requirements(origin: Link, links: dict[str, list[Link]],
                  contracts: dict[str, Contract]) -> Iterable[Diagnostic]:
    """What `origin` requires, of every agent on every chain below it, and a
    shared protocol version on every link of those chains."""
    reported: set[tuple[str, str]] = set()
    for chain in _chains(origin, links):
        reached = chain[-1]
        path = " -> ".join([origin.source.slug] + [a.slug for a in chain])
        if len(chain) > 1 and not contracts[chain[-2].slug].overlaps(contracts[reached.slug]):
            yield at(origin.source.typed, (*_at(origin), "xri"), "KNO-CHAIN-PROTOCOL",
                     f"{path}: {chain[-2].slug} and {reached.slug} share no A2A protocol version, "
                     f"so this chain cannot deliver what this link requires",
                     f"see the same finding in {chain[-2].typed.entity.source.rel}")
        for j, name in enumerate(origin.requires):
            why = capability.unmet(contracts[reached.slug], name) if capability.known_requirement(name) else None
            if why is None or (name, reached.slug) in reported:
                continue
            reported.add((name, reached.slug))
            yield at(origin.source.typed, (*_at(origin), "requires", j), "KNO-CHAIN-REQUIRES",
                     f"{path}: `{reached.slug}` {why}, and this link requires `{name}` of the whole chain",
                     f"declare `{name}` on {reached.slug}, or stop requiring it here"
                     if len(chain) == 1 else
                     f"declare `{name}` on {reached.slug}, delegate to another agent, or stop requiring it here")


def _chains(origin: Link, links: dict[str, list[Link]]) -> Iterable[list[Agent]]:
    """For each agent reachable from origin's target down composes links,
    the shortest chain to it (breadth first, so each agent once: a dense
    delegation graph cannot blow up the walk, and cycles end it)."""
    seen = {origin.source.slug, origin.target.slug}
    queue = deque([[origin.target]])
    while queue:
        chain = queue.popleft()
        yield chain
        for link in links.get(chain[-1].slug, []):
            if link.target.slug not in seen:
                seen.add(link.target.slug)
                queue.append(chain + [link.target])


def _protocol(link: Link, contracts: dict[str, Contract]) -> Iterable[Diagnostic]:
    mine, theirs = contracts[link.source.slug], contracts[link.target.slug]
    if not mine.overlaps(theirs):
        yield at(link.source.typed, (*_at(link), "xri"), "KNO-CHAIN-PROTOCOL",
                 f"{link.source.slug} -> {link.target.slug}: no A2A protocol version both speak "
                 f"({link.source.slug}: {capability.describe_versions(mine)}; "
                 f"{link.target.slug}: {capability.describe_versions(theirs)})",
                 "widen one side's protocol range or interface versions so they overlap")
