"""Small values a schema accepts: the seeds and the probes counterexamples
are made of. A sample is a guess (`if`/`then`, `not` and `oneOf` are not
solved); every counterexample is checked against both schemas, so a bad
guess costs a verdict ("unknown"), never a wrong one."""

from __future__ import annotations

import random
import re
from re import _parser as sre  # type: ignore[attr-defined]  # the stdlib's regex parser: patterns to strings
from typing import TYPE_CHECKING, Any, NamedTuple

from knoc.rules.json import JsonValue

if TYPE_CHECKING:
    from knoc.kinds.spec import Resolved, Resolver

MAX_DEPTH = 12
# The most characters, items or members one bound of a sample holds: a bound
# above it is not sampled at (a counterexample stays small).
MAX_SIZE = 1024
# The most characters, items and members a whole sample holds, however its
# bounds nest (1,024 lists of 1,024 lists of ...): past it the sample stops
# short, the schema refuses it, and the verdict is "unknown", not gigabytes.
MAX_TOTAL = 16_384
# The most steps making one string of a pattern takes (nested repeats).
MAX_STEPS = 10_000
# A value a format names, where a plain "x" would not read as one.
FORMATS = {"date-time": "2026-01-01T00:00:00Z", "date": "2026-01-01", "uri": "https://example.com",
           "email": "a@example.com", "uri-reference": "https://example.com", "hostname": "example.com"}
# One value of each JSON type, for a place that takes every value.
ANY_VALUES: tuple[JsonValue, ...] = (None, True, 0, 1.5, "", "x", [], {})
_TYPE_ORDER = ("object", "string", "integer", "number", "boolean", "array", "null")


class _Budget:
    """What is left of one sample's MAX_TOTAL."""

    def __init__(self) -> None:
        self.left = MAX_TOTAL

    def take(self, n: int) -> bool:
        """Whether `n` more fit; they are spent either way (once short, always short)."""
        self.left -= n
        return self.left >= 0


def sample(schema: object, resolver: Resolver, depth: int = 0, budget: _Budget | None = None) -> object:
    """A small value `schema` likely accepts: each required member, each
    bound at its least, the first of each choice (within MAX_TOTAL)."""
    budget = budget or _Budget()
    node = _merged(schema, resolver, depth)
    if "const" in node:
        return node["const"]
    if isinstance(enum := node.get("enum"), list) and enum:
        return enum[0]
    kind = _kind(node)
    if depth > MAX_DEPTH:
        return {"object": {}, "array": []}.get(kind)
    if kind == "object":
        return _object(node, resolver, depth, budget)
    if kind == "array":
        items = node.get("items", {})
        count = min(_count(node.get("minItems", 0)), MAX_SIZE)
        return [sample(items, resolver, depth + 1, budget) for _ in range(count) if budget.take(1)]
    if kind == "string":
        text = _string(node)
        return text if budget.take(len(text)) else ""
    if kind in ("integer", "number"):
        return _number(node, kind)
    return {"boolean": False, "null": None}.get(kind)


def of_type(schema: object, resolver: Resolver, kind: str) -> object:
    """A sample of `schema` taken as a value of JSON type `kind`."""
    return sample({"allOf": [schema], "type": kind}, resolver)


def probes(schema: object, resolver: Resolver) -> list[object]:
    """Values to try where `schema` stood: its own sample, one of each of
    its types, and one of every JSON type."""
    node = _merged(schema, resolver, 0)
    found = [sample(node, resolver), *(of_type(node, resolver, t) for t in _types(node))]
    enum = node.get("enum")
    found += enum if isinstance(enum, list) else []
    return unique([*found, *ANY_VALUES])


def unique(values: list[object]) -> list[object]:
    out: list[object] = []
    seen: set[object] = set()
    for v in values:
        if (k := key(v)) not in seen:
            seen.add(k)
            out.append(v)
    return out


def key(value: object) -> object:
    """A hashable key, equal for two values exactly when `same` says so: an
    enum of many values is compared in linear time, not quadratic."""
    if isinstance(value, bool):
        return ("bool", value)
    if type(value) in (int, float):
        return ("number", value)  # 1 == 1.0, and their hashes agree
    if isinstance(value, dict):
        return ("object", frozenset((k, key(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("array", tuple(key(v) for v in value))
    return (type(value).__name__, value)


def same(a: object, b: object) -> bool:
    """JSON equality: 1 and true are two values, 1 and 1.0 one."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) in (int, float) and type(b) in (int, float):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def strings(pattern: str, count: int) -> list[str]:
    """Up to `count` strings `pattern` matches: the least one first, then
    others made by seeded choices (the same ones every run)."""
    try:
        parsed = sre.parse(pattern)
        if parsed.getwidth()[0] > MAX_SIZE:
            return []
    except (re.error, RecursionError, OverflowError):
        return []
    out = [_text(parsed, random.Random(k) if k else None) for k in range(count)]
    return [s for s in dict.fromkeys(out) if s is not None]


class Bound(NamedTuple):
    """A subschema with the resolver its `$ref`s are relative to (one
    folded in from another spec keeps its own)."""

    schema: object
    resolver: Resolver


def _bound(part: dict[str, object], resolver: Resolver) -> dict[str, object]:
    out = dict(part)
    if isinstance(props := part.get("properties"), dict):
        out["properties"] = {k: v if isinstance(v, Bound) else Bound(v, resolver) for k, v in props.items()}
    for key in ("items", "additionalProperties"):
        if key in part and not isinstance(part[key], Bound):
            out[key] = Bound(part[key], resolver)
    return out


def _merged(schema: object, resolver: Resolver, depth: int) -> dict[str, object]:
    """`schema` with its `$ref` and `allOf` folded in (their members,
    required names and bounds joined)."""
    if isinstance(schema, Bound):
        schema, resolver = schema
    if schema is True or schema is None:
        return {}
    if schema is False:
        return {"not": {}}
    if not isinstance(schema, dict):
        return {}
    out: dict[str, object] = {}
    parts: list[dict[str, object]] = [schema]
    if isinstance(ref := schema.get("$ref"), str) and depth <= MAX_DEPTH:
        resolved: Resolved | None
        try:
            resolved = resolver.lookup(ref)
        except Exception:
            resolved = None
        if resolved is not None:
            parts.append(_merged(resolved.contents, resolved.resolver, depth + 1))
    for sub in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        parts.append(_merged(sub, resolver, depth + 1))
    choice = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(choice, list) and choice:
        parts.append(_merged(choice[0], resolver, depth + 1))
    for part in parts:
        _join(out, {k: v for k, v in _bound(part, resolver).items() if k not in ("$ref", "allOf", "anyOf", "oneOf")})
    return out


def _join(into: dict[str, object], part: dict[str, object]) -> None:
    for key, value in part.items():
        if key == "required":  # a list of names, in a valid schema
            into[key] = list(dict.fromkeys([*_items(into.get(key)), *_items(value)]))
        elif key == "properties" and isinstance(value, dict):
            props = into.setdefault(key, {})
            assert isinstance(props, dict)  # what the line above or a `_bound` part put there
            for name, sub in value.items():
                props[name] = {"allOf": [props[name], sub]} if name in props else sub
        elif key == "type" and key in into:
            common = [t for t in _listed(into[key]) if t in _listed(value)]
            into[key] = common or _listed(value)
        else:
            into.setdefault(key, value)


def _items(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _count(value: object) -> int:
    """A count a schema states (`minItems`, `minLength`), as an int."""
    return int(value) if isinstance(value, (int, float)) else 0


def _limit(value: object) -> int | float | None:
    """A bound a schema states (`maxLength`, `minimum`), or None."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _listed(value: object) -> list[str]:
    return [value] if isinstance(value, str) else [t for t in value if isinstance(t, str)] \
        if isinstance(value, list) else []


def _types(node: dict[str, object]) -> list[str]:
    listed = _listed(node.get("type"))
    return [t for t in _TYPE_ORDER if t in listed] if listed else []


def _kind(node: dict[str, object]) -> str:
    listed = _types(node)
    if listed:
        return listed[0]
    if "properties" in node or "required" in node:
        return "object"
    if "items" in node:
        return "array"
    if "pattern" in node or "minLength" in node:
        return "string"
    return "string" if "minimum" not in node else "number"


def _object(node: dict[str, object], resolver: Resolver, depth: int, budget: _Budget) -> dict[str, object]:
    props = found if isinstance(found := node.get("properties"), dict) else {}
    out: dict[str, object] = {}
    for name in _items(node.get("required")):
        assert isinstance(name, str)  # `required` names members
        if budget.take(1):
            out[name] = sample(props.get(name, node.get("additionalProperties", {})), resolver, depth + 1, budget)
    least = min(_count(node.get("minProperties", 0)), MAX_SIZE)
    for name, sub in props.items():  # up to minProperties
        if len(out) >= least or not budget.take(1):
            break
        out.setdefault(name, sample(sub, resolver, depth + 1, budget))
    extra = node.get("additionalProperties", {})
    for k in range(least - len(out) if extra is not False else 0):
        if not budget.take(1):
            break
        out[f"x-{k + 1}"] = sample(extra, resolver, depth + 1, budget)
    return out


def _string(node: dict[str, object]) -> str:
    least, most = min(_count(node.get("minLength", 0)), MAX_SIZE), _limit(node.get("maxLength"))
    pattern = node.get("pattern")
    candidates = strings(pattern, 8) if isinstance(pattern, str) else []
    candidates.append(FORMATS.get(str(node.get("format")), "x"))
    for text in candidates:
        if len(text) >= least and (most is None or len(text) <= most):
            return text
    return "x" * least


def _number(node: dict[str, object], kind: str) -> int | float:
    step = 1 if kind == "integer" else 0.5
    low = _limit(node["minimum"]) if "minimum" in node else _edge(node.get("exclusiveMinimum"), step)
    high = _limit(node["maximum"]) if "maximum" in node else _edge(node.get("exclusiveMaximum"), -step)
    value = low if low is not None else (min(0, high) if high is not None else 0)
    if kind == "integer" and isinstance(value, float):
        value = int(value) + (1 if value > int(value) else 0)
    return value


def _edge(exclusive: object, step: float) -> int | float | None:
    """The least (or greatest) number past an exclusive bound, or None."""
    bound = _limit(exclusive)
    return None if bound is None else bound + step


# The regex parser's tree (`re._parser`, untyped): (opcode, argument) pairs,
# each argument of the opcode's own shape.
def _text(parsed: Any, rng: random.Random | None) -> str | None:
    """One string `parsed` matches: the least (rng None) or a seeded pick."""
    groups: dict[int, str] = {}
    steps = [MAX_STEPS]
    try:
        text = "".join(_part(op, av, rng, groups, steps) for op, av in parsed)
    except (ValueError, KeyError, RecursionError):
        return None
    return text if len(text) <= MAX_SIZE else None


def _part(op: object, av: Any, rng: random.Random | None, groups: dict[int, str], steps: list[int]) -> str:
    steps[0] -= 1
    if steps[0] < 0:  # nested repeats: a string too long to make
        raise ValueError("too many steps")
    name = str(op)
    if name == "LITERAL":
        return chr(av)
    if name == "NOT_LITERAL":
        return "a" if chr(av) != "a" else "b"
    if name == "ANY":
        return "a"
    if name == "IN":
        return _pick(_class(av), rng)
    if name == "CATEGORY":
        return _pick(_category(av), rng)
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        least, most, sub = av
        times = least if rng is None else least + rng.randint(0, min(2, max(0, min(most, least + 2) - least)))
        steps[0] -= times  # each repeat costs a step, even of an empty group
        if steps[0] < 0:
            raise ValueError("too many steps")
        return "".join("".join(_part(o, a, rng, groups, steps) for o, a in sub) for _ in range(times))
    if name in ("SUBPATTERN", "ATOMIC_GROUP"):
        group, sub = (av[0], av[-1]) if name == "SUBPATTERN" else (None, av)
        text = "".join(_part(o, a, rng, groups, steps) for o, a in sub)
        if group is not None:
            groups[group] = text
        return text
    if name == "BRANCH":
        branches = av[1]
        chosen = branches[0] if rng is None else rng.choice(branches)
        return "".join(_part(o, a, rng, groups, steps) for o, a in chosen)
    if name == "GROUPREF":
        return groups[av]
    if name in ("AT", "ASSERT", "ASSERT_NOT"):
        return ""
    raise ValueError(name)


def _class(items: Any) -> list[str]:
    chars: list[str] = []
    negate = False
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            chars.append(chr(av))
        elif name == "RANGE":
            chars += [chr(av[0]), chr(av[1])]
        elif name == "CATEGORY":
            chars += _category(av)
    if negate:
        return [c for c in "aZ0-_ .x" if c not in chars] or ["\u00e9"]
    return chars


def _category(av: object) -> list[str]:
    name = str(av)
    return {"CATEGORY_DIGIT": ["0", "9"], "CATEGORY_NOT_DIGIT": ["a", "-"], "CATEGORY_SPACE": [" "],
            "CATEGORY_NOT_SPACE": ["a", "0"], "CATEGORY_WORD": ["a", "0", "_"],
            "CATEGORY_NOT_WORD": ["-", " "]}.get(name, ["a"])


def _pick(options: list[str], rng: random.Random | None) -> str:
    if not options:
        raise ValueError("empty class")
    return options[0] if rng is None else rng.choice(options)
