"""The spec kind: a spec entity carries the JSON Schema of one entity type,
and its `$schema` enum says which `type@version` it accepts. `SpecSet`
holds the compiled ones (the specs stage builds it)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from knoc.rules import limits
from knoc.rules.json import JsonObject
from knoc.rules.version import semver_key

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator, ValidationError
    from referencing import Registry

    from knoc.kinds.entity import Entity

DECLARATION = re.compile(r"^([a-z0-9][a-z0-9-]*)@(\d+\.\d+\.\d+)$")
SPEC_URI = "kno://specs/"
# knoc's own spec set: what a repo without specs/ (or without a spec of some
# type) is checked against. `knoc specs vendor` copies it into a repo.
BUILTIN_SPECS = Path(__file__).resolve().parent / "specs"
class Resolved(Protocol):
    """What a `$ref` leads to (referencing's `Resolved`): the schema there,
    and the resolver its own `$ref`s are relative to."""

    @property
    def contents(self) -> object: ...

    @property
    def resolver(self) -> Resolver: ...


class Resolver(Protocol):
    """Where a schema's `$ref`s are looked up (referencing's `Resolver`);
    `lookup` raises for a reference that leads nowhere."""

    def lookup(self, ref: str) -> Resolved: ...


@dataclass
class Spec:
    entity: Entity
    slug: str
    schema: JsonObject
    accepts: list[str]  # "type@version" strings from the $schema enum
    # The Rust validator answers "valid?" about a hundred times faster; the
    # Python one (SpecSet.explainer, built on first need) says what is wrong.
    fast: Any = None
    explainer: Draft202012Validator | None = None


@dataclass
class SpecSet:
    """Which spec validates each `type@version`, with compiled validators.

    The Python jsonschema stack is imported only to explain a failure: a
    repo that validates never pays for it (it is a third of a warm check)."""

    specs: dict[str, Spec] = field(default_factory=dict)  # by slug
    by_declaration: dict[str, Spec] = field(default_factory=dict)
    registered: list[Spec] = field(default_factory=list)  # every schema `$ref` may reach
    _registry: Registry | None = None

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            self._registry = _registry(self.registered)
        return self._registry

    def explain(self, spec: Spec, instance: object) -> list[ValidationError]:
        """The detailed errors of `instance` against `spec`; none when the
        Python validator cannot say (a schema that refers to itself in place,
        `$ref: "#"` at its root, recurses forever there, not in the fast
        one; or past `limits.EXPLAIN_STEPS`): the caller then reports the
        fast validator's own words."""
        from knoc.kinds.explainer import Explainer, OutOfSteps, explained

        if spec.explainer is None:
            spec.explainer = Explainer(spec.schema, registry=self.registry)
        try:
            return explained(spec.explainer, instance, limits.EXPLAIN_STEPS)
        except (RecursionError, OutOfSteps):
            return []

    def resolver_for(self, node: object) -> Resolver:
        """A resolver based at the spec whose schema holds `node` (relative
        `$ref`s inside it are relative to that spec)."""
        for spec in self.specs.values():
            if any(n is node for n in nodes(spec.schema)):
                return self.registry.resolver(uri(spec.slug))
        return self.registry.resolver()

    def versions_of(self, type_: str) -> list[str]:
        found = [d.split("@", 1)[1] for d in self.by_declaration if d.split("@", 1)[0] == type_]
        return sorted(found, key=semver_key)

    @property
    def types(self) -> list[str]:
        return sorted({d.split("@", 1)[0] for d in self.by_declaration})


def _registry(specs: list[Spec]) -> Registry:
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012
    return Registry().with_resources(
        (uri(s.slug), Resource.from_contents(s.schema, default_specification=DRAFT202012)) for s in specs)


def uri(slug: str) -> str:
    return f"{SPEC_URI}{slug}"


def property_names(schema: object, resolver: Resolver) -> set[str]:
    """Every property name a schema defines at this level, through `allOf`,
    conditionals and `$ref`s: the names an author may write here."""
    names: set[str] = set()
    seen: set[int] = set()

    def walk(node: object, res: Resolver) -> None:
        if not isinstance(node, dict) or id(node) in seen:
            return
        seen.add(id(node))
        names.update(node.get("properties", {}))
        if isinstance(node.get("$ref"), str):
            try:
                hit = res.lookup(node["$ref"])
            except Exception:  # referencing's Unresolvable: a name we cannot follow
                return
            walk(hit.contents, hit.resolver)
        for key in ("allOf", "anyOf", "oneOf"):
            for sub in node.get(key, []):
                walk(sub, res)
        for key in ("then", "else"):
            walk(node.get(key), res)

    walk(schema, resolver)
    return names


def nodes(node: object) -> Iterator[object]:
    """Every mapping in a JSON value, however deep (a schema's subschemas among them)."""
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from nodes(v)
    elif isinstance(node, list):
        for v in node:
            yield from nodes(v)
