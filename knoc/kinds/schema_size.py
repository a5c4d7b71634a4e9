"""Whether validating one document against a spec's schema stays bounded,
once every `$ref` is followed. `allOf` (or `anyOf`, `oneOf`, ...) of
references to subschemas that are `allOf`s of references in turn
multiplies the work at each level: six wide and twelve deep is two
billion subschemas for one value, minutes for one document, however fast
the validator. The subschemas a value may meet are counted, each way to
one anew, up to `limits.SCHEMA_VISITS`. A recursive reference is counted
one round further: each way back to a subschema (from every leaf of a
fan-out above an `items` that leads back, say) is that subschema once more,
so a recursion reached once per part of a document (a tree) stays small and
one reached from every branch is seen. What explaining an invalid document
costs is bounded apart: `limits.EXPLAIN_STEPS`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from urllib.parse import unquote

from knoc.kinds.spec import SPEC_URI
from knoc.rules import limits

# The keywords whose value is a subschema, a list of them, or a map of them, that a validator applies.
_ONE = ("not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames",
        "unevaluatedItems", "unevaluatedProperties", "contentSchema")
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAPPED = ("properties", "patternProperties", "dependentSchemas")
_REFS = ("$ref", "$dynamicRef")

# What to do about a schema `problem` refuses.
HINT = "give shared parts one `$ref` each, not an `allOf` of references that branch again"
# Where a reference leads, from the schema it is written in (None: nowhere knoc can tell).
Resolve = Callable[[Mapping[str, object], str], object | None]


def problem(schema: object, resolve: Resolve) -> str | None:
    """Why validating a document against `schema` could take unbounded
    time, or None."""
    try:
        _Walk(resolve).visit(schema, 0)
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
        self._open: set[int] = set()  # on the way down: reached again, it is a recursion
        self._done: dict[int, tuple[int, dict[int, int]]] = {}  # each finished one: its count, its ways back up

    def visit(self, node: object, depth: int) -> tuple[int, dict[int, int]]:
        """How many subschemas `node` is, followed through, each way to one
        counted; and how many ways lead from it back to each open subschema
        (a recursion)."""
        if not isinstance(node, Mapping):
            return 1, {}
        if id(node) in self._open:
            return 1, {id(node): 1}
        if (done := self._done.get(id(node))) is not None:
            return done
        if depth > limits.SCHEMA_DEPTH:
            raise _TooLarge(f"its references lead more than {limits.SCHEMA_DEPTH:,} subschemas deep")
        self._open.add(id(node))
        count, back = 1, dict[int, int]()
        for child in self._children(node):
            found, ways = self.visit(child, depth + 1)
            count += found
            for target, n in ways.items():
                back[target] = back.get(target, 0) + n
            self._check(count)
        # Each way back is one more round of this subschema, for the part of the document it goes into: one
        # round more is counted, so a recursion reached many ways (from each leaf of a fan-out) is seen.
        count += back.pop(id(node), 0) * count
        self._check(count)
        self._open.discard(id(node))
        self._done[id(node)] = count, back
        return count, back

    @staticmethod
    def _check(count: int) -> None:
        if count > limits.SCHEMA_VISITS:
            raise _TooLarge(f"followed through its references, it holds more than {limits.SCHEMA_VISITS:,} "
                            "subschemas for one value (`allOf`, `anyOf` or `oneOf` of references that branch "
                            "in turn): validating a document could take hours")

    def _children(self, node: Mapping[str, object]) -> Iterator[object]:
        for key in _ONE:
            if key in node:
                yield node[key]
        for key in _MANY:
            if isinstance(many := node.get(key), list):
                yield from many
        for key in _MAPPED:
            if isinstance(mapped := node.get(key), Mapping):
                yield from mapped.values()
        for key in _REFS:
            if isinstance(ref := node.get(key), str):
                found = self._resolve(node, ref)
                if found is not None:
                    yield found


def resolver(schemas: Mapping[str, object]) -> Resolve:
    """Where each reference among `schemas` (by spec slug; one schema of
    its own: "") leads: a JSON pointer into one of them, or an anchor
    (`$anchor`, `$dynamicAnchor`) of one. (A spec holds one `$id`, at its
    root: knoc.compiler.specs refuses any other.)"""
    owner: dict[int, str] = {}
    anchors: dict[tuple[str, str], Mapping[str, object]] = {}
    for slug, schema in schemas.items():
        stack = [schema]
        while stack:
            value = stack.pop()
            if isinstance(value, Mapping):
                owner[id(value)] = slug
                for key in ("$anchor", "$dynamicAnchor"):
                    if isinstance(name := value.get(key), str):
                        anchors.setdefault((slug, name), value)
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)

    def resolve(node: Mapping[str, object], ref: str) -> object | None:
        where, _, fragment = ref.partition("#")
        slug = where.removeprefix(SPEC_URI) if where.startswith(SPEC_URI) else owner.get(id(node), "") if not where \
            else None
        if slug is None or slug not in schemas:  # none the specs' own references resolve to: refused before
            return None
        if fragment and not fragment.startswith("/"):
            return anchors.get((slug, unquote(fragment)))
        found: object = schemas[slug]
        for part in fragment.split("/")[1:]:
            part = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(found, Mapping) and part in found:
                found = found[part]
            elif isinstance(found, list) and part.isdigit() and int(part) < len(found):
                found = found[int(part)]
            else:
                return None
        return found

    return resolve
