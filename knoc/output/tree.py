"""The build tree, rendered in memory: every file a build writes, keyed by
its path under the output folder. Pure: writing it is `knoc.io.tree`'s job."""

from __future__ import annotations

import hashlib
from typing import Any

from knoc import __version__
from knoc.kinds.agent import Card
from knoc.kinds.domain import Repo
from knoc.kinds.entity import Typed
from knoc.output.canonical import dumps, sha256
from knoc.output.hosting import CARD_FILE, LEGACY_CARD_FILE, SITE, headers_files
from knoc.output.index import build_catalog, build_domains
from knoc.output.pages import catalog_page, extension_pages

MANIFEST = "manifest.json"
DOMAINS = "index/domains.json"  # the runtime index: perception domain -> agents
CATALOG = "index/agents.json"
# An entity the manifest lists: (repo-relative path, sha256, private?).
Input = tuple[str, str, bool]


def render_linked(repo: Repo, cards: list[Card], typed: list[Typed]) -> dict[str, bytes]:
    """The files that read the whole repo: the runtime index, the catalog and
    extension pages, the static hosts' `_headers`. The link stage renders
    them, so the cache keeps them with its findings."""
    domains, catalog = build_domains(repo, cards), build_catalog(repo, cards, CARD_FILE)
    skills = {c.slug: c.projection.skills for c in cards}
    site = {**extension_pages(typed, cards), **catalog_page(catalog["agents"], domains["domains"], skills)}
    hosts = {c.projection.host for c in cards} | {rel[len(SITE):].split("/")[0] for rel in site if rel.count("/") > 1}
    return {DOMAINS: dumps(domains), CATALOG: dumps(catalog), **site, **headers_files(hosts)}


def render(cards: list[Card], linked: dict[str, bytes], linked_digests: dict[str, str], inputs: list[Input],
           target: str) -> tuple[dict[str, bytes], dict[str, str]]:
    """Every output file and its sha256, keyed by its path under the build
    directory: the cards, the files the link stage rendered (with their
    digests), the manifest."""
    files: dict[str, bytes] = {}
    digests: dict[str, str] = {}
    for card in cards:
        p = card.projection
        base = f"{SITE}{p.site_dir}/"
        files[base + CARD_FILE] = files[base + LEGACY_CARD_FILE] = p.body
        digests[base + CARD_FILE] = digests[base + LEGACY_CARD_FILE] = p.digest
    files.update(linked)
    digests.update(linked_digests)
    files[MANIFEST] = dumps(manifest(inputs, digests, target))
    digests[MANIFEST] = sha256(files[MANIFEST])
    return files, digests


def manifest(inputs: list[Input], outputs: dict[str, str], target: str) -> dict[str, Any]:
    """Hashes of inputs and outputs. A private entity's path is left out (its
    name would say it exists); the sources digest still covers it."""
    everything = hashlib.sha256()
    public: dict[str, str] = {}
    for rel, digest, private in sorted(inputs):
        everything.update(f"{rel}\0{digest}\n".encode())
        if not private:
            public[rel] = digest
    return {
        "knoc": __version__,
        "a2a_target": target,
        "sources_digest": everything.hexdigest(),
        "inputs": public,
        "outputs": dict(sorted(outputs.items())),
    }
