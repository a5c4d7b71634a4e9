"""What `knoc specs check` says: each spec change's findings against what
its version bump promises, and the entities a change makes invalid."""

from __future__ import annotations

import dataclasses

from knoc.compiler import validate
from knoc.diagnostics import Diagnostic, Severity, at, diag
from knoc.evolution.model import pointer_text
from knoc.evolution.verdict import Finding, SpecChange
from knoc.kinds.entity import Entity
from knoc.kinds.spec import SpecSet
from knoc.rules.text import code_span

NEEDED = {"none": "none", "additive": "minor", "unknown": "minor", "breaking": "major"}
RANK = {"none": 0, "patch": 1, "minor": 2, "major": 3}


def diagnostics(change: SpecChange, base: str) -> list[Diagnostic]:
    """What is wrong with `change` given its version bump (nothing for a
    spec that is new, or whose schema accepts the same documents)."""
    if change.new is None:
        assert change.old is not None
        return [diag("KNO-SPEC-BREAKING", f"spec `{change.slug}` ({change.old_version}) is gone since {base}: "
                     "no spec accepts its documents", file=change.old.entity.source.rel,
                     hint="keep the spec (a version of it that accepts what it did), or move its documents "
                          "to another type first")]
    if change.old is None or change.cls == "none":
        return []
    source, bump = change.new.entity.source, change.bump
    versions = f"{change.old_version} -> {change.new_version}"
    if bump in ("down", "invalid"):
        return [at(source, ("version",), "KNO-SPEC-UNBUMPED",
                   f"spec `{change.slug}`: the schema changed since {base} and its version went "
                   f"{'down' if bump == 'down' else 'to something that is not semver'} ({versions})",
                   f"give it a {NEEDED[change.cls]} version above {change.old_version}")]
    found: list[Diagnostic] = []
    for f in change.findings:
        if f.cls == "breaking":
            found.append(_breaking(change, f, base))
        elif f.cls == "unknown" and bump != "major":
            found.append(_at(change, f, "KNO-SPEC-UNDECIDED", f"cannot tell whether this breaks documents "
                             f"valid under {change.old_version}: {f.why}",
                             "check it by hand; a major bump announces it either way"))
    needed = NEEDED[change.cls]
    if RANK[bump] < RANK[needed] and change.cls != "breaking":
        first = next(f for f in change.findings if f.cls == change.cls)
        found.append(at(source, ("version",), "KNO-SPEC-UNBUMPED",
                        f"spec `{change.slug}`: the schema changed since {base} ({_pointer(first)}: {first.why}) "
                        f"but its version " + ("stays " + change.old_version if bump == "none"
                                               else f"has only a {bump} bump ({versions})"),
                        f"a change that is {change.cls} needs at least a {needed} version bump: "
                        f"`version: {next_version(change.old_version, needed)}`"))
    return found


def _breaking(change: SpecChange, f: Finding, base: str) -> Diagnostic:
    announced = change.bump == "major"
    code = "KNO-SPEC-MAJOR" if announced else "KNO-SPEC-BREAKING"
    what = (f"breaking, announced by the major bump {change.old_version} -> {change.new_version}" if announced
            else f"breaks documents valid under {change.old_version} "
                 + ("with no version bump" if change.bump == "none" else f"under a {change.bump} bump"))
    hint = (None if announced else
            f"keep accepting what {change.old_version} did, or bump the major version "
            f"(`version: {next_version(change.old_version, 'major')}`)")
    return _at(change, f, code, f"{f.why}: {what}", hint, detail=counterexample(f.witness, change, base))


def _at(change: SpecChange, f: Finding, code: str, message: str, hint: str | None,
        detail: str | None = None) -> Diagnostic:
    assert change.new is not None
    where = f" (through {code_span(f.change.through)})" if f.change.through else ""
    return at(change.new.entity.source, ("spec", "schema", *f.change.pointer), code,
              f"spec `{change.slug}` at {_pointer(f)}{where}: {message}", hint, detail=detail)


def _pointer(f: Finding) -> str:
    return code_span(pointer_text(f.change.pointer))


def counterexample(witness: object, change: SpecChange, base: str) -> str:
    import yaml

    text = yaml.safe_dump(witness, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)
    return (f"a document `{change.slug}` accepts at {base} ({change.old_version}) and refuses now "
            f"({change.new_version}):\n" + text.rstrip("\n"))


def next_version(version: str, part: str) -> str:
    numbers = [int(x) for x in version.split("-", 1)[0].split("+", 1)[0].split(".")[:3]]
    if part == "major":
        return f"{numbers[0] + 1}.0.0"
    if part == "minor":
        return f"{numbers[0]}.{numbers[1] + 1}.0"
    return f"{numbers[0]}.{numbers[1]}.{numbers[2] + 1}"


def broken(entities: list[Entity], old: SpecSet, new: SpecSet, changed: dict[str, SpecChange], base: str,
           shown: str = "") -> list[Diagnostic]:
    """The entities valid under the old specs and refused by the new ones,
    at the first place the new spec refuses (`shown` prefixes another
    repo's paths). An error where the change behind it is not announced."""
    found = []
    for ent in entities:
        decl = ent.data.get("$schema")
        was = old.by_declaration.get(decl) if isinstance(decl, str) else None
        if was is None or not was.fast.is_valid(ent.data):
            continue
        now = new.by_declaration.get(str(decl))
        if now is not None and now.fast.is_valid(ent.data):
            continue
        typed = validate.declaration(ent, new)  # what the next build will say, and where
        said = typed if isinstance(typed, Diagnostic) else next(
            (d for d in validate.check(typed, new) if d.is_error),
            diag("KNO-SCHEMA", "refused by its spec", file=ent.source.rel, span=ent.source.locate(())))
        slug = (now or was).slug
        change = changed.get(slug)
        moved = change is not None and change.new is not None and change.old_version != change.new_version
        versions = (f"{change.old_version}, refused by {change.new_version}" if change and moved
                    else f"at {base}, refused now")
        d = diag("KNO-SPEC-BROKEN-ENTITY", f"valid under `{slug}` {versions}: {said.message}",
                 file=f"{shown}{ent.source.rel}", span=said.span, json_path=said.json_path, spec=slug,
                 hint="change the entity to what the new version accepts, or the spec back")
        if change is None or change.bump != "major":
            d = dataclasses.replace(d, severity=Severity.ERROR)
        found.append(d)
    return found
