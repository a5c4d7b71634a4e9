"""Two sources that claim one name (an id, a slug, a card's url): one
finding, at one of them, pointing at the other. The compiler reports it at
the later file; the edge that knows git moves it to the file that is new
(a copy made to start another entity), where the author is at work."""

from __future__ import annotations

import dataclasses

from knoc.diagnostics.model import Diagnostic, Related
from knoc.diagnostics.source import JsonPath, SourceFile, at

CODES = ("KNO-ID-DUPLICATE", "KNO-SLUG-DUPLICATE", "KNO-URL-DUPLICATE")
_ALSO = " is also used by "
_LABEL = "also used here"


def duplicate(code: str, what: str, here: SourceFile, here_path: JsonPath, there: SourceFile,
              there_path: JsonPath, hint: str) -> Diagnostic:
    """`what` (e.g. "id `01H...`") at `here_path` of `here` is also at
    `there_path` of `there`."""
    return at(here, here_path, code, f"{what}{_ALSO}{there.rel}", hint,
              related=(Related(there.locate(there_path), _LABEL, there.rel),))


def other_file(d: Diagnostic) -> str | None:
    """The file a duplicate finding points at, besides its own."""
    if d.code not in CODES or len(d.related) != 1:
        return None
    return d.related[0].file


def told_at_other(d: Diagnostic) -> Diagnostic:
    """The same finding, told at the other file and pointing back."""
    other = d.related[0]
    assert other.file is not None and d.span is not None
    what = d.message.split(_ALSO, 1)[0]
    return dataclasses.replace(d, message=f"{what}{_ALSO}{d.file}", file=other.file, span=other.span,
                               related=(Related(d.span, _LABEL, d.file),))
