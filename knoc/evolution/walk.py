"""The schema diff: two versions of a spec's schema walked side by side from
the root, through `$ref`s, with the document path that reaches each node.
Each keyword's rule says whether its change widens what validates
(additive), may narrow it (breaking, with probe values for a
counterexample), or cannot be told apart by a rule (unknown, with probes).
A rule proposes; `knoc.evolution.verdict` proves with a document."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from knoc.evolution.sample import ANY_VALUES, of_type, probes, same, sample, strings, unique

Pointer = tuple[str | int, ...]
# What validates nothing (titles, descriptions, examples) or is followed elsewhere.
ANNOTATIONS = frozenset({"title", "description", "examples", "default", "$comment", "deprecated", "readOnly",
                         "writeOnly", "format", "contentMediaType", "contentEncoding", "contentSchema",
                         "$anchor", "$dynamicAnchor", "$schema", "$id", "$vocabulary", "$defs", "definitions"})
EXTRA = "x-extra"  # a member name no schema here lists
LOWER = {"minLength": "maxLength", "minItems": "maxItems", "minProperties": "maxProperties",
         "minimum": "maximum", "exclusiveMinimum": "maximum"}
UPPER = {"maxLength": "minLength", "maxItems": "minItems", "maxProperties": "minProperties",
         "maximum": "minimum", "exclusiveMaximum": "minimum"}


class Delete:
    """The probe that removes the member (a newly required one)."""

    def __repr__(self) -> str:
        return "<delete>"


DELETE = Delete()


@dataclass(frozen=True)
class Step:
    """One step from a document's root to a changed value: the member or
    item, and the old schema of the value there."""

    key: str | int
    schema: Any
    resolver: Any


@dataclass(frozen=True)
class Change:
    pointer: Pointer  # where in the spec's schema (the new one, or the old where it is gone)
    # "additive"; "widens" (additive unless a probe shows a schema around it
    # refuses); "breaking" and "unknown" (proven breaking by a probe, else
    # unknown); "member" (a member added: additive if the old schema refused
    # it whatever its value, breaking if a probe shows it, else unknown)
    rule: str
    why: str
    steps: tuple[Step, ...] | None  # None: no document path reaches it from this spec's root
    probes: tuple[Any, ...] = ()  # values to put at the end of `steps` (DELETE: remove the member)
    through: str | None = None  # the other spec a `$ref` led into


@dataclass(frozen=True)
class Place:
    pointer: Pointer
    steps: tuple[Step, ...] | None
    old_res: Any
    new_res: Any
    exact: bool = True  # False inside a `oneOf` choice: a wider choice may overlap another and refuse
    through: str | None = None  # the other spec a `$ref` led into
    pinned: bool = False  # past a `$ref` that changed or leads elsewhere: changes are placed at it

    def at(self, *parts: str | int, exact: bool = True) -> Place:
        pointer = self.pointer if self.pinned else self.pointer + parts
        return replace(self, pointer=pointer, exact=self.exact and exact)

    def member(self, key: str | int, old: Any, *parts: str | int, exact: bool = True) -> Place:
        steps = None if self.steps is None else (*self.steps, Step(key, old, self.old_res))
        return replace(self.at(*parts, exact=exact), steps=steps)


@dataclass
class Walk:
    own: str  # the spec's URI: a `$ref` elsewhere leads into another spec
    changes: list[Change] = field(default_factory=list)
    seen: set[tuple[int, int, Pointer]] = field(default_factory=set)
    reached: set[Pointer] = field(default_factory=set)

    def found(self, place: Place, rule: str, why: str, values: list[Any] | tuple[Any, ...] = ()) -> None:
        if rule == "additive" and not place.exact:
            rule, why = "unknown", f"{why}, inside a `oneOf` choice, where a wider choice may overlap another"
        self.changes.append(Change(place.pointer, rule, why, place.steps, tuple(unique(list(values))),
                                   place.through))

    def node(self, old: Any, new: Any, place: Place) -> None:
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
        o, n = _enum_of(_schema(old)), _enum_of(_schema(new))
        if not same(o.get("$ref"), n.get("$ref")):  # a `$ref` in place of what it names is no change
            o, n = _inlined(o, place.old_res), _inlined(n, place.new_res)
            if "$ref" not in n and "$ref" in _schema(new):
                place = replace(place.at("$ref"), pinned=True)
        if "$ref" in o or "$ref" in n:
            self._ref(o, n, place)
        for word in sorted((o.keys() | n.keys()) - ANNOTATIONS - {"$ref"}):
            if word in SUBSCHEMAS or (word in o) != (word in n) or not same(o.get(word), n.get(word)):
                _RULES.get(word, _other)(self, word, o, n, place)

    def _ref(self, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
        old_ref, new_ref = o.get("$ref"), n.get("$ref")
        old_to = _lookup(place.old_res, old_ref)
        new_to = _lookup(place.new_res, new_ref)
        if old_to is None or new_to is None:
            if not same(old_ref, new_ref):
                self.found(place.at("$ref"), "unknown", f"`$ref` changed from {old_ref!r} to {new_ref!r}",
                           probes(o, place.old_res))
            return
        elsewhere = isinstance(new_ref, str) and not new_ref.startswith("#") and not new_ref.startswith(self.own)
        if elsewhere or place.pinned or not isinstance(new_ref, str) or not same(old_ref, new_ref):
            target = replace(place.at("$ref"), pinned=True)
        else:
            target = replace(place, pointer=_pointer(new_ref))
        if elsewhere and isinstance(new_ref, str):
            target = replace(target, through=new_ref.split("#", 1)[0].rsplit("/", 1)[-1])
        self.node(old_to[0], new_to[0], replace(target, old_res=old_to[1], new_res=new_to[1]))


def _inlined(node: dict[str, Any], resolver: Any, depth: int = 0) -> dict[str, Any]:
    """`node` with a local `$ref` replaced by what it names, where the two
    share no keyword (then both apply, as the ref's siblings do)."""
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#") or depth > 8:
        return node
    found = _lookup(resolver, ref)
    target = _schema(found[0]) if found else None
    rest = {k: v for k, v in node.items() if k != "$ref"}
    if target is None or (set(target) - ANNOTATIONS) & (set(rest) - ANNOTATIONS):
        return node
    return _inlined({**target, **rest}, resolver, depth + 1)


def _schema(value: Any) -> dict[str, Any]:
    if value is False:
        return {"not": {}}
    return value if isinstance(value, dict) else {}


def _lookup(resolver: Any, ref: Any) -> tuple[Any, Any] | None:
    """(schema, resolver) of `ref`; ({}, resolver) where there is no `$ref`."""
    if ref is None:
        return {}, resolver
    try:
        found = resolver.lookup(ref)
    except Exception:
        return None
    return found.contents, found.resolver


def _pointer(ref: str) -> Pointer:
    """The JSON pointer of a `#/...` reference, as path parts."""
    fragment = ref.split("#", 1)[1] if "#" in ref else ""
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in fragment.split("/") if p)


def _type(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    old_types, new_types = _types(o.get("type")), _types(n.get("type"))
    lost = [t for t in old_types if not _covered(t, new_types)]
    if not lost:
        if set(new_types) != set(old_types):
            walk.found(place.at("type"), "additive", f"`type` widened to {_show(n.get('type'))}")
        return
    fractions = [0.5, 1.5] if "number" in lost else []
    walk.found(place.at("type"), "breaking", f"`type` no longer admits {', '.join(lost)}",
               [*(of_type(o, place.old_res, t) for t in lost), *fractions])


ALL_TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")


def _types(value: Any) -> list[str]:
    if value is None:
        return list(ALL_TYPES)
    return [value] if isinstance(value, str) else [t for t in value if isinstance(t, str)]


def _covered(kind: str, types: list[str]) -> bool:
    return kind in types or (kind == "integer" and "number" in types)


def _enum(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    old, new = o.get(word), n.get(word)
    old_values = [old] if word == "const" and word in o else old if isinstance(old, list) else None
    new_values = [new] if word == "const" and word in n else new if isinstance(new, list) else None
    if new_values is None:
        walk.found(place.at(word), "additive", f"`{word}` removed: any value of the schema is allowed")
        return
    if old_values is None:
        tried = [v for v in probes(o, place.old_res) if not any(same(v, w) for w in new_values)]
        walk.found(place.at(word), "breaking", f"`{word}` added: only {_show(new)} is allowed", tried)
        return
    lost = [v for v in old_values if not any(same(v, w) for w in new_values)]
    gained = [v for v in new_values if not any(same(v, w) for w in old_values)]
    if lost:
        walk.found(place.at(word), "breaking", f"{_show(lost[0])} is no longer allowed", lost)
    elif gained:
        walk.found(place.at(word), "additive", f"`{word}` now also allows " + ", ".join(map(_show, gained)))


def _required(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    old, new = set(o.get(word) or []), set(n.get(word) or [])
    props: dict[str, Any] = o["properties"] if isinstance(o.get("properties"), dict) else {}
    for name in sorted(new - old):
        member = place.member(name, props.get(name, {}), word)
        walk.found(member, "breaking", f"`{name}` is now required", [DELETE])
    if old - new:
        walk.found(place.at(word), "additive", f"no longer required: {', '.join(sorted(old - new))}")


def _properties(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    old, new = o.get(word) or {}, n.get(word) or {}
    for name in sorted(old.keys() | new.keys()):
        if name in old and name in new:
            walk.node(old[name], new[name], place.member(name, old[name], word, name))
        elif name in old:  # what the new schema holds the member to now
            now = _extra(n, name)
            member = place.member(name, old[name], word, name)
            if now is None:  # free here, unless a schema around it (`unevaluatedProperties`) says otherwise
                walk.found(member, "widens", f"`{name}` removed from `properties`", probes(old[name], place.old_res))
            else:
                walk.node(old[name], now, member)
        else:
            was = _extra(o, name)
            member = place.member(name, True if was is None else was, word, name)
            if was is not None:
                walk.node(was, new[name], member)
            elif set(_schema(new[name])) - ANNOTATIONS:  # anything before, unless a schema around said otherwise
                walk.found(member, "member", f"`{name}` added", probes(True, place.old_res))


def _extra(schema: dict[str, Any], name: str) -> Any:
    """The schema a member not in `properties` met in `schema`: its
    `patternProperties` that match, else `additionalProperties`; None when
    neither says (then a schema around it may: `unevaluatedProperties`)."""
    patterns: dict[str, Any] = schema["patternProperties"] if isinstance(schema.get("patternProperties"), dict) \
        else {}
    matching = [sub for pattern, sub in sorted(patterns.items()) if _matches(pattern, name)]
    if matching:
        return matching[0] if len(matching) == 1 else {"allOf": matching}
    return schema.get("additionalProperties")


def _matches(pattern: str, name: str) -> bool:
    import re

    try:
        return re.search(pattern, name) is not None
    except re.error:
        return True  # a pattern Python cannot read: assume it applies, and let the documents decide


def _enum_of(node: dict[str, Any]) -> dict[str, Any]:
    """`const: c` is `enum: [c]` (so const 1 -> enum [1, 2] is a widening)."""
    if "const" in node and "enum" not in node:
        return {**{k: v for k, v in node.items() if k != "const"}, "enum": [node["const"]]}
    return node


def _members(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    _sub(walk, word, o, n, place.member(EXTRA, o.get(word, True), word))


def _items(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    _sub(walk, word, o, n, place.member(0, o.get(word, True), word))


def _sub(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    """A subschema compared; one removed widens, unless a schema around it
    (`unevaluatedProperties`, `unevaluatedItems`) refuses what it allowed."""
    if word in o and word not in n:
        walk.found(place, "widens", f"`{word}` removed", probes(o[word], place.old_res))
        return
    walk.node(o.get(word, True), n.get(word, True), place)


def _bound(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    old, new = o.get(word), n.get(word)
    lower = word in LOWER
    if new is None or (old is not None and (new < old if lower else new > old)):
        walk.found(place.at(word), "additive", f"`{word}` loosened from {old} to {_show(new)}")
        return
    other = LOWER.get(word) or UPPER[word]
    exclusive = word.startswith("exclusive")
    edge = new if exclusive else (new - 1 if lower else new + 1)
    values = [sample({"allOf": [o], other: edge}, place.old_res), sample(o, place.old_res)]
    if word in ("minimum", "maximum") and not isinstance(new, int):
        values.append(sample({"allOf": [o], other: new - 0.5 if lower else new + 0.5}, place.old_res))
    walk.found(place.at(word), "breaking", f"`{word}` tightened from {_show(old)} to {new}", values)


def _pattern(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    old, new = o.get(word), n.get(word)
    if new is None:
        walk.found(place.at(word), "additive", "`pattern` removed")
        return
    texts = strings(old, 64) if isinstance(old, str) else []
    walk.found(place.at(word), "unknown", f"`pattern` changed from {_show(old)} to {_show(new)}",
               [*texts, sample(o, place.old_res), *probes(o, place.old_res)])


def _all_of(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    old, new = o.get(word) or [], n.get(word) or []
    if len(old) == len(new) and sorted(map(_canonical, old)) == sorted(map(_canonical, new)):
        old = sorted(old, key=_canonical)  # reordered: each choice against its equal
        new = sorted(new, key=_canonical)
    choice = word != "allOf"
    for i in range(max(len(old), len(new))):
        here = place.at(word, i, exact=word != "oneOf")
        if i < len(old) and i < len(new):
            walk.node(old[i], new[i], here)
        elif i < len(new) and not choice:
            walk.node({}, new[i], here)
        elif i < len(new):
            rule = "additive" if word == "anyOf" else "unknown"
            walk.found(here, rule, f"`{word}` gained a choice",
                       [sample(b, place.old_res) for b in old] + probes(o, place.old_res))
        elif choice:
            walk.found(here, "breaking", f"`{word}` lost a choice", [sample(old[i], place.old_res)])
        else:
            walk.found(here, "additive", "`allOf` lost a condition")


def _conditional(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    if word == "if":  # which documents `then` and `else` apply to
        _other(walk, word, o, n, place)
    else:  # `then` and `else` only narrow or widen as they do
        _sub(walk, word, o, n, place.at(word))


def _unique(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    if not n.get(word):
        walk.found(place.at(word), "additive", "items no longer need to be unique")
        return
    item = sample(o.get("items") or {}, place.old_res)
    walk.found(place.at(word), "breaking", "items must now be unique", [[item, item]])


def _multiple(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    old, new = o.get(word), n.get(word)
    if new is None or (old is not None and _divides(new, old)):
        walk.found(place.at(word), "additive", f"`{word}` loosened from {old} to {_show(new)}")
        return
    values = [old * k for k in range(1, 7)] if old is not None else [1, 0.5, 3, 7]
    walk.found(place.at(word), "breaking", f"`{word}` changed from {_show(old)} to {new}", values)


def _divides(by: Any, value: Any) -> bool:
    try:
        return bool(value / by == int(value / by))
    except (TypeError, ZeroDivisionError, OverflowError, ValueError):
        return False


def _other(walk: Walk, word: str, o: dict[str, Any], n: dict[str, Any], place: Place) -> None:
    walk.found(place.at(word), "unknown", f"`{word}` changed; knoc has no rule for it",
               [*probes(o, place.old_res), *ANY_VALUES])


def pointer_text(pointer: Pointer) -> str:
    """`#/a/b~1c`: a place in a schema as a JSON pointer."""
    return "#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in pointer)


def _canonical(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)


def _show(value: Any) -> str:
    import json

    return "nothing" if value is None else f"`{json.dumps(value, ensure_ascii=False)}`"


_RULES = {"type": _type, "enum": _enum, "const": _enum, "required": _required, "properties": _properties,
          "additionalProperties": _members, "unevaluatedProperties": _members, "items": _items,
          "pattern": _pattern, "allOf": _all_of, "anyOf": _all_of, "oneOf": _all_of,
          "then": _conditional, "else": _conditional, "if": _conditional, "uniqueItems": _unique,
          "multipleOf": _multiple,
          **{w: _bound for w in (*LOWER, *UPPER)}}
SUBSCHEMAS = frozenset({"properties", "additionalProperties", "unevaluatedProperties", "items", "allOf", "anyOf",
                        "oneOf", "then", "else"})
