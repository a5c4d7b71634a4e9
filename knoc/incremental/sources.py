"""Sources on disk: read (only as regular files inside the repo), and
compiled through the cache, which keeps each file's result by its bytes."""

from __future__ import annotations

from pathlib import Path

from knoc.compiler.load import source_file
from knoc.compiler.records import FileResult
from knoc.compiler.unit import one_file
from knoc.config import Config
from knoc.diagnostics import Diagnostic, SourceFile, diag
from knoc.io import files
from knoc.io.cache import Cache
from knoc.kinds.spec import SpecSet
from knoc.rules.records import Encoded


def source_at(root: Path, relpath: str, shown: str | None = None) -> SourceFile | Diagnostic:
    """The file at `relpath` under `root`, or why it cannot be read."""
    path = f"{root}/{relpath}"
    try:
        raw = files.read_source(path, str(root))
    except files.Refused as exc:
        return diag("KNO-IO-REFUSED", f"knoc does not read this file: {exc}", file=relpath, hint=exc.hint)
    except OSError as exc:
        return diag("KNO-IO-READ", f"cannot read file: {exc.strerror}", file=relpath)
    return source_file(path, relpath, raw, shown)


def compile_source(config: Config, specs: SpecSet, cache: Cache, rel: str) -> tuple[str, Encoded] | Diagnostic:
    """One file the cache could not vouch for: read it, and reuse what the
    cache kept for the same bytes or compile it. Returns its sha256 and the
    encoded FileResult, or why it could not be read."""
    src = source_at(config.root, rel)
    if isinstance(src, Diagnostic):
        return src
    kept = cache.get(rel, src.digest)  # the same bytes with a new mtime, say after a checkout
    if isinstance(kept, tuple) and FileResult.decode(kept) is not None:
        return src.digest, kept
    return src.digest, one_file(src, None, specs, config.a2a, config.layout).encode()
