"""One rule per keyword of the schema diff: whether its change widens what
validates (additive), may narrow it (breaking, with probe values for a
counterexample), or cannot be told apart by a rule (unknown, with probes).
Each rule is called with the keyword, the old and new schema holding it,
and where they are; it reports to the walker and walks what it holds."""

from __future__ import annotations

from collections.abc import Callable

from knoc.evolution.model import ANNOTATIONS, DELETE, Place, Walker, as_schema
from knoc.evolution.sample import ANY_VALUES, key, of_type, probes, sample, strings
from knoc.kinds.schema import search
from knoc.rules.text import code_span

EXTRA = "x-extra"  # a member name no schema here lists
LOWER = {"minLength": "maxLength", "minItems": "maxItems", "minProperties": "maxProperties",
         "minimum": "maximum", "exclusiveMinimum": "maximum"}
UPPER = {"maxLength": "minLength", "maxItems": "minItems", "maxProperties": "minProperties",
         "maximum": "minimum", "exclusiveMaximum": "minimum"}


def _type(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
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


def _types(value: object) -> list[str]:
    if value is None:
        return list(ALL_TYPES)
    return [value] if isinstance(value, str) else [t for t in _list(value) if isinstance(t, str)]


def _covered(kind: str, types: list[str]) -> bool:
    return kind in types or (kind == "integer" and "number" in types)


def _enum(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
    old, new = o.get(word), n.get(word)
    old_values = [old] if word == "const" and word in o else old if isinstance(old, list) else None
    new_values = [new] if word == "const" and word in n else new if isinstance(new, list) else None
    if new_values is None:
        walk.found(place.at(word), "additive", f"`{word}` removed: any value of the schema is allowed")
        return
    allowed = {key(w) for w in new_values}
    if old_values is None:
        tried = [v for v in probes(o, place.old_res) if key(v) not in allowed]
        walk.found(place.at(word), "breaking", f"`{word}` added: only {_show(new)} is allowed", tried)
        return
    was = {key(v) for v in old_values}
    lost = [v for v in old_values if key(v) not in allowed]
    gained = [v for v in new_values if key(v) not in was]
    if lost:
        walk.found(place.at(word), "breaking", f"{_show(lost[0])} is no longer allowed", lost)
    elif gained:
        walk.found(place.at(word), "additive", f"`{word}` now also allows " + ", ".join(map(_show, gained)))


def _required(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
    old, new = _names(o.get(word)), _names(n.get(word))
    props = _mapping(o.get("properties"))
    for name in sorted(new - old):
        member = place.member(name, props.get(name, {}), word)
        walk.found(member, "breaking", f"{code_span(name)} is now required", [DELETE])
    if old - new:
        walk.found(place.at(word), "additive", f"no longer required: {', '.join(map(code_span, sorted(old - new)))}")


def _properties(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
    old, new = _mapping(o.get(word)), _mapping(n.get(word))
    for name in sorted(old.keys() | new.keys()):
        if name in old and name in new:
            walk.node(old[name], new[name], place.member(name, old[name], word, name))
        elif name in old:  # what the new schema holds the member to now
            now = _extra(n, name)
            member = place.member(name, old[name], word, name)
            if now is None:  # free here, unless a schema around it (`unevaluatedProperties`) says otherwise
                walk.found(member, "widens", f"{code_span(name)} removed from `properties`",
                           probes(old[name], place.old_res))
            else:
                walk.node(old[name], now, member)
        else:
            was = _extra(o, name)
            member = place.member(name, True if was is None else was, word, name)
            if was is not None:
                walk.node(was, new[name], member)
            elif set(as_schema(new[name])) - ANNOTATIONS:  # anything before, unless a schema around said otherwise
                walk.found(member, "member", f"{code_span(name)} added", probes(True, place.old_res))


def _extra(schema: dict[str, object], name: str) -> object:
    """The schema a member not in `properties` met in `schema`: its
    `patternProperties` that match, else `additionalProperties`; None when
    neither says (then a schema around it may: `unevaluatedProperties`)."""
    patterns = _mapping(schema.get("patternProperties"))
    matching = [sub for pattern, sub in sorted(patterns.items()) if _matches(pattern, name)]
    if matching:
        return matching[0] if len(matching) == 1 else {"allOf": matching}
    return schema.get("additionalProperties")


def _matches(pattern: str, name: str) -> bool:
    try:
        return search(pattern, name)  # linear time: a spec's pattern may be hostile
    except ValueError:
        return True  # a pattern the engine cannot read: assume it applies, and let the documents decide


def _members(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
    _sub(walk, word, o, n, place.member(EXTRA, o.get(word, True), word))


def _items(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
    _sub(walk, word, o, n, place.member(0, o.get(word, True), word))


def _sub(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
    """A subschema compared; one removed widens, unless a schema around it
    (`unevaluatedProperties`, `unevaluatedItems`) refuses what it allowed."""
    if word in o and word not in n:
        walk.found(place, "widens", f"`{word}` removed", probes(o[word], place.old_res))
        return
    walk.node(o.get(word, True), n.get(word, True), place)


def _bound(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
    old, new = _number(o.get(word)), _number(n.get(word))
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


def _pattern(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
    old, new = o.get(word), n.get(word)
    if new is None:
        walk.found(place.at(word), "additive", "`pattern` removed")
        return
    texts = strings(old, 64) if isinstance(old, str) else []
    texts += [f"{t}x" for t in texts[:8]] + [f"x{t}" for t in texts[:8]]  # an unanchored pattern allows more
    walk.found(place.at(word), "unknown", f"`pattern` changed from {_show(old)} to {_show(new)}",
               [*texts, sample(o, place.old_res), *probes(o, place.old_res)])


def _all_of(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
    old, new = _list(o.get(word)), _list(n.get(word))
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


def _conditional(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
    if word == "if":  # which documents `then` and `else` apply to
        other(walk, word, o, n, place)
    else:  # `then` and `else` only narrow or widen as they do
        _sub(walk, word, o, n, place.at(word))


def _unique(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
    if not n.get(word):
        walk.found(place.at(word), "additive", "items no longer need to be unique")
        return
    item = sample(o.get("items") or {}, place.old_res)
    walk.found(place.at(word), "breaking", "items must now be unique", [[item, item]])


def _multiple(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
    old, new = _number(o.get(word)), _number(n.get(word))
    if new is None or (old is not None and _divides(new, old)):
        walk.found(place.at(word), "additive", f"`{word}` loosened from {old} to {_show(new)}")
        return
    values: list[object] = [old * k for k in range(1, 7)] if old is not None else [1, 0.5, 3, 7]
    walk.found(place.at(word), "breaking", f"`{word}` changed from {_show(old)} to {new}", values)


def _divides(by: float, value: float) -> bool:
    try:
        return bool(value / by == int(value / by))
    except (TypeError, ZeroDivisionError, OverflowError, ValueError):
        return False


def other(walk: Walker, word: str, o: dict[str, object], n: dict[str, object], place: Place) -> None:
    walk.found(place.at(word), "unknown", f"`{word}` changed; knoc has no rule for it",
               [*probes(o, place.old_res), *ANY_VALUES])


def _canonical(value: object) -> str:
    import json

    return json.dumps(value, sort_keys=True)


def _show(value: object) -> str:
    import json

    return "nothing" if value is None else code_span(json.dumps(value, ensure_ascii=False))


# What a spec's schema holds where it is valid JSON Schema (every spec in a
# set is): a keyword of another shape counts as absent.
def _mapping(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _names(value: object) -> set[str]:
    return {v for v in _list(value) if isinstance(v, str)}


def _number(value: object) -> int | float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


Rule = Callable[[Walker, str, dict[str, object], dict[str, object], Place], None]
RULES: dict[str, Rule] = {
    "type": _type, "enum": _enum, "const": _enum, "required": _required, "properties": _properties,
    "additionalProperties": _members, "unevaluatedProperties": _members, "items": _items,
    "pattern": _pattern, "allOf": _all_of, "anyOf": _all_of, "oneOf": _all_of,
    "then": _conditional, "else": _conditional, "if": _conditional, "uniqueItems": _unique,
    "multipleOf": _multiple,
    **{w: _bound for w in (*LOWER, *UPPER)}}
SUBSCHEMAS = frozenset({"properties", "additionalProperties", "unevaluatedProperties", "items", "allOf", "anyOf",
                        "oneOf", "then", "else"})
