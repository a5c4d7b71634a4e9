"""For the generated reference pages (`make reference`): writing them under
docs/, and what knoc prints for each case of bad input, compiled from a
scratch copy of the example content repo."""

from __future__ import annotations

import json
from pathlib import Path

from knoc.config import load_config
from knoc.diagnostics import reporters
from knoc.diagnostics.source import reader
from knoc.features.reference.bad_input import CASES, Edit, Replace
from knoc.incremental.driver import compile_repo
from knoc.io import files

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


WireNames = dict[str, dict[str, dict[str, list[str]]]]  # type -> leaf path -> target -> wire paths


def wire_names(root: Path, targets: tuple[str, ...] = ("1.0", "0.3")) -> WireNames:
    """Where each value an agent writes lands on the wire, per target, read
    off the example repo's own cards: a value is looked for in the agent's
    published card, under a key of the same name when there is one, else
    anywhere (a distinctive string only)."""
    from knoc.features.reference.pages import leaves
    from knoc.yaml import yaml12

    found: WireNames = {}
    for target in targets:
        result = compile_repo(load_config(root, target))
        for card in result.cards:
            data = yaml12.load(files.read_bytes(root / card.source).decode("utf-8"))
            kind = str(data.get("$schema", "")).split("@", 1)[0]
            source = data.get("a2a_projection", {}) if kind == "agent-blueprint" else data
            prefix = "a2a_projection." if kind == "agent-blueprint" else ""
            names = set(source.get("security_schemes") or {})
            wire = leaves(json.loads(card.projection.body), names)
            for path, value in leaves(source, names):
                seen = found.setdefault(kind, {}).setdefault(prefix + path, {}).setdefault(target, [])
                seen += [where for where in _matches(path, value, wire) if where not in seen]
    return found


def _matches(path: str, value: object, wire: list[tuple[str, object]]) -> list[str]:
    equal = [where for where, seen in wire if seen == value and type(seen) is type(value)]
    named = [where for where in equal if _stem(where) == _stem(path)]
    distinctive = isinstance(value, str) and len(value) >= 8 and "/" not in value[:12].split(":")[0]
    found = named or (equal if distinctive else [])
    top = [where for where in found if _stem(where.split(".", 1)[0]) == _stem(path.split(".", 1)[0])]
    return top or found  # the same field at the same level first (a skill's own security is not the card's)


def _stem(path: str) -> str:
    """A path's last name, as both sides can compare it (`protocol_versions[]`
    and `protocolVersion`; a card's other names for a field as the field's)."""
    last = path.replace("[]", "").rsplit(".", 1)[-1].replace("_", "").lower().removesuffix("s")
    return _RENAMED.get(last, last)


# The names a card gives a field under another word than the source's.
_RENAMED = {"protocolbinding": "transport", "preferredtransport": "transport",
            "supportsauthenticatedextendedcard": "extendedagentcard", "securityrequirement": "security"}
