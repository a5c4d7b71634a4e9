"""Publishing: which projected cards go out, at which paths. Two agents
cannot share a card path; each host may serve one agent's card at its
origin root (A2A 8.2's well-known path, where clients that resolve a card
from a url's origin look)."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable
from typing import NamedTuple

from knoc.compiler.card_checks import card_error
from knoc.config import CONFIG_FILE
from knoc.diagnostics import Diagnostic, Span, diag
from knoc.diagnostics.duplicates import duplicate
from knoc.kinds.agent import Agent, Projection
from knoc.rules.paths import local_host, unportable


class Published(NamedTuple):
    cards: list[tuple[str, str]]  # (slug, source) of each card, in slug order
    roots: dict[str, str]  # host -> slug of the agent whose card is also served at the host's root
    untwinned: list[str]  # slugs of the cards that have no agent.json (no interface speaks 0.3)
    diags: list[Diagnostic]


def publish(projected: Iterable[tuple[Agent, Projection]], primary: dict[str, str],
            primary_at: dict[str, Span] | None = None, agents: Collection[str] = ()) -> Published:
    """The cards to publish, as (slug, source), in the order given (slug
    order). Two agents cannot share a card path: the first keeps it, the
    other gets an error. Holds no projection: they may be decoded one at a
    time. Each host's root card (`roots`, A2A 8.2: the well-known path at
    the origin) is its agent at the root url, else the one knoc.toml's
    `[primary]` names for it, else its only agent (`primary_at`: where
    knoc.toml names it, by host, for the findings about it; `agents`: every
    agent's slug, published or not, to tell a typo from an agent that has no
    card in this build)."""
    cards: list[tuple[str, str]] = []
    untwinned: list[str] = []
    diags: list[Diagnostic] = []
    by_location: dict[tuple[str, str], Agent] = {}
    unslashed: list[tuple[Agent, str, str, str]] = []  # (agent, host, path, url) of a url with no trailing `/`
    on_host: dict[str, list[str]] = {}
    first_of: dict[str, Agent] = {}  # each host's first agent, where a finding about the host points
    host_of: dict[str, str] = {}  # each published agent's host
    for agent, proj in projected:
        owner = by_location.setdefault((proj.host, proj.path), agent)
        if owner is not agent:
            diags.append(duplicate("KNO-URL-DUPLICATE", f"url `{proj.url}`", agent.typed.source,
                                   (*agent.card_path, "url"), owner.typed.source, (*owner.card_path, "url"),
                                   "two public agents cannot share one card path: give each its own url"))
            continue
        cards.append((agent.slug, agent.typed.entity.source.rel))
        if proj.path and not proj.url.rstrip("?#").endswith("/"):
            unslashed.append((agent, proj.host, proj.path, proj.url))
        on_host.setdefault(proj.host, []).append(agent.slug)
        host_of[agent.slug] = proj.host
        first_of.setdefault(proj.host, agent)
        if not proj.has_twin:
            untwinned.append(agent.slug)
    roots: dict[str, str] = {}
    diags += _on_example_hosts(on_host, first_of) + _unportable_hosts(on_host, first_of)

    def wrong(host: str, message: str, hint: str) -> Diagnostic:
        return diag("KNO-CONFIG-PRIMARY", f"{CONFIG_FILE} names {message}", file=CONFIG_FILE,
                    span=(primary_at or {}).get(host), hint=hint)

    for host in sorted(primary.keys() - on_host.keys()):
        diags.append(wrong(host, f"a primary agent for {host}, where no public agent publishes a card (hosts with "
                           f"cards: {', '.join(sorted(on_host)) or 'none'})", "write the host as the cards' urls have "
                           "it (with a port if they have one), or remove the line"))
    for host, slugs in on_host.items():
        at_root = (host, "") in by_location
        named = primary.get(host)
        if named is not None and named in host_of and host_of[named] != host:
            diags.append(wrong(host, f"`{named}` the primary agent of {host}, but its url is on {host_of[named]}",
                               f"name one of {host}'s public agents ({', '.join(slugs)}), or move the line to "
                               f"\"{host_of[named]}\""))
        elif named is not None and named not in slugs and named in agents:  # private, or its card failed
            diags.append(wrong(host, f"`{named}` the primary agent of {host}, but this build publishes no card of "
                               f"it (the host's cards: {', '.join(slugs)})", "make it a public agent whose card "
                               "builds for this target (its findings say why not), or name another"))
        elif named is not None and named not in slugs:
            near = difflib.get_close_matches(named, slugs, n=1)
            diags.append(wrong(host, f"`{named}` the primary agent of {host}, which publishes no such card "
                               f"({', '.join(slugs)})", f"did you mean `{near[0]}`?" if near else
                               "name one of the host's public agents, or remove the line"))
        elif named is not None and at_root:
            diags.append(wrong(host, f"a primary agent for {host}, whose root url is already the url of "
                               f"`{by_location[(host, '')].slug}`",
                               "remove the line: the agent at the root url is the host's card"))
        elif not at_root and (named is not None or len(slugs) == 1):
            roots[host] = named or slugs[0]
    for agent, host, path, url in unslashed:  # a JS client resolves `.well-known/...` against the url: its parent
        parent = path.rpartition("/")[0]
        other = roots.get(host) if not parent else (by_location[(host, parent)].slug
                                                      if (host, parent) in by_location else None)
        if other is not None and other != agent.slug:
            where = "the host's root card" if not parent else "the card of the folder above"
            diags.append(card_error(agent, ("url",), "KNO-CARD-URL-JS",
                                    f"@a2a-js/sdk, given `{url}`, looks for the card in the url's parent folder "
                                    f"and finds {where}, `{other}`'s, not this agent's",
                                    f"end the url with `/` ({url}/): every client then finds this agent's card"))
    return Published(cards, roots, untwinned, diags)


def _unportable_hosts(on_host: dict[str, list[str]], first_of: dict[str, Agent]) -> list[Diagnostic]:
    """One warning per host whose folder Windows cannot name (a port, an IPv6 address)."""
    found = []
    for host, slugs in sorted(on_host.items()):
        if (why := unportable(host)) is not None and not local_host(_name(host)):  # a local one is said already
            found.append(card_error(first_of[host], ("url",), "KNO-PROJECT-URL-PORTABLE", f"the url of `{slugs[0]}`"
                                    f"{_more(slugs)} puts its card in a folder Windows cannot name: {why}, so a clone "
                                    "of the repo on Windows cannot check out its build", "if the repo is cloned on "
                                    "Windows, serve the agents on the scheme's default port; if not, accept the code "
                                    "in knoc.toml's [accept]"))
    return found


def _name(host: str) -> str:
    """A host folder's name, without its port."""
    return host.rsplit(":", 1)[0] if not host.endswith("]") else host


def _more(slugs: list[str]) -> str:
    """How a finding said once for a host counts its other cards."""
    return f" (and {len(slugs) - 1:,} more public card{'s' if len(slugs) > 2 else ''})" if len(slugs) > 1 else ""


# Names no real host has (RFC 2606 and 6761): a skeleton's, or a copied example's.
EXAMPLE_DOMAINS = ("example.com", "example.net", "example.org")
EXAMPLE_TLDS = (".example", ".test", ".invalid")


def _on_example_hosts(on_host: dict[str, list[str]], first_of: dict[str, Agent]) -> list[Diagnostic]:
    """One warning per host reserved for examples that public cards name
    (one, not one per card: a generated repo may have thousands)."""
    found = []
    for host, slugs in sorted(on_host.items()):
        name = _name(host)
        if any(name == d or name.endswith("." + d) for d in EXAMPLE_DOMAINS) or name.endswith(EXAMPLE_TLDS):
            found.append(card_error(first_of[host], ("url",), "KNO-CARD-URL-EXAMPLE",
                                    f"the url of `{slugs[0]}`{_more(slugs)} is on {host}, a domain reserved for "
                                    "examples (RFC 2606, 6761): no agent answers there",
                                    "publish the url clients will use, or keep the agent private until it has one"))
    return found
