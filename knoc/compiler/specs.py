"""Stage 2, specs: each spec entity's JSON Schema is checked as a schema,
registered under `kno://specs/<slug>` (so specs can `$ref` each other) and
compiled once. Its `$schema` enum says which `type@version` it accepts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from knoc.diagnostics import Diagnostic, at
from knoc.kinds.entity import Entity
from knoc.kinds.spec import DECLARATION, Spec, SpecSet, uri

if TYPE_CHECKING:
    from referencing import Registry


def compile_specs(entities: list[Entity]) -> tuple[SpecSet, list[Diagnostic]]:
    diags: list[Diagnostic] = []
    candidates: list[Spec] = []
    for ent in entities:
        if ent.collection != "specs":
            continue
        spec_block = ent.data.get("spec")
        schema = spec_block.get("schema") if isinstance(spec_block, dict) else None
        if not isinstance(schema, dict):
            diags.append(at(ent.source, ("spec",), "KNO-SPEC-SCHEMA", "spec entity has no `spec.schema` mapping",
                            "a spec holds its JSON Schema under `spec.schema`", key=True))
            continue
        problem = None if jsonschema_rs.meta.is_valid(schema) else _meta_problem(schema)
        if problem is not None:
            path = ("spec", "schema", *problem.absolute_path)
            diags.append(at(ent.source, path, "KNO-SPEC-SCHEMA",
                            f"`spec.schema` is not a valid JSON Schema: {problem.message}",
                            "spec schemas are JSON Schema draft 2020-12", spec=ent.slug))
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
            diags.append(at(spec.entity.source, path, "KNO-SPEC-REF", f"`$ref: {ref}` does not resolve",
                            "refer to another spec as kno://specs/<slug>#/<json pointer>", spec=spec.slug))
            continue
        out.specs[spec.slug] = spec
        enum_path = ("spec", "schema", "properties", "$schema", "enum")
        for decl in spec.accepts:
            if not DECLARATION.match(decl):
                diags.append(at(spec.entity.source, enum_path, "KNO-SPEC-SCHEMA",
                                f"`{decl}` in the `$schema` enum is not `<type>@<semver>`"))
            elif decl in out.by_declaration:
                other = out.by_declaration[decl]
                diags.append(at(spec.entity.source, enum_path, "KNO-SPEC-CONFLICT",
                                f"`{decl}` is accepted by both {other.slug} and {spec.slug}",
                                "each type@version must be accepted by exactly one spec"))
            else:
                out.by_declaration[decl] = spec
    return out, diags


def _meta_problem(schema: dict[str, Any]) -> Any:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match
    return best_match(Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema))


def _first_unresolvable(spec: Spec, registry: Registry) -> tuple[tuple[str | int, ...], str] | None:
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


