"""The outputs of a patched run, read only when asked for: at 100,000
agents a check that finds build/ as last rendered reads none of them."""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping

from knoc.kinds.agent import CardLookup
from knoc.output.tree import is_legacy, site_paths
from knoc.rules.records import Digests


def plain(digests: Mapping[str, str]) -> Mapping[str, str]:
    """sha256 by path as a dict or as columns (`Digests`: a lazy view is
    made into those, without a dict of 180,000 entries beside them), for
    the cache and the memo of build/ to keep."""
    if isinstance(digests, dict | Digests):
        return digests
    if isinstance(digests, Overlaid) and (columns := digests.columns()) is not None:
        return columns
    paths = sorted(digests)
    return Digests.of_rows(paths, "".join(digests[p] for p in paths))


class Overlaid(Mapping[str, str]):
    """sha256 by path as `base` has them, but for the paths of `changed`."""

    def __init__(self, base: Mapping[str, str], changed: Mapping[str, str]) -> None:
        self._base, self._changed = base, changed

    def __getitem__(self, path: str) -> str:
        return self._changed[path] if path in self._changed else self._base[path]

    def __contains__(self, path: object) -> bool:
        return path in self._changed or path in self._base

    def flat(self) -> dict[str, str]:
        """The same as a plain dict (compared in C, where every file counts)."""
        flat = dict(self._base.items())
        flat.update({path: self._changed[path] for path in self._changed})
        return flat

    def items(self) -> ItemsView[str, str]:
        return self.flat().items()

    def columns(self) -> Digests | None:
        """The same as columns, made from the base's when it has them and
        `changed` adds no path (None: it does)."""
        if not isinstance(self._base, Digests) or any(p not in self._base for p in self._changed):
            return None
        return self._base.replaced({path: self._changed[path] for path in self._changed})

    def __iter__(self) -> Iterator[str]:
        yield from self._base
        yield from (p for p in self._changed if p not in self._base)

    def __len__(self) -> int:
        return len(self._base) + sum(1 for p in self._changed if p not in self._base)


class Previous(Mapping[str, bytes]):
    """Every output of the last run (`digests` names them): the link
    stage's files and the whole-repo ones as the cache stores them, and
    each card as its projection holds it, read only when asked for.
    `published`: (slug, source) of each card, `sites` their folders under
    site/ in that order; `roots`: host -> slug of its primary agent, whose
    card is copied to the host's root."""

    def __init__(self, digests: Mapping[str, str], rendered: Mapping[str, bytes], linked: Mapping[str, bytes],
                 cards: CardLookup, published: list[tuple[str, str]], sites: list[str],
                 roots: dict[str, str]) -> None:
        self._digests, self._stored, self._cards = digests, (rendered, linked), cards
        self._published, self._sites, self._roots = published, sites, roots
        self._at: dict[str, tuple[str, bool]] = {}  # card path -> (source, agent.json?), made when first needed

    def __getitem__(self, path: str) -> bytes:
        if path not in self._digests:
            raise KeyError(path)
        for stored in self._stored:  # the rendered `_headers` extends the linked one
            if path in stored:
                return stored[path]
        rel, legacy = self._card_at()[path]
        return self._cards.projection(rel).file_bytes(legacy)

    def _card_at(self) -> dict[str, tuple[str, bool]]:
        if not self._at:
            rel_of = dict(self._published)
            for (_, rel), site in zip(self._published, self._sites, strict=True):
                for p in site_paths(site):
                    self._at[p] = (rel, is_legacy(p))
            for host, slug in self._roots.items():
                for p in site_paths(host):
                    self._at[p] = (rel_of[slug], is_legacy(p))
        return self._at

    def __contains__(self, path: object) -> bool:
        return path in self._digests

    def __iter__(self) -> Iterator[str]:
        return iter(self._digests)

    def __len__(self) -> int:
        return len(self._digests)
