"""The HTML pages under build/site/, rendered with jinja2 (autoescaped:
they show what authors wrote). Both read the whole repo, so the link stage
renders them: an extension's page at its URI (`site/<host>/<path>/`), and
the catalog pages (`site/index.html`, every public agent; each host's
`site/<host>/index.html`, its own)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Container, Iterable, Iterator, Sequence

from knoc.kinds.agent import Card
from knoc.kinds.entity import Typed, is_public
from knoc.output import templates as template
from knoc.output.hosting import SITE, card_url, site_dir
from knoc.output.index import CatalogEntries, index_script

PAGE_FILE = "index.html"
# In each served tree (site/ and each site/<host>/; "_" is in no host name):
# the catalog's static assets and its data scripts. A host's scripts hold
# its agents; the all-hosts catalog at site/ loads every host's.
CATALOG_DIR = "_catalog/"
INDEX_SCRIPT = CATALOG_DIR + "index.js"  # the agents' index entries (the link stage)
DETAILS_SCRIPT = CATALOG_DIR + "agents.js"  # their cards' details (joined from the cards)
STATIC = ("catalog.js", "catalog.css")
CATALOG_PAGE = f"{SITE}{PAGE_FILE}"


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
        ext: dict[str, object] = {**t.data, "title": t.data.get("title") or t.data["slug"],
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


def details_path(host: str) -> str:
    """A host's details script, under build/."""
    return f"{SITE}{host}/{DETAILS_SCRIPT}"


def is_details_path(path: str) -> bool:
    return path.startswith(SITE) and path.endswith("/" + DETAILS_SCRIPT)


def catalog_pages(agents: CatalogEntries, domains: dict[str, list[str]], taken: Container[str],
                  everywhere: str | None) -> dict[str, Callable[[], Iterable[bytes]]]:
    """Every catalog file the link stage renders, by path under build/, each
    made a piece at a time when asked for: the all-hosts catalog at site/
    (its page and agent page load every host's scripts), and each host's own
    (`index.html`, unless an extension's page is there: `taken`; its agent
    page; its index script), so each host's tree is deployable as it is.
    `everywhere`: where the all-hosts catalog is published, linked from
    each host's page. `agents` and `domains` are the runtime index's
    entries, so the pages and index/agents.json cannot disagree."""
    by_host = agents.by_host()
    # "./": `localhost:9000/...` would read as a url of scheme `localhost`
    scripts = [f"./{h}/{name}" for h in by_host for name in (INDEX_SCRIPT, DETAILS_SCRIPT)]
    files: dict[str, Callable[[], Iterable[bytes]]] = {
        CATALOG_PAGE: functools.partial(_page, agents, domains, "", scripts, None),
        f"{SITE}{CATALOG_DIR}agent.html": functools.partial(_agent_page, "", [f".{s}" for s in scripts]),
        **{f"{SITE}{CATALOG_DIR}{name}": functools.partial(_static, name) for name in STATIC},
    }
    for host, entries in by_host.items():
        tree = f"{SITE}{host}/"
        if tree + PAGE_FILE not in taken:
            files[tree + PAGE_FILE] = functools.partial(_page, entries, domains, host,
                                                        [INDEX_SCRIPT, DETAILS_SCRIPT], everywhere)
        files[tree + INDEX_SCRIPT] = functools.partial(index_script, entries)
        files[f"{tree}{CATALOG_DIR}agent.html"] = functools.partial(_agent_page, host, ["index.js", "agents.js"])
        files.update({f"{tree}{CATALOG_DIR}{name}": functools.partial(_static, name) for name in STATIC})
    return files


def _page(agents: CatalogEntries, domains: dict[str, list[str]], root: str, scripts: list[str],
          everywhere: str | None) -> Iterator[bytes]:
    """A catalog page, a piece at a time (tens of megabytes at 100,000
    agents). Card links are relative to its tree: the page works wherever
    the tree is served, or opened from disk."""
    names = {a["slug"]: a["name"] for a in agents}
    by_domain = [(d, [(s, names[s]) for s in slugs if s in names]) for d, slugs in sorted(domains.items())
                 if not root or any(s in names for s in slugs)]
    return template.render_pieces("catalog.html.j2", count=len(agents), agents=agents.with_skills(),
                                  by_domain=by_domain, root=root, strip=len(root) + 1 if root else 0,
                                  scripts=scripts, everywhere=everywhere)


def _agent_page(root: str, scripts: list[str]) -> Iterator[bytes]:
    return template.render_pieces("agent.html.j2", root=root, scripts=scripts)


def _static(name: str) -> Iterator[bytes]:
    return iter((template.render_bytes(f"{name}.j2"),))
