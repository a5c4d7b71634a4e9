"""The one-file stages for one source: load, validate, project. What they
find (`FileResult`) depends on that file and the specs alone, so the
engine's cache keeps it by the file's sha256."""

from __future__ import annotations

import json

from knoc.compiler.comments import cut_values
from knoc.compiler.load import parse_source
from knoc.compiler.project import project
from knoc.compiler.records import FileResult
from knoc.compiler.validate import check, declaration
from knoc.diagnostics import Diagnostic, SourceFile
from knoc.diagnostics.internal import internal
from knoc.kinds.agent import agent_of
from knoc.kinds.aliases import page_aliases
from knoc.kinds.entity import Entity, Layout, is_public, kind_of
from knoc.kinds.facts import facts
from knoc.kinds.spec import SpecSet


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
    cut = cut_values(loaded.source)
    t = declaration(loaded, specs)
    if isinstance(t, Diagnostic):
        return FileResult([*cut, t])
    diags = [*cut, *check(t, specs)]
    t.valid = not any(d.is_error for d in diags)
    projection = None
    if kind_of(t) == "agent":
        projection, found = project(agent_of(t), target)
        diags += found
    elif t.type == "extension" and t.valid and is_public(t):  # its page: read here, where its text is at hand
        diags += page_aliases(loaded.source)
    return FileResult(diags, (t.type, t.version), t.valid, not is_public(t),
                      json.dumps(facts(loaded.data), ensure_ascii=False, default=repr), projection)
