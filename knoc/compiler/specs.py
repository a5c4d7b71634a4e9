"""Stage 2, specs: each spec entity's JSON Schema is checked as a schema,
registered under `kno://specs/<slug>` (so specs can `$ref` each other) and
compiled once. Its `$schema` enum says which `type@version` it accepts."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from knoc.diagnostics import Diagnostic, at
from knoc.kinds import schema_size
from knoc.kinds.entity import Entity
from knoc.kinds.schema import NOT_COMPILED, UNRESOLVED, compile_schema, meta_valid, registry
from knoc.kinds.spec import DECLARATION, SPEC_URI, Spec, SpecSet, uri
from knoc.rules.slug import WHAT, is_slug

URI_KEYWORDS = ("$ref", "$dynamicRef", "$id", "$schema")
_BAD_PATTERN = re.compile(r'^(".*") is not a "regex"$')
# The dialect of every spec schema, as a `$schema` may name it. Another would be read by its own rules
# where a `$ref` reaches it (draft-07 asserts `format` and ignores what stands beside a `$ref`), where the
# spec's own check, the spec evolution rules and the editor's schemas read 2020-12.
DIALECT = {f"http{s}://json-schema.org/draft/2020-12/schema" for s in ("", "s")}
_OTHER_DIALECTS = {f"http{s}://json-schema.org/{d}/schema" for s in ("", "s")
                   for d in ("draft-03", "draft-04", "draft-06", "draft-07", "draft/2019-09")}

if TYPE_CHECKING:
    from referencing import Registry


def compile_specs(entities: list[Entity]) -> tuple[SpecSet, list[Diagnostic]]:
    """The spec set, and what is wrong with the specs that could not join it."""
    diags: list[Diagnostic] = []
    entities = [ent for ent in entities if ent.collection == "specs"]
    candidates = [spec for ent in entities if (spec := _candidate(ent, diags))]
    candidates, fast_registry = _resolvable(candidates, {ent.slug for ent in entities}, diags)
    candidates = _bounded(candidates, diags)
    out = SpecSet(registered=candidates)
    for spec in candidates:
        try:
            spec.fast = compile_schema(spec.schema, registry=fast_registry, base_uri=uri(spec.slug))
        except NOT_COMPILED as exc:
            diags.append(_uncompiled(spec, str(exc).splitlines()[0], out))
            continue
        out.specs[spec.slug] = spec
        _declarations(spec, out, diags)
    return out, diags


def _candidate(ent: Entity, diags: list[Diagnostic]) -> Spec | None:
    """The entity as a spec, if its schema is a JSON Schema that refers
    only inside the repo."""
    if not is_slug(ent.slug) or not isinstance(ent.data.get("slug"), str):  # it names the spec's URI
        diags.append(at(ent.source, ("slug",), "KNO-SPEC-SCHEMA", "a spec needs a slug (`<type>-schema`)",
                        f"its slug names it as kno://specs/<slug>: use {WHAT}", key=True))
        return None
    spec_block = ent.data.get("spec")
    schema = spec_block.get("schema") if isinstance(spec_block, dict) else None
    if not isinstance(schema, dict):
        diags.append(at(ent.source, ("spec",), "KNO-SPEC-SCHEMA", "spec entity has no `spec.schema` mapping",
                        "a spec holds its JSON Schema under `spec.schema`", key=True))
        return None
    problem = None if meta_valid(schema) else _meta_problem(schema)
    if problem is not None:
        diags.append(at(ent.source, ("spec", "schema", *problem.absolute_path), "KNO-SPEC-SCHEMA",
                        f"`spec.schema` is not a valid JSON Schema: {problem.message}",
                        "spec schemas are JSON Schema draft 2020-12", spec=ent.slug))
        return None
    dialect = next(((path, value) for path, key, value in _uris(schema, ())
                    if key == "$schema" and value.rstrip("#") in _OTHER_DIALECTS), None)
    if dialect is not None:
        path, named = dialect
        diags.append(at(ent.source, ("spec", "schema", *path, "$schema"), "KNO-SPEC-SCHEMA",
                        f"`$schema` names another JSON Schema dialect (`{named}`): knoc reads every spec schema "
                        "as draft 2020-12", "remove it, or name https://json-schema.org/draft/2020-12/schema",
                        spec=ent.slug))
        return None
    outside = _outside_ref(schema)
    if outside is not None:
        path, ref = outside
        diags.append(at(ent.source, ("spec", "schema", *path), "KNO-SPEC-REF",
                        f"`{ref}` refers outside the repo; knoc never fetches a schema",
                        "refer to another spec as kno://specs/<slug>#/<json pointer>, or copy the "
                        "schema into a spec", spec=ent.slug))
        return None
    nested = next((path for path, key, _ in _uris(schema, ()) if key == "$id" and path), None)
    if nested is not None:
        diags.append(at(ent.source, ("spec", "schema", *nested, "$id"), "KNO-SPEC-SCHEMA",
                        "a `$id` inside the schema makes a schema of its own, whose references are read against it: "
                        "knoc takes one `$id`, at the root, so that it can bound the work of checking a document",
                        "move the part under `$defs` and refer to it as #/$defs/<name>", spec=ent.slug))
        return None
    properties = schema.get("properties")
    declared = properties.get("$schema") if isinstance(properties, dict) else None
    enum = declared.get("enum") if isinstance(declared, dict) else None
    return Spec(ent, ent.slug, schema, [str(v) for v in enum] if isinstance(enum, list) else [])


def _bounded(candidates: list[Spec], diags: list[Diagnostic]) -> list[Spec]:
    """The candidates a document can be validated against in bounded time
    (`knoc.kinds.schema_size`); each other is dropped with a diagnostic."""
    resolve = schema_size.resolver({s.slug: s.schema for s in candidates})
    kept = []
    for spec in candidates:
        problem = schema_size.problem(spec.schema, resolve)
        if problem is None:
            kept.append(spec)
            continue
        diags.append(at(spec.entity.source, ("spec", "schema"), "KNO-SPEC-SCHEMA",
                        f"`spec.schema` cannot be checked in bounded time: {problem}",
                        schema_size.HINT, spec=spec.slug))
    return kept


def _uncompiled(spec: Spec, problem: str, out: SpecSet) -> Diagnostic:
    """Why the fast validator refused a spec: a pointer that leads nowhere,
    a pattern the linear-time engine cannot run, here or in a spec it uses."""
    found = _first_unresolvable(spec, out.registry)
    if found is not None:
        return at(spec.entity.source, found[0], "KNO-SPEC-REF", f"`$ref: {found[1]}` does not resolve",
                  "point at a part of the schema that exists", spec=spec.slug)
    bad = _BAD_PATTERN.match(problem)
    where = next((path for path, key, value in _keywords(spec.schema, ("spec", "schema"), ("pattern",))
                  if bad and value == json.loads(bad.group(1))), ("spec", "schema"))
    return at(spec.entity.source, where, "KNO-SPEC-SCHEMA", f"`spec.schema` cannot be compiled: {problem}"
              + ("" if bad is None or where != ("spec", "schema") else " (in a spec it refers to)"),
              "patterns may not use lookaround or back-references: knoc evaluates them in linear time",
              spec=spec.slug)


def _resolvable(candidates: list[Spec], named: set[str], diags: list[Diagnostic]) -> tuple[list[Spec], Any]:
    """The candidates whose every `$ref` lands, and their offline registry:
    a spec referring to a missing spec, to a spec with errors, or to a
    pointer that leads nowhere is dropped with a diagnostic at that `$ref`."""
    while True:
        slugs = {s.slug for s in candidates}
        broken = {}
        for spec in candidates:
            for path, ref in _refs(spec.schema, ("spec", "schema")):
                target = ref[len(SPEC_URI):].split("#", 1)[0] if ref.startswith(SPEC_URI) else spec.slug
                if target not in slugs:
                    broken[spec.slug] = (path, ref)
                    break
        if not broken:
            try:
                return candidates, registry([(uri(s.slug), s.schema) for s in candidates])
            except UNRESOLVED as exc:  # a pointer that leads nowhere
                found_in = SpecSet(registered=candidates).registry
                broken = {s.slug: found for s in candidates if (found := _first_unresolvable(s, found_in))}
                if not broken:  # the engines disagree: the registry's own words, on every spec
                    broken = {s.slug: (("spec", "schema"), str(exc).splitlines()[0]) for s in candidates}
        for spec in candidates:
            if spec.slug in broken:
                path, ref = broken[spec.slug]
                target = ref[len(SPEC_URI):].split("#", 1)[0]
                why = (f"spec `{target}` has errors (see its file)" if ref.startswith(SPEC_URI) and target in named
                       else "it leads nowhere")
                diags.append(at(spec.entity.source, path, "KNO-SPEC-REF", f"`$ref: {ref}` does not resolve: {why}",
                                "refer to another spec as kno://specs/<slug>#/<json pointer>", spec=spec.slug))
        candidates = [s for s in candidates if s.slug not in broken]


def _declarations(spec: Spec, out: SpecSet, diags: list[Diagnostic]) -> None:
    """Register which `type@version` strings the spec accepts."""
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


def _outside_ref(schema: object) -> tuple[tuple[str | int, ...], str] | None:
    """The first `$ref` (or `$id`, `$dynamicRef`, `$schema` URI) that points
    outside the repo's specs."""
    for path, key, value in _uris(schema, ()):
        if key == "$schema" and value.rstrip("#") in DIALECT:
            continue
        if not (value.startswith("#") or value.startswith(SPEC_URI)):
            return (*path, key), value
    return None


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
        except (Unresolvable, KeyError):
            return path, ref
    return None


def _refs(node: object, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    for where, _, value in _keywords(node, path, ("$ref",)):
        yield where, value


def _uris(node: object, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str, str]]:
    """(path of the holding schema, keyword, value) of each URI-valued keyword."""
    for where, key, value in _keywords(node, path, URI_KEYWORDS):
        yield where[:-1], key, value


def _keywords(node: object, path: tuple[str | int, ...], keys: tuple[str, ...]
              ) -> Iterator[tuple[tuple[str | int, ...], str, str]]:
    """(path of the value, keyword, value) of each string-valued `keys` in a schema."""
    stack: list[tuple[object, tuple[str | int, ...]]] = [(node, path)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, dict):
            for key in keys:
                if isinstance(found := value.get(key), str):
                    yield (*where, key), key, found
            stack.extend((v, (*where, k)) for k, v in reversed(value.items())
                         if k not in keys or not isinstance(v, str))
        elif isinstance(value, list):
            stack.extend((v, (*where, i)) for i, v in reversed(list(enumerate(value))))


