"""Drift between what the sources compile to and what build/ holds, as
diagnostics (code KNO-DRIFT) for the usual renderers."""

from __future__ import annotations

import difflib

from knoc.diagnostics import Diagnostic, error

MAX_DIFF_LINES = 40


def drift(expected: dict[str, bytes], actual: dict[str, bytes], out: str) -> list[Diagnostic]:
    """One error per stale, missing or extra file; `out` prefixes the paths."""
    found: list[Diagnostic] = []
    hint = f"run `knoc build` and commit {out}"
    for path in sorted(expected.keys() | actual.keys()):
        shown = f"{out}{path}"
        if path not in actual:
            found.append(error("KNO-DRIFT", f"missing: {shown}", file=shown, hint=hint))
        elif path not in expected:
            found.append(error("KNO-DRIFT", f"extra: {shown}", file=shown, hint=hint))
        elif expected[path] != actual[path]:
            found.append(error("KNO-DRIFT", f"stale: {shown}", file=shown, hint=hint,
                               detail=_diff(shown, actual[path], expected[path])))
    return found


def _diff(shown: str, old: bytes, new: bytes) -> str:
    lines = list(difflib.unified_diff(
        old.decode("utf-8", "replace").splitlines(), new.decode("utf-8", "replace").splitlines(),
        f"{shown} (on disk)", f"{shown} (from sources)", n=2, lineterm=""))
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [f"... {len(lines) - MAX_DIFF_LINES} more lines"]
    return "\n".join(lines)
