"""The validator that says what is wrong with an entity: jsonschema's
draft 2020-12 validator, extended so that every keyword that matches a
`pattern` runs it on the same linear-time engine as the fast validator.
jsonschema's own keywords use Python's backtracking `re`, where a pattern
such as `^(a+)+$` takes minutes on a short hostile string."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

import attrs
from jsonschema import Draft202012Validator, ValidationError, validators

from knoc.kinds.schema import search

if TYPE_CHECKING:  # knoc.kinds.spec loads this module when it first explains
    from knoc.kinds.spec import Resolver


class Validator(Protocol):
    """What the keywords below ask of the jsonschema validator that runs
    them (an Explainer; jsonschema itself is untyped)."""

    schema: object

    @property
    def _resolver(self) -> Resolver: ...

    def descend(self, instance: object, schema: object, path: str | None = None,
                schema_path: str | None = None) -> Iterator[ValidationError]: ...

    def evolve(self, **changes: object) -> Validator: ...

    def is_valid(self, instance: object) -> bool: ...


# Each keyword's `instance` as the draft's type checker sees it: an object is
# a dict, a string a str (and a subschema, where not a boolean, a dict).

def _pattern(validator: Validator, pattern: str, instance: object, schema: object) -> Iterator[ValidationError]:
    if isinstance(instance, str) and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Validator, patterns: dict[str, object], instance: object, schema: object
                        ) -> Iterator[ValidationError]:
    if not isinstance(instance, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _extras(extras: list[str]) -> str:
    """jsonschema's words for unexpected members: `'a', 'b' were`."""
    return ", ".join(repr(extra) for extra in extras) + (" was" if len(extras) == 1 else " were")


def _additional_properties(validator: Validator, additional: object, instance: object, schema: object
                           ) -> Iterator[ValidationError]:
    """jsonschema's keyword and messages, its patterns matched here."""
    if not isinstance(instance, dict) or not isinstance(schema, dict):
        return
    patterns = list(schema.get("patternProperties", {}))
    properties = schema.get("properties", {})
    extras = [key for key in instance  # in the instance's order: the same findings, in the same order, every run
              if key not in properties and not any(search(p, key) for p in patterns)]
    if isinstance(additional, dict):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            shown = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {shown}")
        else:
            yield ValidationError(f"Additional properties are not allowed ({_extras(sorted(extras))} unexpected)")


def _unevaluated_properties(validator: Validator, unevaluated: object, instance: object, schema: object
                            ) -> Iterator[ValidationError]:
    """jsonschema's keyword and messages, over `_evaluated`."""
    if not isinstance(instance, dict):
        return
    evaluated = _evaluated(validator, instance, schema)
    refused = [key for key in instance if key not in evaluated
               and _fails(validator.descend(instance[key], unevaluated, path=key, schema_path=key))]
    if refused and unevaluated is False:
        yield ValidationError(f"Unevaluated properties are not allowed ({_extras(sorted(refused))} unexpected)")
    elif refused:
        yield ValidationError("Unevaluated properties are not valid under the given schema "
                              f"({_extras(refused)} unevaluated and invalid)")


def _fails(errors: Iterator[ValidationError]) -> bool:
    return next(errors, None) is not None


def _evaluated(validator: Validator, instance: dict[str, object], schema: object) -> set[str]:
    """The members of `instance` that `schema` evaluates in place: as
    jsonschema's `find_evaluated_property_keys_by_schema`, patterns on the
    linear engine."""
    if not isinstance(schema, dict):  # a boolean schema
        return set()
    found: set[str] = set()
    for keyword in ("$ref", "$dynamicRef"):
        if (ref := schema.get(keyword)) is not None:
            resolved = validator._resolver.lookup(ref)  # as jsonschema's own keywords follow a reference
            found |= _evaluated(validator.evolve(schema=resolved.contents, _resolver=resolved.resolver),
                                instance, resolved.contents)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        found |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if (sub := schema.get(keyword)) is not None:
            found |= {key for key, value in instance.items() if not _fails(validator.descend(value, sub))}
    for pattern in schema.get("patternProperties", {}):
        found |= {key for key in instance if search(pattern, key)}
    for name, sub in schema.get("dependentSchemas", {}).items():
        if name in instance:
            found |= _evaluated(validator, instance, sub)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(keyword, []):
            if not _fails(validator.descend(instance, sub)):
                found |= _evaluated(validator, instance, sub)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            found |= _evaluated(validator, instance, schema["if"])
            if "then" in schema:
                found |= _evaluated(validator, instance, schema["then"])
        elif "else" in schema:
            found |= _evaluated(validator, instance, schema["else"])
    return found


Explainer = validators.extend(Draft202012Validator, {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "unevaluatedProperties": _unevaluated_properties,
})
_FIELDS = [(f.name, f.alias) for f in attrs.fields(Explainer) if f.init]


def _evolve(self: Validator, **changes: object) -> Validator:
    """A validator for a subschema (a `$ref`, an applicator): always an
    Explainer. jsonschema's own picks the class a subschema's `$schema`
    names, and a spec could name a draft to have its patterns run on `re`."""
    changes.setdefault("schema", self.schema)
    for name, alias in _FIELDS:
        changes.setdefault(alias, getattr(self, name))
    evolved: Validator = Explainer(**changes)
    return evolved


Explainer.evolve = _evolve  # our class's method, not jsonschema's: no other validator changes


class OutOfSteps(Exception):
    """The explanation took more than its budget of steps (`explained`)."""


# The steps the explanation under way may still take (one process explains one at a time); None: no budget.
_left: list[int | None] = [None]
_iter_errors = Explainer.iter_errors


def _counted(self: Validator, instance: object, _schema: object = None) -> Iterator[ValidationError]:
    """jsonschema's `iter_errors`, one step each time a (sub)schema is applied."""
    left = _left[0]
    if left is not None:
        if left <= 0:
            raise OutOfSteps
        _left[0] = left - 1
    yield from _iter_errors(self, instance, *(() if _schema is None else (_schema,)))


Explainer.iter_errors = _counted


def explained(explainer: Validator, instance: object, steps: int) -> list[ValidationError]:
    """Every error the explainer finds in `instance`, within `steps`
    applications of a (sub)schema: past them, OutOfSteps. A schema whose
    branches each apply to the same invalid value makes the Python
    validator's work grow with the document's depth, where the fast one
    stops at the first error."""
    _left[0] = steps
    try:
        return list(explainer.iter_errors(instance))  # type: ignore[attr-defined]
    finally:
        _left[0] = None
