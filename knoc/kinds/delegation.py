"""The agent kind's link-stage checks: delegation chains (seed 001,
multi-agent orchestration). A `composes` link with `requires` promises that
the whole chain below it can do what it requires: each agent reached
through it is judged by the same capability contract discovery uses. Every
link needs a protocol version both ends speak, and delegation cycles are
reported. Every walk is iterative and linear in agents plus links, so a
chain of 10,000 agents checks as fast as 10,000 unrelated ones."""

from __future__ import annotations

import difflib
from collections import deque
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import NamedTuple

from knoc.a2a import capability, targets
from knoc.a2a.capability import Contract
from knoc.a2a.extensions import SERVICE_CLASS_URI
from knoc.diagnostics import Diagnostic, JsonPath, at
from knoc.kinds.agent import Agent
from knoc.rules import graph

NO_SHARED_PROTOCOL = "\0protocol"  # a trouble that is not a capability name


class Delegation(NamedTuple):
    """One resolved `composes` link."""

    source: Agent
    position: int  # in the source's `composes`
    target: Agent
    requires: tuple[str, ...]


def check(agents: list[Agent], target: str, judged: MutableMapping[Agent, Contract] | None = None
          ) -> list[Diagnostic]:
    """`judged`: each agent's contract as judged so far (the language
    server keeps them across edits: an unchanged file's Agent is the same)."""
    judged = {} if judged is None else judged
    # An agent its spec rejects has no contract to judge (its file already has errors).
    valid = [a for a in agents if a.typed.valid]
    by_slug = {a.slug: a for a in valid}
    links: dict[Agent, list[Delegation]] = {}  # by Agent, never slug: a copy may keep its original's
    diags: list[Diagnostic] = []
    for agent in valid:
        for link in _links(agent, by_slug) if agent.composes else ():  # `composes`: the links it names
            links.setdefault(agent, []).append(link)
            diags += _vocabulary(link)
    # Only agents on some link have a contract to judge: most of a large repo delegates nothing.
    on_links = links.keys() | {link.target for ls in links.values() for link in ls}
    agents = [a for a in valid if a in on_links]
    same: dict[tuple[int, str | None, bool], Contract] = {}  # agents with one card dict (`agent.linked`): one contract
    for a in agents:
        if a not in judged:
            key = (id(a.card), a.service_class, a.states_versions)
            if key not in same:
                same[key] = contract_of(a.card, a.service_class, target, a.states_versions)
            judged[a] = same[key]
    contracts = {a: judged[a] for a in agents}
    apart = {link for ls in links.values() for link in ls  # the links whose ends share no protocol version
             if not contracts[link.source].overlaps(contracts[link.target])}
    trouble = _trouble(agents, links, contracts, apart)
    for chain_links in links.values():
        for link in chain_links:
            if link.requires and trouble[link.target] & {*link.requires, NO_SHARED_PROTOCOL}:
                diags += _requirements(link, links, contracts)
            if link in apart:
                diags.append(_protocol(link, contracts))
    edges = {a.typed: [((*_at(link), "xri"), link.target.typed) for link in links.get(a, [])] for a in agents}
    for cycle in graph.cycles(sorted((a.typed for a in agents), key=lambda t: t.source.rel), edges):
        first, path = cycle[0]
        diags.append(at(first.source, path, "KNO-COMPOSES-CYCLE", f"delegation cycle: {graph.show(cycle)}",
                        "a task handed round this loop can come back forever; break one link, "
                        "or make sure the agents stop delegating"))
    return diags


def _trouble(agents: list[Agent], links: dict[Agent, list[Delegation]], contracts: dict[Agent, Contract],
             apart: set[Delegation]) -> dict[Agent, frozenset[str]]:
    """For each agent, what can go wrong below it: the required capabilities
    some agent it reaches lacks, and whether a link it reaches shares no
    protocol. A link whose target reaches none of what it requires needs no
    walk of its chains."""
    asked = {name for ls in links.values() for link in ls for name in link.requires
             if capability.known_requirement(name)}

    own: dict[Agent, frozenset[str]] = {}
    for agent in agents:
        c = contracts[agent]
        found = {name for name in asked if capability.unmet(c, name)}
        if any(link in apart for link in links.get(agent, [])):
            found.add(NO_SHARED_PROTOCOL)
        own[agent] = frozenset(found)
    edges = {agent: [link.target for link in ls] for agent, ls in links.items()}
    return graph.reach(agents, edges, own)


def contract_of(card: Mapping[str, object], service_class: str | None, target: str,
                states_versions: bool) -> Contract:
    """An authored card's contract, with the extension entries its card will carry."""
    caps = card.get("capabilities")
    authored = caps.get("extensions") if isinstance(caps, dict) else None
    uris = [str(e.get("uri")) for e in (authored if isinstance(authored, list) else []) if isinstance(e, dict)]
    if service_class is not None:
        uris.append(SERVICE_CLASS_URI)
    return targets.get(target).authored(card, uris, states_versions)


def _links(agent: Agent, by_slug: dict[str, Agent]) -> Iterable[Delegation]:
    """The agent's resolved `composes` links (resolve reports the others)."""
    entries = agent.typed.data.get("composes") if agent.typed.type == "agent-blueprint" else None
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        xri = entry.get("xri") if isinstance(entry, dict) else None
        target = by_slug.get(xri.rsplit("/", 1)[-1]) if isinstance(xri, str) and xri.startswith("kno://") else None
        if target is not None and target is not agent:
            requires = entry.get("requires")
            names = tuple(r for r in requires if isinstance(r, str)) if isinstance(requires, list) else ()
            yield Delegation(agent, i, target, names)


def _at(link: Delegation) -> JsonPath:
    return ("composes", link.position)


def _vocabulary(link: Delegation) -> Iterable[Diagnostic]:
    for j, name in enumerate(link.requires):
        where = (*_at(link), "requires", j)
        if not capability.known_requirement(name):
            near = difflib.get_close_matches(name, capability.vocabulary(), n=1)
            yield at(link.source.typed.source, where, "KNO-CAP-UNKNOWN", f"`{name}` is not a capability",
                     (f"did you mean `{near[0]}`? " if near else "")
                     + "requires names a capability flag, or ext:<uri> for an extension")
        elif name in capability.DEPRECATED:
            yield at(link.source.typed.source, where, "KNO-CAP-DEPRECATED",
                     f"this link relies on `{name}`, a deprecated capability (tier 3)",
                     f"require `{capability.DEPRECATED[name]}`, which replaces it")


def _requirements(origin: Delegation, links: dict[Agent, list[Delegation]],
                  contracts: dict[Agent, Contract]) -> Iterable[Diagnostic]:
    """What `origin` requires, of every agent on every chain below it, and a
    shared protocol version on every link of those chains."""
    reported: set[tuple[str, Agent]] = set()
    for reached, parent, chain in _chains(origin, links):
        if parent is not None and not contracts[parent].overlaps(contracts[reached]):
            yield at(origin.source.typed.source, (*_at(origin), "xri"), "KNO-CHAIN-PROTOCOL",
                     f"{chain()}: {parent.slug} and {reached.slug} share no A2A protocol version, "
                     f"so this chain cannot deliver what this link requires",
                     f"see the same finding in {parent.typed.source.rel}")
        for j, name in enumerate(origin.requires):
            why = capability.unmet(contracts[reached], name) if capability.known_requirement(name) else None
            if why is None or (name, reached) in reported:
                continue
            reported.add((name, reached))
            yield at(origin.source.typed.source, (*_at(origin), "requires", j), "KNO-CHAIN-REQUIRES",
                     f"{chain()}: `{reached.slug}` {why}, and this link requires `{name}` of the whole chain",
                     f"declare `{name}` on {reached.slug}, or stop requiring it here"
                     if parent is None else
                     f"declare `{name}` on {reached.slug}, delegate to another agent, or stop requiring it here")


def _chains(origin: Delegation, links: dict[Agent, list[Delegation]]
            ) -> Iterable[tuple[Agent, Agent | None, Callable[[], str]]]:
    """Each agent reachable from origin's target down composes links, once,
    with the agent before it on its shortest chain (None for the target) and
    a function giving that chain as `a -> b -> c` (breadth first, parents
    kept instead of copied chains: a dense delegation graph cannot blow up
    the walk, and cycles end it)."""
    before: dict[Agent, Agent | None] = {origin.target: None}
    seen = {origin.source, origin.target}
    queue = deque([origin.target])
    while queue:
        agent = queue.popleft()
        parent = before[agent]

        def chain(end: Agent = agent) -> str:
            names: list[str] = []
            node: Agent | None = end
            while node is not None:
                names.append(node.slug)
                node = before[node]
            return " -> ".join([origin.source.slug, *reversed(names)])

        yield agent, parent, chain
        for link in links.get(agent, []):
            if link.target not in seen:
                seen.add(link.target)
                before[link.target] = agent
                queue.append(link.target)


def _protocol(link: Delegation, contracts: dict[Agent, Contract]) -> Diagnostic:
    """A link whose ends share no protocol version."""
    mine, theirs = contracts[link.source], contracts[link.target]
    return at(link.source.typed.source, (*_at(link), "xri"), "KNO-CHAIN-PROTOCOL",
              f"{link.source.slug} -> {link.target.slug}: no A2A protocol version both speak "
              f"({link.source.slug}: {capability.describe_versions(mine)}; "
              f"{link.target.slug}: {capability.describe_versions(theirs)})",
              "widen one side's protocol range or interface versions so they overlap")
