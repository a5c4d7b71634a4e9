"""`knoc check`, the drift guard: compile in memory and compare with the
build/ on disk, which is scanned on another core meanwhile.

The scan begins before the compiler, the card models and the renderers
are imported (a quarter of a second that the other core would otherwise
spend idle): this module imports them only once it has begun."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from knoc.app.common import compile_cached, unmatched_accepts
from knoc.app.outcome import Outcome
from knoc.app.scan import Scan
from knoc.config import SIGNING_KEY_ENV, Config
from knoc.diagnostics import Diagnostic, diag
from knoc.io import background, journal, lock, tree

if TYPE_CHECKING:
    from knoc.diagnostics.progress import Progress


def check(config: Config, *, use_cache: bool, progress: Progress | None = None) -> Outcome:
    in_hook = os.environ.get("PRE_COMMIT") == "1"
    # The scan of build/ (a stat of each folder and file, at 100,000 agents
    # 360,000 of them) is begun on another core, and finished by whichever
    # of the two is free.
    with lock.held(config.root):  # the memo and the cache are written, and build/ must hold still
        scan = Scan(config, use_cache, in_hook)
        outcome = _compared(config, use_cache, progress, scan, background.share(scan.pieces()))
    from knoc.app.evolution import spec_findings

    outcome.diagnostics += spec_findings(config)  # the specs changed on this branch, held to their versions
    return outcome


def _compared(config: Config, use_cache: bool, progress: Progress | None, scan: Scan,
              pending: Callable[[], list[Any]]) -> Outcome:
    from knoc.app.signing import adopter, unverifiable
    from knoc.features.drift import drift
    from knoc.io.outputs import ODD_MODE
    from knoc.output.tree import MANIFEST

    out, in_hook = config.output + "/", scan.in_hook
    signed = adopter(config)  # a signed build is checked without the key
    result = compile_cached(config, use_cache, progress, signed, lazy=True)
    seen = scan.seen(pending())
    if not result.ok:
        return Outcome("knoc check", result.report.sorted(), result.inputs, f"{out} not compared")
    found = scan.in_build(seen, result.base)
    differ = found.differing(result.digests)
    odd_mode = any(found.actual.get(p) == ODD_MODE for p in differ)  # never knoc's: not a build left unstaged
    if in_hook and differ and not odd_mode and not found.differing(result.digests, found.before) \
            and _as_built(config, found.actual, differ):
        # pre-commit set unstaged changes aside: the build/ the last run saw
        # is the right one, and only the staged one is stale.
        unstaged = diag("KNO-DRIFT", f"{out} is current in your work tree but not staged", file=out,
                        hint=f"stage it: `git add {out}`, then commit again")
        return Outcome("knoc check", [*result.report.sorted(), unstaged], result.inputs, f"{out} not staged")
    rebuild = _rebuild(config, signed is not None)
    drifted = drift(result.files, differ, found.actual, functools.partial(tree.read_file, config.out_dir), out,
                    (functools.partial(tree.built_for, config.out_dir, MANIFEST), config.a2a), in_hook=in_hook,
                    rebuild=rebuild, written=functools.cache(functools.partial(tree.written, config.out_dir, MANIFEST)),
                    **({"shown_as": _unsigned} if signed is not None else {}))
    if signed is not None and signed.refused:
        drifted = _refusals(signed.refused, out) + drifted
    summary = f"{out} drifted: run `{rebuild}`" if drifted else f"{out} is up to date"
    if drifted and journal.pending(config.out_dir):
        summary += " (an interrupted build left it half updated; the next build finishes that first)"
    said = unverifiable(signed) if signed is not None else []  # what a build says: clients that cannot verify
    return Outcome("knoc check", result.report.sorted() + unmatched_accepts(config, result.inputs) + said + drifted,
                   result.inputs, summary)


def _as_built(config: Config, actual: Mapping[str, str], differ: Iterable[str]) -> bool:
    """Whether build/ is as a build wrote it: its manifest as knoc writes
    one, and each of the `differ` files in build/ (`actual`) as the
    manifest lists it (an older build, staged whole or in part). A file
    edited by hand, the manifest too, or one removed, is not."""
    from knoc.output.canonical import dumps
    from knoc.output.tree import MANIFEST
    from knoc.rules import jsontext

    try:
        raw = tree.read(config.out_dir, MANIFEST)
        manifest = jsontext.parse(raw)
    except (OSError, jsontext.Refused):
        return False
    listed = manifest.get("outputs") if isinstance(manifest, dict) else None
    return isinstance(listed, dict) and dumps(manifest) == raw and all(
        listed.get(p) == actual.get(p) for p in differ if p != MANIFEST)


def _unsigned(path: str, on_disk: bytes, built: bytes) -> tuple[bytes, bytes]:
    """A card's two sides without their signatures, when the one on disk is
    as knoc writes it: the sources give a drifted card unsigned (no key
    here), so its diff shows what changed in it, not the signatures a build
    with the key writes again. A card written otherwise (by hand, minified,
    a key twice) is shown as it is."""
    from knoc.output.canonical import dumps
    from knoc.output.hosting import CARD_FILE, LEGACY_CARD_FILE
    from knoc.rules import jsontext

    if not path.endswith(("/" + CARD_FILE, "/" + LEGACY_CARD_FILE)):
        return on_disk, built
    try:
        old, new = jsontext.parse(on_disk), jsontext.parse(built)
    except jsontext.Refused:
        return on_disk, built
    if not (isinstance(old, dict) and isinstance(new, dict) and dumps(old) == on_disk):
        return on_disk, built
    return (dumps({k: v for k, v in old.items() if k != "signatures"}),
            dumps({k: v for k, v in new.items() if k != "signatures"}))


def _rebuild(config: Config, signs: bool) -> str:
    """The command that rebuilds this repo as it is built: a repo that signs
    needs its key, unless the environment gives it or knoc.toml names one
    that is on this machine."""
    from knoc.app.signing import key_here

    if not signs or os.environ.get(SIGNING_KEY_ENV, "").strip() or key_here(config.key):
        return "knoc build"
    return "knoc build --sign-key KEY"


def _refusals(refused: list[tuple[str, str]], out: str) -> list[Diagnostic]:
    """One error per reason a card's signatures were refused, at its first
    card (a build that lost every signature is one finding, not thousands)."""
    by_reason: dict[str, list[str]] = {}
    for rel, why in refused:
        by_reason.setdefault(why, []).append(rel)
    found = []
    for why, rels in by_reason.items():
        more = f" (and {len(rels) - 1:,} more card{'s' if len(rels) > 2 else ''})" if len(rels) > 1 else ""
        found.append(diag("KNO-SIGNATURE", f"{why}{more}", file=f"{out}{rels[0]}",
                          hint="rebuild with the signing key: `knoc build --sign-key KEY`"))
    return found
