"""The validator that explains what is wrong with an entity says what
jsonschema says, but matches every pattern on the linear-time engine:
never Python's backtracking `re`, and without patching jsonschema."""

from __future__ import annotations

import re
from typing import Any

import jsonschema._keywords
import jsonschema._utils
import pytest
from jsonschema import Draft202012Validator

from knoc.kinds.explainer import Explainer

SCHEMAS: dict[str, dict[str, Any]] = {
    "pattern": {"type": "object", "properties": {"slug": {"pattern": "^[a-z]+$"}}},
    "pattern-properties": {"patternProperties": {"^x-": {"type": "string"}}},
    "additional-false": {"properties": {"a": {}}, "patternProperties": {"^x-": {}}, "additionalProperties": False},
    "additional-plain": {"properties": {"a": {}}, "additionalProperties": False},
    "additional-schema": {"patternProperties": {"^x-": {}}, "additionalProperties": {"type": "integer"}},
    "unevaluated": {"allOf": [{"patternProperties": {"^x-": {}}}, {"properties": {"a": {}}}],
                    "unevaluatedProperties": False},
    "unevaluated-ref": {"$defs": {"ext": {"patternProperties": {"^x-": {}}}}, "$ref": "#/$defs/ext",
                        "unevaluatedProperties": {"type": "integer"}},
    "unevaluated-if": {"if": {"required": ["a"]}, "then": {"patternProperties": {"^y": {}}},
                       "else": {"properties": {"b": {}}}, "unevaluatedProperties": False},
}
INSTANCES: list[Any] = [
    {"slug": "ok"}, {"slug": "Not OK"}, {"x-a": "s", "x-b": 1, "a": 1, "z": 2, "y1": 3}, {"a": 1, "b": 2},
    {"zz": 1, "x-q": "s"}, {}, {"b": 1, "y": 2}, "a string",
]


def messages(validator: Any, instance: Any) -> list[tuple[str, list[Any]]]:
    return sorted((e.message, list(e.absolute_path)) for e in validator.iter_errors(instance))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_it_says_what_jsonschema_says(name: str) -> None:
    schema = SCHEMAS[name]
    for instance in INSTANCES:
        assert messages(Explainer(schema), instance) == messages(Draft202012Validator(schema), instance)


class NoBacktracking:
    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"jsonschema's re.{name} was called")


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_no_pattern_runs_on_pythons_re(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonschema._keywords, "re", NoBacktracking())
    monkeypatch.setattr(jsonschema._utils, "re", NoBacktracking())
    for instance in INSTANCES:
        list(Explainer(SCHEMAS[name]).iter_errors(instance))


def test_a_pattern_that_backtracks_is_answered_at_once() -> None:
    """`^(a+)+$` on 40 a's and a `!` is hours for `re`; linear, it is nothing."""
    hostile = "a" * 40 + "!"
    schema = {"properties": {"s": {"pattern": "^(a+)+$"}}, "patternProperties": {"^(a+)+$": {}},
              "unevaluatedProperties": False}
    assert [e.message for e in Explainer(schema).iter_errors({"s": hostile, hostile: 1})] == [
        f"{hostile!r} does not match '^(a+)+$'", f"Unevaluated properties are not allowed ({hostile!r} was unexpected)"]


def test_jsonschema_itself_is_left_as_it_is() -> None:
    list(Explainer({"pattern": "a"}).iter_errors("b"))
    assert jsonschema._keywords.re is re and jsonschema._utils.re is re


DRAFTS = ["https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2019-09/schema",
          "http://json-schema.org/draft-07/schema#"]
HOSTILE = "^(a+)+$"
NAMED_DIALECTS: dict[str, tuple[dict[str, Any], Any]] = {
    "nested": ({"properties": {"x": {"$schema": DRAFTS[0], "pattern": HOSTILE}}}, {"x": "b"}),
    "through-ref": ({"$defs": {"d": {"$schema": DRAFTS[1], "pattern": HOSTILE}},
                     "properties": {"x": {"$ref": "#/$defs/d"}}}, {"x": "b"}),
    "property-names": ({"propertyNames": {"$schema": DRAFTS[2], "pattern": HOSTILE}}, {"b": 1}),
    "root-by-ref": ({"$schema": DRAFTS[0], "properties": {"x": {"pattern": HOSTILE}, "r": {"$ref": "#"}}},
                    {"r": {"x": "b"}}),
    "pattern-properties": ({"properties": {"x": {"$schema": DRAFTS[2], "patternProperties": {HOSTILE: False},
                                                 "additionalProperties": False}}}, {"x": {"b": 1}}),
}


@pytest.mark.parametrize("case", sorted(NAMED_DIALECTS))
def test_a_subschema_naming_a_dialect_stays_on_the_linear_engine(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `$schema` inside a spec (or at its root, reached again by a `$ref`)
    would make jsonschema switch to its own validator for that draft."""
    monkeypatch.setattr(jsonschema._keywords, "re", NoBacktracking())
    monkeypatch.setattr(jsonschema._utils, "re", NoBacktracking())
    schema, instance = NAMED_DIALECTS[case]
    assert list(Explainer(schema).iter_errors(instance))  # each instance fails, and says so
