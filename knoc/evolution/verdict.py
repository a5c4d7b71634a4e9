"""Each change decided with a document: breaking once a counterexample is
found that the old schema accepts and the new one refuses (checked with
the validators the build uses), additive when a rule says so, unknown
otherwise. Then what the versions promise: a schema change needs a bump,
an additive one a minor bump, a breaking one a major bump."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from knoc.evolution.model import DELETE, Change, Place, Pointer, Step
from knoc.evolution.sample import same, sample
from knoc.evolution.walk import Walk
from knoc.kinds.spec import Spec, SpecSet, uri
from knoc.rules.json import JsonObject
from knoc.rules.version import SEMVER

SEEDS = 12  # real documents tried as the base of a counterexample, the smallest first
Valid = Callable[[object], bool]


@dataclass(frozen=True)
class Finding:
    change: Change
    cls: str  # "additive", "breaking" or "unknown"
    why: str
    witness: object = None  # a document the old schema accepts and the new one refuses


@dataclass(frozen=True)
class SpecChange:
    """One spec compared at two refs."""

    slug: str
    old: Spec | None
    new: Spec | None
    findings: list[Finding] = field(default_factory=list)

    @property
    def old_version(self) -> str:
        return str(self.old.entity.data.get("version", "")) if self.old else ""

    @property
    def new_version(self) -> str:
        return str(self.new.entity.data.get("version", "")) if self.new else ""

    @property
    def bump(self) -> str:
        return bump(self.old_version, self.new_version)

    @property
    def cls(self) -> str:
        """"breaking", "unknown", "additive", or "none" (what validates is the same)."""
        if self.old is None or self.new is None:
            return "breaking" if self.new is None else "added"
        for cls in ("breaking", "unknown", "additive"):
            if any(f.cls == cls for f in self.findings):
                return cls
        return "none"


def bump(old: str, new: str) -> str:
    """"major", "minor", "patch", "none", "down", or "invalid" (not semver)."""
    a, b = SEMVER.match(old), SEMVER.match(new)
    if not a or not b:
        return "invalid"
    x, y = tuple(int(g) for g in a.groups()[:3]), tuple(int(g) for g in b.groups()[:3])
    if y == x:
        return "none"
    if y < x:
        return "down"
    return "major" if y[0] > x[0] else "minor" if y[1] > x[1] or y[0] > x[0] else "patch"


def compare_sets(old: SpecSet, new: SpecSet, documents: Callable[[Spec], Sequence[object]]) -> list[SpecChange]:
    """Every spec of either set, by slug (a spec whose slug changed is
    paired by the `type@version` both accept); `documents(spec)`: the real
    entities a spec's counterexamples may be built on."""
    before, after = dict(old.specs), dict(new.specs)
    pairs: list[tuple[Spec | None, Spec | None]] = [(before.pop(s), after.pop(s))
                                                    for s in sorted(before.keys() & after.keys())]
    for gone in list(before.values()):
        renamed = next((a for a in after.values() if set(a.accepts) & set(gone.accepts)), None)
        if renamed is not None:
            pairs.append((before.pop(gone.slug), after.pop(renamed.slug)))
    pairs += [(b, None) for b in before.values()] + [(None, a) for a in after.values()]
    # A spec whose text is the same may still change through a `$ref` into one that is not.
    moved = any(b is None or a is None or not same(b.schema, a.schema) for b, a in pairs)
    out = []
    for b, a in pairs:
        if b is not None and a is not None and moved:
            out.append(compare(b, a, old, new, documents(b)))
        else:
            either = a or b
            assert either is not None  # every pair holds a spec
            out.append(SpecChange(either.slug, b, a))
    return sorted(out, key=lambda c: c.slug)


def compare(old: Spec, new: Spec, old_set: SpecSet, new_set: SpecSet, documents: Sequence[object]) -> SpecChange:
    """`old` and `new` (one slug) compared; `documents` are real entities to
    build counterexamples on (those the old spec accepts are used)."""
    own = uri(new.slug)
    old_res, new_res = old_set.registry.resolver(uri(old.slug)), new_set.registry.resolver(own)
    walk = Walk(own)
    walk.node(old.schema, new.schema, Place((), (), old_res, new_res))
    old_defs, new_defs = _defs(old), _defs(new)
    for name in sorted(old_defs.keys() & new_defs.keys()):  # what only other specs reach
        if ("$defs", name) not in walk.reached:
            walk.node(old_defs[name], new_defs[name], Place(("$defs", name), None, old_res, new_res))
    valid_old, valid_new = old.fast.is_valid, new.fast.is_valid
    seeds = [d for d in [sample(old.schema, old_res),
                         *sorted(documents, key=lambda d: len(repr(d)))[:SEEDS * 4]] if valid_old(d)][:SEEDS]
    findings = [_decide(c, seeds, valid_old, valid_new) for c in walk.changes]
    findings = [f for f in findings if not f.change.through or f.cls == "breaking"]
    return SpecChange(new.slug, old, new, _once(findings))


def _defs(spec: Spec) -> JsonObject:
    defs = spec.schema.get("$defs")
    return defs if isinstance(defs, dict) else {}


def _decide(change: Change, seeds: list[object], valid_old: Valid, valid_new: Valid) -> Finding:
    if change.rule == "additive":
        return Finding(change, "additive", change.why)
    if change.steps is None:
        return Finding(change, "unknown", f"{change.why}; no document reaches it from this spec's root")
    accepted = False
    for seed in seeds:
        for probe in change.probes:
            doc = _put(seed, change.steps, probe)
            if doc is None or not valid_old(doc):
                continue
            accepted = True
            if not valid_new(doc):
                return Finding(change, "breaking", change.why, _smallest(doc, change.steps, valid_old, valid_new))
    if change.rule == "widens":
        return Finding(change, "additive", change.why)
    if change.rule == "member" and not accepted and seeds:
        return Finding(change, "additive", f"{change.why}, where no member of that name was allowed")
    if change.rule == "member":
        return Finding(change, "unknown", f"{change.why} with a schema, where any value was allowed before, "
                                          "and knoc found no value it refuses")
    return Finding(change, "unknown", f"{change.why}; knoc found no document the old schema accepts and the "
                                      "new one refuses")


def _put(seed: object, steps: tuple[Step, ...], value: object) -> object:
    """A copy of `seed` with `value` at the end of `steps` (DELETE: without
    that member); None where the path runs into a value of another kind."""
    doc = copy.deepcopy(seed)
    here = doc
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        if isinstance(here, dict) and isinstance(step.key, str):
            if last:
                if value is DELETE:
                    here.pop(step.key, None)
                else:
                    here[step.key] = copy.deepcopy(value)
                return doc
            if step.key not in here:
                here[step.key] = sample(step.schema, step.resolver)
            here = here[step.key]
        elif isinstance(here, list) and isinstance(step.key, int):
            if last and value is DELETE:
                return None
            if not here:
                here.append(copy.deepcopy(value) if last else sample(step.schema, step.resolver))
            elif last:
                here[0] = copy.deepcopy(value)
            if last:
                return doc
            here = here[0]
        else:
            return None
    return None


def _smallest(doc: object, steps: tuple[Step, ...], valid_old: Valid, valid_new: Valid) -> object:
    """`doc` with every member and item it can lose and stay a
    counterexample removed (the changed path is kept)."""
    keep = [s.key for s in steps]

    def shows(candidate: object) -> bool:
        return bool(valid_old(candidate) and not valid_new(candidate))

    def trim(node: object, path: list[str | int]) -> None:
        if isinstance(node, dict):
            for key in reversed(list(node)):
                if [*path, key] != keep[:len(path) + 1]:  # off the changed path
                    value = node.pop(key)
                    if shows(doc):
                        continue
                    node[key] = value
                trim(node[key], [*path, key])
        elif isinstance(node, list):
            for index in reversed(range(len(node))):
                if [*path, index] != keep[:len(path) + 1]:
                    item = node.pop(index)
                    if shows(doc):
                        continue
                    node.insert(index, item)
                trim(node[index], [*path, index])

    doc = copy.deepcopy(doc)
    trim(doc, [])
    return _ordered(doc)


def _ordered(node: object) -> object:
    """Members sorted (`$schema` first): trimming moved the kept ones to the
    end, and sorted keys read the same every run."""
    if isinstance(node, dict):
        return {k: _ordered(node[k]) for k in sorted(node, key=lambda k: (k != "$schema", k))}
    return [_ordered(v) for v in node] if isinstance(node, list) else node


def _once(findings: list[Finding]) -> list[Finding]:
    """One finding per place and reason (a `$defs` entry reached twice)."""
    seen: set[tuple[Pointer, str]] = set()
    out = []
    for f in findings:
        if (f.change.pointer, f.why) not in seen:
            seen.add((f.change.pointer, f.why))
            out.append(f)
    return out
