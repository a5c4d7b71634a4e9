"""The build tree, rendered in memory: every file a build writes, keyed by
its path under the output folder. Pure: writing it is `knoc.io.staging`'s job."""

from __future__ import annotations

import functools
import hashlib
import itertools
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from json.encoder import encode_basestring  # the C version, as canonical.dumps uses
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from knoc.io.stored import Parts, Stat, StoredFiles
from knoc.kinds.agent import Card, CardLookup, Cards, Projection, Written
from knoc.output.canonical import dump_pieces, joined_pieces, sha256
from knoc.output.hosting import (
    CARD_FILE,
    HEADERS_FILE,
    JWKS_FILE,
    LEGACY_CARD_FILE,
    SITE,
    etag_rules,
)
from knoc.output.index import details_script
from knoc.output.listing import host_catalogs
from knoc.output.pages import details_path
from knoc.rules.heads import Input
from knoc.rules.json import JsonValue
from knoc.version import __version__

if TYPE_CHECKING:
    from knoc.output.signed import CardSigner

MANIFEST = "manifest.json"
DOMAINS = "index/domains.json"  # the runtime index: perception domain -> agents
CATALOG = "index/agents.json"


KNOC = "knoc"  # the owner of the files knoc writes for the whole repo
# In each served tree: GitHub Pages runs Jekyll unless it finds this, and
# Jekyll leaves out `.well-known/`.
NO_JEKYLL = ".nojekyll"


def card_paths(card: Card | Projection) -> tuple[str, ...]:
    """Where a card is written under the build directory: its path and its
    agent.json twin (when it has one)."""
    projection = card.projection if isinstance(card, Card) else card
    paths = site_paths(projection.site_dir)
    return paths if projection.has_twin else paths[:1]


def root_paths(host: str, card: Card | Projection) -> tuple[str, ...]:
    """Where a host's root card (the copy of its primary agent's card, at
    the origin's well-known path) and its agent.json twin are written."""
    projection = card.projection if isinstance(card, Card) else card
    paths = site_paths(host)
    return paths if projection.has_twin else paths[:1]


def all_paths(card: Card | Projection, root_of: Mapping[str, str], key: str) -> tuple[str, ...]:
    """A card's paths, and its host's root copies when it is the host's
    primary (`root_of`: the card's key, its slug or its source -> host)."""
    host = root_of.get(key)
    return card_paths(card) + (root_paths(host, card) if host is not None else ())


def card_files(projection: Projection) -> dict[str, bytes]:
    """A card's files: the card and its agent.json twin, by path."""
    both = projection.both_files()
    return {path: both[is_legacy(path)] for path in card_paths(projection)}


def site_paths(site_dir: str) -> tuple[str, str]:
    """The card and legacy twin paths of a card folder under site/ (one
    string each, however many maps of a run hold them as keys)."""
    base = f"{SITE}{site_dir}/"
    return sys.intern(base + CARD_FILE), sys.intern(base + LEGACY_CARD_FILE)


def is_legacy(path: str) -> bool:
    """Whether a card path (`site_paths`) is the agent.json twin's."""
    return path.endswith(_LEGACY)


_LEGACY = "/" + LEGACY_CARD_FILE


class Pieces(Protocol):
    """Where one file goes as its pieces are made (`knoc.io.stored.PieceWriter`)."""

    def write(self, piece: bytes) -> None: ...

    def close(self) -> Stat:
        """Done: the file's size, ctime and sha256 as stored."""
        ...

    def abort(self) -> None: ...


class Spill(Protocol):
    """Where the files joined from the whole repo go, one group at a time,
    once joined (or as they are made): stored now, and handed back with the
    earlier ones (`onto`), read when asked for (`knoc.io.cache.Cache`). At
    100,000 agents they are 300 MB, which a run then never holds all at once."""

    def spill(self, files: Mapping[str, bytes], digests: Mapping[str, str], onto: Mapping[str, bytes]
              ) -> Mapping[str, bytes]: ...

    def piece_writer(self, onto: Mapping[str, bytes]) -> Pieces | None:
        """Where one file may be stored as its pieces are made (None: held)."""
        ...

    def spilled(self, path: str, st: Stat, onto: Mapping[str, bytes]) -> Mapping[str, bytes]:
        """`onto` with the file a `piece_writer` stored."""
        ...


class Joined:
    """Files joined one group at a time, with their sha256 (added to
    `digests`): held, or with `spill` put out of memory as each group is
    done."""

    def __init__(self, digests: dict[str, str], spill: Spill | None = None) -> None:
        self.digests, self._spill = digests, spill
        self._held: dict[str, bytes] = {}
        self.files: Mapping[str, bytes] = self._held

    def add(self, group: Mapping[str, bytes]) -> None:
        self.digests.update({path: sha256(body) for path, body in group.items()})
        if self._spill is None:
            self._held.update(group)
        else:
            self.files = self._spill.spill(group, self.digests, self.files)

    def add_pieces(self, path: str, pieces: Callable[[], Iterable[bytes]]) -> None:
        """A file made a piece at a time, never held whole where it can be
        spilled (made again and held if storing it fails)."""
        writer = self._spill.piece_writer(self.files) if self._spill is not None else None
        if writer is not None:
            try:
                for piece in pieces():
                    writer.write(piece)
                st = writer.close()
            except BaseException as exc:  # a Ctrl-C too: the half-written piece file goes
                writer.abort()
                if not isinstance(exc, OSError):
                    raise
            else:
                assert self._spill is not None
                self.digests[path], self.files = st[2], self._spill.spilled(path, st, self.files)
                return
        self.add({path: b"".join(pieces())})


V = TypeVar("V")


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


class Parted(Lazy[bytes]):
    """Files held as their parts (a patched file: its stored bytes around
    the new pieces, `knoc.output.patch`), each made when first asked for:
    joined only when read as bytes, written part by part (`Tree.content`)."""

    def __init__(self, keys: Collection[str], parts: Callable[[str], Parts]) -> None:
        super().__init__(keys, lambda path: b"".join(parts(path)))
        self.parts = parts


class Tree(Mapping[str, bytes]):
    """Every file of a build by its path under the build directory. A card
    is unpacked only when its bytes are read (as it is written): a hundred
    thousand of them unpacked at once would not fit in memory."""

    def __init__(self, files: Mapping[str, bytes], cards: dict[str, str],
                 lookup: CardLookup, linked: Mapping[str, bytes] | None = None) -> None:
        """`cards`: card path (`site_paths`) -> the card's source, its
        projection looked up (`lookup`) only when its bytes are read.
        `linked`: the link stage's files, perhaps read from the cache only
        when asked for; `files` and `cards` take precedence over them."""
        self._files = files
        self._cards = cards
        self._lookup = lookup
        self._linked = linked if linked is not None else {}  # not `or`: that asks a lazy mapping its length

    def __getitem__(self, path: str) -> bytes:
        if path in self._files:
            return self._files[path]
        if path in self._cards:
            return self._lookup.projection(self._cards[path]).file_bytes(is_legacy(path))
        return self._linked[path]

    def __iter__(self) -> Iterator[str]:
        return itertools.chain(self._cards, self._files, self._linked_paths)

    def __len__(self) -> int:
        return len(self._files) + len(self._cards) + len(self._linked_paths)

    @functools.cached_property
    def _linked_paths(self) -> list[str]:
        """The linked files not overridden (listed only if the tree is walked:
        at 100,000 agents a check never does)."""
        return [p for p in self._linked if p not in self._files and p not in self._cards]

    def __contains__(self, path: object) -> bool:  # Mapping's would unpack the card
        return path in self._files or path in self._cards or path in self._linked

    def content(self, path: str) -> bytes | StoredFiles | Parts:
        """What the tree holds at `path` (`knoc.io.tree_files.Content`): its
        bytes, the cache's stored files that hold it (copied, never held),
        or a patched file's parts (written one after another, never joined)."""
        if path in self._cards:
            return self[path]
        held = self._files if path in self._files else self._linked
        if isinstance(held, Parted):
            return held.parts(path)
        return held if isinstance(held, StoredFiles) and path in held else held[path]

    @property
    def rendered(self) -> Mapping[str, bytes]:
        """The files render joined (and cards it signed): as bytes, or as the
        cache keeps them (`spill`)."""
        return self._files

    def digest(self, path: str) -> str | None:
        """The sha256 of a card left unpacked (None for any other file)."""
        rel = self._cards.get(path)
        return None if rel is None else self._lookup.projection(rel).file_digest(is_legacy(path))

    def card(self, path: str) -> tuple[str, bool, CardLookup] | None:
        """The card a path holds, if it is one left unpacked: its source,
        whether as its agent.json, and where its projection comes from (two
        trees for which these are equal hold the same bytes there)."""
        rel = self._cards.get(path)
        return None if rel is None else (rel, is_legacy(path), self._lookup)

    @classmethod
    def of_cards(cls, sources: Iterable[str], lookup: CardLookup,
                 files: Mapping[str, bytes] | None = None, linked: Mapping[str, bytes] | None = None,
                 roots: Mapping[str, str] | None = None) -> Tree:
        """The cards of these sources, their agent.json twins and their
        host's root copies (`roots`: source -> host, for primaries), but
        where `files` holds the path (a signed card); `files` and `linked`
        as for the constructor."""
        files = files or {}
        cards: dict[str, str] = {}
        for rel in sources:
            for path in all_paths(lookup.projection(rel), roots or {}, rel):
                if path not in files:
                    cards[path] = rel
        return cls(files, cards, lookup, linked)


def render(cards: Cards, linked: Mapping[str, bytes], linked_digests: dict[str, str], inputs: list[Input],
           target: str, operator: tuple[tuple[str, str], ...] = (), signer: CardSigner | None = None,
           spill: Spill | None = None, roots: Mapping[str, str] | None = None) -> tuple[Tree, dict[str, str]]:
    """Every output file and its sha256, keyed by its path under the build
    directory: the cards (and each host's root copy of its primary's,
    `roots`: host -> slug), the files the link stage rendered (with their
    digests), the manifest. `spill`, when given, keeps the files joined
    here out of memory (not with `signer`: its signed cards stay)."""
    digests: dict[str, str] = {}
    out = Joined(digests, spill if signer is None else None)
    listed: list[tuple[str, str, str]] = []  # each card's host, url and source: its AI Catalog entry is read later
    shown: dict[str, list[tuple[str, str]]] = {}  # each host's cards' slugs and sources: their details, likewise
    at: dict[str, str] = {}  # each card path -> its source, for the tree
    root_of = {slug: host for host, slug in (roots or {}).items()}
    for card in cards:  # in slug order
        proj = card.projection
        listed.append((proj.host, proj.url, card.source))
        shown.setdefault(proj.host, []).append((card.slug, card.source))
        paths = all_paths(card, root_of, card.slug)
        for path in paths:
            digests[path], at[path] = proj.file_digest(is_legacy(path)), card.source
        if signer is not None:
            written = proj.written()
            signed = _signed(signer, card, written, card_paths(card))
            by_kind = {is_legacy(path): body for path, body in signed.items()}
            out.add({path: signed.get(path) or signer.copy(path, by_kind[is_legacy(path)], (
                written.legacy or written.body) if is_legacy(path) else written.body, proj.url, card.source)
                for path in paths})  # a root copy: the same signed bytes (`copy`)
    if signer is not None:
        out.add({rel: signer.jwks(rel) for host in sorted({c.projection.host for c in cards})
                 for rel in [f"{SITE}{host}/{JWKS_FILE}"]})
    digests.update(linked_digests)
    # What follows from card bytes the link stage does not read: joined
    # here, one group at a time (the largest first).
    if CATALOG in linked:  # the link stage rendered the catalog: each host's details go with it
        for host, its in sorted(shown.items()):
            out.add_pieces(details_path(host), functools.partial(_details, cards, its))
    del shown
    for path, pieces in host_catalogs(listed, lambda rel: cards.projection(rel).catalog_pieces()[1],
                                      operator).items():
        out.add_pieces(path, pieces)
    del listed
    for host, rules in etag_rules(digests).items():  # after the digests they list
        headers = f"{SITE}{host}/{HEADERS_FILE}"
        out.add_pieces(headers, functools.partial(_headers, linked[headers], rules))
    kids = signer.kids() if signer is not None else None
    out.add_pieces(MANIFEST, lambda: dump_pieces(manifest(inputs, digests, target, kids)))
    return Tree(out.files, {} if signer is not None else at, cards.cards, linked), digests  # signed: in files


def _headers(rules: bytes, etags: Callable[[], Iterable[bytes]]) -> Iterator[bytes]:
    """A host's `_headers`: its rules, then its ETag rules, a megabyte at a time."""
    return joined_pieces(rules, etags(), b"", b"")


def _details(cards: Cards, its: list[tuple[str, str]]) -> Iterator[bytes]:
    """A host's details script, each card's piece read as it is joined."""
    return details_script((slug, cards.projection(source).catalog_pieces()[0]) for slug, source in its)


def pieces_of(files: Mapping[str, bytes], path: str) -> Iterator[bytes]:
    """A file's bytes a piece at a time: the cache reads its files so."""
    return files.pieces(path) if isinstance(files, StoredFiles) else iter((files[path],))


def _signed(signer: CardSigner, card: Card, written: Written, paths: tuple[str, ...]) -> dict[str, bytes]:
    """A card and its agent.json twin (if any), signed (the twin once more
    only when its bytes differ: an ES256 signature is new each time)."""
    path, *twin = paths
    body = signer.sign(path, written.body, card.projection.url, card.source)
    return {path: body, **{t: signer.sign(t, written.legacy, card.projection.url, card.source) if written.legacy
                           else body for t in twin}}


def manifest(inputs: list[Input], outputs: dict[str, str], target: str,
             signed_by: list[str] | None = None) -> dict[str, JsonValue]:
    """Hashes of inputs and outputs. A private entity's path is left out (its
    name would say it exists); the sources digest still covers it."""
    signing: dict[str, JsonValue] = {"signing": {"keys": [*signed_by]}} if signed_by is not None else {}
    return {
        "knoc": __version__,
        "a2a_target": target,
        "sources_digest": sources_digest(inputs),
        **signing,
        "inputs": {rel: digest for rel, digest, private in sorted(inputs) if not private},
        "outputs": {path: outputs[path] for path in sorted(outputs)},  # no list of 180,000 pairs
    }


def sources_digest(inputs: Iterable[Input]) -> str:
    """One sha256 over every input's path and sha256, private ones too
    (hashed a megabyte at a time: at 100,000 sources the text is 11 MB)."""
    seen = hashlib.sha256()
    lines = (f"{rel}\0{digest}\n".encode() for rel, digest, _ in sorted(inputs))
    for piece in joined_pieces(b"", lines, b"", b""):
        seen.update(piece)
    return seen.hexdigest()


def manifest_line(key: str, value: str, depth: int = 2) -> bytes:
    """One string entry of the manifest as `canonical.dumps` writes it, at
    `depth` (1 for the top level, 2 inside `inputs` or `outputs`)."""
    return f"\n{'  ' * depth}{encode_basestring(key)}: {encode_basestring(value)}".encode()
