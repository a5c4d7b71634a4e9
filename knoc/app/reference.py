"""Writing the generated reference pages under docs/ (`make reference`)."""

from __future__ import annotations

from pathlib import Path

from knoc.io import files


def write_pages(docs: Path, pages: dict[str, str]) -> list[str]:
    """Write each page (by its path under `docs`) whose text changed; the
    paths written."""
    written = []
    for rel, text in sorted(pages.items()):
        path, data = docs / rel, text.encode("utf-8")
        if files.is_file(path) and files.read_bytes(path) == data:
            continue
        files.atomic_write(path, data)
        written.append(rel)
    return written
