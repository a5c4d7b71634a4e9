"""The scan of build/ against its memo (`knoc.io.outputs`), in pieces that
two processes share (`Scan`): a build's and a check's."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from typing import Any, NamedTuple

from knoc.config import Config
from knoc.io import tree
from knoc.io.outputs import GONE, Base, Columns, OutputMemo, Overlay, Seen, Snapshot, TreeStat

# At 100,000 agents, 180,000 folders and 180,000 files: pieces small
# enough that the last one does not keep the other process waiting long.
FOLDER_PIECES, FILE_PIECES = 8, 24


class Scan:
    """The scan of build/: a stat of each folder the memo lists (if one
    changed, the tree is listed again), then of each file, cut into pieces
    (`pieces`) that a check shares (`knoc.io.background.share`): a child
    begins them at once, and the compile takes those left when it is done.
    In a pre-commit hook the memo is not updated: what the scan sees is the
    staged tree, which pre-commit puts back as it was."""

    def __init__(self, config: Config, use_cache: bool, in_hook: bool = False) -> None:
        self._config, self._use_cache, self.in_hook = config, use_cache, in_hook

    @functools.cached_property
    def memo(self) -> OutputMemo:
        return OutputMemo.open(self._config.root, self._use_cache)

    def pieces(self) -> list[Callable[[], Any]]:
        """Each piece of the scan, whose value marshal can carry. The memo
        is opened first, here: a process the pieces are shared with
        (`knoc.io.background.share` forks it) then reads it from this
        one's pages, never decoding its own copy, and each piece splits
        only its own paths (`Columns.file_piece`)."""
        self.memo  # noqa: B018 - opened now, before the fork
        return ([functools.partial(self._folders, k) for k in range(FOLDER_PIECES)]
                + [functools.partial(self._files, k) for k in range(FILE_PIECES)])

    def _folders(self, k: int) -> tuple[bool, str, dict[str, str]]:
        """Whether piece `k` of the folders is unchanged; the memo's base and
        overrides, which the process that did not open it needs."""
        memo = self.memo
        rows, dirs = memo.columns.dir_piece(k, FOLDER_PIECES)
        return tree.folders_unchanged(self._config.out_dir, memo.columns, rows, dirs), memo.base, memo.overrides

    def _files(self, k: int) -> dict[str, TreeStat | None]:
        columns = self.memo.columns
        return tree.changed_files(self._config.out_dir, columns, *columns.file_piece(k, FILE_PIECES))

    def seen(self, values: list[Any]) -> Seen:
        """What the pieces found, against the memo (see `Seen`)."""
        folders, found = values[:FOLDER_PIECES], values[FOLDER_PIECES:]
        if not all(unchanged for unchanged, _, _ in folders):
            return self.memo.seen(self.relisted()[1])
        stats = {rel: st for piece in found for rel, st in piece.items()}
        changed = _digests_of(stats)
        if changed and not self.in_hook:
            self.memo.update(_applied(self.memo, stats), changed)
        _, base, overrides = folders[0]
        return Seen(base, overrides, changed)

    def owned(self) -> Columns | None:
        """build/'s folders when it held only files a knoc build wrote, so
        the memo says (once `seen`): build/ still holds only those while no
        folder of it has changed since (no file was added), as a stat of
        each shows (`tree.folders_unchanged`). None: not known to."""
        return self.memo.columns if self.memo.owned else None

    def relisted(self) -> tuple[Snapshot, dict[str, str]]:
        """The tree listed again, and each file whose sha256 is not the
        memo's (kept in the memo, but in a pre-commit hook)."""
        before = self.memo.snapshot
        now = tree.scan_tree(self._config.out_dir, before)
        changed = tree.digest_changes(before, now)
        if not self.in_hook:
            self.memo.update(now, changed)
        return now, changed

    def in_build(self, seen: Seen, base: Base | None) -> InBuild:
        """build/ as the memo had it and as the scan `seen` found it, against
        the rendering `base` this run compiled from. When the memo follows
        from `base`, the paths where they may differ are its few overrides
        and the files the scan saw change, and nothing is loaded; else the
        memo's digests are read, and the memo follows from `base` hereafter."""
        if base is not None and base.parent is not None and seen.base == base.parent.token != base.token:
            base = base.parent  # build/ as the rendering this run's was patched from
        unlike = base.unlike() if base is not None else {}
        if base is not None and base.token and seen.base == base.token:
            now = {**seen.overrides, **seen.changed}
            return InBuild(Overlay(base.digests, seen.overrides), Overlay(base.digests, now),
                           base.touched | now.keys(), unlike)
        # As kept now, the scan's changes in it (but in a hook) or not: they apply alike.
        before = self.memo.digests()
        if base is not None and not self.in_hook:
            self.memo.rebased(base, before)
        return InBuild(before, Overlay(before, seen.changed).flat(), None, unlike)


class InBuild(NamedTuple):
    """build/'s files by path with their sha256 as the memo had them
    (`before`) and as the scan found them (`actual`); the only paths where
    either may differ from the rendering (`where`, None: anywhere); and
    each output's sha256 in the rendering that it surely no longer has."""

    before: Mapping[str, str]
    actual: Mapping[str, str]
    where: Collection[str] | None
    unlike: dict[str, str]

    def differing(self, want: Mapping[str, str], found: Mapping[str, str] | None = None) -> set[str]:
        """The paths whose sha256 in `want` is not build/'s (`actual`, or `found`)."""
        from knoc.features.drift import differing  # here: a check begins its scan before this import

        return differing(want, self.actual if found is None else found, self.where, self.unlike)

def _applied(memo: OutputMemo, stats: dict[str, TreeStat | None]) -> Snapshot:
    """The memo's snapshot with the stats a scan found changed."""
    snapshot = memo.snapshot
    for rel, st in stats.items():
        if st is None:
            snapshot.files.pop(rel, None)
        else:
            snapshot.files[rel] = st
    return snapshot


def _digests_of(stats: dict[str, TreeStat | None]) -> dict[str, str]:
    return {rel: GONE if st is None else st[2] for rel, st in stats.items()}

