"""The HTML pages under build/site/, rendered with jinja2 (autoescaped:
they show what authors wrote). Both read the whole repo, so the link stage
renders them: an extension's page at its URI (`site/<host>/<path>/`), and
the catalog page (`site/index.html`) listing every public agent."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from knoc.kinds.agent import Card
from knoc.kinds.entity import Typed, is_public
from knoc.output import templates as template
from knoc.output.hosting import SITE, card_url, site_dir
from knoc.output.index import CatalogEntries

PAGE_FILE = "index.html"
# Under site/ ("_" is in no host name): the catalog's static assets, and the
# data script the render stage writes (catalog_script).
CATALOG_DIR = f"{SITE}_catalog/"
ASSETS = tuple(CATALOG_DIR + name for name in ("agent.html", "catalog.js", "catalog.css"))
CATALOG_SCRIPT = CATALOG_DIR + "agents.js"


def extension_pages(typed: list[Typed], cards: Sequence[Card]) -> tuple[dict[str, bytes], dict[str, list[str]]]:
    """Each public extension's page at its URI, and which sources want each
    page path (two URIs may land on one folder: the link stage says so)."""
    extensions = sorted((t for t in typed if t.type == "extension" and t.valid and is_public(t)),
                        key=lambda t: t.entity.source.rel)
    pages: dict[str, bytes] = {}
    wanted: dict[str, list[str]] = {}
    if not extensions:
        return pages, wanted
    users_of = _users({str(t.data["uri"]) for t in extensions}, cards)
    for t in extensions:
        uri = str(t.data["uri"])
        where = site_dir(uri)
        path = f"{SITE}{where}/{PAGE_FILE}" if where else None
        if path is None:  # not an http(s) URL knoc can publish at
            continue
        wanted.setdefault(path, []).append(t.source.rel)
        if path in pages:
            continue
        users = users_of.get(uri, [])
        ext: dict[str, Any] = {**t.data, "title": t.data.get("title") or t.data["slug"],
                               "source": t.entity.source.rel}
        ext.setdefault("depends_on", [])  # optional in extension-schema
        ext.setdefault("required", False)
        schema = json.dumps(t.data.get("params_schema"), indent=2, ensure_ascii=False, sort_keys=True)
        pages[path] = template.render_bytes("extension.html.j2", ext=ext, schema=schema, users=users)
    return pages, wanted


def _users(uris: set[str], cards: Sequence[Card]) -> dict[str, list[dict[str, str]]]:
    """The cards that declare each of these extensions (name and card url),
    in one walk over the cards."""
    users: dict[str, list[dict[str, str]]] = {}
    for c in cards:
        p = c.projection
        for uri in {e[0] for e in p.extensions} & uris:
            users.setdefault(uri, []).append({"name": p.name, "card": card_url(p.url)})
    return users


CATALOG_PAGE = f"{SITE}{PAGE_FILE}"


def catalog_page(agents: CatalogEntries, domains: dict[str, list[str]]) -> Iterator[bytes]:
    """The catalog page, a piece at a time (tens of megabytes at 100,000
    agents). `agents` and `domains` are the runtime index's entries (so the
    page and index/agents.json cannot disagree). Card links are relative:
    the page works wherever site/ is served whole."""
    names = {a["slug"]: a["name"] for a in agents}
    by_domain = [(d, [(s, names[s]) for s in slugs if s in names]) for d, slugs in sorted(domains.items())]
    return template.render_pieces("catalog.html.j2", count=len(agents), agents=agents.with_skills(),
                                  by_domain=by_domain)


def catalog_assets() -> dict[str, bytes]:
    """The assets the catalog page and each agent's page load."""
    return {name: template.render_bytes(f"{name.rsplit('/', 1)[1]}.j2") for name in ASSETS}
