"""The files a run joins from every card (each host's `_catalog/agents.js`,
AI Catalog and `_headers`, the manifest), patched after an edit that
changed a few cards' bytes and nothing the link stage reads: each changed
piece is found by its exact old bytes and replaced, so the result is what
`render` would join, without reading every card. A piece that is not found
exactly once means the files are not what this expects: the caller
renders afresh.

Which outputs an edit changes is known from the pieces alone, before any
joined file is read (`Patch.moved`): at 100,000 agents those files are
150 MB, and a check that finds build/ as last rendered only needs to know
that they differ from it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import NoReturn

from knoc.io.stored import Parts
from knoc.kinds.agent import Projection
from knoc.output.hosting import AI_CATALOG_FILE, HEADERS_FILE, SITE, etag_rule, etagged
from knoc.output.index import script_piece
from knoc.output.listing import indented
from knoc.output.pages import details_path
from knoc.output.tree import MANIFEST, Lazy, Parted, all_paths, is_legacy, manifest_line, sources_digest
from knoc.output.views import Overlaid
from knoc.rules.heads import Heads, Input

Pairs = dict[str, list[tuple[bytes, bytes]]]  # each file's (old piece, new piece)


@dataclass(frozen=True)
class Edit:
    """What changed: each card's slug and old and new projection (the same
    summary, other bytes); each public input's path and old and new
    sha256; the old digest of all sources, and what the new one is made
    of when asked for (a sort and a hash of every source's)."""

    cards: list[tuple[str, Projection, Projection]]
    inputs: list[tuple[str, str, str]]
    sources: tuple[str, list[Input], Heads]  # the old digest of all sources; the specs' inputs; the content's
    root_of: dict[str, str]  # slug -> host of each host's primary agent, whose card is copied to the host's root


def patch(previous: Mapping[str, bytes], was: Mapping[str, str], edit: Edit, fail: Callable[[], NoReturn]
          ) -> Patch | None:
    """The outputs after `edit`, from the files as last joined (`previous`)
    and every output's sha256 then (`was`); None when the edit touches a
    file `was` does not list. `fail` is called (and raises) when a joined
    file, read later, cannot be patched."""
    found = Patch(previous, was, edit, fail)
    known = all(path in was for path in [*found.cards, *found.files]) and all(path in previous for path in found.files)
    return found if known else None


class Patch:
    """An edit's outputs: each changed card's sha256 (from its projection)
    and the outputs whose bytes differ from `was` (`moved`), known at once;
    the joined files and their sha256 (`files`, `digests`), patched when
    first asked for."""

    def __init__(self, previous: Mapping[str, bytes], was: Mapping[str, str], edit: Edit,
                 fail: Callable[[], NoReturn]) -> None:
        self._previous, self._was, self._edit, self._fail = previous, was, edit, fail
        self._done: tuple[dict[str, Parts], dict[str, str]] | None = None
        self._sources_digest: str | None = None
        self.cards: dict[str, str] = {}
        self.pieces: Pairs = {}
        for slug, old, new in edit.cards:
            for path in all_paths(new, edit.root_of, slug):
                self.cards[path] = new.file_digest(is_legacy(path))
            (old_details, old_entry), (details, entry) = old.catalog_pieces(), new.catalog_pieces()
            self.pieces.setdefault(details_path(new.host), []).append((script_piece(slug, old_details),
                                                                       script_piece(slug, details)))
            self.pieces.setdefault(f"{SITE}{new.host}/{AI_CATALOG_FILE}", []).append((indented(old_entry),
                                                                                      indented(entry)))
        # A piece replaced exactly once by another makes other bytes; an
        # etagged file that moved moves its host's ETag rule; any of these,
        # or another source digest, moves the manifest's lines.
        moved = {path for path, digest in self.cards.items() if digest != was.get(path)}
        moved.update(path for path, pairs in self.pieces.items() if any(old != new for old, new in pairs))
        self._headers = {_headers_of(path) for path in moved if etagged(path)}
        moved |= self._headers
        if moved or edit.inputs or self.sources_digest() != edit.sources[0]:
            moved.add(MANIFEST)
        self.moved = frozenset(moved)
        joined = self.pieces.keys() | self._headers | {MANIFEST}
        self.files: Mapping[str, bytes] = Parted(joined, self._parts)
        self.digests: Mapping[str, str] = Overlaid(was, Lazy(self.cards.keys() | joined, self._digest))

    def sources_digest(self) -> str:
        """The digest of all sources after the edit (made once, when first asked)."""
        if self._sources_digest is None:
            _, specs, heads = self._edit.sources
            self._sources_digest = sources_digest(specs + heads.inputs())
        return self._sources_digest

    def _parts(self, path: str) -> Parts:
        return self.joined()[0][path] if path in self.moved else [self._previous[path]]

    def _digest(self, path: str) -> str:
        """A card's from its projection; a file the edit left as it was, as
        it was; a moved one's, once the files are joined."""
        if path in self.cards:
            return self.cards[path]
        return self.joined()[1][path] if path in self.moved else self._was[path]

    def joined(self) -> tuple[dict[str, Parts], dict[str, str]]:
        """Each moved joined file as the parts to join, and the new sha256 of
        each moved output; `fail` when the stored files are not as expected."""
        if self._done is None:
            self._done = self._join()
        return self._done

    def _join(self) -> tuple[dict[str, Parts], dict[str, str]]:
        fresh = dict(self.cards)
        # Only the files that moved: an edit that leaves every card as it was
        # would otherwise rejoin and rehash the 100 MB catalog script unchanged.
        files = self._replaced({path: pairs for path, pairs in self.pieces.items() if path in self.moved}, fresh)
        moved = [path for path in self.cards if path in self.moved] + list(files)
        rules: Pairs = {}
        for path in moved:
            if etagged(path):
                inside = path[len(SITE):].partition("/")[2]
                rules.setdefault(_headers_of(path), []).append((_rule(inside, self._was[path]),
                                                                _rule(inside, fresh[path])))
        files.update(self._replaced(rules, fresh))
        lines = [(manifest_line(path, self._was[path]), manifest_line(path, fresh[path]))
                 for path in [*moved, *self._headers]]
        lines += [(manifest_line(rel, old, 2), manifest_line(rel, new, 2)) for rel, old, new in self._edit.inputs]
        lines.append((manifest_line("sources_digest", self._edit.sources[0], 1),
                      manifest_line("sources_digest", self.sources_digest(), 1)))
        files.update(self._replaced({MANIFEST: lines}, fresh))
        return files, fresh

    def _replaced(self, pieces: Pairs, digests: dict[str, str]) -> dict[str, Parts]:
        """Each file with its pieces replaced (its sha256 put in `digests`)."""
        files = {}
        for path, pairs in pieces.items():
            parts = replace(self._previous[path], pairs)
            if parts is None:
                self._fail()
            files[path] = parts
            digest = hashlib.sha256()
            for part in parts:
                digest.update(part)
            digests[path] = digest.hexdigest()
        return files


def _headers_of(path: str) -> str:
    """The `_headers` file of the host a file under site/ belongs to."""
    return f"{SITE}{path[len(SITE):].partition('/')[0]}/{HEADERS_FILE}"


def _rule(inside: str, digest: str) -> bytes:
    """A file's ETag rule from the line before it: a rule is a whole line,
    and two rules found side by side do not overlap."""
    return b"\n" + etag_rule(inside, digest).rstrip("\n").encode()


def replace(body: bytes, pairs: Iterable[tuple[bytes, bytes]]) -> Parts | None:
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
    out: Parts = []
    for start, end, new in spans:
        if start < last:
            return None
        out += (view[last:start], new)
        last = end
    out.append(view[last:])
    return out
