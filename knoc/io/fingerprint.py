"""What the cache's entries are salted with: knoc's own code, and the
inputs of a run that every entry depends on (the A2A target, the specs)."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path


def salt(*parts: str) -> str:
    return hashlib.sha256("\0".join((code_fingerprint(), *parts)).encode("utf-8")).hexdigest()


@functools.cache
def code_fingerprint() -> str:
    """knoc's own files by name, size and mtime: an install of other code
    under the same version number (a git checkout, an edited template) must
    not reuse what the old code found. Stat only; about a hundred files,
    once a process: it runs the code it imported."""
    package = Path(__file__).resolve().parent.parent
    seen = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.suffix in {".py", ".j2", ".kno"}:
            st = path.stat()
            seen.update(f"{path.relative_to(package)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return seen.hexdigest()
