"""`knoc specs check`: each spec as the work tree holds it against the same
spec at a git ref, classed (no schema change, additive, breaking,
unknown) and held to what its version bump promises; and the entities a
change makes invalid. `knoc check` and `knoc diff` run it too."""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from knoc.app.outcome import Outcome, UsageError
from knoc.app.refs import check_refs, default_base, git_error, refused_at
from knoc.config import Config, ConfigError, load_config
from knoc.diagnostics import Diagnostic, diag
from knoc.evolution import report
from knoc.evolution.model import pointer_text
from knoc.evolution.verdict import SpecChange, compare_sets
from knoc.incremental.driver import spec_set
from knoc.incremental.sources import entities
from knoc.io import git
from knoc.kinds.entity import BUILTIN, Entity
from knoc.kinds.spec import Spec, SpecSet
from knoc.rules.version import bump_shown

COMMAND = "knoc specs check"
HINT = "`knoc specs check --base REF`"


def specs_check(config: Config, base: str | None, content: Path | None, fmt: str) -> Outcome:
    """Every spec compared with `base` (default: the merge base with the
    default branch); `content`: another repo whose entities are checked too."""
    check_refs(base)
    ref = base or default_base(config, HINT)
    head, problems = spec_set(config)
    if problems.errors:
        answer = _json([], ref, problems.sorted()) if fmt == "json" else None
        return Outcome(COMMAND, problems.sorted(), [], "not compared: fix the specs first", answer=answer,
                       report_format="text" if fmt == "json" else None)
    label, changes, diags = _checked(config, head, ref, _other_repo(content))
    answer = _json(changes, label, diags) if fmt == "json" else _text(changes, label)
    read = [s.entity.source.rel for s in head.specs.values() if not s.entity.source.rel.startswith(BUILTIN)]
    return Outcome(COMMAND, problems.sorted() + diags, read, _summary(changes, label), answer=answer,
                   report_format="text" if fmt == "json" else None)


def spec_findings(config: Config) -> list[Diagnostic]:
    """For `knoc check` and its hook: the specs changed since the merge base
    with the default branch, held to their versions; nothing outside git,
    without a default branch, or when no spec file changed."""
    try:
        ref = git.default_base(config.root)
        if not git.changed_since(config.root, ref, (config.layout.specs,)):
            return []
    except git.GitError:
        return []
    head, problems = spec_set(config)
    if problems.errors:
        return []  # the build's own findings say what is wrong with them
    return _checked(config, head, ref, [])[2]


def compared(old: Config, new: Config) -> list[SpecChange]:
    """The specs of two checked-out repos compared (`knoc diff`), with the
    spec entities as the only real documents."""
    after = spec_set(new)[0]
    return compare_sets(spec_set(old)[0], after, _documents(list, after, []))


def _checked(config: Config, head: SpecSet, ref: str, others: list[tuple[Config, list[Entity]]]
             ) -> tuple[str, list[SpecChange], list[Diagnostic]]:
    """How to name `ref`, each spec compared with it, and what is wrong:
    the changes against their versions, and the entities they break here
    and in `others` (the repo's entities are read once, and only when a
    spec changed)."""
    label, old, unread = _specs_at(config, ref)
    here = functools.cache(lambda: entities(config))
    changes = compare_sets(old, head, _documents(here, head, others))
    diags = unread + [d for c in changes for d in report.diagnostics(c, label)]
    changed = {c.slug: c for c in changes if c.cls != "none"}
    if changed:
        diags += report.broken(here(), old, head, changed, label)
        for other, found in others:
            diags += report.broken(found, old, head, changed, label, shown=f"{other.root}/")
    return label, changes, diags


def _specs_at(config: Config, ref: str) -> tuple[str, SpecSet, list[Diagnostic]]:
    """The specs at `ref`, and a warning for each that could not be read
    there (it is not compared: it counts as new)."""
    try:
        label = git.describe(config.root, ref)
        with git.checkout(config.root, ref, only=(config.layout.specs,)) as exported:
            specs, problems = spec_set(dataclasses.replace(config, root=exported.root))
            problems.extend(refused_at(exported, config.layout.specs, label))
    except (git.GitError, ValueError) as exc:
        raise git_error(exc, ref, HINT) from None
    unread = [diag("KNO-SPEC-UNDECIDED", (d.message if d.message.startswith(f"at {label}") else
                                          f"at {label}: {d.message}") + "; the spec there is not compared",
                   file=d.file, hint="a spec that could not be read at the base counts as new")
              for d in problems.sorted() if d.is_error]
    return label, specs, unread


def _other_repo(content: Path | None) -> list[tuple[Config, list[Entity]]]:
    """The other repo of --content, with its entities (none is a mistake)."""
    if content is None:
        return []
    try:
        other = load_config(content)
    except ConfigError as exc:
        raise UsageError("KNO-CONFIG", f"--content {content}: {exc}", "name a content repo's folder") from None
    found = entities(other)
    if not found:
        raise UsageError("KNO-CONFIG", f"--content {content}: no entities under {other.content}/ there",
                         "name the root of a content repo (the folder that holds content/ or knoc.toml)")
    return [(other, found)]


def _documents(here: Callable[[], list[Entity]], head: SpecSet, others: list[tuple[Config, list[Entity]]]
               ) -> Callable[[Spec], list[Any]]:
    """The real documents a spec's counterexamples may be built on: the
    entities it accepts, here, in `others` and among the specs."""
    def of(spec: Spec) -> list[Any]:
        held = [*here(), *(e for _, found in others for e in found), *(s.entity for s in head.specs.values())]
        return [e.data for e in held if e.data.get("$schema") in spec.accepts]
    return of


def _summary(changes: list[SpecChange], label: str) -> str:
    counted: dict[str, int] = {}
    for c in changes:
        counted[c.cls] = counted.get(c.cls, 0) + 1
    if not any(c.cls != "none" for c in changes):
        return f"{len(changes)} specs compared with {label}: no schema changed"
    parts = [f"{counted[k]} {k}" for k in ("breaking", "unknown", "additive", "added") if counted.get(k)]
    return f"{len(changes)} specs compared with {label}: " + ", ".join(parts)


def _text(changes: list[SpecChange], label: str) -> str | None:
    rows = [c for c in changes if c.cls != "none" or c.bump != "none"]
    if not rows:
        return None
    width = max(len(c.slug) for c in rows)
    lines = [f"{c.slug:<{width}}  {c.old_version or '-'} -> {c.new_version or '-'}  "
             f"{_bump_name(c)}  {class_name(c)}".rstrip() for c in rows]
    return f"specs since {label}:\n" + "\n".join("  " + line for line in lines) + "\n"


def _bump_name(change: SpecChange) -> str:
    if change.old is None or change.new is None:
        return ""
    return bump_shown(change.bump)


def class_name(change: SpecChange) -> str:
    return {"none": "no schema change", "added": "new spec", "breaking": "breaking" if change.new else "removed"
            }.get(change.cls, change.cls)


def _json(changes: list[SpecChange], label: str, diags: list[Diagnostic]) -> str:
    return json.dumps({"base": label, "specs": [as_dict(c) for c in changes],
                       "diagnostics": [d.to_dict() for d in diags]}, indent=2, ensure_ascii=False) + "\n"


def as_dict(change: SpecChange) -> dict[str, Any]:
    return {"slug": change.slug, "old_version": change.old_version or None,
            "new_version": change.new_version or None, "bump": change.bump if change.old and change.new else None,
            "class": class_name(change),
            "changes": [{"pointer": pointer_text(f.change.pointer), "class": f.cls,
                         "why": f.why, **({"through": f.change.through} if f.change.through else {}),
                         **({"counterexample": f.witness} if f.cls == "breaking" else {})}
                        for f in change.findings]}
