"""The files a run joins from every card (`_catalog/agents.js`, each host's
AI Catalog and `_headers`, the manifest), patched after an edit that
changed a few cards' bytes and nothing the link stage reads: each changed
piece is found by its exact old bytes and replaced, so the result is what
`render` would join, without reading every card. A piece that is not found
exactly once means the files are not what this expects: the caller
renders afresh."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from knoc.io.outputs import Overlay
from knoc.kinds.agent import Projection
from knoc.output.hosting import AI_CATALOG_FILE, HEADERS_FILE, SITE, etag_rule, etagged
from knoc.output.index import script_piece
from knoc.output.listing import indented
from knoc.output.pages import CATALOG_SCRIPT
from knoc.output.tree import MANIFEST, card_paths, manifest_line


@dataclass(frozen=True)
class Edit:
    """What changed: each card's slug and old and new projection (the same
    summary, other bytes); each public input's path and old and new
    sha256; the old and new digest of all sources."""

    cards: list[tuple[str, Projection, Projection]]
    inputs: list[tuple[str, str, str]]
    sources_digest: tuple[str, str]


def patch(previous: Mapping[str, bytes], was: Mapping[str, str], edit: Edit
          ) -> tuple[Spliced, Overlay] | None:
    """The patched files and every output's sha256 after `edit` (the new
    ones over `was`, which is not copied); None when `previous` (the files
    as last joined) cannot be patched."""
    fresh: dict[str, str] = {}
    digests = Overlay(was, fresh)
    pieces: dict[str, list[tuple[bytes, bytes]]] = {}
    for slug, old, new in edit.cards:
        for path, legacy in zip(card_paths(new), (False, True), strict=True):
            fresh[path] = new.file_digest(legacy)
        (old_details, old_entry), (details, entry) = old.catalog_pieces(), new.catalog_pieces()
        pieces.setdefault(CATALOG_SCRIPT, []).append((script_piece(slug, old_details), script_piece(slug, details)))
        pieces.setdefault(f"{SITE}{new.host}/{AI_CATALOG_FILE}", []).append((indented(old_entry), indented(entry)))
    files = _replace_in(previous, pieces, fresh)
    if files is None:
        return None
    touched = [path for _, _, new in edit.cards for path in card_paths(new)] + list(files)
    if any(path not in was for path in touched):
        return None
    before = {path: was[path] for path in touched if was[path] != digests[path]}
    rules: dict[str, list[tuple[bytes, bytes]]] = {}
    for path, digest in before.items():
        if etagged(path):
            host, _, inside = path[len(SITE):].partition("/")
            rule = (_rule(inside, digest), _rule(inside, digests[path]))
            rules.setdefault(f"{SITE}{host}/{HEADERS_FILE}", []).append(rule)
    headers = _replace_in(previous, rules, fresh)
    if headers is None:
        return None
    files.update_from(headers)
    before.update({path: was[path] for path in headers if path in was})
    lines = [(manifest_line(path, digest), manifest_line(path, digests[path])) for path, digest in before.items()]
    lines += [(manifest_line(rel, old, 2), manifest_line(rel, new, 2)) for rel, old, new in edit.inputs]
    lines.append((manifest_line("sources_digest", edit.sources_digest[0], 1),
                  manifest_line("sources_digest", edit.sources_digest[1], 1)))
    manifest = _replace_in(previous, {MANIFEST: lines}, fresh)
    if manifest is None:
        return None
    files.update_from(manifest)
    return files, digests


def _rule(inside: str, digest: str) -> bytes:
    """A file's ETag rule from the line before it: a rule is a whole line,
    and two rules found side by side do not overlap."""
    return b"\n" + etag_rule(inside, digest).rstrip("\n").encode()


def _replace_in(previous: Mapping[str, bytes], pieces: dict[str, list[tuple[bytes, bytes]]],
                digests: dict[str, str]) -> Spliced | None:
    """Each file with its pieces replaced (its sha256 updated in `digests`)."""
    files = Spliced()
    for path, pairs in pieces.items():
        if path not in previous or (parts := replace(previous[path], pairs)) is None:
            return None
        digests[path] = files.add(path, parts)
    return files


def replace(body: bytes, pairs: Iterable[tuple[bytes, bytes]]) -> list[bytes | memoryview] | None:
    """`body` with each old piece replaced by its new one, as the parts to
    join; None unless every old piece that changes occurs exactly once."""
    spans = []
    for old, new in pairs:
        if old == new:
            continue
        at = body.find(old)
        if at < 0 or body.find(old, at + 1) >= 0:
            return None
        spans.append((at, at + len(old), new))
    spans.sort()
    view, last = memoryview(body), 0
    out: list[bytes | memoryview] = []
    for start, end, new in spans:
        if start < last:
            return None
        out += (view[last:start], new)
        last = end
    out.append(view[last:])
    return out


class Spliced(Mapping[str, bytes]):
    """Patched files, each kept as the parts of its stored bytes with the new
    pieces between them and joined only when read: a build writes each
    once, and a check, which names these files without a diff when a card
    drifted, never joins a hundred megabytes only to hash it."""

    def __init__(self) -> None:
        self._parts: dict[str, list[bytes | memoryview]] = {}

    def add(self, path: str, parts: list[bytes | memoryview]) -> str:
        """Keep a file's parts; its sha256."""
        self._parts[path] = parts
        digest = hashlib.sha256()
        for part in parts:
            digest.update(part)
        return digest.hexdigest()

    def update_from(self, other: Spliced) -> None:
        self._parts.update(other._parts)

    def __getitem__(self, path: str) -> bytes:
        return b"".join(self._parts[path])

    def __contains__(self, path: object) -> bool:
        return path in self._parts

    def __iter__(self) -> Iterator[str]:
        return iter(self._parts)

    def __len__(self) -> int:
        return len(self._parts)
