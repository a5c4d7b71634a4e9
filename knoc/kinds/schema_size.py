"""Whether validating one document against a spec's schema stays bounded,
once every `$ref` is followed. Two shapes multiply the work:

- `allOf` (or `anyOf`, `oneOf`, ...) of references to subschemas that are
  `allOf`s of references in turn: six wide and twelve deep is two billion
  subschemas for one value, minutes for one document. The subschemas a
  value may meet are counted, up to `limits.SCHEMA_VISITS`.
- a recursive reference reached two ways for the same part of the
  document (`allOf` of two references that each lead back to the root
  through `properties/x`): each level of the document then doubles the
  work. A recursion reached once per part (a tree's `children`, or `left`
  and `right`) costs what the document's size does, and is counted once."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from urllib.parse import unquote

from knoc.kinds.spec import SPEC_URI
from knoc.rules import limits

# Keywords applied to the value itself, to its parts (each part met once), or to a named part.
_SAME_ONE = ("not", "if")
_EITHER = ("then", "else")  # one or the other, never both: their ways back are told apart
_SAME_MAPPED = ("dependentSchemas",)  # each applied to the object itself, when its member is there
_SAME_MANY = ("allOf", "anyOf", "oneOf")
_PART_ONE = ("items", "contains", "additionalProperties", "propertyNames", "unevaluatedItems",
             "unevaluatedProperties", "contentSchema")
_PART_MAPPED = ("patternProperties",)
_REFS = ("$ref", "$dynamicRef")

# Where a reference leads, from the schema it is written in (None: nowhere knoc can tell).
Resolve = Callable[[Mapping[str, object], str], object | None]
Steps = tuple[str, ...]  # the parts of the document a path through the schema goes into


def problem(schema: object, resolve: Resolve) -> str | None:
    """Why validating a document against `schema` could take unbounded
    time, or None."""
    walk = _Walk(resolve)
    try:
        walk.visit(schema, (), 0)
    except _TooLarge as exc:
        return str(exc)
    return None


class _TooLarge(Exception):
    pass


class _Walk:
    """Depth-first through the subschemas, each worked out once however
    many ways lead to it (the ways are counted), following references."""

    def __init__(self, resolve: Resolve) -> None:
        self._resolve = resolve
        self._open: dict[int, tuple[Steps, set[Steps]]] = {}  # on the way down: where, and the ways back to it
        self._done: dict[int, tuple[int, list[tuple[int, Steps]]]] = {}  # each finished one: its count, recursions

    def visit(self, node: object, steps: Steps, depth: int) -> tuple[int, list[tuple[int, Steps]]]:
        """How many subschemas `node` is, followed through (each way to one
        counted), and the recursions below it: the open subschema each
        returns to, and the steps from `node`."""
        if not isinstance(node, Mapping):
            return 1, []
        if depth > limits.SCHEMA_DEPTH:
            raise _TooLarge(f"its references lead more than {limits.SCHEMA_DEPTH:,} subschemas deep")
        key = id(node)
        if key in self._open:  # a recursion: each time round, the validator is one level further into the document
            self._returned(key, steps)
            return 1, [(key, ())]
        if key in self._done:
            count, below = self._done[key]
            for target, rest in below:
                if target in self._open:
                    self._returned(target, (*steps, *rest))
            return count, below
        self._open[key] = (steps, set())
        count, below = 1, []
        for child, step in self._children(node):
            at = (*steps, step) if step else steps
            found, recursions = self.visit(child, at, depth + 1)
            count += found
            if count > limits.SCHEMA_VISITS:
                raise _TooLarge(f"followed through its references, it holds more than {limits.SCHEMA_VISITS:,} "
                                "subschemas for one value (`allOf`, `anyOf` or `oneOf` of references that branch "
                                "in turn): validating a document could take hours")
            below += [(target, (step, *rest) if step else rest) for target, rest in recursions if target != key]
        del self._open[key]
        self._done[key] = count, below
        return count, below

    def _returned(self, target: int, steps: Steps) -> None:
        """A recursion back to `target`, into the parts `steps` below it:
        a second way into the same parts multiplies the work at every level."""
        start, ways = self._open[target]
        way = steps[len(start):]
        if way in ways:
            raise _TooLarge("a recursive reference is reached two ways for the same part of the document (`allOf`, "
                            "`anyOf` or `oneOf` of references that lead back): each level of a document doubles "
                            "the work of validating it")
        ways.add(way)

    def _children(self, node: Mapping[str, object]) -> Iterator[tuple[object, str]]:
        """Each subschema `node` applies, with the part of the value it
        applies to ("" for the value itself; `then` and `else` are marked,
        as only one of them is applied)."""
        for key in _SAME_ONE:
            if key in node:
                yield node[key], ""
        for key in _EITHER:
            if key in node:
                yield node[key], f"({key})"
        for key in _SAME_MANY:
            if isinstance(many := node.get(key), list):
                yield from ((s, "") for s in many)
        for key in _PART_ONE:
            if key in node:
                yield node[key], "*"
        if isinstance(prefix := node.get("prefixItems"), list):
            yield from ((s, f"[{i}]") for i, s in enumerate(prefix))
        if isinstance(properties := node.get("properties"), Mapping):
            yield from ((s, f".{name}") for name, s in properties.items())
        for key in (*_SAME_MAPPED, *_PART_MAPPED):
            if isinstance(mapped := node.get(key), Mapping):
                yield from ((s, "" if key in _SAME_MAPPED else "*") for s in mapped.values())
        for key in _REFS:
            if isinstance(ref := node.get(key), str):
                found = self._resolve(node, ref)
                if found is not None:
                    yield found, ""


def resolver(schemas: Mapping[str, object], fallback: Callable[[str, str], object | None]) -> Resolve:
    """Where each reference among `schemas` (by spec slug) leads: a JSON
    pointer into a spec, read here; anything else (an anchor, a `$id` of
    its own) through `fallback(spec slug, reference)`."""
    owner: dict[int, str] = {}
    for slug, schema in schemas.items():
        stack = [schema]
        while stack:
            value = stack.pop()
            if isinstance(value, Mapping):
                owner[id(value)] = slug
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)

    def resolve(node: Mapping[str, object], ref: str) -> object | None:
        base = owner.get(id(node), "")
        where, _, pointer = ref.partition("#")
        slug = where.removeprefix(SPEC_URI) if where.startswith(SPEC_URI) else base if not where else None
        if slug is not None and slug in schemas and (pointer == "" or pointer.startswith("/")):
            found: object = schemas[slug]
            for part in pointer.split("/")[1:]:
                part = unquote(part).replace("~1", "/").replace("~0", "~")
                if isinstance(found, Mapping) and part in found:
                    found = found[part]
                elif isinstance(found, list) and part.isdigit() and int(part) < len(found):
                    found = found[int(part)]
                else:
                    return None
            return found
        return fallback(base, ref)

    return resolve
