"""The one-file stages for one source: load, validate, project. What they
find (`FileResult`) depends on that file and the specs alone, so the cache
keeps it by the file's sha256."""

from __future__ import annotations

import json
from typing import Any

from knoc.compiler.load import parse_source, read_source
from knoc.compiler.project import project
from knoc.compiler.records import FileResult
from knoc.compiler.validate import check, declaration
from knoc.config import Config
from knoc.diagnostics import Diagnostic, SourceFile
from knoc.diagnostics.internal import internal
from knoc.io.cache import Cache
from knoc.kinds.agent import agent_of
from knoc.kinds.entity import Entity, Layout, is_public, kind_of
from knoc.kinds.facts import facts
from knoc.kinds.spec import SpecSet


def compile_source(config: Config, specs: SpecSet, cache: Cache, rel: str) -> tuple[str, Any, Diagnostic | None]:
    """One file the cache could not vouch for: read it, and reuse what the
    cache kept for the same bytes or compile it. Returns (sha256, the
    encoded FileResult, None) or ("", None, why it could not be read)."""
    src = read_source(config.root, rel)
    if isinstance(src, Diagnostic):
        return "", None, src
    entry = cache.get(rel, src.digest)  # the same bytes with a new mtime, say after a checkout
    if entry is None or FileResult.decode(entry) is None:
        entry = one_file(src, None, specs, config.a2a, config.layout).encode()
    return src.digest, entry, None


def one_file(source: SourceFile, loaded: Entity | Diagnostic | None, specs: SpecSet, target: str,
             layout: Layout) -> FileResult:
    """Load (unless `loaded` is given), validate and project one source:
    everything that depends on that file (and the specs) alone. A bug is
    one KNO-INTERNAL finding on the file, and the other files go on."""
    try:
        return _one_file(source, parse_source(source, layout) if loaded is None else loaded, specs, target)
    except Exception as exc:  # whatever it is, a bug to report, not a crash
        return FileResult([internal(exc, source.rel)])


def _one_file(source: SourceFile, loaded: Entity | Diagnostic, specs: SpecSet, target: str) -> FileResult:
    if isinstance(loaded, Diagnostic):
        return FileResult([loaded])
    t = declaration(loaded, specs)
    if isinstance(t, Diagnostic):
        return FileResult([t])
    diags = list(check(t, specs))
    t.valid = not any(d.is_error for d in diags)
    projection = None
    if kind_of(t) == "agent":
        projection, found = project(agent_of(t), target)
        diags += found
    return FileResult(diags, (t.type, t.version), t.valid, not is_public(t),
                      json.dumps(facts(loaded.data), ensure_ascii=False, default=repr), projection)
