"""Compiling a JSON Schema the one way knoc runs them: offline (no
reference is ever fetched) and with every pattern on a linear-time engine
(no backtracking: `^(a|a)*$` cannot take seconds), which refuses
lookaround and back-references."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from knoc.io.native import jsonschema_rs
from knoc.rules import limits

PATTERNS = jsonschema_rs.RegexOptions(size_limit=limits.PATTERN_BYTES)


def refuse(uri: str) -> Any:
    """The retriever of every schema knoc compiles: knoc never fetches one."""
    raise ValueError(f"{uri} is outside the repo; knoc never fetches a schema")


def compile_schema(schema: Any, registry: Any = None, base_uri: str | None = None) -> Any:
    """A fast validator for `schema`: offline, with linear-time patterns.
    jsonschema_rs.ValidationError for a schema it cannot compile,
    ReferencingError or ValueError for a reference that does not resolve."""
    return jsonschema_rs.Draft202012Validator(schema, registry=registry, base_uri=base_uri, retriever=refuse,
                                              pattern_options=PATTERNS)



@lru_cache(maxsize=1024)
def _pattern(pattern: str) -> Any:
    try:
        return compile_schema({"type": "string", "pattern": pattern})
    except jsonschema_rs.ValidationError as exc:
        raise ValueError(f"the linear-time engine cannot read the pattern {pattern!r}") from exc


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` matches somewhere in `text`, as JSON Schema's
    `pattern` keyword reads it, on the linear-time engine. ValueError for a
    pattern it cannot read (lookaround, back-references)."""
    return bool(_pattern(pattern).is_valid(text))
