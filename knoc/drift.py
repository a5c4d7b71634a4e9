"""Drift between what the sources compile to and what build/ holds."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class Drift:
    path: str
    state: str  # "stale", "missing" or "extra"
    diff: str = ""


def compare(expected: dict[str, bytes], actual: dict[str, bytes], context: int = 2,
            max_lines: int = 40) -> list[Drift]:
    found: list[Drift] = []
    for path in sorted(expected.keys() | actual.keys()):
        if path not in actual:
            found.append(Drift(path, "missing"))
        elif path not in expected:
            found.append(Drift(path, "extra"))
        elif expected[path] != actual[path]:
            lines = list(difflib.unified_diff(
                actual[path].decode("utf-8", "replace").splitlines(),
                expected[path].decode("utf-8", "replace").splitlines(),
                f"build/{path} (on disk)", f"build/{path} (from sources)", n=context, lineterm=""))
            if len(lines) > max_lines:
                lines = lines[:max_lines] + [f"... {len(lines) - max_lines} more lines"]
            found.append(Drift(path, "stale", "\n".join(lines)))
    return found
