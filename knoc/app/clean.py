"""`knoc clean`: remove what knoc made in a repo, build/ and the cache,
never anything else: build/ goes only when every file in it is one its
manifest lists (as a build would replace it), the cache's files only by
the names knoc gives them, and no link is followed."""

from __future__ import annotations

from knoc.app.outcome import Outcome, UsageError
from knoc.config import Config
from knoc.io import cache_folder, files, lock, swap
from knoc.io.cache import DIR as CACHE_DIR
from knoc.io.staging import OutputError, check_owned
from knoc.output.tree import MANIFEST
from knoc.rules.text import escaped


def clean(config: Config, cache_only: bool) -> Outcome:
    removed = []
    with lock.held(config.root):
        if not cache_only:
            out = config.root / config.output
            if files.is_link(out):
                raise UsageError("KNO-OUTPUT", f"{config.output}/ is a link: knoc removes only what it wrote",
                                 "remove the link yourself if you mean to")
            # An interrupted run's work first: an update it committed is finished, its debris
            # removed, and an old tree it moved aside comes back (then removed with the rest).
            swap.recover(config.out_dir, MANIFEST)
            try:
                check_owned(config.out_dir, MANIFEST)
            except OutputError as exc:
                raise UsageError("KNO-OUTPUT", f"{exc}; nothing was removed",
                                 "move the files that are yours out of it, then run knoc clean again") from None
            if files.is_dir(config.out_dir):
                swap.remove(config.out_dir)
                removed.append(f"{config.output}/")
        left = cache_folder.clear(config.root)
        if left == [CACHE_DIR]:
            raise UsageError("KNO-OUTPUT", f"{CACHE_DIR} is a file, not a folder knoc made: knoc left it as it is"
                             + (f" (and removed {removed[0]})" if removed else ""),
                             "remove it yourself if it is not yours to keep")
        if left is not None:
            more = f" and {len(left) - 5} more" if len(left) > 5 else ""
            removed.append(f"{CACHE_DIR}/" if not left else f"knoc's files from {CACHE_DIR}/ (left, not knoc's: "
                           f"{', '.join(map(escaped, left[:5]))}{more})")
    return Outcome("knoc clean", summary=f"removed {' and '.join(removed)}" if removed else "nothing to remove")
