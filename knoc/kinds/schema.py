"""Compiling a JSON Schema the one way knoc runs them: offline (no
reference is ever fetched) and with every pattern on a linear-time engine
(no backtracking: `^(a|a)*$` cannot take seconds), which refuses
lookaround and back-references."""

from __future__ import annotations

from functools import lru_cache
from typing import NoReturn

from knoc.io.native import jsonschema_rs
from knoc.rules import limits
from knoc.rules.json import JsonObject

PATTERNS = jsonschema_rs.RegexOptions(size_limit=limits.PATTERN_BYTES)


# What compiling a schema or a registry of them raises: one that cannot be
# compiled, a reference that does not resolve.
NOT_COMPILED = (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError)
UNRESOLVED = (jsonschema_rs.ReferencingError, ValueError)


def refuse(uri: str) -> NoReturn:
    """The retriever of every schema knoc compiles: knoc never fetches one."""
    raise ValueError(f"{uri} is outside the repo; knoc never fetches a schema")


def compile_schema(schema: JsonObject | bool, registry: jsonschema_rs.Registry | None = None,
                   base_uri: str | None = None) -> jsonschema_rs.Validator:
    """A fast validator for `schema`: offline, with linear-time patterns.
    jsonschema_rs.ValidationError for a schema it cannot compile,
    ReferencingError or ValueError for a reference that does not resolve."""
    return jsonschema_rs.Draft202012Validator(schema, registry=registry, base_uri=base_uri, retriever=refuse,
                                              pattern_options=PATTERNS)



def registry(resources: list[tuple[str, JsonObject]]) -> jsonschema_rs.Registry:
    """The fast validators' registry of these (uri, schema) pairs, offline.
    One of UNRESOLVED for a pointer that leads nowhere."""
    return jsonschema_rs.Registry(resources, retriever=refuse)


def first_error(validator: jsonschema_rs.Validator, instance: object) -> jsonschema_rs.ValidationError | None:
    """The fast validator's first error in `instance`, or None: its
    `iter_errors` lists every one, which a schema whose branches each apply
    to the same value can make grow with the document's depth."""
    try:
        validator.validate(instance)
    except jsonschema_rs.ValidationError as exc:
        return exc
    return None


def meta_valid(schema: JsonObject | bool) -> bool:
    """Whether `schema` is a valid JSON Schema (by its meta-schema)."""
    return bool(jsonschema_rs.meta.is_valid(schema))


@lru_cache(maxsize=1024)
def _pattern(pattern: str) -> jsonschema_rs.Validator:
    try:
        return compile_schema({"type": "string", "pattern": pattern})
    except jsonschema_rs.ValidationError as exc:
        raise ValueError(f"the linear-time engine cannot read the pattern {pattern!r}") from exc


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` matches somewhere in `text`, as JSON Schema's
    `pattern` keyword reads it, on the linear-time engine. ValueError for a
    pattern it cannot read (lookaround, back-references)."""
    return bool(_pattern(pattern).is_valid(text))
