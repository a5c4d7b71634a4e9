"""Drift between what the sources compile to and what build/ holds, as
diagnostics (code KNO-DRIFT) for the usual renderers."""

from __future__ import annotations

import difflib
import re
from typing import Callable

from knoc.diagnostics import Diagnostic, error

MAX_DIFF_LINES = 40
CONTEXT = 2
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@$")


def drift(expected: dict[str, bytes], want: dict[str, str], actual: dict[str, str],
          read: Callable[[str], bytes], out: str) -> list[Diagnostic]:
    """One error per stale, missing or extra file. `want` and `actual` map each
    expected file and each file on disk to its sha256; `read` fetches one from
    disk for the diff; `out` prefixes paths."""
    found: list[Diagnostic] = []
    hint = f"run `knoc build` and commit {out}"
    for path in sorted(expected.keys() | actual.keys()):
        shown = f"{out}{path}"
        if path not in actual:
            found.append(error("KNO-DRIFT", f"missing: {shown}", file=shown, hint=hint))
        elif path not in expected:
            found.append(error("KNO-DRIFT", f"extra: {shown}", file=shown, hint=hint))
        elif want[path] != actual[path]:
            found.append(error("KNO-DRIFT", f"stale: {shown}", file=shown, hint=hint,
                               detail=_diff(shown, read(path), expected[path])))
    return found


def _diff(shown: str, old_bytes: bytes, new_bytes: bytes) -> str:
    old = old_bytes.decode("utf-8", "replace").splitlines()
    new = new_bytes.decode("utf-8", "replace").splitlines()
    # difflib is slow on the large index files: diff only the differing middle.
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    skip = max(0, head - CONTEXT)
    keep = max(0, tail - CONTEXT)
    lines = list(difflib.unified_diff(old[skip:len(old) - keep], new[skip:len(new) - keep],
                                      f"{shown} (on disk)", f"{shown} (from sources)",
                                      n=CONTEXT, lineterm=""))
    lines = [_shift(line, skip) for line in lines]
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [f"... {len(lines) - MAX_DIFF_LINES} more lines"]
    return "\n".join(lines)


def _shift(line: str, by: int) -> str:
    m = _HUNK.match(line)
    if not m or not by:
        return line
    a, b, c, d = m.groups()
    return f"@@ -{int(a) + by}{b or ''} +{int(c) + by}{d or ''} @@"
