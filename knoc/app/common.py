"""What several commands share: opening the repo, compiling it through the
cache, and naming files for messages."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from knoc.app.outcome import Outcome, UsageError
from knoc.compiler.driver import Progress, Result, compile_repo, quiet
from knoc.config import Config, ConfigError, find_root, load_config
from knoc.io import files, tree
from knoc.io.outputs import GONE, Base, OutputMemo, Overlay, Seen, Snapshot
from knoc.io.stored import Stat

if TYPE_CHECKING:
    from knoc.output.signed import CardSigner
    from knoc.output.tree import Tree


def open_repo(root: Path | None, a2a: str | None, cwd: Path) -> Config:
    """The repo's config: at `root`, or found by walking up from `cwd`."""
    if root is not None and not files.is_dir(root):
        raise UsageError("KNO-CONFIG", f"--root {root} is not a folder", "pass the folder that holds knoc.toml")
    try:
        return load_config(root.resolve() if root else find_root(cwd), a2a)
    except ConfigError as exc:
        raise UsageError("KNO-CONFIG", str(exc)) from None


def compile_cached(config: Config, use_cache: bool, progress: Progress = quiet,
                   signer: CardSigner | None = None, early: Callable[[Tree], None] | None = None) -> Result:
    """Compile the repo, reading and then updating the cache."""
    result = compile_repo(config, use_cache=use_cache, progress=progress, signer=signer, early=early)
    result.cache.save()
    return result


def on_disk(config: Config, use_cache: bool) -> dict[str, Stat]:
    """The size, mtime and sha256 of each file under build/ (through the
    memo of its stats, which it updates)."""
    memo = OutputMemo.open(config.root, use_cache)
    if not tree.folders_unchanged(config.out_dir, memo.columns):
        now, changed = _listed(config, memo)
        memo.update(now, changed)
        return now.files
    stats = tree.changed_files(config.out_dir, memo.columns)
    now = _applied(memo, stats)
    if stats:  # else the memo is as stored: a no-op build writes (and sorts) nothing
        memo.update(now, _digests_of(stats))
    return now.files


def seen_files(config: Config, use_cache: bool, in_hook: bool = False) -> Seen:
    """The files under build/ that the memo lists, each stat'ed, against the
    memo (see `Seen`): all a check needs to send back from the core that
    scanned. With `seen_folders` on another core, the whole scan. In a
    pre-commit hook the memo is not updated: what it sees is the staged
    tree, which pre-commit puts back as it was."""
    memo = OutputMemo.open(config.root, use_cache)
    stats = tree.changed_files(config.out_dir, memo.columns)
    changed = _digests_of(stats)
    if changed and not in_hook:
        memo.update(_applied(memo, stats), changed)
    return memo.seen(changed)


def seen_folders(config: Config, use_cache: bool, in_hook: bool = False) -> Seen | None:
    """None when no folder under build/ changed since the memo, so that
    `seen_files` saw every change; else the tree listed again (`Seen`)."""
    memo = OutputMemo.open(config.root, use_cache)
    if tree.folders_unchanged(config.out_dir, memo.columns):
        return None
    now, changed = _listed(config, memo)
    if not in_hook:
        memo.update(now, changed)
    return memo.seen(changed)


def _listed(config: Config, memo: OutputMemo) -> tuple[Snapshot, dict[str, str]]:
    """The tree listed again, and each file whose sha256 is not the memo's."""
    before = memo.snapshot
    now = tree.scan_tree(config.out_dir, before)
    return now, tree.digest_changes(before, now)


def _applied(memo: OutputMemo, stats: dict[str, Stat | None]) -> Snapshot:
    """The memo's snapshot with the stats a scan found changed."""
    snapshot = memo.snapshot
    for rel, st in stats.items():
        if st is None:
            snapshot.files.pop(rel, None)
        else:
            snapshot.files[rel] = st
    return snapshot


def _digests_of(stats: dict[str, Stat | None]) -> dict[str, str]:
    return {rel: GONE if st is None else st[2] for rel, st in stats.items()}


def in_build(config: Config, use_cache: bool, seen: Seen, base: Base | None
             ) -> tuple[Mapping[str, str], Mapping[str, str], Collection[str] | None]:
    """build/'s files by path with their sha256 as the memo had them and as
    the scan `seen` found them, and the paths where either may differ from
    `base` (None: anywhere). When the memo follows from the rendering this
    run compiled from, those are its few overrides and the files the scan
    saw change, and nothing is loaded; else the memo's digests are read."""
    if base is not None and base.token and seen.base == base.token:
        now = {**seen.overrides, **seen.changed}
        return Overlay(base.digests, seen.overrides), Overlay(base.digests, now), base.touched | now.keys()
    # As stored now, the scan's changes in it or not yet: they apply alike.
    before = OutputMemo.open(config.root, use_cache).digests()
    return before, Overlay(before, seen.changed).flat(), None


def digests(stats: dict[str, Stat]) -> dict[str, str]:
    return {rel: st[2] for rel, st in stats.items()}


def rel(root: Path, path: Path) -> str:
    """`path` as a repo-relative name (as given when it lies outside the repo)."""
    full = path if path.is_absolute() else Path.cwd() / path
    try:
        return full.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def exists_message(rel_path: str) -> str:
    return f"{rel_path} already exists; knoc does not replace it"


def only(result: Result, wanted: set[str], command: str, summary: str) -> Outcome:
    """The findings of `result` in the `wanted` files only, as `knoc validate FILE` shows them."""
    return Outcome(command, [d for d in result.report.sorted() if d.file in wanted], sorted(wanted), summary)
