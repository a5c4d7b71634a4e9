"""The files a run joins from every card (`_catalog/agents.js`, each host's
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
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Generic, NoReturn, TypeVar

from knoc.io.outputs import Overlay
from knoc.kinds.agent import Projection
from knoc.output.hosting import AI_CATALOG_FILE, HEADERS_FILE, SITE, etag_rule, etagged
from knoc.output.index import script_piece
from knoc.output.listing import indented
from knoc.output.pages import CATALOG_SCRIPT
from knoc.output.tree import MANIFEST, card_paths, manifest_line

V = TypeVar("V")
Pairs = dict[str, list[tuple[bytes, bytes]]]  # each file's (old piece, new piece)


@dataclass(frozen=True)
class Edit:
    """What changed: each card's slug and old and new projection (the same
    summary, other bytes); each public input's path and old and new
    sha256; the old digest of all sources, and the new one when asked for
    (a sort and a hash of every source's)."""

    cards: list[tuple[str, Projection, Projection]]
    inputs: list[tuple[str, str, str]]
    sources_digest: tuple[str, Callable[[], str]]


def patch(previous: Mapping[str, bytes], was: Mapping[str, str], edit: Edit, fail: Callable[[], NoReturn]
          ) -> Patch | None:
    """The outputs after `edit`, from the files as last joined (`previous`)
    and every output's sha256 then (`was`); None when the edit touches a
    file `was` does not list. `fail` is called (and raises) when a joined
    file, read later, cannot be patched."""
    found = Patch(previous, was, edit, fail)
    known = all(path in was for path in [*found.cards, *found.pieces]) and all(path in previous for path in found.files)
    return found if known else None


class Patch:
    """An edit's outputs: each changed card's sha256 (from its projection)
    and the outputs whose bytes differ from `was` (`moved`), known at once;
    the joined files and their sha256 (`files`, `digests`), patched when
    first asked for."""

    def __init__(self, previous: Mapping[str, bytes], was: Mapping[str, str], edit: Edit,
                 fail: Callable[[], NoReturn]) -> None:
        self._previous, self._was, self._edit, self._fail = previous, was, edit, fail
        self._done: tuple[Spliced, dict[str, str]] | None = None
        self.cards: dict[str, str] = {}
        self.pieces: Pairs = {}
        for slug, old, new in edit.cards:
            for path, legacy in zip(card_paths(new), (False, True), strict=True):
                self.cards[path] = new.file_digest(legacy)
            (old_details, old_entry), (details, entry) = old.catalog_pieces(), new.catalog_pieces()
            self.pieces.setdefault(CATALOG_SCRIPT, []).append((script_piece(slug, old_details),
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
        if moved or edit.inputs or self._latest() != edit.sources_digest[0]:
            moved.add(MANIFEST)
        self.moved = frozenset(moved)
        joined = self.pieces.keys() | self._headers | {MANIFEST}
        self.files: Mapping[str, bytes] = Lazy(joined, self._bytes)
        self.digests: Mapping[str, str] = Overlay(was, Lazy(self.cards.keys() | joined, self._digest))

    def _latest(self) -> str:
        return self._edit.sources_digest[1]()

    def _bytes(self, path: str) -> bytes:
        return self.joined()[0][path] if path in self.moved else self._previous[path]

    def _digest(self, path: str) -> str:
        """A card's from its projection; a file the edit left as it was, as
        it was; a moved one's, once the files are joined."""
        if path in self.cards:
            return self.cards[path]
        return self.joined()[1][path] if path in self.moved else self._was[path]

    def joined(self) -> tuple[Spliced, dict[str, str]]:
        """The joined files patched, and the new sha256 of each output the
        edit touched; `fail` when the stored files are not as expected."""
        if self._done is None:
            self._done = self._join()
        return self._done

    def _join(self) -> tuple[Spliced, dict[str, str]]:
        fresh = dict(self.cards)
        files = _replace_in(self._previous, self.pieces, fresh)
        if files is None:
            self._fail()
        digests = Overlay(self._was, fresh)
        touched = [*self.cards, *files]
        before = {path: self._was[path] for path in touched if self._was[path] != digests[path]}
        rules: Pairs = {}
        for path, digest in before.items():
            if etagged(path):
                inside = path[len(SITE):].partition("/")[2]
                rules.setdefault(_headers_of(path), []).append((_rule(inside, digest), _rule(inside, digests[path])))
        headers = _replace_in(self._previous, rules, fresh)
        if headers is None:
            self._fail()
        files.update_from(headers)
        before.update({path: self._was[path] for path in headers if path in self._was})
        lines = [(manifest_line(path, digest), manifest_line(path, digests[path])) for path, digest in before.items()]
        lines += [(manifest_line(rel, old, 2), manifest_line(rel, new, 2)) for rel, old, new in self._edit.inputs]
        lines.append((manifest_line("sources_digest", self._edit.sources_digest[0], 1),
                      manifest_line("sources_digest", self._latest(), 1)))
        manifest = _replace_in(self._previous, {MANIFEST: lines}, fresh)
        if manifest is None:
            self._fail()
        files.update_from(manifest)
        return files, fresh


def _headers_of(path: str) -> str:
    """The `_headers` file of the host a file under site/ belongs to."""
    return f"{SITE}{path[len(SITE):].partition('/')[0]}/{HEADERS_FILE}"


class Lazy(Mapping[str, V], Generic[V]):
    """Values by key, each got (`get`) only when asked for: its keys alone
    answer `in`, `len` and iteration."""

    def __init__(self, keys: Collection[str], get: Callable[[str], V]) -> None:
        self._keys, self._get = keys, get

    def __getitem__(self, key: str) -> V:
        if key not in self._keys:
            raise KeyError(key)
        return self._get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _rule(inside: str, digest: str) -> bytes:
    """A file's ETag rule from the line before it: a rule is a whole line,
    and two rules found side by side do not overlap."""
    return b"\n" + etag_rule(inside, digest).rstrip("\n").encode()


def _replace_in(previous: Mapping[str, bytes], pieces: Pairs, digests: dict[str, str]) -> Spliced | None:
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
