"""`knoc specs check`: a spec edited between two commits, for each kind of
change. A breaking change under a minor bump is an error whose
counterexample this test validates itself (with jsonschema, against the
spec files at both commits); additive changes pass; a major bump reports;
an unchanged repo is silent."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

Knoc = Callable[..., Any]
SPEC = "specs/perception-domain-schema.kno"
DOMAIN = "content/perception-domains/schemas.kno"
SLOT = "      sources:\n"  # the widget property goes before it


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          check=True, capture_output=True, text=True).stdout


def put(repo: Path, rel: str, old: str, new: str) -> None:
    path = repo / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def widget(schema: Any) -> str:
    return f"      widget: {json.dumps(schema)}\n"


@pytest.fixture
def evolve(repo: Path, knoc: Knoc) -> Callable[..., tuple[int, dict[str, Any]]]:
    """Commit the domain spec with `old` as its `widget` property, then make
    it `new` under `version`, and run `knoc specs check --format json`."""

    def run(old: Any, new: Any, version: str = "0.2.0", defs: str = "") -> tuple[int, dict[str, Any]]:
        put(repo, SPEC, SLOT, widget(old) + SLOT)
        if defs:
            put(repo, SPEC, "    type: object\n", f"    $defs: {defs}\n    type: object\n")
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "base")
        put(repo, SPEC, widget(old), widget(new))
        put(repo, SPEC, "version: 0.1.0", f"version: {version}")
        code, out, _ = knoc("specs", "check", "--format", "json", root=repo)
        return code, json.loads(out)

    return run


def domain_spec(report: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in report["specs"] if s["slug"] == "perception-domain-schema")


def validators(repo: Path) -> tuple[Draft202012Validator, Draft202012Validator]:
    """The domain spec's schema at the base commit and in the work tree,
    each with the specs it refers to."""
    def at(read: Callable[[str], str]) -> Draft202012Validator:
        schemas = {name: yaml.safe_load(read(f"specs/{name}.kno"))["spec"]["schema"]
                   for name in ("perception-domain-schema", "document-schema")}
        registry = Registry().with_resources(
            (f"kno://specs/{n}", Resource.from_contents(s, default_specification=DRAFT202012))
            for n, s in schemas.items())
        return Draft202012Validator(schemas["perception-domain-schema"], registry=registry)

    return at(lambda rel: git(repo, "show", f"main:{rel}")), at(lambda rel: (repo / rel).read_text())


BREAKING = {
    "type narrowed": ({"type": ["string", "integer"]}, {"type": "string"}),
    "enum narrowed": ({"enum": ["a", "b"]}, {"enum": ["a"]}),
    "const changed": ({"const": "a"}, {"const": "b"}),
    "const added": ({"type": "string"}, {"type": "string", "const": "a"}),
    "required added": ({"type": "object", "properties": {"x": {"type": "string"}}},
                       {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}),
    "additionalProperties closed": ({"type": "object", "properties": {"x": {}}},
                                    {"type": "object", "properties": {"x": {}}, "additionalProperties": False}),
    "unevaluatedProperties closed": ({"type": "object", "allOf": [{"properties": {"x": {}}}]},
                                     {"type": "object", "allOf": [{"properties": {"x": {}}}],
                                      "unevaluatedProperties": False}),
    "maxLength lowered": ({"type": "string", "maxLength": 10}, {"type": "string", "maxLength": 5}),
    "minLength raised": ({"type": "string"}, {"type": "string", "minLength": 3}),
    "minItems raised": ({"type": "array", "minItems": 0}, {"type": "array", "minItems": 2}),
    "maxItems added": ({"type": "array", "items": {"type": "string"}},
                       {"type": "array", "items": {"type": "string"}, "maxItems": 1}),
    "maximum lowered": ({"type": "integer", "maximum": 10}, {"type": "integer", "maximum": 5}),
    "minimum raised": ({"type": "number", "minimum": 0}, {"type": "number", "minimum": 1}),
    "exclusiveMaximum added": ({"type": "number"}, {"type": "number", "exclusiveMaximum": 3}),
    "pattern tightened": ({"type": "string", "pattern": "^[a-z0-9]+$"}, {"type": "string", "pattern": "^[a-z]+$"}),
    "pattern anchored": ({"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "^a$"}),
    "pattern added": ({"type": "string"}, {"type": "string", "pattern": "^v[0-9]+$"}),
    "items narrowed": ({"type": "array", "items": {"type": "string"}},
                       {"type": "array", "items": {"type": "string", "enum": ["a"]}}),
    "$ref target changed": ({"$ref": "#/$defs/text"}, {"$ref": "#/$defs/count"}),
    "anyOf lost a choice": ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"anyOf": [{"type": "string"}]}),
    "oneOf choices overlap": ({"oneOf": [{"type": "string"}, {"type": "integer"}]},
                              {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "number"}]}),
    "allOf gained a condition": ({"allOf": [{"type": "string"}]}, {"allOf": [{"type": "string"}, {"minLength": 3}]}),
    "multipleOf changed": ({"type": "integer", "multipleOf": 2}, {"type": "integer", "multipleOf": 3}),
    "a member dropped that unevaluatedProperties now refuses": (
        {"type": "object", "allOf": [{"properties": {"color": {"type": "string"}}}], "unevaluatedProperties": False},
        {"type": "object", "allOf": [{"properties": {}}], "unevaluatedProperties": False}),
    "additionalProperties dropped under unevaluatedProperties": (
        {"type": "object", "additionalProperties": {"type": "string"}, "unevaluatedProperties": False},
        {"type": "object", "unevaluatedProperties": False}),
    "a member a pattern allowed, narrowed": (
        {"type": "object", "patternProperties": {"^col": {"enum": ["red", "blue"]}}},
        {"type": "object", "patternProperties": {"^col": {"enum": ["red", "blue"]}},
         "properties": {"color": {"enum": ["green"]}}}),
    "a member an allOf allowed, narrowed": (
        {"type": "object", "allOf": [{"properties": {"color": {"type": "string"}}}], "unevaluatedProperties": False},
        {"type": "object", "allOf": [{"properties": {"color": {"type": "string"}}}], "unevaluatedProperties": False,
         "properties": {"color": {"type": "integer"}}}),
    "const null added": ({"type": ["string", "null"]}, {"type": ["string", "null"], "const": None}),
    "1 became true": ({"enum": [1, "a"]}, {"enum": [True, "a"]}),
    "number became integer": ({"type": "number"}, {"type": "integer"}),
    "maxProperties added": ({"type": "object"}, {"type": "object", "maxProperties": 1}),
    "uniqueItems": ({"type": "array", "items": {"type": "string"}},
                    {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
}
DEFS = '{text: {type: string}, count: {type: integer}}'


@pytest.mark.parametrize("case", list(BREAKING))
def test_a_breaking_change_under_a_minor_bump_is_an_error_with_a_counterexample(
        case: str, evolve: Callable[..., tuple[int, dict[str, Any]]], repo: Path) -> None:
    old, new = BREAKING[case]
    code, report = evolve(old, new, "0.2.0", defs=DEFS if "$ref" in case else "")
    assert code == 1, report["diagnostics"]
    spec = domain_spec(report)
    assert spec["class"] == "breaking" and spec["bump"] == "minor"
    breaking = [c for c in spec["changes"] if c["class"] == "breaking"]
    assert breaking, spec
    before, after = validators(repo)
    for change in breaking:
        example = change["counterexample"]
        assert before.is_valid(example), (case, example)
        assert not after.is_valid(example), (case, example)
    errors = [d for d in report["diagnostics"] if d["code"] == "KNO-SPEC-BREAKING"]
    assert errors and all(d["file"] == SPEC and d["line"] for d in errors)
    assert "#/properties/widget" in errors[0]["message"]
    assert "and refuses now (0.2.0):\n$schema: perception-domain@0.1.0" in errors[0]["detail"]


ADDITIVE = {
    "type widened": ({"type": "string"}, {"type": ["string", "integer"]}),
    "enum widened": ({"enum": ["a"]}, {"enum": ["a", "b"]}),
    "required dropped": ({"type": "object", "required": ["x"]}, {"type": "object"}),
    "maxLength raised": ({"type": "string", "maxLength": 5}, {"type": "string", "maxLength": 10}),
    "minimum lowered": ({"type": "integer", "minimum": 5}, {"type": "integer", "minimum": 1}),
    "pattern dropped": ({"type": "string", "pattern": "^a"}, {"type": "string"}),
    "anyOf gained a choice": ({"anyOf": [{"type": "string"}]}, {"anyOf": [{"type": "string"}, {"type": "integer"}]}),
    "allOf lost a condition": ({"allOf": [{"type": "string"}, {"minLength": 3}]}, {"allOf": [{"type": "string"}]}),
    "member opened": ({"type": "object", "additionalProperties": False},
                      {"type": "object", "additionalProperties": False, "properties": {"y": {"type": "string"}}}),
    "additionalProperties opened": ({"type": "object", "additionalProperties": False},
                                    {"type": "object", "additionalProperties": True}),
    "const widened to an enum": ({"const": 1}, {"enum": [1, 2]}),
}
SAME = {
    "description only": ({"type": "string", "description": "old"}, {"type": "string", "description": "new"}),
    "enum reordered": ({"enum": ["a", "b"]}, {"enum": ["b", "a"]}),
    "type list reordered": ({"type": ["string", "integer"]}, {"type": ["integer", "string"]}),
    "oneOf reordered": ({"oneOf": [{"type": "string"}, {"type": "integer"}]},
                        {"oneOf": [{"type": "integer"}, {"type": "string"}]}),
    "a $ref for the schema it names": ({"type": "string"}, {"$ref": "#/$defs/text"}),
}


@pytest.mark.parametrize("case", list(ADDITIVE))
def test_an_additive_change_under_a_minor_bump_passes(case: str,
                                                      evolve: Callable[..., tuple[int, dict[str, Any]]]) -> None:
    code, report = evolve(*ADDITIVE[case], "0.2.0")
    spec = domain_spec(report)
    assert code == 0, report["diagnostics"]
    assert spec["class"] == "additive"
    assert not report["diagnostics"]


@pytest.mark.parametrize("case", list(SAME))
def test_a_change_that_accepts_the_same_documents_needs_no_bump(
        case: str, evolve: Callable[..., tuple[int, dict[str, Any]]]) -> None:
    code, report = evolve(*SAME[case], "0.1.0", defs=DEFS if "$ref" in case else "")
    assert (code, domain_spec(report)["class"], report["diagnostics"]) == (0, "no schema change", [])


def test_a_new_optional_field_in_a_closed_entity_is_additive(repo: Path, knoc: Knoc) -> None:
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    put(repo, SPEC, SLOT, widget({"type": "string"}) + SLOT)  # the entity allows no other member
    put(repo, SPEC, "version: 0.1.0", "version: 0.2.0")
    code, out, _ = knoc("specs", "check", "--format", "json", root=repo)
    assert code == 0 and domain_spec(json.loads(out))["class"] == "additive"


@pytest.mark.parametrize("version", ["0.1.0", "0.1.1"])
def test_an_additive_change_needs_a_minor_bump(version: str,
                                               evolve: Callable[..., tuple[int, dict[str, Any]]]) -> None:
    code, report = evolve({"enum": ["a"]}, {"enum": ["a", "b"]}, version)
    assert code == 1
    (unbumped,) = report["diagnostics"]
    assert unbumped["code"] == "KNO-SPEC-UNBUMPED" and unbumped["file"] == SPEC
    assert "version: 0.2.0" in unbumped["hint"]


def test_a_major_bump_reports_breaking_changes_without_failing(
        evolve: Callable[..., tuple[int, dict[str, Any]]]) -> None:
    code, report = evolve({"enum": ["a", "b"]}, {"enum": ["a"]}, "1.0.0")
    assert code == 0
    assert [d["code"] for d in report["diagnostics"]] == ["KNO-SPEC-MAJOR"]
    assert report["diagnostics"][0]["severity"] == "warning"


def test_what_no_rule_decides_is_unknown_never_a_pass(evolve: Callable[..., tuple[int, dict[str, Any]]]) -> None:
    # {a, b} is valid before and not after, but no rule decides
    # `dependentRequired` and no probe finds it: a warning, not a pass.
    old = {"type": "object", "dependentRequired": {"a": ["b"]}}
    code, report = evolve(old, {"type": "object", "dependentRequired": {"a": ["c"]}}, "0.2.0")
    spec = domain_spec(report)
    assert spec["class"] == "unknown"
    assert code == 0 and [d["code"] for d in report["diagnostics"]] == ["KNO-SPEC-UNDECIDED"]
    assert "knoc found no document" in report["diagnostics"][0]["message"]


def test_an_unchanged_repo_is_silent(repo: Path, knoc: Knoc) -> None:
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    code, out, err = knoc("specs", "check", root=repo)
    assert code == 0 and out == ""
    assert "no schema changed" in err


def test_the_entities_a_change_breaks_are_named_at_their_line(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    put(repo, DOMAIN, "slug: schemas\n", "slug: schemas\nwidget: b\n")
    other = tmp_path / "other"
    (other / "content" / "perception-domains").mkdir(parents=True)
    (other / "content" / "perception-domains" / "w.kno").write_text(
        "$schema: perception-domain@0.1.0\nid: 01KKSY7A0000000000000PD0ZZ\nslug: w\ntype: perception-domain\n"
        "widget: b\n")
    put(repo, SPEC, SLOT, widget({"enum": ["a", "b"]}) + SLOT)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    put(repo, SPEC, widget({"enum": ["a", "b"]}), widget({"enum": ["a"]}))
    put(repo, SPEC, "version: 0.1.0", "version: 0.1.1")
    code, out, _ = knoc("specs", "check", "--format", "json", "--content", str(other), root=repo)
    broken = [d for d in json.loads(out)["diagnostics"] if d["code"] == "KNO-SPEC-BROKEN-ENTITY"]
    assert code == 1
    assert [(d["file"], d["line"], d["severity"]) for d in broken] == [
        (DOMAIN, (repo / DOMAIN).read_text().splitlines().index("widget: b") + 1, "error"),
        (f"{other}/content/perception-domains/w.kno", 5, "error")]


def narrow_on_a_branch(repo: Path, knoc: Knoc, branch: str) -> None:
    """main holds a `widget` enum of a and b, built; the branch drops b (uncommitted)."""
    put(repo, SPEC, SLOT, widget({"enum": ["a", "b"]}) + SLOT)
    assert knoc("build", root=repo)[0] == 0
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", branch)
    put(repo, SPEC, widget({"enum": ["a", "b"]}), widget({"enum": ["a"]}))


@pytest.fixture
def narrowed(repo: Path, knoc: Knoc) -> Path:
    """main holds a `widget` enum of a and b; the branch `narrow` drops b
    under a patch bump, and its build/ is current."""
    narrow_on_a_branch(repo, knoc, "narrow")
    put(repo, SPEC, "version: 0.1.0", "version: 0.1.1")
    assert knoc("build", root=repo)[0] == 0
    return repo


def test_knoc_check_holds_the_specs_changed_on_a_branch_to_their_versions(narrowed: Path, knoc: Knoc) -> None:
    code, out, _ = knoc("check", "--format", "json", root=narrowed)
    found = [json.loads(line) for line in out.splitlines()]
    assert code == 1
    assert [d["code"] for d in found] == ["KNO-SPEC-BREAKING"] and found[0]["file"] == SPEC


def test_knoc_diff_shows_each_spec_change_with_its_class(narrowed: Path, knoc: Knoc) -> None:
    git(narrowed, "commit", "-qam", "narrow the widget")
    code, out, _ = knoc("diff", "main..narrow", root=narrowed)
    assert code == 0
    assert ("| `perception-domain-schema` | 0.1.0 → 0.1.1 (patch bump) | **breaking** | "
            "`#/properties/widget/enum`: `\"b\"` is no longer allowed |") in out
    assert knoc("diff", "main..narrow", "--fail-on", "breaking", root=narrowed)[0] == 1
    code, out, _ = knoc("diff", "main..narrow", "--format", "json", root=narrowed)
    (spec,) = json.loads(out)["specs"]
    assert spec["class"] == "breaking" and spec["changes"][0]["counterexample"]["widget"] == "b"


def test_knoc_diff_tells_an_announced_break_from_another(repo: Path, knoc: Knoc) -> None:
    """A major bump announces the break: the row and the summary say so,
    as the gate does by passing it."""
    narrow_on_a_branch(repo, knoc, "major")
    put(repo, SPEC, "version: 0.1.0", "version: 1.0.0")
    assert knoc("build", root=repo)[0] == 0
    git(repo, "commit", "-qam", "narrow the widget, announced")
    code, out, err = knoc("diff", "main..major", "--fail-on", "breaking", root=repo)
    assert code == 0 and "| 0.1.0 → 1.0.0 (major bump) | breaking, announced |" in out, out
    assert "specs: 1 breaking (announced)" in err, err


def test_a_schema_change_without_a_version_bump_reads_alike_in_diff_and_specs_check(repo: Path, knoc: Knoc) -> None:
    narrow_on_a_branch(repo, knoc, "same")
    git(repo, "commit", "-qam", "narrow, version kept")
    _, out, _ = knoc("diff", "main..same", root=repo)
    assert "| `perception-domain-schema` | 0.1.0 → 0.1.0 (no bump) | **breaking** |" in out
    _, out, err = knoc("specs", "check", "--base", "main", root=repo)
    assert "0.1.0 -> 0.1.0  (no bump)" in out + err


def test_a_spec_that_does_not_parse_is_reported_not_replaced(repo: Path, knoc: Knoc) -> None:
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / SPEC).write_text((repo / SPEC).read_text() + "  bad: [unclosed\n")
    code, _, err = knoc("specs", "check", root=repo)
    assert code == 1 and "KNO-YAML" in err and "not compared: fix the specs first" in err


def test_content_that_holds_no_entities_is_a_usage_error(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (tmp_path / "empty").mkdir()
    code, _, err = knoc("specs", "check", "--content", str(tmp_path / "empty"), root=repo)
    assert code == 2 and "no entities under content/" in err


def test_a_change_in_how_a_schema_is_read_is_never_a_pass(evolve: Callable[..., tuple[int, dict[str, Any]]]) -> None:
    """A `$id` inside a schema reads its `$ref`s against itself (here: another `text`): knoc takes a
    `$id` only at the root, so such a spec is refused, never passed as unchanged."""
    new = {"$id": "kno://specs/widget", "$defs": {"text": {"type": "string", "maxLength": 3}}, "$ref": "#/$defs/text"}
    code, report = evolve({"$ref": "#/$defs/text"}, new, "0.1.0", defs=DEFS)
    [refused] = [d for d in report["diagnostics"] if d["code"] == "KNO-SPEC-SCHEMA"]
    assert code == 1 and "`$id` inside the schema" in refused["message"]


@pytest.mark.parametrize("dialect", ["http://json-schema.org/draft-07/schema#",
                                     "https://json-schema.org/draft/2019-09/schema"])
def test_a_spec_schema_in_another_dialect_is_refused(dialect: str,
                                                     evolve: Callable[..., tuple[int, dict[str, Any]]]) -> None:
    """Reached by a `$ref`, draft-07 asserts `format` where the spec rules
    read an annotation: one dialect, or a change could pass unseen."""
    code, report = evolve({"$ref": "#/$defs/text"}, {"$schema": dialect, "$ref": "#/$defs/text"}, "0.1.0", defs=DEFS)
    [found] = report["diagnostics"]
    assert code == 1 and found["code"] == "KNO-SPEC-SCHEMA" and "draft 2020-12" in found["message"]
    assert found["line"] > 1


def test_a_spec_schema_may_name_its_own_dialect(evolve: Callable[..., tuple[int, dict[str, Any]]]) -> None:
    _, report = evolve({"$ref": "#/$defs/text"}, {"$schema": "https://json-schema.org/draft/2020-12/schema",
                                                     "$ref": "#/$defs/text"}, "0.1.0", defs=DEFS)
    assert "KNO-SPEC-SCHEMA" not in {d["code"] for d in report["diagnostics"]}
    assert domain_spec(report)["class"] == "unknown"  # a `$schema` that changed is never read as no change


def test_a_huge_bound_is_not_sampled_at(evolve: Callable[..., tuple[int, dict[str, Any]]]) -> None:
    code, report = evolve({"type": "string", "maxLength": 10**9}, {"type": "string", "maxLength": 10**9 - 1})
    assert (domain_spec(report)["class"], code) in (("unknown", 0), ("breaking", 1))
    assert len(json.dumps(report)) < 100_000


def test_a_spec_whose_slug_changed_is_compared_with_what_it_was(repo: Path, knoc: Knoc) -> None:
    text = (repo / SPEC).read_text()
    for a, b in (("perception-domain", "widget"), ("01KKSY7A0000000000000PD0SC", "01KKSY7A0000000000000WD0SC")):
        text = text.replace(a, b)
    (repo / "specs/widget-schema.kno").write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    put(repo, "specs/widget-schema.kno", "slug: widget-schema", "slug: gadget-schema")
    code, out, _ = knoc("specs", "check", "--format", "json", root=repo)
    report = json.loads(out)
    assert code == 0, report["diagnostics"]
    assert [(s["slug"], s["class"]) for s in report["specs"] if "widget" in s["slug"] or "gadget" in s["slug"]] == [
        ("gadget-schema", "no schema change")]


def test_a_hostile_pattern_in_a_spec_is_matched_in_linear_time() -> None:
    """A removed member is checked against the new spec's patternProperties:
    on Python's `re`, `^(a+)+$` against 40 a's and a `!` runs for hours."""
    probe = ("from knoc.evolution.rules import _matches; "
             "print(_matches('^(a+)+$', 'a' * 40 + '!'), _matches('^(?=x)', 'y'), _matches('^a', 'ab'))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["False", "True", "True"]  # a pattern the engine cannot read: assumed to apply


def test_values_compare_by_key_as_they_compare_one_by_one() -> None:
    """The enum rule compares values by a hashed key (linear in a long
    enum); the key tells values apart exactly as JSON equality does."""
    from knoc.evolution.sample import key, same

    values: list[Any] = [0, 1, 1.0, -0.0, 0.0, True, False, None, "", "1", [], {}, [1], [1.0], [True], [[1]],
                         {"a": 1}, {"a": 1.0}, {"a": True}, {"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]}]
    assert [(a, b) for a in values for b in values if (key(a) == key(b)) != same(a, b)] == []


def test_a_reordered_enum_of_many_values_is_no_change(evolve: Callable[..., tuple[int, dict[str, Any]]]) -> None:
    values = list(range(20_000))
    code, report = evolve({"enum": values}, {"enum": values[::-1]}, "0.1.0")
    assert code == 0 and domain_spec(report)["class"] == "no schema change"


def test_nested_bounds_are_sampled_within_one_budget(evolve: Callable[..., tuple[int, dict[str, Any]]]) -> None:
    """Each bound is under the per-bound cap, but they multiply: 1,024 lists
    of 1,024 lists of 1,024 strings. The sample stops at MAX_TOTAL, and the
    change still gets a verdict (a hook or a review that runs it never hangs)."""
    from knoc.evolution.sample import MAX_TOTAL, sample

    def nested(inner: dict[str, Any]) -> dict[str, Any]:
        return {"type": "array", "minItems": 1024, "items": {"type": "array", "minItems": 1024, "items": {
            "type": "array", "minItems": 1024, "items": inner}}}

    def size(value: Any) -> int:
        if isinstance(value, list):
            return len(value) + sum(map(size, value))
        return len(value) if isinstance(value, str) else 0

    assert size(sample(nested({"type": "string", "minLength": 8}), None)) <= MAX_TOTAL  # type: ignore[arg-type]
    _, report = evolve(nested({"type": "string"}), nested({"type": "integer"}), "0.1.1")
    assert domain_spec(report)["class"] in ("unknown", "breaking")


def test_nested_repeats_in_a_pattern_are_made_within_a_bound() -> None:
    """`(((a+)+)+...)`: each repeat may add two more of what it holds, so
    a seeded string would grow as 3 to the nesting; it is given up instead."""
    from knoc.evolution.sample import MAX_SIZE, strings

    made = strings("(" * 24 + "a+" + ")+" * 24, 8)
    assert made and all(len(s) <= MAX_SIZE for s in made) and made[0] == "a"
    assert strings("^(?:){4294967294}$", 64) == []  # an empty group, repeated: each repeat costs a step
