"""Stage 2, specs: each spec entity's JSON Schema is checked as a schema,
registered under `kno://specs/<slug>` (so specs can `$ref` each other) and
compiled once. Its `$schema` enum says which `type@version` it accepts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

import jsonschema_rs

from knoc.diagnostics import Diagnostic, error
from knoc.load import Entity

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from referencing import Registry

DECLARATION = re.compile(r"^([a-z0-9][a-z0-9-]*)@(\d+\.\d+\.\d+)$")


@dataclass
class Spec:
    entity: Entity
    slug: str
    schema: dict[str, Any]
    accepts: list[str]  # "type@version" strings from the $schema enum
    # The Rust validator answers "valid?" about a hundred times faster; the
    # Python one (SpecSet.explainer, built on first need) says what is wrong.
    fast: Any = None
    explainer: "Draft202012Validator | None" = None


@dataclass
class SpecSet:
    """Which spec validates each `type@version`, with compiled validators.

    The Python jsonschema stack is imported only to explain a failure: a
    repo that validates never pays for it (it is a third of a warm check)."""

    specs: dict[str, Spec] = field(default_factory=dict)  # by slug
    by_declaration: dict[str, Spec] = field(default_factory=dict)
    registered: list[Spec] = field(default_factory=list)  # every schema `$ref` may reach
    _registry: "Registry | None" = None

    @property
    def registry(self) -> "Registry":
        if self._registry is None:
            self._registry = _registry(self.registered)
        return self._registry

    def explain(self, spec: Spec, instance: Any) -> list[Any]:
        """The detailed errors of `instance` against `spec`."""
        if spec.explainer is None:
            from jsonschema import Draft202012Validator
            spec.explainer = Draft202012Validator(spec.schema, registry=self.registry)
        return list(spec.explainer.iter_errors(instance))

    def resolver_for(self, node: Any) -> Any:
        """A resolver based at the spec whose schema holds `node` (relative
        `$ref`s inside it are relative to that spec)."""
        for spec in self.specs.values():
            if any(n is node for n in _nodes(spec.schema)):
                return self.registry.resolver(uri(spec.slug))
        return self.registry.resolver()

    def versions_of(self, type_: str) -> list[str]:
        found = [d.split("@", 1)[1] for d in self.by_declaration if d.split("@", 1)[0] == type_]
        return sorted(found, key=_semver_key)

    @property
    def types(self) -> list[str]:
        return sorted({d.split("@", 1)[0] for d in self.by_declaration})


def _registry(specs: list[Spec]) -> "Registry":
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012
    return Registry().with_resources(
        (uri(s.slug), Resource.from_contents(s.schema, default_specification=DRAFT202012)) for s in specs)


def _semver_key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def uri(slug: str) -> str:
    return f"kno://specs/{slug}"


def compile_specs(entities: list[Entity]) -> tuple[SpecSet, list[Diagnostic]]:
    diags: list[Diagnostic] = []
    candidates: list[Spec] = []
    for ent in entities:
        if ent.collection != "specs":
            continue
        spec_block = ent.data.get("spec")
        schema = spec_block.get("schema") if isinstance(spec_block, dict) else None
        if not isinstance(schema, dict):
            diags.append(error(
                "KNO-SPEC-SCHEMA", "spec entity has no `spec.schema` mapping",
                file=ent.source.rel, span=ent.source.locate(("spec",), key=True),
                hint="a spec holds its JSON Schema under `spec.schema`",
            ))
            continue
        problem = None if jsonschema_rs.meta.is_valid(schema) else _meta_problem(schema)
        if problem is not None:
            path = ("spec", "schema", *problem.absolute_path)
            diags.append(error(
                "KNO-SPEC-SCHEMA", f"`spec.schema` is not a valid JSON Schema: {problem.message}",
                file=ent.source.rel, span=ent.source.locate(path), spec=ent.slug,
                hint="spec schemas are JSON Schema draft 2020-12",
            ))
            continue
        enum = schema.get("properties", {}).get("$schema", {}).get("enum", [])
        candidates.append(Spec(ent, ent.slug, schema, [str(v) for v in enum]))

    fast_registry = jsonschema_rs.Registry([(uri(s.slug), s.schema) for s in candidates])
    out = SpecSet(registered=candidates)
    for spec in candidates:
        try:
            spec.fast = jsonschema_rs.Draft202012Validator(
                spec.schema, registry=fast_registry, base_uri=uri(spec.slug), offline=True)
        except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as exc:
            # A $ref that does not resolve: the Python resolver says which.
            path, ref = _first_unresolvable(spec, out.registry) or (("spec", "schema"), str(exc))
            diags.append(error(
                "KNO-SPEC-REF", f"`$ref: {ref}` does not resolve",
                file=spec.entity.source.rel, span=spec.entity.source.locate(path), spec=spec.slug,
                hint="refer to another spec as kno://specs/<slug>#/<json pointer>",
            ))
            continue
        out.specs[spec.slug] = spec
        for decl in spec.accepts:
            if not DECLARATION.match(decl):
                diags.append(error(
                    "KNO-SPEC-SCHEMA", f"`{decl}` in the `$schema` enum is not `<type>@<semver>`",
                    file=spec.entity.source.rel,
                    span=spec.entity.source.locate(("spec", "schema", "properties", "$schema", "enum")),
                ))
            elif decl in out.by_declaration:
                other = out.by_declaration[decl]
                diags.append(error(
                    "KNO-SPEC-CONFLICT", f"`{decl}` is accepted by both {other.slug} and {spec.slug}",
                    file=spec.entity.source.rel,
                    span=spec.entity.source.locate(("spec", "schema", "properties", "$schema", "enum")),
                    hint="each type@version must be accepted by exactly one spec",
                ))
            else:
                out.by_declaration[decl] = spec
    return out, diags


def _meta_problem(schema: dict[str, Any]) -> Any:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match
    return best_match(Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema))


def _first_unresolvable(spec: Spec, registry: "Registry") -> tuple[tuple[str | int, ...], str] | None:
    from referencing.exceptions import Unresolvable
    resolver = registry.resolver(base_uri=uri(spec.slug))
    for path, ref in _refs(spec.schema, ("spec", "schema")):
        try:
            resolver.lookup(ref)
        except Unresolvable:
            return path, ref
    return None


def _refs(node: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield (*path, key), value
            else:
                yield from _refs(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _refs(value, (*path, i))


def property_names(schema: Any, resolver: Any) -> set[str]:
    """Every property name a schema defines at this level, through `allOf`,
    conditionals and `$ref`s: the names an author may write here."""
    names: set[str] = set()
    seen: set[int] = set()

    def walk(node: Any, res: Any) -> None:
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


def _nodes(node: Any) -> Iterator[Any]:
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _nodes(v)
    elif isinstance(node, list):
        for v in node:
            yield from _nodes(v)
