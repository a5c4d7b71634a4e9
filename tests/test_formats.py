"""Findings for machines: SARIF 2.1.0 that code scanning accepts (checked
against the official schema), JUnit XML with a test case per entity, GitHub
workflow commands, and the --fail-on threshold."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from knoc.cli import main
from tests.conftest import json_diags

SARIF_SCHEMA = json.loads((Path(__file__).parent / "data/sarif/sarif-schema-2.1.0.json").read_text())
BLUEPRINT = "content/agent-blueprints/schema-steward.kno"
Knoc = Callable[..., Any]


@pytest.fixture
def broken(repo: Path) -> Path:
    """One error (a misspelt service class) and one warning (boundary wording)."""
    path = repo / BLUEPRINT
    text = path.read_text(encoding="utf-8")
    text = text.replace("service_class: utility", "service_class: utilty")
    text = text.replace("- SHOULD NOT review more", "- Avoid reviewing more")
    path.write_text(text, encoding="utf-8")
    return repo


@pytest.fixture
def warned(repo: Path) -> Path:
    path = repo / BLUEPRINT
    path.write_text(path.read_text(encoding="utf-8").replace("- SHOULD NOT review more", "- Avoid reviewing more"),
                    encoding="utf-8")
    return repo


def test_sarif_is_valid_and_points_at_file_line_and_column(knoc: Knoc, broken: Path) -> None:
    code, out, _ = knoc("validate", "--format", "sarif", root=broken)
    assert code == 1
    log = json.loads(out)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    results = log["runs"][0]["results"]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    by_rule = {r["ruleId"]: r for r in results}
    assert set(by_rule) == {"KNO-SERVICE-CLASS", "KNO-BOUNDARY-WORDING"}
    error = by_rule["KNO-SERVICE-CLASS"]
    assert error["level"] == "error" and by_rule["KNO-BOUNDARY-WORDING"]["level"] == "warning"
    where = error["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"] == BLUEPRINT
    line = (broken / BLUEPRINT).read_text(encoding="utf-8").splitlines()[where["region"]["startLine"] - 1]
    assert "utilty" in line[where["region"]["startColumn"] - 1:]
    assert log["runs"][0]["columnKind"] == "unicodeCodePoints"  # as knoc counts them (SARIF's default is UTF-16)
    assert rules[error["ruleIndex"]]["id"] == "KNO-SERVICE-CLASS"
    assert rules[error["ruleIndex"]]["shortDescription"]["text"].startswith("`service_class`")


def test_sarif_of_a_clean_repo_is_valid_and_empty(knoc: Knoc, repo: Path) -> None:
    code, out, _ = knoc("validate", "--format", "sarif", root=repo)
    log = json.loads(out)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    assert code == 0 and log["runs"][0]["results"] == []


def test_sarif_carries_drift_findings(knoc: Knoc, repo: Path) -> None:
    assert knoc("build", root=repo)[0] == 0
    (repo / "build/index/agents.json").write_text("{}\n", encoding="utf-8")
    code, out, _ = knoc("check", "--format", "sarif", root=repo)
    log = json.loads(out)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    assert code == 1 and [r["ruleId"] for r in log["runs"][0]["results"]] == ["KNO-DRIFT"]


def test_junit_has_one_case_per_entity_and_fails_the_broken_one(knoc: Knoc, broken: Path) -> None:
    code, out, _ = knoc("validate", "--format", "junit", root=broken)
    suite = ET.fromstring(out).find("testsuite")
    assert code == 1 and suite is not None
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert len(cases) == len(list(broken.rglob("*.kno"))) == int(suite.get("tests", "0"))
    failed = [name for name, c in cases.items() if c.find("failure") is not None]
    assert failed == [BLUEPRINT] and suite.get("failures") == "1"
    failure = cases[BLUEPRINT].find("failure")
    assert failure is not None and failure.get("type") == "KNO-SERVICE-CLASS"
    assert "KNO-BOUNDARY-WORDING" not in (failure.text or "")
    assert "KNO-BOUNDARY-WORDING" in (cases[BLUEPRINT].findtext("system-out") or "")
    assert cases[BLUEPRINT].get("classname") == ".".join(BLUEPRINT.split("/")[:-1])


def test_junit_class_names_keep_a_folder_one_level() -> None:
    """A CI page groups cases by the class name's dots: a host name or
    `.well-known` stays one level, never an empty one."""
    from knoc.diagnostics import diag
    from knoc.diagnostics.reporters import Context, junit

    drifted = "build/site/agents.example.com/.well-known/agent-card.json"
    out = junit([diag("KNO-DRIFT", "changed", file=drifted)], Context(sources=lambda _: None, inputs=[], suite="knoc check"))
    case = ET.fromstring(out).find("testsuite/testcase")
    assert case is not None and case.get("classname") == "build.site.agents_example_com.well-known"
    assert case.get("name") == drifted


def test_junit_fails_on_warnings_when_asked(knoc: Knoc, warned: Path) -> None:
    code, out, _ = knoc("validate", "--format", "junit", "--fail-on", "warning", root=warned)
    suite = ET.fromstring(out).find("testsuite")
    assert code == 1 and suite is not None and suite.get("failures") == "1"


def test_github_annotations(knoc: Knoc, broken: Path) -> None:
    code, out, _ = knoc("validate", "--format", "github", root=broken)
    lines = out.splitlines()
    assert code == 1 and len(lines) == 2
    error = next(line for line in lines if line.startswith("::error "))
    assert error.startswith(f"::error file={BLUEPRINT},line=")
    assert ",col=" in error and "title=KNO-SERVICE-CLASS::" in error
    assert "%0Ahelp: " in error  # the hint, on its own line in the annotation
    assert any(line.startswith("::warning file=") for line in lines)


def test_github_is_the_default_under_github_actions(broken: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = CliRunner().invoke(main, ["validate", "--root", str(broken)])
    assert result.exit_code == 1 and result.stdout.startswith("::")
    explicit = CliRunner().invoke(main, ["validate", "--root", str(broken), "--format", "text"])
    assert explicit.stdout == "" and "error[KNO-SERVICE-CLASS]" in explicit.stderr


def test_fail_on_sets_the_threshold(knoc: Knoc, warned: Path) -> None:
    assert knoc("validate", root=warned)[0] == 0
    assert knoc("validate", "--fail-on", "warning", root=warned)[0] == 1
    code, _, err = knoc("build", "--fail-on", "warning", root=warned)
    assert code == 1 and err.strip().endswith("(build/ left unchanged)")
    assert not (warned / "build").exists()


@pytest.mark.parametrize("args", [("check",), ("check", "--bogus"), ("build", "--a2a", "9.9")])
def test_a_usage_error_reaches_every_machine_format(knoc: Knoc, repo: Path, args: tuple[str, ...]) -> None:
    """A bad knoc.toml, an unknown option, a bad value: exit 2, and the
    chosen reporter says KNO-CONFIG (a SARIF upload is never an empty file)."""
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write("\n[knoc]\nbogus = 1\n" if args == ("check",) else "")
    for fmt in ("sarif", "json", "junit", "github"):
        code, out, err = knoc(*args, "--format", fmt, root=repo)
        assert code == 2 and "KNO-CONFIG" in out and "error" in err.lower(), (fmt, out, err)
        if fmt == "sarif":
            log = json.loads(out)
            jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
            assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["KNO-CONFIG"]
        elif fmt == "json":
            assert [d["code"] for d in json_diags(out)] == ["KNO-CONFIG"]
        elif fmt == "junit":
            assert ET.fromstring(out).find(".//failure").get("type") == "KNO-CONFIG"  # type: ignore[union-attr]
        elif args == ("check",):  # in knoc.toml: placed where the parser stopped
            assert out.startswith("::error file=knoc.toml,line=") and "title=KNO-CONFIG::" in out
        else:
            assert out.startswith("::error title=KNO-CONFIG::")


@pytest.mark.parametrize("args", [("check", "--bogus"), ("build", "--a2a", "9.9"), ("check", "--format", "nope")])
def test_a_usage_error_in_a_github_job_is_an_annotation(repo: Path, args: tuple[str, ...]) -> None:
    """Under GITHUB_ACTIONS=true, with no --format, click's refusals are
    annotations as every other finding is."""
    done = subprocess.run([sys.executable, "-m", "knoc", *args, "--root", str(repo)], capture_output=True, text=True,
                          env={**os.environ, "GITHUB_ACTIONS": "true"})
    assert done.returncode == 2 and done.stdout.startswith("::error title=KNO-CONFIG::"), done
