"""Safe discovery: seed 001's conformance fixture run against the engine of
`knoc discover`, and the command itself on the example repo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knoc.features.discover import Candidate, Request, evaluate
from tests.conftest import Knoc
from tests.test_official_checks import assert_v03_schema, assert_v10_strict

FIXTURE = json.loads((Path(__file__).parent / "conformance/capability-discovery.json").read_text(encoding="utf-8"))
CASES = FIXTURE["cases"]


def test_the_fixture_is_big_enough_and_covers_every_verdict() -> None:
    assert len(CASES) >= 15
    assert {c["expect"] for c in CASES} == set(FIXTURE["verdicts"])


@pytest.mark.parametrize("name", sorted(FIXTURE["cards"]))
def test_every_fixture_card_passes_the_official_checks(name: str) -> None:
    entry = FIXTURE["cards"][name]
    if entry["target"] in ("0.3", "compat"):
        assert_v03_schema(entry["card"])
    if entry["target"] in ("1.0", "compat"):
        card = {k: v for k, v in entry["card"].items()
                if k not in ("url", "protocolVersion", "preferredTransport")}  # compat's 0.3 fields
        assert_v10_strict(card)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_conformance(case: dict[str, Any]) -> None:
    card = FIXTURE["cards"][case["card"]]["card"]
    request = Request(tuple(case["request"].get("requires", [])), case["request"].get("protocol"))
    assert request.problems() == []
    answer = evaluate(Candidate(case["card"], card["name"], "", [], "unknown", card), request)
    assert answer.verdict == case["expect"], answer.reason
    assert answer.qualifies == (case["expect"] in ("compatible", "deprecated_capability"))
    assert bool(answer.reason) == (case["expect"] != "compatible")


def test_discover_lists_who_qualifies_and_why_the_others_do_not(knoc: Knoc, repo: Path) -> None:
    code, out, _ = knoc("discover", "--requires", "streaming_message", "--protocol", "1.0", root=repo)
    assert code == 0
    qualify, rest = out.split("do not qualify:")
    assert "3 qualify:" in qualify
    for slug in ("catalog-search", "drift-sentinel", "schema-steward"):
        assert f"  {slug}" in qualify
    assert "echo-agent        missing_capability: does not declare `streaming_message`" in rest
    assert "ledger-auditor" not in out  # private agents are not in the catalog


def test_discover_as_json_with_domain_and_class(knoc: Knoc, repo: Path) -> None:
    trace = "ext:https://possibility.space/extensions/review-trace/v1"
    code, out, _ = knoc("discover", "--requires", trace, "--domain", "schemas", "--class", "utility",
                        "--format", "json", root=repo)
    answers = {a["slug"]: a for a in json.loads(out)["agents"]}
    assert code == 0
    assert [s for s, a in answers.items() if a["qualifies"]] == ["schema-steward"]
    assert answers["catalog-search"]["verdict"] == "missing_capability"
    assert answers["echo-agent"] == {**answers["echo-agent"], "verdict": "excluded",
                                     "reason": "does not perceive domain `schemas`"}


def test_discover_exits_1_when_nobody_qualifies(knoc: Knoc, repo: Path) -> None:
    code, out, _ = knoc("discover", "--protocol", "2.0", root=repo)
    assert code == 1 and "0 qualify" in out and "version_mismatch" in out


def test_discover_rejects_a_misspelt_capability(knoc: Knoc, repo: Path) -> None:
    code, _, err = knoc("discover", "--requires", "pause_resum", root=repo)
    assert code == 2 and "did you mean `pause_resume`?" in err and "Traceback" not in err


def test_discover_never_repeats_a_password_in_an_extension_uri(knoc: Knoc, repo: Path) -> None:
    code, out, err = knoc("discover", "--requires", "ext:https://ops:hunter2@ext.example/x", root=repo)
    assert code == 2 and "user name or password" in err and "hunter2" not in out + err and "ops" not in out + err


def test_discover_reports_content_errors_instead_of_answering(knoc: Knoc, repo: Path) -> None:
    path = repo / "content/agent-blueprints/catalog-search.kno"
    path.write_text(path.read_text(encoding="utf-8").replace("slug: catalog-search", "slug: [oops"),
                    encoding="utf-8")
    code, out, err = knoc("discover", root=repo)
    assert code == 1 and out == "" and "catalog-search.kno" in err
