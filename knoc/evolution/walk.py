"""The schema diff: two versions of a spec's schema walked side by side from
the root, through `$ref`s, with the document path that reaches each node;
each keyword's change is handed to its rule (`knoc.evolution.rules`). A
rule proposes; `knoc.evolution.verdict` proves with a document."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from knoc.evolution.model import ANNOTATIONS, Change, Place, Pointer, as_schema
from knoc.evolution.rules import RULES, SUBSCHEMAS, other
from knoc.evolution.sample import probes, same, unique
from knoc.kinds.spec import Resolver
from knoc.rules.text import code_span


@dataclass
class Walk:
    own: str  # the spec's URI: a `$ref` elsewhere leads into another spec
    changes: list[Change] = field(default_factory=list)
    seen: set[tuple[int, int, Pointer]] = field(default_factory=set)
    reached: set[Pointer] = field(default_factory=set)

    def found(self, place: Place, rule: str, why: str, values: list[object] | tuple[object, ...] = ()) -> None:
        if rule == "additive" and not place.exact:
            rule, why = "unknown", f"{why}, inside a `oneOf` choice, where a wider choice may overlap another"
        self.changes.append(Change(place.pointer, rule, why, place.steps, tuple(unique(list(values))),
                                   place.through))

    def node(self, old: object, new: object, place: Place) -> None:
        key = (id(old), id(new), place.pointer)
        if key in self.seen:
            return
        self.seen.add(key)
        if not place.pinned:
            self.reached.add(place.pointer)
        if old is False or new is False:
            if old is not False:
                self.found(place, "breaking", "nothing is allowed here any more", probes(old, place.old_res))
            elif new is not False:
                self.found(place, "additive", "allowed here, where nothing was")
            return
        o, n = _enum_of(as_schema(old)), _enum_of(as_schema(new))
        if not same(o.get("$ref"), n.get("$ref")):  # a `$ref` in place of what it names is no change
            o, n = _inlined(o, place.old_res), _inlined(n, place.new_res)
            if "$ref" not in n and "$ref" in as_schema(new):
                place = replace(place.at("$ref"), pinned=True)
        if "$ref" in o or "$ref" in n:
            self._ref(o, n, place)
        for word in sorted((o.keys() | n.keys()) - ANNOTATIONS - {"$ref"}):
            if word in SUBSCHEMAS or (word in o) != (word in n) or not same(o.get(word), n.get(word)):
                RULES.get(word, other)(self, word, o, n, place)

    def _ref(self, o: dict[str, object], n: dict[str, object], place: Place) -> None:
        old_ref, new_ref = o.get("$ref"), n.get("$ref")
        old_to = _lookup(place.old_res, old_ref)
        new_to = _lookup(place.new_res, new_ref)
        if old_to is None or new_to is None:
            if not same(old_ref, new_ref):
                self.found(place.at("$ref"), "unknown", f"`$ref` changed from {code_span(repr(old_ref))} to "
                           f"{code_span(repr(new_ref))}", probes(o, place.old_res))
            return
        elsewhere = isinstance(new_ref, str) and not new_ref.startswith("#") and not new_ref.startswith(self.own)
        if elsewhere or place.pinned or not isinstance(new_ref, str) or not same(old_ref, new_ref):
            target = replace(place.at("$ref"), pinned=True)
        else:
            target = replace(place, pointer=_pointer(new_ref))
        if elsewhere and isinstance(new_ref, str):
            target = replace(target, through=new_ref.split("#", 1)[0].rsplit("/", 1)[-1])
        self.node(old_to[0], new_to[0], replace(target, old_res=old_to[1], new_res=new_to[1]))


def _inlined(node: dict[str, object], resolver: Resolver, depth: int = 0) -> dict[str, object]:
    """`node` with a local `$ref` replaced by what it names, where the two
    share no keyword (then both apply, as the ref's siblings do)."""
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#") or depth > 8:
        return node
    found = _lookup(resolver, ref)
    target = as_schema(found[0]) if found else None
    rest = {k: v for k, v in node.items() if k != "$ref"}
    if target is None or (set(target) - ANNOTATIONS) & (set(rest) - ANNOTATIONS):
        return node
    return _inlined({**target, **rest}, resolver, depth + 1)


def _lookup(resolver: Resolver, ref: object) -> tuple[object, Resolver] | None:
    """(schema, resolver) of `ref`; ({}, resolver) where there is no `$ref`."""
    if ref is None:
        return {}, resolver
    if not isinstance(ref, str):  # no lookup finds it
        return None
    try:
        found = resolver.lookup(ref)
    except Exception:
        return None
    return found.contents, found.resolver


def _pointer(ref: str) -> Pointer:
    """The JSON pointer of a `#/...` reference, as path parts."""
    fragment = ref.split("#", 1)[1] if "#" in ref else ""
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in fragment.split("/") if p)


def _enum_of(node: dict[str, object]) -> dict[str, object]:
    """`const: c` is `enum: [c]` (so const 1 -> enum [1, 2] is a widening)."""
    if "const" in node and "enum" not in node:
        return {**{k: v for k, v in node.items() if k != "const"}, "enum": [node["const"]]}
    return node
