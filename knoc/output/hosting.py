"""Where a card lives and how build/site/ is served: the folder of a url
under site/, and the response headers of each file, written as `_headers`
files for static hosts (Netlify, Cloudflare Pages) and sent by `knoc
serve`, so the local server and the real host answer alike."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping

from knoc.kinds.agent import join_site
from knoc.output.canonical import sha256
from knoc.rules.paths import origin, path_problem, path_segments, split_url

SITE = "site/"  # under build/: what static hosts serve, site/<host>/... and the catalog page
CARD_FILE = ".well-known/agent-card.json"  # A2A 0.3 and 1.0
LEGACY_CARD_FILE = ".well-known/agent.json"  # A2A before 0.3, for older clients
CARD_NAMES = tuple(f.rsplit("/", 1)[1] for f in (CARD_FILE, LEGACY_CARD_FILE))
AI_CATALOG_FILE = ".well-known/ai-catalog.json"  # a host's listing of its agents (output.listing)
JWKS_FILE = ".well-known/jwks.json"  # a host's signing keys, named by each signature's `jku` (output.signed)
AI_CATALOG_TYPE = "application/ai-catalog+json"
HEADERS_FILE = "_headers"  # a static host's config, never served
CARD_MAX_AGE = 300  # seconds: a card change reaches clients within five minutes

CARD_HEADERS = {
    "Content-Type": "application/json",
    "Access-Control-Allow-Origin": "*",  # cards are public: any client may fetch them
    "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
    # A 1.0 client sends `A2A-Version` with each request (A2A 3.6.2): from a browser, a header its preflight asks for.
    "Access-Control-Allow-Headers": "*",
    "Cache-Control": f"public, max-age={CARD_MAX_AGE}",
}
AI_CATALOG_HEADERS = {**CARD_HEADERS, "Content-Type": AI_CATALOG_TYPE}
# A key set is fetched by a browser verifier from another origin (a card's
# `jku`), and changes when keys rotate: the same rules as a card's.
JWKS_HEADERS = {**CARD_HEADERS, "Content-Type": "application/jwk-set+json"}
TYPES = {".json": "application/json", ".html": "text/html; charset=utf-8", ".png": "image/png",
         ".svg": "image/svg+xml", ".css": "text/css; charset=utf-8",
         ".js": "text/javascript; charset=utf-8", ".txt": "text/plain; charset=utf-8"}


def card_url(url: str) -> str:
    """Where clients fetch the card of the agent at `url` (a trailing `/` of
    the url is not doubled: the SDKs' resolvers strip it too)."""
    return f"{url.rstrip('/')}/{CARD_FILE}"


def etag(body: bytes) -> str:
    """A file's entity tag: its sha256, the digest the manifest lists."""
    return _quoted(sha256(body))


def is_card(rel: str) -> bool:
    head, _, name = rel.rpartition("/")
    return name in CARD_NAMES and (head == ".well-known" or head.endswith("/.well-known"))


def headers_for(rel: str) -> dict[str, str]:
    """The headers a file at `rel` (relative to the served tree) is sent
    with (`knoc serve` adds the ETag)."""
    if is_card(rel):
        return CARD_HEADERS
    if rel == AI_CATALOG_FILE or rel.endswith("/" + AI_CATALOG_FILE):
        return AI_CATALOG_HEADERS
    if rel == JWKS_FILE or rel.endswith("/" + JWKS_FILE):
        return JWKS_HEADERS
    dot = rel.rfind(".")
    return {"Content-Type": TYPES.get(rel[dot:] if dot > rel.rfind("/") else "", "application/octet-stream")}


def headers_file() -> bytes:
    """The `_headers` of a served tree: four patterns cover every card at any
    depth (Cloudflare Pages allows 100 rules, so cards are never listed one
    by one). Other files keep the host's defaults."""
    rules = [f"{pattern}{name}\n" + "".join(f"  {k}: {v}\n" for k, v in CARD_HEADERS.items())
             for pattern in ("/.well-known/", "/*/.well-known/") for name in CARD_NAMES]
    rules += [f"{pattern}{file}\n" + "".join(f"  {k}: {v}\n" for k, v in headers.items())
              for file, headers in ((AI_CATALOG_FILE, AI_CATALOG_HEADERS), (JWKS_FILE, JWKS_HEADERS))
              for pattern in ("/", "/*/")]  # a host's tree, and site/ hosted whole
    return ("# Written by knoc: A2A Agent Card response headers for static hosts (Netlify, Cloudflare Pages).\n"
            + "".join(rules)).encode("utf-8")


def headers_files(hosts: set[str]) -> dict[str, bytes]:
    """A `_headers` (paths under build/) for site/ itself (served whole, as
    `knoc serve` does for an unknown host) and for each host tree in it."""
    body = headers_file()
    return {f"{SITE}{tree}{HEADERS_FILE}": body for tree in {""} | {f"{h}/" for h in hosts}}


def etag_rules(digests: Mapping[str, str]) -> dict[str, Callable[[], Iterator[bytes]]]:
    """Per host, the `_headers` rules giving each of its cards and its AI
    Catalog the ETag `knoc serve` sends (the file's sha256), made one at a
    time when asked for: at 100,000 agents they are 30 MB of text, never
    held whole. `digests`: sha256 by path under build/. They
    follow the pattern rules, so a host that reads only the first rules
    (Cloudflare Pages reads 100) still gets every type."""
    paths: dict[str, list[str]] = {}
    for rel in sorted(r for r in digests if r.endswith(_ETAGGED) and r.startswith(SITE)):  # etagged(), in C
        paths.setdefault(rel[len(SITE):].partition("/")[0], []).append(rel)
    return {host: functools.partial(_rules, its, digests) for host, its in paths.items()}


def _rules(paths: list[str], digests: Mapping[str, str]) -> Iterator[bytes]:
    return (etag_rule(rel[len(SITE):].partition("/")[2], digests[rel]).encode("utf-8") for rel in paths)


def etag_rule(inside: str, digest: str) -> str:
    """The rule for one file, by its path inside its host's tree."""
    return f"/{inside}\n  ETag: {_quoted(digest)}\n"


def etagged(rel: str) -> bool:
    """Whether a file under build/ gets an ETag rule in its host's `_headers`."""
    return rel.endswith(_ETAGGED) and rel.startswith(SITE)


_ETAGGED = tuple("/" + name for name in (CARD_FILE, LEGACY_CARD_FILE, AI_CATALOG_FILE))  # what is_card matches too


def _quoted(digest: str) -> str:
    return f'"{digest}"'


def url_location(url: str) -> tuple[str, str] | None:
    """(host, path) of an http(s) URL as a folder under build/site/, or None
    when it cannot be one safely."""
    found = locate_url(url)
    return found if isinstance(found, tuple) else None


def locate_url(url: str) -> tuple[str, str] | str:
    """(host folder, url path) of an http(s) URL under build/site/, or why it
    cannot be one: the host must be a DNS name or an IP address, and every
    path segment a safe name (knoc.rules.paths). URLs that name one resource
    (a default port written out, case, IDN, a trailing dot, escaped
    unreserved characters) land in one folder, so two agents at one card
    path are a duplicate, never two trees."""
    parts = split_url(url)
    if parts is None:
        return "it is not a well-formed URL"
    if parts.scheme not in ("http", "https"):
        return "it is not an http(s) URL"
    folder = origin(parts)
    if folder is None:
        return f"the host `{parts.hostname or ''}` is not a DNS name or an IP address"
    if "//" in parts.path:  # one folder, but a static host may serve `//x` at another path than `/x`
        return "its path holds `//`, an empty segment: write one `/`"
    segments = path_segments(parts.path)
    if ".well-known" in (s.lower() for s in segments):  # where cards are served (any case: some hosts fold it)
        return "its path has a `.well-known` segment: that is where cards are served, not where an agent answers"
    problem = path_problem("/".join([folder, *segments]))
    if problem is not None:
        return f"its path cannot be a folder: {problem}"
    return folder, "/".join(segments)


def site_dir(url: str) -> str | None:
    """The folder under build/site/ that serves `url`."""
    location = url_location(url)
    return None if location is None else join_site(*location)
