"""Each host's AI Catalog, `site/<host>/.well-known/ai-catalog.json`: the
host-level listing of the agents that live there (github.com/Agent-Card/
ai-catalog, `specification/ai-catalog.md` and its ADRs), for crawlers and
registries.

Each agent's entry is made with its card, in the one-file stage, so the
cache keeps it; the render stage only joins a host's entries. The bytes
are exactly what `canonical.dumps` gives for the whole document."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator

from knoc.a2a.fields import CardFields
from knoc.output.canonical import dump_entry, dumps, joined_pieces
from knoc.output.hosting import AI_CATALOG_FILE, SITE, card_url
from knoc.rules.paths import host_folder, split_url

SPEC_VERSION = "1.0"
CARD_TYPE = "application/a2a-agent-card+json"  # an entry's `type` (ADR-0014; `mediaType` in earlier drafts)


def entry(slug: str, fields: CardFields, tags: tuple[str, ...]) -> bytes:
    """One agent's entry: what finds the card, never what the card itself
    says (name, description, version: ADR-0016/0018)."""
    parts = split_url(fields.url)
    host = host_folder(parts.hostname or "") if parts else None
    return dump_entry({
        "identifier": f"urn:air:{host or 'localhost'}:{slug}",  # ADR-0015: urn:air:{publisher}:{name}
        "type": CARD_TYPE,
        "url": card_url(fields.url),
        **({"tags": list(tags)} if tags else {}),
    })


def host_catalogs(cards: Iterable[tuple[str, str, str]], listing: Callable[[str], bytes],
                  operator: tuple[tuple[str, str], ...]) -> dict[str, Callable[[], Iterator[bytes]]]:
    """The AI Catalog of every host with a public card, by path under build/,
    from each card's (host, url, source), each made a piece at a time
    (`listing`: a source's entry, read when its piece is made). `operator`:
    knoc.toml's [host], the same for every host."""
    hosts: dict[str, list[tuple[str, str]]] = {}
    for host, url, source in cards:
        hosts.setdefault(host, []).append((url, source))
    head = dumps({"specVersion": SPEC_VERSION, **({"host": dict(operator)} if operator else {})})
    head = head[: head.rindex(b"\n}")] + b',\n  "entries": [\n    '  # reopened: the entries follow

    def pieces(its: list[tuple[str, str]]) -> Iterator[bytes]:
        return joined_pieces(head, (indented(listing(source)) for _, source in its), b",\n    ", b"\n  ]\n}\n")

    for its in hosts.values():
        its.sort(key=lambda pair: pair[0])
    return {f"{SITE}{host}/{AI_CATALOG_FILE}": functools.partial(pieces, its) for host, its in sorted(hosts.items())}


def indented(entry: bytes) -> bytes:
    """One agent's entry as its host's AI Catalog holds it."""
    return entry.rstrip(b"\n").replace(b"\n", b"\n    ")
