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
from knoc.output.index import CatalogEntries, CatalogEntry, index_script

PAGE_FILE = "index.html"
# In each served tree (site/ and each site/<host>/; "_" is in no host name):
# the catalog's static assets and its data scripts. A host's scripts hold
# its agents; the all-hosts catalog at site/ loads every host's.
CATALOG_DIR = "_catalog/"
INDEX_SCRIPT = CATALOG_DIR + "index.js"  # the agents' index entries (the link stage)
DETAILS_SCRIPT = CATALOG_DIR + "agents.js"  # their cards' details (joined from the cards)
STATIC = ("catalog.js", "catalog.css")
AGENT_PAGE = CATALOG_DIR + "agent.html"  # an agent's page, filled in by the catalog's script
CATALOG_PAGE = f"{SITE}{PAGE_FILE}"


def extension_paths(typed: list[Typed]) -> dict[str, list[str]]:
    """Which sources want each extension page's path (two URIs may land on
    one folder: the link stage says so; the first by source path has it)."""
    wanted: dict[str, list[str]] = {}
    for t, path in _extension_places(typed):
        wanted.setdefault(path, []).append(t.source.rel)
    return wanted


def extension_pages(typed: list[Typed], cards: Sequence[Card]) -> dict[str, bytes]:
    """Each public extension's page at its URI (`extension_paths`)."""
    places = _extension_places(typed)
    users_of = _users({str(t.data["uri"]) for t, _ in places}, cards) if places else {}
    pages: dict[str, bytes] = {}
    for t, path in places:
        if path in pages:
            continue
        ext: dict[str, object] = {**t.data, "title": t.data.get("title") or t.data["slug"],
                               "source": t.entity.source.rel}
        ext.setdefault("depends_on", [])  # optional in extension-schema
        ext.setdefault("required", False)
        schema = json.dumps(t.data.get("params_schema"), indent=2, ensure_ascii=False, sort_keys=True)
        pages[path] = template.render_bytes("extension.html.j2", ext=ext, schema=schema,
                                            users=users_of.get(str(t.data["uri"]), []))
    return pages


def _extension_places(typed: list[Typed]) -> list[tuple[Typed, str]]:
    """Each public extension whose URI is an http(s) URL knoc can publish
    at, and its page's path, by source path."""
    extensions = sorted((t for t in typed if t.type == "extension" and t.valid and is_public(t)),
                        key=lambda t: t.entity.source.rel)
    return [(t, f"{SITE}{where}/{PAGE_FILE}") for t in extensions if (where := site_dir(str(t.data["uri"])))]


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


def catalog_pages(agents: CatalogEntries, hosts: Sequence[str], domains: dict[str, list[str]],
                  taken: Container[str], everywhere: str | None) -> dict[str, Callable[[], Iterable[bytes]]]:
    """Every catalog file the link stage renders (`catalog_paths`), by path
    under build/, each made a piece at a time when asked for: the all-hosts
    catalog at site/ (its page and agent page load every host's scripts),
    and each host's own, so each host's tree is deployable as it is.
    `everywhere`: where the all-hosts catalog is published, linked from
    each host's page. `agents` and `domains` are the runtime index's
    entries, so the pages and index/agents.json cannot disagree. `hosts`:
    each agent's card's host, in their order."""
    by_host = agents.by_host(hosts)
    # "./": `localhost:9000/...` would read as a url of scheme `localhost`
    scripts = [f"./{h}/{name}" for h in by_host for name in (INDEX_SCRIPT, DETAILS_SCRIPT)]
    files: dict[str, Callable[[], Iterable[bytes]]] = {}
    for path, host, what in _catalog_files(by_host, taken):
        if what in STATIC:
            files[path] = functools.partial(_static, what)
        elif what == INDEX_SCRIPT:
            files[path] = functools.partial(index_script, by_host[host])
        elif what == AGENT_PAGE:
            files[path] = functools.partial(_agent_page, host, ["index.js", "agents.js"] if host
                                            else [f".{s}" for s in scripts])
        elif host:
            files[path] = functools.partial(_page, by_host[host], domains, host, [INDEX_SCRIPT, DETAILS_SCRIPT],
                                            everywhere)
        else:
            files[path] = functools.partial(_page, agents, domains, "", scripts, None)
    return files


def catalog_paths(hosts: Iterable[str], taken: Container[str]) -> list[str]:
    """Where `catalog_pages` puts each catalog file, for cards on `hosts`."""
    return [path for path, _, _ in _catalog_files(hosts, taken)]


def _catalog_files(hosts: Iterable[str], taken: Container[str]) -> Iterator[tuple[str, str, str]]:
    """(path, host, what) of each catalog file: the all-hosts catalog's
    (host "") and each host's (its `index.html` unless an extension's page
    is there: `taken`; its agent page; its index script)."""
    for host in ("", *hosts):
        tree = f"{SITE}{host}/" if host else SITE
        if host == "" or tree + PAGE_FILE not in taken:
            yield tree + PAGE_FILE, host, PAGE_FILE
        if host:
            yield tree + INDEX_SCRIPT, host, INDEX_SCRIPT
        yield tree + AGENT_PAGE, host, AGENT_PAGE
        yield from ((f"{tree}{CATALOG_DIR}{name}", host, name) for name in STATIC)


def _page(agents: CatalogEntries, domains: dict[str, list[str]], root: str, scripts: list[str],
          everywhere: str | None) -> Iterator[bytes]:
    """A catalog page, a piece at a time (tens of megabytes at 100,000
    agents). Card links are relative to its tree: the page works wherever
    the tree is served, or opened from disk."""
    names: dict[str, str] = {}  # each listed agent's name, by slug, gathered as the page lists them
    every_agent_listed = False

    def listed() -> Iterator[tuple[CatalogEntry, tuple[str, ...]]]:
        nonlocal every_agent_listed
        for entry, skills in agents.with_skills():
            names[entry["slug"]] = entry["name"]
            yield entry, skills
        every_agent_listed = True

    def by_domain() -> Iterator[tuple[str, list[tuple[str, str]]]]:
        if not every_agent_listed:  # a template that lists the domains first would drop every agent from them
            raise RuntimeError("catalog.html.j2 must list the agents before the domains")
        for d, slugs in sorted(domains.items()):
            members = [(s, names[s]) for s in slugs if s in names]
            if members or not root:
                yield d, members

    return template.render_pieces("catalog.html.j2", count=len(agents), agents=listed(), by_domain=by_domain(),
                                  root=root, strip=len(root) + 1 if root else 0, scripts=scripts,
                                  everywhere=everywhere)


def _agent_page(root: str, scripts: list[str]) -> Iterator[bytes]:
    return template.render_pieces("agent.html.j2", root=root, scripts=scripts)


def _static(name: str) -> Iterator[bytes]:
    return iter((template.render_bytes(f"{name}.j2"),))
