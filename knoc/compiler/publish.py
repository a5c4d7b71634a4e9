"""Publishing: which projected cards go out, at which paths. Two agents
cannot share a card path; each host may serve one agent's card at its
origin root (A2A 8.2's well-known path, where clients that resolve a card
from a url's origin look)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from knoc.diagnostics import Diagnostic, diag
from knoc.diagnostics.duplicates import duplicate
from knoc.kinds.agent import Agent, Projection


class Published(NamedTuple):
    cards: list[tuple[str, str]]  # (slug, source) of each card, in slug order
    roots: dict[str, str]  # host -> slug of the agent whose card is also served at the host's root
    untwinned: list[str]  # slugs of the cards that have no agent.json (no interface speaks 0.3)
    diags: list[Diagnostic]


def publish(projected: Iterable[tuple[Agent, Projection]], primary: dict[str, str]) -> Published:
    """The cards to publish, as (slug, source), in the order given (slug
    order). Two agents cannot share a card path: the first keeps it, the
    other gets an error. Holds no projection: they may be decoded one at a
    time. Each host's root card (`roots`, A2A 8.2: the well-known path at
    the origin) is its agent at the root url, else the one knoc.toml's
    `[primary]` names for it, else its only agent."""
    cards: list[tuple[str, str]] = []
    untwinned: list[str] = []
    diags: list[Diagnostic] = []
    by_location: dict[tuple[str, str], Agent] = {}
    on_host: dict[str, list[str]] = {}
    for agent, proj in projected:
        owner = by_location.setdefault((proj.host, proj.path), agent)
        if owner is not agent:
            diags.append(duplicate("KNO-URL-DUPLICATE", f"url `{proj.url}`", agent.typed.source,
                                   (*agent.card_path, "url"), owner.typed.source, (*owner.card_path, "url"),
                                   "two public agents cannot share one card path: give each its own url"))
            continue
        cards.append((agent.slug, agent.typed.entity.source.rel))
        on_host.setdefault(proj.host, []).append(agent.slug)
        if not proj.has_twin:
            untwinned.append(agent.slug)
    roots: dict[str, str] = {}
    for host in sorted(primary.keys() - on_host.keys()):
        diags.append(diag("KNO-CONFIG-PRIMARY", f"knoc.toml names a primary agent for {host}, where no public agent "
                          f"publishes a card (hosts with cards: {', '.join(sorted(on_host)) or 'none'})",
                          file="knoc.toml", hint="write the host as the cards' urls have it (with a port if they "
                                                 "have one), or remove the line"))
    for host, slugs in on_host.items():
        at_root = (host, "") in by_location
        named = primary.get(host)
        if named is not None and named not in slugs:
            diags.append(diag("KNO-CONFIG-PRIMARY", f"knoc.toml names `{named}` the primary agent of {host}, which "
                              f"publishes no such card ({', '.join(slugs)})", file="knoc.toml",
                              hint="name one of the host's public agents, or remove the line"))
        elif named is not None and at_root:
            diags.append(diag("KNO-CONFIG-PRIMARY", f"knoc.toml names a primary agent for {host}, whose root url is "
                              f"already the url of `{by_location[(host, '')].slug}`", file="knoc.toml",
                              hint="remove the line: the agent at the root url is the host's card"))
        elif not at_root and (named is not None or len(slugs) == 1):
            roots[host] = named or slugs[0]
    return Published(cards, roots, untwinned, diags)
