"""The sources' listing, kept between runs (`.knoc-cache/listing.bin`).

Listing 100,000 sources and sorting their paths costs a warm check more
than a tenth of a second. The listing is kept with the ctime of each
folder it listed; while none of them changed, no file was added, removed
or renamed in any (POSIX updates a folder's mtime, and with it its ctime,
on each; unlike the mtime, the ctime cannot be put back), so the kept
listing is the listing. A folder added changes its parent's ctime too."""

from __future__ import annotations

import bisect
import os
from pathlib import Path
from typing import Any

from knoc.io.cache import DIR, read_stored, write_stored
from knoc.io.cache_folder import usable
from knoc.io.files import listed
from knoc.io.fingerprint import salt
from knoc.rules.records import join_paths, split_paths

VERSION = 4


def sources(root: Path, specs: str, content: str, use_cache: bool
            ) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """The repo-relative paths of the spec sources and of the content
    sources, each sorted (`files.listed`), and what the listing refused."""
    memo = root / DIR / "listing.bin" if use_cache and usable(root) else None
    stored: Any = read_stored(memo)[0] if memo is not None else None
    # Only a listing this knoc made of this very folder: a repo could ship one.
    made_by = [salt(str(root.resolve())), specs, content]
    if _current(root, stored, made_by):
        return split_paths(stored[3]), split_paths(stored[4]), [tuple(r) for r in stored[5]]
    spec_listing, content_listing = listed(root, [specs]), listed(root, [content])
    refused = sorted(set(spec_listing.refused + content_listing.refused))
    if memo is not None:
        write_stored(memo, (VERSION, made_by, spec_listing.folders + content_listing.folders,
                            join_paths(spec_listing.found), join_paths(content_listing.found), refused))
    return spec_listing.found, content_listing.found, refused


def merged(specs: list[str], content: list[str]) -> list[str]:
    """Both, in one sorted list (two sorted runs, which the sort merges in C)."""
    return sorted(specs + content)


def shared(specs: list[str], content: list[str]) -> set[str]:
    """The paths in both (a specs folder inside the content folder), found
    without hashing every content path: both lists are sorted."""
    return {p for p in specs if (i := bisect.bisect_left(content, p)) < len(content) and content[i] == p}


def _current(root: Path, stored: Any, made_by: list[str]) -> bool:
    """Whether `stored` is a listing made as `made_by` says (which knoc, of
    which folder, of which two folders in it) none of whose folders changed."""
    if not (isinstance(stored, tuple) and len(stored) == 6 and stored[0] == VERSION and stored[1] == made_by
            and isinstance(stored[2], list) and stored[2]
            and isinstance(stored[3], str) and isinstance(stored[4], str) and isinstance(stored[5], list)
            and all(isinstance(r, tuple) and len(r) == 2 and all(isinstance(x, str) for x in r) for r in stored[5])):
        return False
    base = f"{root}/"
    try:
        return all(os.stat(base + rel).st_ctime_ns == ctime for rel, ctime in stored[2])
    except (OSError, TypeError, ValueError):
        return False
