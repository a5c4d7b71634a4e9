"""`knoc new agent` and `knoc migrate`: what they write validates and
builds, and they never replace a file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from ruamel.yaml import YAML

from knoc.features.migrate import CARD_KEYS
from knoc.kinds.agent import BLUEPRINT_SCHEMA
from knoc.rules.ulid import PATTERN as ULID
from knoc.rules.ulid import new as ulid
from tests.conftest import ROOT, Knoc, compile_example, tree
from tests.test_official_checks import assert_v03_schema, assert_v10_strict

LEGACY = ["content/agents/auth-agent.kno", "content/agents/echo-agent.kno"]


def test_ulids_are_valid_and_ordered_by_time() -> None:
    first, second = ulid(1_700_000_000_000), ulid(1_700_000_000_001)
    assert ULID.match(first) and ULID.match(second) and first < second
    assert len({ulid() for _ in range(100)}) == 100


def test_new_agent_writes_a_private_skeleton_that_validates(repo: Path, knoc: Knoc) -> None:
    code, _, err = knoc("new", "agent", "night-watch", root=repo)
    assert code == 0, err
    path = repo / "content/agent-blueprints/night-watch.kno"
    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    assert ULID.match(data["id"]) and data["slug"] == "night-watch" and data["visibility"] == "private"
    assert data["a2a_projection"]["name"] == "Night Watch"
    code, _, err = knoc("validate", root=repo)
    assert code == 0 and "warning" not in err, err
    assert not any("night-watch" in p for p in compile_example(root=repo).files)  # private: not published
    assert data["a2a_projection"]["url"].startswith("https://agents.possibility.space/")  # beside the others


def test_new_agent_goes_on_the_host_most_cards_are_on(repo: Path, knoc: Knoc) -> None:
    assert knoc("build", root=repo)[0] == 0
    hosts = [urlsplit(a["url"]).netloc for a in json.loads((repo / "build/index/agents.json").read_text())["agents"]]
    (repo / "build").rename(repo / "built")  # the sources say it, built or not
    usual = max(sorted(set(hosts)), key=hosts.count)
    assert knoc("new", "agent", "night-watch", root=repo)[0] == 0
    data = YAML(typ="safe").load((repo / "content/agent-blueprints/night-watch.kno").read_text(encoding="utf-8"))
    assert data["a2a_projection"]["url"] == f"https://{usual}/night-watch"


@pytest.mark.parametrize("target", ["1.0", "0.3"])
def test_new_agent_made_public_builds_a_card_that_passes_the_official_checks(
        repo: Path, knoc: Knoc, target: str) -> None:
    (repo / "knoc.toml").write_text(f'[knoc]\na2a = "{target}"\n', encoding="utf-8")  # the skeleton states its versions
    assert knoc("new", "agent", "night-watch", "--title", 'The "Night"\u2028Watch', "--url",
                "https://watch.example.net/a2a", root=repo)[0] == 0
    path = repo / "content/agent-blueprints/night-watch.kno"
    path.write_text(path.read_text(encoding="utf-8").replace("visibility: private\n", ""), encoding="utf-8")
    result = compile_example(target, root=repo)
    assert result.ok, result.report.sorted()
    card = json.loads(result.files["site/watch.example.net/a2a/.well-known/agent-card.json"])
    assert card["name"] == 'The "Night"\u2028Watch'  # a line break YAML parsers disagree on, written escaped
    (assert_v10_strict if target == "1.0" else assert_v03_schema)(card)


def test_new_agent_never_replaces_a_file(repo: Path, knoc: Knoc) -> None:
    path = repo / "content/agent-blueprints/catalog-search.kno"
    before = path.read_bytes()
    code, _, err = knoc("new", "agent", "catalog-search", root=repo)
    assert code == 2 and "KNO-EXISTS" in err and path.read_bytes() == before
    code, _, err = knoc("new", "agent", "Not_A_Slug", root=repo)
    assert code == 2 and "KNO-CONFIG" in err
    before = tree(repo / "content")
    code, _, err = knoc("new", "agent", "a" * 101, root=repo)  # past document-schema's bound: refused up front
    assert code == 2 and "a slug has at most 100" in err and tree(repo / "content") == before


def test_card_keys_are_the_specs_card_fields() -> None:
    spec = YAML(typ="safe").load((ROOT / "specs/agent-card-schema.kno").read_text(encoding="utf-8"))
    assert tuple(spec["spec"]["schema"]["$defs"]["card"]["properties"]) == CARD_KEYS


@pytest.mark.parametrize("target", ["1.0", "0.3", "compat"])
def test_migrate_builds_byte_identical_cards(repo: Path, knoc: Knoc, target: str) -> None:
    before = compile_example(target, root=repo).files
    code, _, err = knoc("migrate", "--a2a", target, root=repo)
    assert code == 0, err
    assert not list((repo / "content/agents").glob("*.kno"))
    after = compile_example(target, root=repo)
    assert after.ok, after.report.sorted()
    assert {k: v for k, v in after.files.items() if k != "manifest.json"} == \
        {k: v for k, v in before.items() if k != "manifest.json"}


def test_migrate_keeps_comments_and_key_order_and_records_provenance(repo: Path, knoc: Knoc) -> None:
    legacy = {rel: (repo / rel).read_text(encoding="utf-8") for rel in LEGACY}
    assert knoc("migrate", root=repo)[0] == 0
    safe = YAML(typ="safe")
    for rel, old_text in legacy.items():
        new_text = (repo / rel.replace("/agents/", "/agent-blueprints/")).read_text(encoding="utf-8")
        old_comments = [line.strip() for line in old_text.splitlines() if line.strip().startswith("#")]
        assert old_comments and old_comments == [line.strip() for line in new_text.splitlines()
                                                 if line.strip().startswith("#")]
        old, new = safe.load(old_text), safe.load(new_text)
        card = new["a2a_projection"]
        assert list(card) == [k for k in old if k in CARD_KEYS]  # the author's order
        assert all(card[k] == old[k] for k in card)
        assert new["$schema"] == BLUEPRINT_SCHEMA and new["version"] == old["version"]
        assert new["provenance"]["migration"]["from"] == f"{old['$schema']} ({rel})"
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", new["provenance"]["migration"]["date"])
        if "perception" in old:
            assert new["persona"]["perception"] == old["perception"]
        # Skill order and each skill's key order survive too.
        assert [list(s) for s in card["skills"]] == [list(s) for s in old["skills"]]


def test_migrate_refuses_to_replace_a_blueprint_and_writes_nothing(repo: Path, knoc: Knoc) -> None:
    taken = repo / "content/agent-blueprints/echo-agent.kno"
    taken.write_text("# someone's own file\n", encoding="utf-8")
    before = tree(repo / "content")
    code, _, err = knoc("migrate", root=repo)
    assert code == 2 and "KNO-EXISTS" in err and "echo-agent.kno" in err
    assert tree(repo / "content") == before  # auth-agent was not migrated either


def test_migrate_dry_run_and_non_legacy_files_write_nothing(repo: Path, knoc: Knoc) -> None:
    before = tree(repo / "content")
    code, _, err = knoc("migrate", "--dry-run", root=repo)
    assert code == 0 and "would migrate content/agents/echo-agent.kno" in err
    code, _, err = knoc("migrate", str(repo / "content/agent-blueprints/catalog-search.kno"), root=repo)
    assert code == 2 and "KNO-MIGRATE" in err and "not a legacy agent" in err
    assert tree(repo / "content") == before
