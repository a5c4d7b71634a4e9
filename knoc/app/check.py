"""`knoc check`, the drift guard: compile in memory and compare with the
build/ on disk, which is scanned on another core meanwhile."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from typing import Any

from knoc.app.common import compile_cached, in_build, seen_files, seen_folders
from knoc.app.outcome import Outcome
from knoc.app.signing import adopter
from knoc.compiler.driver import Progress, quiet
from knoc.config import Config
from knoc.diagnostics import diag
from knoc.io import background, pool, tree
from knoc.io.outputs import Seen
from knoc.output.tree import MANIFEST
from knoc.tools.drift import differing, drift


def check(config: Config, *, use_cache: bool, progress: Progress = quiet) -> Outcome:
    out = config.output + "/"
    in_hook = os.environ.get("PRE_COMMIT") == "1"
    # The scan of build/ on the other cores: the files, and the folders (a
    # stat each, at 100,000 agents 180,000 of both), which list the tree
    # again if one changed.
    folders, files = background.start_each([functools.partial(_plain, seen_folders, config, use_cache, in_hook),
                                             functools.partial(_plain, seen_files, config, use_cache, in_hook)],
                                            pool.cores() - 1)
    signed = adopter(config)  # a signed build is checked without the key
    result = compile_cached(config, use_cache, progress, signed)
    listed, known = folders(), files()
    seen = Seen(*(known if listed is None else listed))
    if not result.ok:
        return Outcome("knoc check", result.report.sorted(), result.inputs, f"{out} not compared")
    before, actual, where = in_build(config, use_cache, seen, result.base)
    differ = differing(result.digests, actual, where)
    if in_hook and differ and not differing(result.digests, before, where):
        # pre-commit set unstaged changes aside: the build/ the last run saw
        # is the right one, and only the staged one is stale.
        unstaged = diag("KNO-DRIFT", f"{out} is current in your work tree but not staged", file=out,
                        hint=f"stage it: `git add {out}`, then commit again")
        return Outcome("knoc check", [*result.report.sorted(), unstaged], result.inputs, f"{out} not staged")
    drifted = drift(result.files, differ, actual, lambda rel: tree.read(config.out_dir, rel), out,
                    (lambda: _built_for(config), config.a2a), in_hook=in_hook)
    if signed is not None and signed.refused:
        drifted = [diag("KNO-SIGNATURE", why, file=f"{out}{rel}",
                        hint="rebuild with the signing key: `knoc build --sign-key KEY`")
                   for rel, why in signed.refused] + drifted
    summary = f"{out} drifted: run `knoc build`" if drifted else f"{out} is up to date"
    return Outcome("knoc check", result.report.sorted() + drifted, result.inputs, summary)


def _plain(scan: Callable[[Config, bool, bool], Seen | None], config: Config, use_cache: bool, in_hook: bool
           ) -> tuple[Any, ...] | None:
    found = scan(config, use_cache, in_hook)
    return None if found is None else tuple(found)  # marshal carries plain tuples only


def _built_for(config: Config) -> str | None:
    """The A2A target the build on disk was made for, if its manifest says
    (in its head: the whole of it is 25 MB at 100,000 agents)."""
    try:
        found = re.search(rb'^  "a2a_target": "([0-9a-z.]+)",$', tree.read(config.out_dir, MANIFEST, 4096), re.M)
    except OSError:
        return None
    return found.group(1).decode("ascii") if found else None
