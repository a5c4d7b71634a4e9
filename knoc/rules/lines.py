"""Where a text's lines end: at \\n, \\r\\n or \\r, as YAML (either version)
and the language server protocol end them. `str.splitlines` also ends one
at a form feed, U+0085, U+2028 and more, which would put every later line
number, and the columns on that line, off."""

from __future__ import annotations

import re

LINE_BREAK = re.compile("\r\n|\r|\n")
# git's first conflict marker (every conflict has one), at a line's start: after `\n` or `\r`, as YAML ends lines.
MERGE_CONFLICT = re.compile(r"(?:^|(?<=\r))<{7}(?=[ \r]|$)", re.M)
_WITH_ENDS = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def lines(text: str) -> list[str]:
    """The text's lines without their ends (as `str.splitlines()` gives them,
    but for where they end)."""
    found = LINE_BREAK.split(text)
    if found[-1] == "":  # a text that ends with a line break (or is empty) has no line after it
        found.pop()
    return found


def lines_with_ends(text: str) -> list[str]:
    """The text's lines with their ends (as `str.splitlines(True)`, but for where they end)."""
    return [m.group(0) for m in _WITH_ENDS.finditer(text)]
