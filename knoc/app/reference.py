"""For the generated reference pages (`make reference`): writing them under
docs/, and what knoc prints for each case of bad input, compiled from a
scratch copy of the example content repo."""

from __future__ import annotations

from pathlib import Path

from knoc.compiler.driver import compile_repo
from knoc.config import load_config
from knoc.diagnostics import reporters
from knoc.diagnostics.source import reader
from knoc.io import files
from knoc.tools.bad_input import CASES, Edit, Replace

EXAMPLE_REPO = ["knoc.toml", "specs", "content"]


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


def apply(root: Path, edits: tuple[Edit, ...]) -> None:
    """Make the edits of a case of bad input in the repo at `root`."""
    for edit in edits:
        path = root / edit.rel
        if isinstance(edit, Replace):
            text = files.read_bytes(path).decode("utf-8")
            if edit.old not in text:
                raise ValueError(f"{edit.old!r} is not in {edit.rel}")
            files.atomic_write(path, text.replace(edit.old, edit.new, 1).encode("utf-8"))
        else:
            files.atomic_write(path, edit.data)


def diagnostic_examples(root: Path) -> dict[str, str]:
    """For each code a case of bad input gives, what `knoc validate` prints
    for the first such case (by name): the finding with its source excerpt."""
    shown: dict[str, str] = {}
    for _, case in sorted(CASES.items()):
        if case.code in shown:
            continue
        with files.scratch_copy(root, EXAMPLE_REPO) as scratch:
            apply(scratch, case.edits)
            found = [d for d in compile_repo(load_config(scratch)).report.sorted() if d.code == case.code][:1]
            ctx = reporters.Context(reader(scratch), [], "knoc validate")
            shown[case.code] = reporters.text(found, ctx).rstrip()
    return shown
