"""The files that read the whole repo, which the link stage renders: the
runtime index, the catalog and extension pages, the static hosts'
`_headers`; and who wants each path of a build (`linked_paths`), which
is all the language server renders of them. Pure."""

from __future__ import annotations

import bisect
import unicodedata
from collections.abc import Iterable

from knoc.kinds.agent import Cards
from knoc.kinds.domain import Repo
from knoc.kinds.entity import Typed
from knoc.output.canonical import dump_pieces, dumps
from knoc.output.hosting import AI_CATALOG_FILE, CARD_FILE, HEADERS_FILE, JWKS_FILE, SITE, headers_files
from knoc.output.index import CatalogEntries, build_catalog, build_domains
from knoc.output.pages import catalog_pages, catalog_paths, details_path, extension_pages, extension_paths
from knoc.output.tree import CATALOG, DOMAINS, KNOC, NO_JEKYLL, Joined, Spill, all_paths

Places = list[tuple[str, tuple[str, ...], str]]  # each card's host, paths and source


def render_linked(repo: Repo, cards: Cards, roots: dict[str, str], typed: list[Typed],
                  spill: Spill | None = None, everywhere: str | None = None
                  ) -> tuple[Joined, dict[str, list[str]]]:
    """The files that read the whole repo, and who wants each path
    (`linked_paths`). `everywhere`: where the all-hosts catalog is
    published (knoc.toml's `catalog_url`)."""
    out = Joined({}, spill)
    domains = build_domains(repo, (slug for slug, _ in cards.published))
    out.add({DOMAINS: dumps(domains)})
    out.add_pieces(CATALOG, lambda: dump_pieces(build_catalog(repo, cards, CARD_FILE)))
    pages = extension_pages(typed, cards)
    out.add(pages)
    places = card_places(cards, roots)
    hosts = [host for host, _, _ in places]
    for path, pieces in catalog_pages(CatalogEntries(repo, cards, CARD_FILE), hosts, domains["domains"], pages,
                                      everywhere).items():
        out.add_pieces(path, pieces)
    headers = headers_files(_served({host for host, _, _ in places}, pages))
    out.add(headers)
    out.add({_no_jekyll(rel): b"" for rel in headers})  # a tree each, as `_headers`
    return out, _wanted(places, typed)


def linked_paths(cards: Cards, roots: dict[str, str], typed: list[Typed]) -> dict[str, list[str]]:
    """Who wants each path of a build, a source or knoc itself (`KNOC`),
    in the order they ask for it, without rendering the pages or indexes."""
    return _wanted(card_places(cards, roots), typed)


def card_places(cards: Cards, roots: dict[str, str]) -> Places:
    """Each card's host, paths (its host's root copies too, for a primary)
    and source: one walk over the cards."""
    root_of = {slug: host for host, slug in roots.items()}
    places = []
    for slug, rel in cards.published:
        p = cards.projection(rel)
        places.append((p.host, all_paths(p, root_of, slug), rel))
    return places


def _wanted(places: Places, typed: list[Typed]) -> dict[str, list[str]]:
    wanted = extension_paths(typed)
    hosts = {host for host, _, _ in places}
    headers = sorted(headers_files(_served(hosts, wanted)))
    for path in (DOMAINS, CATALOG, *catalog_paths(sorted(hosts), wanted), *(details_path(h) for h in hosts),
                 *headers, *(_no_jekyll(rel) for rel in headers)):
        wanted.setdefault(path, []).append(KNOC)
    for _, paths, source in places:
        for path in paths:
            wanted.setdefault(path, []).append(source)
    for host in sorted(hosts):
        for name in (AI_CATALOG_FILE, JWKS_FILE):  # the key set only when signing, but never another's path
            wanted.setdefault(f"{SITE}{host}/{name}", []).append(KNOC)
    return wanted


def _served(card_hosts: set[str], pages: Iterable[str]) -> set[str]:
    """The host trees under site/: the cards' hosts and the extension pages'."""
    return card_hosts | {rel[len(SITE):].split("/")[0] for rel in pages}


def _no_jekyll(headers: str) -> str:
    return headers.replace(HEADERS_FILE, NO_JEKYLL)


def collisions(wanted: dict[str, list[str]]) -> list[tuple[str, str, str]]:
    """(path, first owner, other owner) for each path two owners want, and
    for each file that another one needs as a folder."""
    ordered = sorted(wanted)
    found = [(path, wanted[path][0], other) for path in ordered for other in wanted[path][1:]
             if other != wanted[path][0]]
    under: list[tuple[str, int, str, str, str]] = []  # (path, folder depth, folder, its owner, the path's)
    for folder in ordered:  # a file another path needs as a folder: the paths after `folder/`, sorted
        owner, prefix = wanted[folder][0], folder + "/"
        i = bisect.bisect_left(ordered, prefix)
        while i < len(ordered) and ordered[i].startswith(prefix):
            if wanted[ordered[i]][0] != owner:
                under.append((ordered[i], folder.count("/"), folder, owner, wanted[ordered[i]][0]))
            i += 1
    found += [(folder, first, other) for _, _, folder, first, other in sorted(under)]
    unique: dict[tuple[str, str], tuple[str, str, str]] = {}  # one finding per pair of owners
    for c in found:
        unique.setdefault((c[1], c[2]), c)
    return list(unique.values())


def case_collisions(wanted: dict[str, list[str]]) -> list[tuple[str, str, str, str]]:
    """(path, first owner, other path, other owner) for each two paths of
    different owners, or folders above them, that differ only in case or
    Unicode form: one on a file system that folds them (macOS's, Windows').
    A folder is named with its `/`."""
    names = "\n".join(wanted)
    if names.isascii() and names.lower() == names:  # most builds: nothing to fold, said at C speed
        return []
    first_of: dict[str, str] = {}  # each name (a path, or a folder above one) folded: its first spelling
    owner_of: dict[str, str] = {}  # each name seen: the owner of the first path at or under it
    pairs = []
    for path, owners in wanted.items():
        name = path
        while name and name not in owner_of:  # the path, then each folder above it not seen yet
            owner_of[name] = owners[0]
            first = first_of.setdefault(  # simple case folding, as APFS and NTFS fold (not `ß` to `ss`)
                (name if name.isascii() else unicodedata.normalize("NFC", name)).lower(), name)
            if first != name and owner_of[first] != owners[0]:
                pairs.append((min(first, name), max(first, name)))  # the same finding, whatever order they came in
            name = name.rpartition("/")[0]
    unique: dict[tuple[str, str], tuple[str, str, str, str]] = {}  # one finding per pair of owners: files first
    for a, b in sorted(pairs, key=lambda pair: (pair[0] not in wanted, pair)):
        unique.setdefault((owner_of[a], owner_of[b]),
                          (a if a in wanted else a + "/", owner_of[a], b if b in wanted else b + "/", owner_of[b]))
    return list(unique.values())
