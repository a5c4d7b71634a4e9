"""`knoc diff` on a content repo with two commits: every change class, the
Markdown a reviewer pastes into a pull request (snapshot), JSON, and the
--fail-on breaking gate."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from knoc.a2a.extensions import CONTRACT_URI
from knoc.features.diff import Publication, compare
from tests.conftest import json_diags

Knoc = Callable[..., Any]
STEWARD = "content/agent-blueprints/schema-steward.kno"
SUMMARIZER = "content/agent-blueprints/quick-summarizer.kno"
SEARCH = "content/agent-blueprints/catalog-search.kno"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org",
                           *args], check=True, capture_output=True, text=True).stdout


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def two_commits(repo: Path) -> Path:
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "feature")
    steward = repo / STEWARD
    edit(steward, "    streaming: true", "    streaming: false")  # capability off: breaking
    edit(steward, "  description: Reviews", "  description: Carefully reviews")  # cosmetic
    edit(steward, "  skills:\n", "  skills:\n    - id: explain-bump\n      name: Explain a version bump\n"
                               "      description: Says why a change needs a major version.\n"
                               "      tags: [schemas]\n")  # skill added: additive
    edit(repo / SUMMARIZER, "ownership:", "visibility: private\nownership:")  # agent gone: breaking
    edit(repo / SEARCH, "domains: [schemas, entity-health]", "domains: [schemas]")  # domain loses it
    git(repo, "commit", "-qam", "change cards")
    return repo


def test_markdown_names_every_class(knoc: Knoc, two_commits: Path, snapshot: SnapshotAssertion) -> None:
    code, out, _ = knoc("diff", root=two_commits)
    assert code == 0  # reporting only; --fail-on breaking makes it a gate
    assert "**3 breaking**, 1 additive, 1 cosmetic." in out
    assert "| **breaking** | capability `streaming` turned off |" in out
    assert "| additive | skill `explain-bump` added |" in out
    assert "| cosmetic | `description` changed |" in out
    assert out.replace(git(two_commits, "rev-parse", "--short", "main").strip(), "BASE") == snapshot


def test_json_and_the_breaking_gate(knoc: Knoc, two_commits: Path) -> None:
    code, out, err = knoc("diff", "--base", "main", "--format", "json", "--fail-on", "breaking", root=two_commits)
    report = json.loads(out)
    assert code == 1 and err.strip().splitlines()[-1].startswith("failed: 3 breaking")  # the verdict leads
    assert report["base"].startswith("main (") and report["head"] == "work tree"
    kinds = {(c["name"], c["kind"], c["class"]) for c in report["changes"]}
    assert ("quick-summarizer", "agent-removed", "breaking") in kinds
    assert ("schema-steward", "capability-off", "breaking") in kinds
    assert ("schema-steward", "skill-added", "additive") in kinds
    assert any(c["subject"] == "domain" and c["kind"] == "domain-lost-agent" for c in report["changes"])


def test_a_hosts_root_card_and_its_ai_catalog_are_compared(knoc: Knoc, repo: Path) -> None:
    """knoc.toml alone moves what a host serves at its root (where A2A
    clients look a host up) and what its AI Catalog says of the host."""
    host = "agents.possibility.space"
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")

    def changes() -> set[tuple[str, str, str, str | None, str | None]]:
        code, out, _ = knoc("diff", "--base", "main", "--format", "json", root=repo)
        assert code == 0  # reporting only
        return {(c["name"], c["kind"], c["class"], c["before"], c["after"]) for c in json.loads(out)["changes"]}

    edit(repo / "knoc.toml", f'"{host}" = "catalog-search"', f'"{host}" = "schema-steward"')
    assert changes() == {(host, "root-card-changed", "breaking", "catalog-search", "schema-steward")}
    edit(repo / "knoc.toml", f'"{host}" = "schema-steward"\n', "")
    assert changes() == {(host, "root-card-removed", "breaking", "catalog-search", None)}
    (repo / "knoc.toml").write_text((repo / "knoc.toml").read_text(encoding="utf-8").replace(
        "[primary]", '[host]\ndisplay_name = "Example Org"\n\n[primary]', 1) + f'"{host}" = "catalog-search"\n',
        encoding="utf-8")
    found = changes()
    assert {(name, kind, cls) for name, kind, cls, _, _ in found} == {
        (h, "ai-catalog-changed", "cosmetic") for h in ("agents.possibility.space", "api.possibility.space",
                                                        "realms.possibility.space")}
    assert all("Example Org" in (after or "") for *_, after in found)


def test_an_extensions_params_narrowed_under_its_uri_is_breaking(knoc: Knoc, repo: Path) -> None:
    """Its URI promises the params it accepted stay accepted; widening keeps
    the promise, and is said as additive."""
    extension = repo / "content/extensions/review-trace.kno"
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    edit(extension, "enum: [sarif, junit, markdown]", "enum: [sarif, junit, markdown, html]")
    code, out, _ = knoc("diff", "--base", "main", "--format", "json", "--fail-on", "breaking", root=repo)
    [change] = json.loads(out)["changes"]
    assert code == 0 and (change["subject"], change["kind"], change["class"]) == (
        "extension", "params-widened", "additive")
    assert "html" in change["message"], change
    edit(extension, "enum: [sarif, junit, markdown, html]", "enum: [sarif, junit]")
    code, out, _ = knoc("diff", "--base", "main", "--format", "json", "--fail-on", "breaking", root=repo)
    [change] = json.loads(out)["changes"]
    assert code == 1 and (change["subject"], change["kind"], change["class"]) == (
        "extension", "params-narrowed", "breaking")
    assert json.loads(change["after"]) == {"format": "markdown"}  # params the old schema took, refused now
    code, out, _ = knoc("diff", "--base", "main", "--format", "sarif", root=repo)
    [result] = [r for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == "KNO-CARD-BREAKING"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("review-trace.kno")
    assert "a new URI" in result["message"]["text"] + json.dumps(result)  # its hint: not an agent's version
    edit(extension, "$schema: extension@0.1.0", '$schema: "extension\\x400.1.0"')  # an escape spells the same
    code, out, _ = knoc("diff", "--base", "main", "--format", "json", root=repo)
    assert [c["kind"] for c in json.loads(out)["changes"]] == ["params-narrowed"]


def test_no_change_is_said_plainly(knoc: Knoc, two_commits: Path) -> None:
    code, out, _ = knoc("diff", "--base", "HEAD", "--fail-on", "breaking", root=two_commits)
    assert code == 0 and "No public wire changes." in out


def test_breaking_changes_as_annotations(knoc: Knoc, two_commits: Path) -> None:
    code, out, _ = knoc("diff", "--format", "github", "--fail-on", "breaking", root=two_commits)
    assert code == 1
    assert f"::error file={STEWARD},title=KNO-CARD-BREAKING::agent `schema-steward`" in out


def test_an_unknown_ref_is_a_usage_error(knoc: Knoc, two_commits: Path) -> None:
    code, _, err = knoc("diff", "--base", "no-such-branch", root=two_commits)
    assert code == 2 and "error[KNO-GIT]" in err and "Traceback" not in err


def test_outside_git_is_a_usage_error(knoc: Knoc, repo: Path) -> None:
    code, _, err = knoc("diff", root=repo)
    assert code == 2 and "error[KNO-GIT]" in err and "not a git repository" in err and "inside a git" in err


def card(**kw: Any) -> dict[str, Any]:
    return {"name": "a", "url": "https://x", "defaultInputModes": ["text/plain", "image/png"],
            "capabilities": {"extensions": [{"uri": "urn:e", "params": {"v": 1}}]}, "skills": [], **kw}


@pytest.mark.parametrize(("new", "kind", "cls"), [
    (card(defaultInputModes=["text/plain"]), "input-modes-narrowed", "breaking"),
    (card(defaultInputModes=["text/plain", "image/png", "audio/wav"]), "input-modes-widened", "additive"),
    (card(capabilities={}), "extension-removed", "breaking"),
    (card(capabilities={"extensions": [{"uri": "urn:e", "params": {"v": 2}}]}), "extension-changed", "breaking"),
    (card(capabilities={"extensions": [{"uri": "urn:e", "params": {"v": 1}}, {"uri": "urn:r", "required": True}]}),
     "extension-added", "breaking"),
    (card(capabilities={"extensions": [{"uri": "urn:e", "params": {"v": 1}}, {"uri": "urn:o"}]}),
     "extension-added", "additive"),
    (card(url="https://y"), "url-changed", "breaking"),
    (card(version="2.0.0"), "version-changed", "cosmetic"),
])
def test_change_classes(new: dict[str, Any], kind: str, cls: str) -> None:
    changes = compare(Publication({"a": card()}, {}), Publication({"a": new}, {}))
    assert [(c.kind, c.cls) for c in changes] == [(kind, cls)]  # a url moved: one row, not its interface's two


def contract_card(**params: Any) -> dict[str, Any]:
    """A 0.3 card (protocolVersion 0.3.0) with a capability-contract entry."""
    entry = {"uri": CONTRACT_URI, "required": False, "params": params}
    return {"name": "a", "url": "https://x", "protocolVersion": "0.3.0", "skills": [],
            "capabilities": {"extensions": [entry]}}


BASE = {"minProtocolVersion": "0.3.0", "maxProtocolVersion": "1.0", "capabilities": {"contextReuse": True}}


@pytest.mark.parametrize(("params", "kind", "cls", "message"), [
    ({**BASE, "capabilities": {"contextReuse": False}}, "capability-off", "breaking",
     "capability `contextReuse` turned off"),
    ({**BASE, "capabilities": {"contextReuse": True, "pauseResume": True}}, "capability-on", "additive",
     "capability `pauseResume` turned on"),
    ({**BASE, "maxProtocolVersion": "0.3.0"}, "protocol-narrowed", "breaking",
     "no longer accepts A2A `1.0`"),
    ({**BASE, "maxProtocolVersion": "1.1"}, "protocol-widened", "additive",
     "now accepts A2A `1.1`"),
])
def test_contract_changes_are_classed_as_flags_and_versions(params: dict[str, Any], kind: str, cls: str,
                                                            message: str) -> None:
    """The capability-contract entry is not one opaque extension change."""
    changes = compare(Publication({"a": contract_card(**BASE)}, {}), Publication({"a": contract_card(**params)}, {}))
    assert [(c.kind, c.cls, c.message) for c in changes] == [(kind, cls, message)]
    if kind.startswith("protocol"):
        assert changes[0].before == "0.3.0 to 1.0" and changes[0].after in ("0.3.0", "0.3.0 to 1.1")


def test_two_refs_compare_as_a_pull_request_does(knoc: Knoc, two_commits: Path) -> None:
    """`A..B` compares two commits, whatever the work tree holds."""
    edit(two_commits / STEWARD, "name: Schema Steward", "name: Uncommitted Steward")  # not in either ref
    code, out, _ = knoc("diff", "main..feature", "--format", "json", root=two_commits)
    report = json.loads(out)
    assert code == 0 and report["base"].startswith("main (") and report["head"].startswith("feature (")
    assert ("schema-steward", "capability-off") in {(c["name"], c["kind"]) for c in report["changes"]}
    assert not any("Uncommitted" in (c["after"] or "") for c in report["changes"])
    described = next(c for c in report["changes"] if c["kind"] == "description-changed")
    assert described["before"].startswith("Reviews") and described["after"].startswith("Carefully reviews")
    assert knoc("diff", "feature..main", "--format", "json", root=two_commits)[0] == 0
    for bad in ("--output=/tmp/x..main", "main....feature"):
        assert knoc("diff", bad, "--format", "json", root=two_commits)[0] == 2, bad
    assert json.loads(knoc("diff", "main..", "--format", "json", root=two_commits)[1])["head"].startswith("HEAD (")
    assert knoc("diff", "main..feature", "--base", "main", root=two_commits)[0] == 2


def test_three_dots_compare_from_where_the_branch_left(knoc: Knoc, two_commits: Path) -> None:
    """GitHub's `A...B`: a change made on main after the branch left it is not the branch's."""
    git(two_commits, "checkout", "-q", "main")
    edit(two_commits / SEARCH, "name: Catalog Search", "name: Catalog Search On Main")
    git(two_commits, "commit", "-qam", "main moves on")
    git(two_commits, "checkout", "-q", "feature")
    two = json.loads(knoc("diff", "main..feature", "--format", "json", root=two_commits)[1])
    three = json.loads(knoc("diff", "main...feature", "--format", "json", root=two_commits)[1])
    assert three["base"].startswith("main...feature (")  # the range, then the sha of where the branch left
    assert any(c["name"] == "catalog-search" and c["kind"] == "name-changed" for c in two["changes"])
    assert not any(c["name"] == "catalog-search" and c["kind"] == "name-changed" for c in three["changes"])
    assert ("schema-steward", "capability-off") in {(c["name"], c["kind"]) for c in three["changes"]}


@pytest.mark.parametrize("inside", [False, True], ids=["out of the repo", "to itself"])
def test_a_committed_knoc_toml_linking_out_of_the_repo_is_refused(knoc: Knoc, two_commits: Path, inside: bool,
                                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    """Left out, the defaults would stand in for its settings without a word."""
    outside = tmp_path_factory.mktemp("outside") / "knoc.toml"
    outside.write_text('[knoc]\na2a = "0.3"\n', encoding="utf-8")
    to = "knoc.toml" if inside else str(outside)
    settings = (two_commits / "knoc.toml").read_text(encoding="utf-8")
    (two_commits / "knoc.toml").unlink()
    (two_commits / "knoc.toml").symlink_to(to)
    git(two_commits, "add", "knoc.toml")
    git(two_commits, "commit", "-qm", "settings from elsewhere")
    (two_commits / "knoc.toml").unlink()
    (two_commits / "knoc.toml").write_text(settings, encoding="utf-8")  # the work tree reads
    code, _, err = knoc("diff", "HEAD~1..HEAD", root=two_commits)
    assert code == 2 and f"knoc.toml at HEAD is a link to `{to}`, which knoc does not follow" in err


def test_a_major_version_bump_announces_its_breaking_changes(knoc: Knoc, two_commits: Path) -> None:
    """The gate passes breaking changes of an agent whose major version went
    up, and still fails one without a bump."""
    edit(two_commits / STEWARD, '  version: "0.3.0"', '  version: "1.0.0"')
    git(two_commits, "commit", "-qam", "bump the steward")
    code, out, _ = knoc("diff", "main..feature", "--format", "json", "--fail-on", "breaking", root=two_commits)
    report = json.loads(out)
    steward = [c for c in report["changes"] if c["name"] == "schema-steward" and c["class"] == "breaking"]
    assert steward and all(c["intended"] == "version `0.3.0` → `1.0.0`" for c in steward)
    assert code == 1 and report["counts"]["intended"] == len(steward)  # quick-summarizer's removal still fails
    edit(two_commits / SUMMARIZER, "visibility: private\n", "")
    edit(two_commits / SEARCH, "domains: [schemas]", "domains: [schemas, entity-health]")
    git(two_commits, "commit", "-qam", "keep the summarizer")
    code, out, _ = knoc("diff", "main..feature", "--fail-on", "breaking", root=two_commits)
    assert code == 0 and "breaking, intended (version `0.3.0` → `1.0.0`)" in out


def test_signatures_and_keys_are_changes(knoc: Knoc, repo: Path, signing_key: Path) -> None:
    """Stripping every signature, or a key from jwks.json, is breaking."""
    key = signing_key
    assert knoc("build", "--sign-key", str(key), root=repo)[0] == 0
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "signed")
    assert knoc("build", "--unsigned", root=repo)[0] == 0
    git(repo, "commit", "-qam", "unsigned")
    code, out, _ = knoc("diff", "main~1..main", "--format", "json", "--fail-on", "breaking", root=repo)
    kinds = {(c["subject"], c["kind"]) for c in json.loads(out)["changes"]}
    assert code == 1 and ("agent", "signatures-removed") in kinds and ("host", "keys-removed") in kinds
    code, out, _ = knoc("diff", "main..main~1", root=repo)
    assert code == 0 and "now signed" in out and "jwks.json publishes" in out


@pytest.mark.parametrize(("old", "new", "kinds"), [
    ({"securityRequirements": [{"schemes": {"a": {"list": []}}}, {"schemes": {"b": {"list": ["x", "y"]}}}]},
     {"securityRequirements": [{"schemes": {"b": {"list": ["y", "x"]}}}, {"schemes": {"a": {"list": []}}}]},
     [("security-reordered", "cosmetic")]),
    ({"security": [{"a": []}, {"b": []}]}, {"security": [{"b": []}, {"a": []}]},
     [("security-reordered", "cosmetic")]),
    ({"security": [{"a": []}, {"b": []}]}, {"security": [{"b": []}]}, [("security-changed", "breaking")]),
    ({"security": [{"a": []}]}, {"security": [{"a": []}, {}]}, [("security-widened", "additive")]),  # open too
    ({"security": [{"a": []}, {"b": []}]}, {"security": [{"a": []}, {"b": []}, {"b": []}]},
     [("security-reordered", "cosmetic")]),  # one alternative twice: the same alternatives
    ({"skills": [{"id": "s"}]}, {"skills": [{"id": "s", "security": [{}], "securityRequirements": [{"schemes": {}}]}]},
     [("skill-security-changed", "breaking")]),  # added to a compat card: one row
    ({"security": [{"a": []}], "securityRequirements": [{"schemes": {"a": {"list": []}}}]},
     {"security": [{"b": []}], "securityRequirements": [{"schemes": {"b": {"list": []}}}]},
     [("security-changed", "breaking")]),  # a compat card says it twice: one row
    ({"skills": [{"id": "s", "security": [{"a": ["x", "y"]}]}]}, {"skills": [{"id": "s", "security": [{"a": ["y", "x"]}]}]},
     [("skill-security-reordered", "cosmetic")]),
    ({"defaultInputModes": ["text/plain", "image/png"], "skills": [{"id": "s"}, {"id": "t"}]},
     {"defaultInputModes": ["text/plain"], "skills": [{"id": "s"}, {"id": "t"}]},
     [("input-modes-narrowed", "breaking")]),  # once: the skills that take the card's modes follow it
])
def test_what_a_client_reads_the_same_is_not_breaking(old: dict[str, Any], new: dict[str, Any],
                                                      kinds: list[tuple[str, str]]) -> None:
    """Security requirements are alternatives, their scopes a set: the same
    in another order asks nothing new of a client. One change is one row."""
    changes = compare(Publication({"a": card(**old)}, {}), Publication({"a": card(**new)}, {}))
    assert [(c.kind, c.cls) for c in changes] == kinds, changes


@pytest.mark.parametrize(("old", "new", "kind"), [
    ({"supportedInterfaces": [{"url": "https://x/a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                              {"url": "x:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]},
     {"supportedInterfaces": [{"url": "https://x/a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]},
     "interface-removed"),
    ({"skills": [{"id": "s", "securityRequirements": [{"schemes": {"k": {"list": ["a"]}}}]}]},
     {"skills": [{"id": "s", "securityRequirements": [{"schemes": {"k": {"list": ["b"]}}}]}]},
     "skill-security-changed"),
    ({"defaultInputModes": ["text/plain", "application/json"], "skills": [{"id": "s"}]},
     {"defaultInputModes": ["text/plain", "application/json"], "skills": [{"id": "s", "inputModes": ["text/plain"]}]},
     "input-modes-narrowed"),
])
def test_what_the_cold_look_found_hidden_is_breaking(old: dict[str, Any], new: dict[str, Any], kind: str) -> None:
    changes = compare(Publication({"a": card(**old)}, {}), Publication({"a": card(**new)}, {}))
    assert (kind, "breaking") in {(c.kind, c.cls) for c in changes}, changes


def test_a_key_swapped_under_the_same_kid_is_breaking() -> None:
    base = Publication({}, {}, keys={"h": ("main (aaaaaaaaaaaa)",)})
    head = Publication({}, {}, keys={"h": ("main (bbbbbbbbbbbb)",)})
    assert ("keys-removed", "breaking") in {(c.kind, c.cls) for c in compare(base, head)}


def test_what_gitattributes_hide_from_git_archive_is_still_compared(knoc: Knoc, two_commits: Path) -> None:
    """diff reads blobs as committed: export-ignore does not hide a file."""
    (two_commits / ".gitattributes").write_text("content/** export-ignore\n", encoding="utf-8")
    git(two_commits, "add", ".gitattributes")
    git(two_commits, "commit", "-qm", "attributes")
    code, out, _ = knoc("diff", "main..feature", "--format", "json", root=two_commits)
    assert code == 0 and ("schema-steward", "capability-off") in {(c["name"], c["kind"])
                                                                  for c in json.loads(out)["changes"]}


def test_a_target_change_and_a_renamed_slug(knoc: Knoc, two_commits: Path) -> None:
    """knoc.toml's A2A target is a breaking change; a slug renamed keeps its
    agent (same source file and url): no removal and addition."""
    edit(two_commits / "knoc.toml", 'a2a = "1.0"', 'a2a = "0.3"')
    edit(two_commits / STEWARD, "slug: schema-steward", "slug: spec-steward")
    code, out, _ = knoc("diff", "--base", "feature", "--format", "json", root=two_commits)
    report = json.loads(out)
    kinds = {(c["name"], c["kind"]): c for c in report["changes"]}
    target = kinds[("knoc.toml", "target-changed")]
    assert code == 0 and (target["class"], target["before"], target["after"]) == ("breaking", "1.0", "0.3")
    assert kinds[("spec-steward", "agent-renamed")]["before"] == "schema-steward"
    assert not any(c["kind"] in ("agent-removed", "agent-added") for c in report["changes"]), report["changes"]


@pytest.mark.parametrize("fmt", ["markdown", "json", "text", "sarif", "github", "junit"])
def test_fail_on_warning_fails_on_a_breaking_change_in_every_format(knoc: Knoc, two_commits: Path, fmt: str) -> None:
    assert knoc("diff", "main..feature", "--format", fmt, "--fail-on", "warning", root=two_commits)[0] == 1
    assert knoc("diff", "main..feature", "--format", fmt, root=two_commits)[0] == 0


def test_backticks_in_a_card_stay_inside_their_code_span() -> None:
    """A skill id or description with backticks cannot close the span and
    write Markdown of its own into the pull-request comment."""
    from knoc.features.diff_comment import markdown

    skill = {"id": "x` **bold** `y", "name": "n", "description": "has ``two`` ticks", "tags": []}
    changed = dict(skill, description="now `one`")
    found = compare(Publication({"a": card(skills=[skill])}, {}), Publication({"a": card(skills=[changed])}, {}))
    out = markdown(found, "base", "head", "1.0")
    assert "skill `` x` **bold** `y `` " in out
    assert "| ``` has ``two`` ticks ``` | `` now `one` `` |" in out


def test_a_renamed_agent_keeps_its_signatures_and_a_submodule_is_named(
        knoc: Knoc, two_commits: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A rename compares the agent's signatures under its old slug; a
    content folder that is a submodule is a usage error, not a compile error."""
    from knoc.features.diff import Publication

    old = Publication({"a": card()}, {}, signed={"a": ("k1",)}, sources={"a": "content/a.kno"})
    new = Publication({"b": card(url="https://elsewhere")}, {}, signed={"b": ("k1",)}, sources={"b": "content/a.kno"})
    kinds = [c.kind for c in compare(old, new) if c.name == "b"]
    assert "agent-renamed" in kinds and "url-changed" in kinds and not any("sign" in k for k in kinds), kinds
    other = tmp_path_factory.mktemp("other")
    git(other, "init", "-q", "-b", "main")
    (other / "README.md").write_text("not an entity\n", encoding="utf-8")
    git(other, "add", "-A")
    git(other, "commit", "-qm", "x")
    git(two_commits, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other), "content/vendored")
    git(two_commits, "commit", "-qm", "a submodule")
    code, _, err = knoc("diff", "--base", "HEAD", root=two_commits)
    assert code == 2 and "content/vendored is a git submodule" in err, err


def test_a_ref_whose_knoc_toml_is_broken_is_a_usage_error(knoc: Knoc, two_commits: Path) -> None:
    (two_commits / "knoc.toml").write_text("[knoc]\nbogus = 1\n", encoding="utf-8")
    git(two_commits, "commit", "-qam", "a broken knoc.toml")
    (two_commits / "knoc.toml").write_text("", encoding="utf-8")  # the work tree's is fine
    code, _, err = knoc("diff", "--base", "HEAD", root=two_commits)
    assert code == 2 and "KNO-CONFIG" in err and "at HEAD" in err and "Traceback" not in err, err


def test_an_agent_is_its_id(knoc: Knoc, two_commits: Path) -> None:
    """Pairing follows the entity id: a pure rename stays routed where it
    was (nothing breaking), two swapped slugs are two renames, and another
    agent at a removed agent's url is a removal and an addition."""
    git(two_commits, "checkout", "-q", "main")
    git(two_commits, "checkout", "-qb", "renames")
    for rel in (STEWARD, SEARCH, SUMMARIZER, "content/agent-blueprints/drift-sentinel.kno",
                "content/agent-blueprints/ledger-auditor.kno", "knoc.toml"):
        path = two_commits / rel
        text = path.read_text(encoding="utf-8")
        for lead in ("slug: ", "kno://agent-blueprints/", '= "'):  # the slugs, never the urls
            text = (text.replace(lead + "catalog-search", lead + "SWAP")
                    .replace(lead + "quick-summarizer", lead + "catalog-search")
                    .replace(lead + "SWAP", lead + "quick-summarizer")
                    .replace(lead + "schema-steward", lead + "spec-steward"))
        path.write_text(text, encoding="utf-8")
    git(two_commits, "commit", "-qam", "renames")
    code, out, _ = knoc("diff", "main..renames", "--format", "json", "--fail-on", "breaking", root=two_commits)
    report = json.loads(out)
    renamed = {(c["before"], c["after"]) for c in report["changes"] if c["kind"] == "agent-renamed"}
    assert renamed >= {("schema-steward", "spec-steward"), ("catalog-search", "quick-summarizer"),
                       ("quick-summarizer", "catalog-search")}, report["changes"]
    assert code == 0 and report["counts"]["breaking"] == 0 and report["counts"]["intended"] == 0, report["changes"]
    assert not any(c["subject"] == "domain" for c in report["changes"])
    git(two_commits, "checkout", "-q", "main")
    git(two_commits, "checkout", "-qb", "replaced")
    summarizer = (two_commits / SUMMARIZER).read_text(encoding="utf-8")
    old_id = next(line for line in summarizer.splitlines() if line.startswith("id:"))
    (two_commits / SUMMARIZER).write_text(summarizer.replace(old_id, "id: 01KKV1NEWAGENT000000000001"),
                                          encoding="utf-8")
    git(two_commits, "commit", "-qam", "another agent in its place")
    report = json.loads(knoc("diff", "main..replaced", "--format", "json", root=two_commits)[1])
    kinds = {(c["name"], c["kind"]) for c in report["changes"]}
    assert {("quick-summarizer", "agent-removed"), ("quick-summarizer", "agent-added")} <= kinds, kinds


def test_a_ref_that_does_not_compile_or_names_an_unknown_target(knoc: Knoc, two_commits: Path) -> None:
    edit(two_commits / "knoc.toml", 'a2a = "1.0"', 'a2a = "9.9"')
    git(two_commits, "commit", "-qam", "an unknown target")
    git(two_commits, "tag", "unknown-target")
    edit(two_commits / "knoc.toml", 'a2a = "9.9"', 'a2a = "1.0"')
    git(two_commits, "commit", "-qam", "back")
    code, _, err = knoc("diff", "unknown-target..HEAD", root=two_commits)
    assert code == 2 and "KNO-CONFIG" in err and "at unknown-target" in err, err
    (two_commits / SEARCH).write_text("name: [broken\n", encoding="utf-8")
    git(two_commits, "commit", "-qam", "broken")
    git(two_commits, "tag", "broken")
    git(two_commits, "checkout", "-q", "main")
    code, _, err = knoc("diff", "main..broken", root=two_commits)
    assert code == 1 and "the sources at broken" in err and "-->" not in err, err  # no excerpt from the work tree


def test_a_side_that_does_not_compile_is_still_answered_in_the_format_asked_for(knoc: Knoc, two_commits: Path) -> None:
    """A script reading `--format json` gets a JSON document saying why
    nothing was compared; a pull request's comment says it too."""
    (two_commits / SEARCH).write_text("name: [broken\n", encoding="utf-8")
    git(two_commits, "commit", "-qam", "broken")
    code, out, err = knoc("diff", "main..HEAD", "--format", "json", root=two_commits)
    answer = json.loads(out)
    assert code == 1 and answer["compared"] is False and answer["base"].startswith("main ("), err
    assert "do not compile" in answer["error"] and answer["head"].startswith("HEAD")
    sha = answer["head"].split("(")[1].rstrip(")")
    assert f"`git switch --detach {sha}`" in answer["error"]  # a command that runs as written
    code, out, _ = knoc("diff", "main..HEAD", root=two_commits)
    assert code == 1 and "Not compared: the sources at HEAD" in out
    for fmt in ("sarif", "junit", "github"):  # a CI step that uploads the report shows the failure
        code, out, err = knoc("diff", "main..HEAD", "--format", fmt, root=two_commits)
        assert code == 1 and "KNO-DIFF-NOT-COMPARED" in out + err, (fmt, out, err)
    code, out, err = knoc("diff", "main..HEAD~1", "--format", "json", root=two_commits)
    assert json.loads(out)["compared"] is True, (out, err)


def test_no_value_in_a_pull_request_can_rewrite_its_comment() -> None:
    """Every value the comment shows comes from the pull request: a version,
    an extension's URI, an enum value, a spec's property. Rendered as a
    forge renders Markdown, none ends its cell, opens an HTML comment that
    hides the rows after it, or writes markup of its own."""
    from markdown_it import MarkdownIt

    from knoc.features.diff import Change
    from knoc.features.diff_comment import markdown

    hostile = "x`**<ins>No public wire changes.</ins>**`<!--\n\n| fake | row |\n<!--"
    changes = [
        Change("agent", "a", "skill-removed", "breaking", f"skill `{hostile}` removed", hostile, None,
               intended=f"version 0.1.0 -> {hostile}"),
        Change("extension", f"https://x.example/{hostile}", "params-widened", "additive",
               f"its params schema now also accepts params the old one refused (`enum` now also allows "
               f"`\"{hostile}\"`)"),
        Change("agent", "b", "skill-added", "additive", "skill `last` added", None, "Last"),
    ]
    spec = {"slug": hostile, "old_version": "1.0.0", "new_version": hostile, "bump": "", "class": "breaking",
            "changes": [{"class": "breaking", "pointer": f"/properties/{hostile}", "why": hostile}]}
    text = markdown(changes, hostile, "head", "1.0", [spec])
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    assert not [t for t in tokens if t.type in ("html_block", "html_inline")]
    inline = [c for t in tokens if t.children for c in t.children]
    assert not [c for c in inline if c.type == "html_inline"]
    strong = {inline[i + 1].content for i, c in enumerate(inline) if c.type == "strong_open"}
    assert strong == {"0 breaking", "breaking"}  # knoc's own: the count, and the specs' class
    rows = [t for t in tokens if t.type == "tr_open"]
    assert len(rows) == 2 + 2 + 2 + 2  # each group's header and one row a change; the specs' header and row
    paragraphs = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "paragraph_open"]
    assert not [p for p in paragraphs if "No public wire changes." in p and "→" not in p]  # the header holds it
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<ins>" not in html and "<strong>No public" not in html and "Last" in html


def test_every_sarif_result_is_placed_for_code_scanning(knoc: Knoc, two_commits: Path) -> None:
    """GitHub code scanning refuses an upload holding a result placed
    nowhere: an agent made private is placed at its file, a domain's change
    at the domain's; every finding of a diff not compared, at knoc.toml."""
    code, out, _ = knoc("diff", "main..feature", "--format", "sarif", root=two_commits)
    results = json.loads(out)["runs"][0]["results"]
    assert code == 0 and len(results) >= 3
    uris = {r["message"]["text"].split(":")[0]: r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in results}
    assert uris["agent `quick-summarizer`"] == SUMMARIZER, uris
    assert uris["domain `entity-health`"] == "content/perception-domains/entity-health.kno", uris
    (two_commits / SEARCH).write_text("name: [broken\n", encoding="utf-8")
    code, out, _ = knoc("diff", "--base", "main", "--format", "sarif", root=two_commits)
    results = json.loads(out)["runs"][0]["results"]
    assert code == 1 and results and all(r.get("locations") for r in results), results


def test_a_repo_in_a_folder_of_its_git_tree_is_named_from_the_top(knoc: Knoc, tmp_path: Path, repo: Path) -> None:
    """SARIF, GitHub annotations and JUnit name files as the forge does, from
    the work tree's top: a content repo in `cards/` is `cards/content/...`."""
    top, folder = tmp_path / "mono", "my cards#1"
    shutil.copytree(repo, top / folder)
    git(top, "init", "-q", "-b", "main")
    (top / folder / STEWARD).write_text("name: [broken\n", encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "sarif", root=top / folder)
    [uri] = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in json.loads(out)["runs"][0]["results"]
             for loc in r["locations"]}
    assert code == 1 and uri == f"my%20cards%231/{STEWARD}"  # a URI reference: the space and `#` escaped
    code, out, err = knoc("validate", "--format", "github", root=top / folder)
    assert f"file={folder}/{STEWARD}," in out + err
    code, out, _ = knoc("validate", "--format", "junit", root=top / folder)
    assert f'file="{folder}/{STEWARD}"' in out and f'name="{STEWARD}"' in out
    code, out, _ = knoc("validate", "--format", "json", root=top / folder)
    assert {d["file"] for d in json_diags(out)} == {STEWARD}  # knoc's own formats stay repo-relative
    card = tmp_path / "card.json"  # a file outside the repo is named as it is, with no prefix
    card.write_text('{"name": "x", "bogus": 1}', encoding="utf-8")
    code, out, err = knoc("import", str(card), "--format", "github", root=top / folder)
    assert f"file={card}," in out + err and f"{folder}/{card}" not in out + err
    code, out, _ = knoc("diff", "--base", "no such", "--format", "sarif", root=top / folder)  # a usage error, placed
    [result] = json.loads(out)["runs"][0]["results"]
    assert code == 2 and result["ruleId"] == "KNO-GIT" and result["locations"], result


def test_a_committed_link_out_of_the_repo_is_refused_at_its_ref(knoc: Knoc, two_commits: Path,
                                                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    """A build of that commit refuses the link, so a diff of it is no
    comparison: left out without a word, the rest read as all there was."""
    outside = tmp_path_factory.mktemp("outside") / "agent.kno"
    outside.write_text((two_commits / SEARCH).read_text(encoding="utf-8").replace("catalog-search", "outside-agent"),
                       encoding="utf-8")
    (two_commits / "content/agent-blueprints/outside-agent.kno").symlink_to(outside)
    git(two_commits, "add", "-A")
    git(two_commits, "commit", "-qm", "a link out")
    git(two_commits, "checkout", "-q", "main")
    code, out, err = knoc("diff", "main..feature", root=two_commits)
    assert code == 1 and "Not compared: the sources at feature" in out, (out, err)
    assert "error[KNO-IO-REFUSED]: at feature" in err and "content/agent-blueprints/outside-agent.kno" in err


def test_one_ref_is_compared_with_the_work_tree_as_git_diff_reads_it(knoc: Knoc, two_commits: Path) -> None:
    git(two_commits, "checkout", "-q", "main")
    edit(two_commits / STEWARD, "    streaming: true", "    streaming: false")
    one = knoc("diff", "feature", "--format", "json", root=two_commits)
    based = knoc("diff", "--base", "feature", "--format", "json", root=two_commits)
    assert one[0] == based[0] == 0 and json.loads(one[1]) == json.loads(based[1])
    assert json.loads(one[1])["head"] == "work tree" and json.loads(one[1])["changes"]
    code, _, err = knoc("diff", "feature..", "--base", "main", root=two_commits)
    assert code == 2 and "not both" in err


def test_a_base_branch_not_fetched_is_named_with_the_fetch_that_brings_it(knoc: Knoc, two_commits: Path) -> None:
    code, _, err = knoc("diff", "origin/main...HEAD", root=two_commits)
    assert code == 2 and "`origin/main` is not a branch" in err and "`git fetch origin main`" in err, err


def test_a_large_file_at_a_ref_is_read_no_more_than_a_build_reads_it(knoc: Knoc, two_commits: Path) -> None:
    """An asset of megabytes is skipped as it streams from git, not held;
    a source past the size limit is still refused at its ref, as a build
    of that commit refuses it."""
    from knoc.rules import limits

    (two_commits / "content/assets").mkdir()
    (two_commits / "content/assets/logo.bin").write_bytes(b"\0" * (3 * limits.SOURCE_BYTES))
    git(two_commits, "add", "-A")
    git(two_commits, "commit", "-qm", "an asset")
    code, out, _ = knoc("diff", "main..feature", "--format", "json", root=two_commits)
    assert code == 0 and json.loads(out)["compared"] is True
    big = two_commits / "content/agent-blueprints/huge.kno"
    big.write_text("# " + "x" * (2 * limits.SOURCE_BYTES) + "\n", encoding="utf-8")
    git(two_commits, "add", "-A")
    git(two_commits, "commit", "-qm", "a source past the limit")
    code, out, _ = knoc("diff", "main..feature", "--format", "json", root=two_commits)
    assert code == 1 and json.loads(out)["compared"] is False


@pytest.mark.parametrize("hostile", ["empty link", "long link", "long name", "submodule"])
def test_what_a_commit_holds_that_no_checkout_can_make_is_refused_not_a_crash(knoc: Knoc, two_commits: Path,
                                                                            hostile: str) -> None:
    """A commit can hold what this system cannot make: a link to nothing
    at all, a link or name past the system's limits, another repository.
    In content/ it is refused at its ref (the diff is not compared); anywhere
    else the rest is compared. Never a bug (exit 3)."""
    def blob(data: bytes) -> str:
        return subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=two_commits, input=data,
                              capture_output=True, check=True).stdout.decode().strip()

    entry = {"empty link": ("120000", blob(b""), "x.kno"), "long link": ("120000", blob(b"a/" * 3000), "x.kno"),
             "long name": ("100644", blob(b"x: 1\n"), "b" * 300 + ".kno"),
             "submodule": ("160000", git(two_commits, "rev-parse", "HEAD").strip(), "theme")}[hostile]
    for folder, compared in (("docs", True), ("content/agent-blueprints", False)):
        git(two_commits, "update-index", "--add", "--cacheinfo", f"{entry[0]},{entry[1]},{folder}/{entry[2]}")
        git(two_commits, "commit", "-qm", f"{hostile} in {folder}")
        code, out, err = knoc("diff", "main..HEAD", "--format", "json", root=two_commits)
        if hostile == "submodule" and not compared:  # a checkout would hold the other repository's files
            assert code == 2 and "is a git submodule" in err, err
        else:
            assert code in (0, 1) and json.loads(out)["compared"] is compared, (folder, out, err)
        git(two_commits, "rm", "-q", "--cached", f"{folder}/{entry[2]}")
        git(two_commits, "commit", "-qm", "gone")


def test_a_comment_too_long_for_a_pull_request_says_what_it_leaves_out() -> None:
    """GitHub refuses a comment over 65,536 characters: the comment keeps
    the first changes that fit, and says how many more there are."""
    from knoc.features.diff import Change
    from knoc.features.diff_comment import COMMENT_CHARS, markdown

    changes = [Change("agent", f"agent-{i:04}", "description-changed", "cosmetic", "`description` changed",
                      "x" * 80, "y" * 80) for i in range(2000)]
    text = markdown(changes, "main", "head", "1.0")
    shown = text.count("| cosmetic |")
    assert len(text) <= COMMENT_CHARS and 0 < shown < 2000
    assert f"**{2000 - shown} more changes not shown**" in text and "--format json" in text
    assert "not shown" not in markdown(changes[:10], "main", "head", "1.0")
    one = [Change("agent", "big", "skill-described", "breaking" if i == 0 else "cosmetic", "`description` changed",
                  "x" * 300, "y" * 300) for i in range(600)]  # one agent's changes past the cap: cut inside it
    text = markdown(one, "main", "head", "1.0")
    assert len(text) <= COMMENT_CHARS and "No public wire changes" not in text and "**1 breaking**" in text
    assert "#### agent `big`" in text and "more changes not shown" in text


def test_a_key_rotated_with_the_old_one_retired_is_not_breaking() -> None:
    """The signing guide's rotation: cards signed by the new key, the old
    one still in jwks.json (retired). Copies it signed still verify; only
    dropping it from the key sets breaks them."""
    before = Publication({"a": card()}, {}, signed={"a": ("old",)}, keys={"h": ("old (t1)",)})  # as jwks.json has them
    rotated = Publication({"a": card()}, {}, signed={"a": ("new",)}, keys={"h": ("new (t2)", "old (t1)")})
    dropped = Publication({"a": card()}, {}, signed={"a": ("new",)}, keys={"h": ("new (t2)",)})
    swapped = Publication({"a": card()}, {}, signed={"a": ("old",)}, keys={"h": ("old (t3)",)})  # another key, one kid
    assert [(c.kind, c.cls) for c in compare(before, rotated)] == [("signing-keys-rotated", "cosmetic"),
                                                                   ("keys-added", "additive")]
    assert {(c.kind, c.cls) for c in compare(rotated, dropped)} == {("keys-removed", "breaking")}
    assert ("signing-keys-changed", "breaking") in {(c.kind, c.cls) for c in compare(before, dropped)}
    assert ("keys-removed", "breaking") in {(c.kind, c.cls) for c in compare(before, swapped)}
    both = Publication({"a": card()}, {}, signed={"a": ("new", "old")}, keys={"h": ("new (t2)", "old (t1)")})
    [fewer] = [c for c in compare(both, rotated) if c.kind == "signing-keys-rotated"]  # mid-rotation, one key left out
    assert fewer.message.startswith("signed by fewer keys; each one it is no longer signed by stays in jwks.json")


@pytest.mark.parametrize("at", [0, 150, 197, 198, 199, 200, 300])
def test_a_long_value_shows_where_it_changed(at: int) -> None:
    from knoc.features.diff import shown

    old, new = "a" * at + "X" + "b" * 300, "a" * at + "Y" + "b" * 300
    assert shown(old, new) != shown(new, old) and "X" in (shown(old, new) or "")


def test_a_long_value_that_changed_late_is_shown_where_it_changed() -> None:
    old = card(description="A" * 300 + " the end")
    new = card(description="A" * 300 + " a new end")
    [change] = compare(Publication({"a": old}, {}), Publication({"a": new}, {}))
    assert change.before != change.after and change.before and change.before.startswith("…")
    assert "the end" in change.before and "a new end" in (change.after or "")


def test_accepted_breaking_changes_do_not_fail_the_diff_under_fail_on_warning(knoc: Knoc, two_commits: Path) -> None:
    """`knoc diff --fail-on warning` fails on each breaking change (a
    warning), unless knoc.toml accepts them; the summary counts them, and
    `--fail-on breaking` stays the gate it is."""
    code, out, err = knoc("diff", "--base", "main", "--fail-on", "warning", "--format", "sarif", root=two_commits)
    assert code == 1 and err.strip().splitlines()[-1].startswith("failed: 3 warnings in ")
    config = two_commits / "knoc.toml"
    config.write_text(config.read_text(encoding="utf-8") + '\n[accept]\nKNO-CARD-BREAKING = ["*"]\n', encoding="utf-8")
    code, out, err = knoc("diff", "--base", "main", "--fail-on", "warning", "--format", "sarif", root=two_commits)
    assert code == 0 and json.loads(out)["runs"][0]["results"] == []
    assert err.strip().splitlines()[-1].startswith("ok: 3 accepted warnings (KNO-CARD-BREAKING) in ")
    for fmt in ("text", "json", "github"):  # however the changes are reported, the summary counts them
        code, out, err = knoc("diff", "--base", "main", "--fail-on", "warning", "--format", fmt, root=two_commits)
        assert code == 0 and err.strip().splitlines()[-1].startswith("ok: 3 accepted warnings (KNO-CARD-BREAKING) in "), (fmt, err)
    code, out, err = knoc("diff", "--base", "main", "--fail-on", "breaking", "--format", "sarif", root=two_commits)
    assert code == 1 and err.strip().splitlines()[-1].startswith("error: 3 errors in ")  # not accepted: errors


def test_a_domains_breaking_change_names_its_file_and_can_be_accepted_there(knoc: Knoc, two_commits: Path) -> None:
    """A perception domain that loses an agent is said at the domain's
    source, so `[accept]` can name that file rather than `"*"`."""
    domain = "content/perception-domains/entity-health.kno"
    code, out, err = knoc("diff", "--base", "main", "--fail-on", "warning", "--format", "sarif", root=two_commits)
    results = json.loads(out)["runs"][0]["results"]
    [lost] = [r for r in results if "domain `entity-health`" in r["message"]["text"]]
    assert lost["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == domain
    config = two_commits / "knoc.toml"
    config.write_text(config.read_text(encoding="utf-8") + f'\n[accept]\nKNO-CARD-BREAKING = ["{domain}"]\n',
                      encoding="utf-8")
    code, out, err = knoc("diff", "--base", "main", "--fail-on", "warning", "--format", "sarif", root=two_commits)
    assert code == 1 and len(json.loads(out)["runs"][0]["results"]) == len(results) - 1  # the two agents' stay
    assert "1 accepted warning (KNO-CARD-BREAKING)" in err


def test_a_base_that_does_not_compile_for_the_new_target_says_how_to_compare(knoc: Knoc, repo: Path) -> None:
    """Both sides are compiled for this run's target: a base written for
    1.0 only does not compile for 0.3, and the answer says to compare
    under the old target, which reports the change of target as breaking."""
    edit(repo / SUMMARIZER, 'protocol_versions: ["1.0", "0.3"]', 'protocol_versions: ["1.0"]')
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    edit(repo / "knoc.toml", 'a2a = "1.0"', 'a2a = "0.3"')
    edit(repo / SUMMARIZER, 'protocol_versions: ["1.0"]', 'protocol_versions: ["1.0", "0.3"]')
    code, _, err = knoc("diff", root=repo)
    assert code == 1 and "do not compile for A2A 0.3" in err and "`knoc diff --a2a 1.0`" in err, err
    code, out, err = knoc("diff", "--a2a", "1.0", "--format", "json", root=repo)
    [target] = [c for c in json.loads(out)["changes"] if "target" in c["message"]]
    assert code == 0 and target["class"] == "breaking" and (target["before"], target["after"]) == ("1.0", "0.3")
    edit(repo / "knoc.toml", 'a2a = "0.3"', 'a2a = "1.0"')  # no change of target: --a2a alone is not one
    code, _, err = knoc("diff", "--a2a", "0.3", root=repo)
    assert code == 1 and "the target given with --a2a" in err and "change of target" not in err, err


def test_a_head_that_does_not_compile_for_the_a2a_given_says_so(knoc: Knoc, repo: Path) -> None:
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    edit(repo / SUMMARIZER, 'protocol_versions: ["1.0", "0.3"]', 'protocol_versions: ["1.0"]')  # 1.0 only now
    git(repo, "commit", "-qam", "head")
    code, _, err = knoc("diff", "--a2a", "0.3", "HEAD~1..HEAD", root=repo)
    assert code == 1 and "the target given with --a2a" in err and "git switch" not in err, err


def test_a_work_tree_that_does_not_compile_is_counted_in_the_comment_not_quoted(knoc: Knoc, two_commits: Path) -> None:
    """The comment may be public: it says how many errors and where they
    are listed, and names no file of the repo."""
    edit(two_commits / STEWARD, "slug: schema-steward", "slug: Schema_Steward")
    code, out, _ = knoc("diff", "main", "--format", "markdown", root=two_commits)
    assert code == 1 and "does not compile (1 error, listed in the job's log and by `knoc validate`)" in out, out
    assert "schema-steward" not in out and "Schema_Steward" not in out


def test_absolute_folder_settings_name_the_refs_folders_too(repo: Path, knoc: Knoc) -> None:
    """knoc.toml may name its folders by absolute path inside the repo; at
    the base ref (checked out elsewhere) they name that checkout's folders,
    as a build there would read them."""
    edit(repo / "knoc.toml", 'output = "build"', f'output = "{(repo / "build").as_posix()}"')
    edit(repo / "knoc.toml", 'content = "content"', f'content = "{(repo / "content").as_posix()}"')
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    edit(repo / STEWARD, "  description: Reviews", "  description: Carefully reviews")
    code, out, err = knoc("diff", "--format", "json", root=repo)
    answer = json.loads(out)
    assert code == 0 and answer["compared"] and answer["counts"]["cosmetic"] == 1, out + err
    assert answer["counts"]["breaking"] == answer["counts"]["additive"] == 0


def test_absolute_folder_settings_are_read_at_the_ref_as_written(repo: Path, knoc: Knoc) -> None:
    """A folder moved in the work tree and linked from its old name: the
    base ref, which has the folder itself, reads the setting as written,
    not through the work tree's link."""
    edit(repo / "knoc.toml", 'content = "content"', f'content = "{(repo / "content").as_posix()}"')
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "src").mkdir()
    git(repo, "mv", "content", "src/content")
    (repo / "content").symlink_to("src/content")
    code, out, err = knoc("diff", "--format", "json", root=repo)
    assert code == 0 and json.loads(out)["compared"], out + err

