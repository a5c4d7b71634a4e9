"""Stage 2, specs: each spec entity's JSON Schema is checked as a schema,
registered under `kno://specs/<slug>` (so specs can `$ref` each other) and
compiled once. Its `$schema` enum says which `type@version` it accepts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from knoc.diagnostics import Diagnostic, error
from knoc.load import Entity

DECLARATION = re.compile(r"^([a-z0-9][a-z0-9-]*)@(\d+\.\d+\.\d+)$")


@dataclass
class Spec:
    entity: Entity
    slug: str
    schema: dict[str, Any]
    accepts: list[str]  # "type@version" strings from the $schema enum
    # Two compilations of one schema: the Rust one answers "valid?" about a
    # hundred times faster; the Python one explains failures in detail.
    fast: Any = None
    validator: Draft202012Validator | None = None


@dataclass
class SpecSet:
    """Which spec validates each `type@version`, with compiled validators."""

    specs: dict[str, Spec] = field(default_factory=dict)  # by slug
    by_declaration: dict[str, Spec] = field(default_factory=dict)
    registry: Registry = field(default_factory=Registry)

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
        problem = best_match(Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema))
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

    registry: Registry = Registry().with_resources(
        (uri(s.slug), Resource.from_contents(s.schema, default_specification=DRAFT202012))
        for s in candidates
    )
    fast_registry = jsonschema_rs.Registry([(uri(s.slug), s.schema) for s in candidates])
    out = SpecSet(registry=registry)
    for spec in candidates:
        bad_ref = _first_unresolvable(spec, registry)
        if bad_ref is not None:
            path, ref = bad_ref
            diags.append(error(
                "KNO-SPEC-REF", f"`$ref: {ref}` does not resolve",
                file=spec.entity.source.rel, span=spec.entity.source.locate(path), spec=spec.slug,
                hint="refer to another spec as kno://specs/<slug>#/<json pointer>",
            ))
            continue
        spec.validator = Draft202012Validator(spec.schema, registry=registry)
        spec.fast = jsonschema_rs.Draft202012Validator(
            spec.schema, registry=fast_registry, base_uri=uri(spec.slug), offline=True
        )
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


def _first_unresolvable(spec: Spec, registry: Registry) -> tuple[tuple[str | int, ...], str] | None:
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
            except Unresolvable:
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
