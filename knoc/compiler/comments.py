"""A `#` that cuts a value short: YAML reads a ` #` and the rest of its
line as a comment, so `description: Fixes issue #42 fast` is `Fixes
issue`, and nothing says so; and a line of a value written over several
that begins with `#` (`#1 in the repo`) is a comment line, dropped. Said
where the `#` after a plain value, or at the start of the line after it
and indented as its continuation would be, is followed by text at once
(`#42`, `#tag`): a comment is written `# ...`. Pure."""

from __future__ import annotations

import re

from knoc.diagnostics import Diagnostic, SourceFile, Span, diag
from knoc.rules.lines import lines as split_lines
from knoc.rules.masking import masked
from knoc.yaml.scanner import plain_ends

_GLUED = re.compile(r"[ \t]#[^\s#]")  # what most sources never hold: the text is walked only when it does
_AFTER_VALUE = re.compile(r"[ \t]+#[^\s#]")


def cut_values(source: SourceFile) -> list[Diagnostic]:
    """Each plain value a glued `#` ends, at that `#`."""
    text = source.text or ""
    if (" #" not in text and "\t#" not in text) or _GLUED.search(text) is None:
        return []
    lines = split_lines(text)
    found: dict[int, Diagnostic] = {}  # by line: a key and its value end on one line
    for line, column, first in plain_ends(text):
        here = lines[line] if line < len(lines) else ""
        said = "YAML reads a ` #` and the rest of its line as a comment"
        if (glued := _AFTER_VALUE.match(here, column)) is None:  # matched in place: a line may hold many values
            if here[column:].strip():  # a `,` or `]` after it: the value ended there, in a flow list or mapping
                continue
            line, said = line + 1, "YAML reads a line that begins with `#` as a comment, not as the value's next line"
            here = lines[line] if line < len(lines) else ""
            if _indent(here) <= _indent(lines[first]) or (glued := _AFTER_VALUE.match(here)) is None:
                continue
        word = masked(here[glued.end() - 2:].split(None, 1)[0])  # masked whole, then cut: no password half-shown
        shown = word if len(word) <= 40 else word[:39] + "…"
        found.setdefault(line, diag("KNO-YAML-COMMENT", f"the value stops before `{shown}`: {said}", file=source.rel,
                                    span=Span(line + 1, glued.end() - 1, len(here.rstrip()) + 1),
                                    hint="quote the whole value to keep the `#` in it; if it is a comment, put a "
                                         "space after the `#`"))
    return [found[line] for line in sorted(found)]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))
