"""`knoc serve`: build/site/ answered the way a static host would answer it.
The request's Host header picks the `site/<host>` tree (a client asking for
agents.example.net gets that host's cards); a host with no tree gets site/
itself, whose index.html is the catalog page. The server itself is
`knoc.io.server`; this module decides what each request gets."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from knoc.io import files
from knoc.io.server import Answer, Request, Response
from knoc.output.hosting import CARD_HEADERS, HEADERS_FILE, etag, headers_for
from knoc.rules.paths import segment_problem

INDEX = "index.html"
PREFLIGHT_HEADERS = {k: v for k, v in CARD_HEADERS.items() if k.startswith("Access-Control-")}  # as `_headers` says


def locate(site: Path, fixed: str | None, host: str, url: str) -> tuple[Path, str] | None:
    """(file, its path inside the served tree) for a request, or None for
    404. Only a regular file inside the site tree, reached without a link:
    a link in build/site/ is not knoc's, and could point anywhere."""
    tree, segments = _tree(site, fixed, host), _segments(url)
    if segments is None or segments[-1:] == [HEADERS_FILE]:
        return None
    rel = "/".join(segments)
    if files.unlinked(site, tree + rel) == "folder":
        rel = f"{rel}/{INDEX}".lstrip("/")
    return (site / (tree + rel), rel) if files.unlinked(site, tree + rel) == "file" else None


def folder_without_slash(site: Path, fixed: str | None, host: str, url: str) -> str | None:
    """Where a static host redirects the path of a folder with a page
    (`index.html`) without its `/` (the page's relative links would miss
    otherwise): the path with it, from its checked segments (never
    `//host`), and the query; else None."""
    parts, segments = urlsplit(url), _segments(url)
    folder = _tree(site, fixed, host) + "/".join(segments or [])
    if not segments or parts.path.endswith("/") or files.unlinked(site, f"{folder}/{INDEX}") != "file":
        return None  # not a folder, or one with no page: 404, as a static host answers
    return "/" + "/".join(quote(s) for s in segments) + "/" + (f"?{parts.query}" if parts.query else "")


def _segments(url: str) -> list[str] | None:
    """The request path's segments, decoded; None when one is not a name."""
    segments = [unquote(s) for s in urlsplit(url).path.split("/") if s]
    return None if any(segment_problem(s) for s in segments) else segments


def _tree(site: Path, fixed: str | None, host: str) -> str:
    """The host tree (as a path under `site`, "" for site/ itself) `--site`
    fixes, or else a Host header picks."""
    if fixed:
        return f"{fixed}/"
    host = host.strip().lower().removesuffix(":")  # an empty port is the default one (RFC 3986)
    name, colon, port = host.rpartition(":") if host.rpartition(":")[2].isdigit() else (host, "", "")
    name = name.removesuffix(".")  # `agents.example.com.` is the same host, as its card urls are; `..` none
    for tree in (f"{name}{colon}{port}", name):  # a card url with a port has its own tree
        if tree and segment_problem(tree) is None and not tree.startswith((".", "_")) \
                and files.unlinked(site, tree) == "folder":  # `_catalog` and the like are knoc's, no host's
            return f"{tree}/"
    return ""


def answer(site: Path, fixed: str | None) -> Answer:
    """What the server sends for each request: the file with its headers
    and its ETag, or 304 when the client already holds that ETag."""
    def respond(request: Request) -> Response:
        if request.method == "OPTIONS":  # a CORS preflight: cards may be fetched from any origin
            return Response(204, PREFLIGHT_HEADERS)
        if (moved := folder_without_slash(site, fixed, request.host, request.path)) is not None:
            return Response(301, {"Location": moved})
        found = locate(site, fixed, request.host, request.path)
        try:
            body = files.read_bytes(found[0], follow=False) if found else None
        except OSError:  # swapped away by a rebuild between the check and the read (or a link put there)
            body = None
        if found is None or body is None:
            return Response(404)
        headers = {**headers_for(found[1]), "ETag": etag(body)}
        if _matches(request.if_none_match, headers["ETag"]):
            return Response(304, {k: v for k, v in headers.items() if k != "Content-Type"})
        return Response(200, headers, body)

    return respond


def _matches(if_none_match: str, tag: str) -> bool:
    """Whether the client holds `tag` (weak tags compare too: RFC 9110 13.1.2)."""
    held = {t.strip().removeprefix("W/") for t in if_none_match.split(",") if t.strip()}
    return "*" in held or tag in held
