"""A newcomer's first steps: `knoc init` in an empty folder builds a valid
card at once; `knoc new domain|agent|extension` and `knoc id` write fresh
ids; a repo without specs/ uses knoc's built-in specs, which `knoc specs
vendor` copies in; the layout settings of knoc.toml all work."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from knoc.cli import main
from knoc.kinds.spec import BUILTIN_SPECS
from knoc.rules.ulid import PATTERN as ULID
from tests.conftest import ROOT, Knoc, json_diags, tree
from tests.test_official_checks import assert_v10_strict


def run(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


PRIMARY = "[primary]\n" + (ROOT / "knoc.toml").read_text(encoding="utf-8").split("[primary]\n", 1)[1]  # the example's


def test_init_starts_a_repo_that_builds_a_valid_card(tmp_path: Path, knoc: Knoc) -> None:
    folder = tmp_path / "agents"
    code, _, err = run("init", str(folder))
    assert code == 0, err
    assert "nothing else written" in err and not (folder / ".knoc-cache").exists()  # what it says is so
    assert {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and "schemas" not in p.parts} == {
        "knoc.toml", ".gitignore", "content/perception-domains/greetings.kno", "content/agent-blueprints/hello-agent.kno",
        ".vscode/settings.json", ".vscode/extensions.json"}
    assert (folder / "schemas/agent-blueprint@0.4.0.schema.json").is_file()  # the editors' (tests/test_schemas_export.py)
    assert ".knoc-cache/" in (folder / ".gitignore").read_text(encoding="utf-8")
    assert "knoc build" in err and "knoc new agent" in err
    code, _, err = knoc("build", root=folder)
    assert code == 0 and "wrote 1 card" in err
    cards = {rel: body for rel, body in tree(folder / "build").items() if rel.endswith("agent-card.json")}
    # its card, and the same bytes at its host's root (the host's only agent: A2A 8.2's well-known path)
    assert sorted(cards) == ["site/agents.example.com/.well-known/agent-card.json",
                             "site/agents.example.com/hello-agent/.well-known/agent-card.json"]
    assert len(set(cards.values())) == 1
    assert_v10_strict(json.loads(next(iter(cards.values()))))
    domains = json.loads((folder / "build/index/domains.json").read_text(encoding="utf-8"))
    assert domains == {"domains": {"greetings": ["hello-agent"]}}


@pytest.mark.parametrize(("url", "slug"), [("https://agents.fleet.io/triage", "triage"),
                                         ("https://agents.fleet.io/a2a/triage-bot/", "triage-bot"),
                                         ("https://agents.fleet.io/", "hello-agent"),
                                         ("https://agents.fleet.io/Not_A_Slug", "hello-agent")])
def test_init_names_its_agent_after_its_url(tmp_path: Path, url: str, slug: str) -> None:
    """The first agent is the one its url names, not a `hello-agent` at `/triage`."""
    folder = tmp_path / "agents"
    code, _, err = run("init", str(folder), "--url", url)
    blueprint = folder / f"content/agent-blueprints/{slug}.kno"
    assert code == 0 and blueprint.is_file() and f"\nslug: {slug}\n" in blueprint.read_text(encoding="utf-8"), err


def test_init_never_replaces_a_file(tmp_path: Path) -> None:
    (tmp_path / "knoc.toml").write_text("# mine\n", encoding="utf-8")
    code, _, err = run("init", str(tmp_path))
    assert code == 2 and "KNO-EXISTS" in err and "nothing was written" in err
    assert (tmp_path / "knoc.toml").read_text(encoding="utf-8") == "# mine\n"
    assert not (tmp_path / "content").exists()


def test_new_domain_agent_and_extension_validate_with_fresh_ids(tmp_path: Path, knoc: Knoc) -> None:
    assert run("init", str(tmp_path))[0] == 0
    for args, rel in ((("domain", "weather"), "content/perception-domains/weather.kno"),
                      (("agent", "night-watch"), "content/agent-blueprints/night-watch.kno"),
                      (("extension", "tracing"), "content/extensions/tracing.kno")):
        code, out, err = knoc("new", *args, "--format", "json", root=tmp_path)
        assert code == 0 and json_diags(out) == [], err
        assert f"wrote {rel}" in err
        assert knoc("new", *args, root=tmp_path)[0] == 2  # never over an existing file
    ids = [line.split(": ", 1)[1] for p in (tmp_path / "content").rglob("*.kno")
           for line in p.read_text(encoding="utf-8").splitlines() if line.startswith("id: ")]
    assert len(ids) == len(set(ids)) == 5 and all(ULID.match(i) for i in ids)
    code, out, _ = run("id", "-n", "3")
    assert code == 0 and len(set(out.split())) == 3 and all(ULID.match(i) for i in out.split())


def test_a_repo_without_specs_uses_the_built_in_set(tmp_path: Path, knoc: Knoc) -> None:
    shutil.copytree(ROOT / "content", tmp_path / "content")
    (tmp_path / "knoc.toml").write_text("[knoc]\n" + PRIMARY, encoding="utf-8")
    assert knoc("build", root=tmp_path)[0] == 0
    built = tree(tmp_path / "build")
    assert {k: v for k, v in built.items() if k.startswith("site/")} == \
        {k: v for k, v in tree(ROOT / "build").items() if k.startswith("site/")}
    assert any(k.startswith("knoc:specs/") for k in json.loads(built["manifest.json"])["inputs"])


def test_the_example_specs_are_the_built_in_set() -> None:
    assert tree(BUILTIN_SPECS) == tree(ROOT / "specs")


def test_specs_vendor_copies_the_built_in_set_and_a_repo_spec_overrides_it(tmp_path: Path, knoc: Knoc) -> None:
    assert run("init", str(tmp_path))[0] == 0
    code, _, err = knoc("specs", "vendor", root=tmp_path)
    assert code == 0 and "nothing else written" in err and not (tmp_path / ".knoc-cache").exists(), err
    assert tree(tmp_path / "specs") == tree(BUILTIN_SPECS)
    code, _, err = knoc("specs", "vendor", root=tmp_path)  # never over a file without --force, said once
    assert code == 2 and err.count("already exist") == 1 and "more" in err
    # A repo spec of a built-in slug replaces it: here one that accepts only a version nobody writes.
    spec = tmp_path / "specs/perception-domain-schema.kno"
    text = spec.read_text(encoding="utf-8")
    assert '"perception-domain@0.1.0"' in text
    spec.write_text(text.replace('"perception-domain@0.1.0"', '"perception-domain@9.9.9"'), encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=tmp_path)
    unaccepted = [d for d in json_diags(out) if d["code"] == "KNO-VERSION-UNACCEPTED"]
    assert code == 1 and unaccepted and "9.9.9" in unaccepted[0]["hint"]


def test_every_layout_setting_of_knoc_toml_works(tmp_path: Path, knoc: Knoc) -> None:
    shutil.copytree(ROOT / "content", tmp_path / "src/kno")
    shutil.copytree(ROOT / "specs", tmp_path / "schemas")
    (tmp_path / "knoc.toml").write_text('[knoc]\nspecs = "schemas"\ncontent = "src/kno"\noutput = "public"\n'
                                        + PRIMARY, encoding="utf-8")
    code, _, err = knoc("build", root=tmp_path)
    assert code == 0 and "to public/" in err, err
    cards = {k: v for k, v in tree(tmp_path / "public").items() if k.endswith(".json") and k.startswith("site/")}
    assert cards == {k: v for k, v in tree(ROOT / "build").items() if k.endswith(".json") and k.startswith("site/")}
    assert knoc("check", root=tmp_path)[0] == 0
    assert not (tmp_path / "build").exists()


def test_validate_refuses_files_it_would_not_read(repo: Path, knoc: Knoc) -> None:
    for name, words in (("missing.kno", "no such file"), ("knoc.toml", "not a source")):
        code, _, err = knoc("validate", str(repo / name), root=repo)
        assert code == 2 and words in err and "ok:" not in err


def test_the_summary_word_agrees_with_the_exit_code(repo: Path, knoc: Knoc) -> None:
    from tests.test_bad_input import SENTINEL, replace

    replace(SENTINEL, "- MUST NOT modify .kno files directly", "- Please be careful")(repo)
    code, _, err = knoc("build", "--fail-on", "warning", root=repo)
    assert code == 1 and err.strip().splitlines()[-1].startswith("failed: 1 warning")
    code, _, err = knoc("build", root=repo)
    assert code == 0 and err.strip().splitlines()[-1].startswith("ok: 1 warning")


def test_one_mistake_is_one_error_and_does_not_cascade(repo: Path, knoc: Knoc) -> None:
    from tests.test_bad_input import SENTINEL, replace

    replace(SENTINEL, "slug: drift-sentinel", "slug: Drift_Sentinel")(repo)  # schema-steward refers to it
    replace("content/perception-domains/schemas.kno", "slug: schemas", "slug: [schemas")(repo)  # YAML error
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    found = json_diags(out)
    assert code == 1 and sorted(d["code"] for d in found) == ["KNO-SCHEMA-PATTERN", "KNO-YAML-SYNTAX"], found
    slug = next(d for d in found if d["code"] == "KNO-SCHEMA-PATTERN")
    assert slug["message"] == "`Drift_Sentinel` is not a slug" and "kebab-case" in slug["hint"]


def test_messages_are_written_not_assembled(repo: Path, knoc: Knoc) -> None:
    from tests.test_bad_input import SENTINEL, replace

    replace(SENTINEL, "      description: Rebuilds a tree in memory and lists the files that drifted.\n", "")(repo)
    replace("content/perception-domains/schemas.kno", "id: 01KKT0A1B2C3D4E5F6G7H8J9K0",
            "id: 01KKT0A1B2C3D4E5F6G7H8J9K1")(repo)
    _, out, _ = knoc("validate", "--format", "json", root=repo)
    texts = " ".join(f"{d['message']} {d['hint']}" for d in json_diags(out))
    assert "has no description" in texts and "an id must be unique" in texts
    assert "no a " not in texts and "a id " not in texts


def test_unknown_domains_and_refs_are_usage_errors(repo: Path, knoc: Knoc) -> None:
    code, _, err = knoc("discover", "--domain", "schemass", root=repo)
    assert code == 2 and "no perception domain `schemass`" in err and "did you mean `schemas`" in err
    import subprocess

    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    code, _, err = knoc("diff", "--base", "v9", root=repo)
    assert code == 2 and "`v9` is not a branch, tag or commit" in err and "fatal" not in err


def test_the_success_line_names_what_was_not_published(repo: Path, knoc: Knoc) -> None:
    code, _, err = knoc("build", root=repo)
    assert code == 0 and err.strip().endswith("not published: 1 private agent (ledger-auditor))")


def test_unfinished_public_cards_get_warnings(tmp_path: Path, knoc: Knoc) -> None:
    assert run("init", str(tmp_path))[0] == 0
    assert knoc("new", "agent", "night-watch", "--url", "http://localhost:9000/night", root=tmp_path)[0] == 0
    skeleton = tmp_path / "content/agent-blueprints/night-watch.kno"
    skeleton.write_text(skeleton.read_text(encoding="utf-8").replace("visibility: private\n", ""), encoding="utf-8")
    code, out, _ = knoc("build", "--format", "json", root=tmp_path)
    found = sorted(d["code"] for d in json_diags(out))
    # init's own agent is at agents.example.com until the author says where it is served
    assert code == 0 and found == ["KNO-CARD-PLACEHOLDER"] * 3 + ["KNO-CARD-URL-EXAMPLE", "KNO-CARD-URL-LOCAL"], found
    skeleton.write_text(skeleton.read_text(encoding="utf-8").replace("http://localhost:9000", "http://agents.example.org"),
                        encoding="utf-8")
    _, out, _ = knoc("validate", "--format", "json", root=tmp_path)
    assert "KNO-CARD-URL-HTTP" in {d["code"] for d in json_diags(out)}


def test_a_duplicate_key_points_at_itself_and_at_the_first(repo: Path, knoc: Knoc) -> None:
    rel = "content/perception-domains/schemas.kno"
    (repo / rel).write_text((repo / rel).read_text(encoding="utf-8") + 'title: "Again"\n', encoding="utf-8")
    lines = (repo / rel).read_text(encoding="utf-8").splitlines()
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [d] = json_diags(out)
    assert code == 1 and d["code"] == "KNO-YAML-DUPLICATE-KEY" and d["message"] == "`title` is set twice in one mapping"
    assert d["line"] == len(lines)
    assert d["related"] == [{"line": next(i for i, t in enumerate(lines, 1) if t.startswith("title:")), "column": 1,
                             "end_column": 6, "label": "first set here"}]
    code, _, err = knoc("validate", root=repo)
    assert "first set here" in err and f"{len(lines)} | title: \"Again\"" in err


def test_drift_a_reviewer_can_read(repo: Path, knoc: Knoc) -> None:
    assert knoc("build", root=repo)[0] == 0
    rel = "content/agent-blueprints/quick-summarizer.kno"
    (repo / rel).write_text((repo / rel).read_text(encoding="utf-8").replace("Condenses a document", "Boils down"),
                            encoding="utf-8")
    code, out, _ = knoc("check", "--format", "json", root=repo)
    messages = [d["message"] for d in json_diags(out)]
    assert code == 1 and messages[0].startswith("stale: build/site/") and messages[0].endswith(
        "agent-card.json (and its agent.json twin)")
    assert not any(m.endswith("/agent.json") for m in messages)
    manifest = [d for d in json_diags(out) if d["file"] == "build/manifest.json"]
    assert messages[-1].startswith("stale: build/manifest.json (it lists") and "detail" not in manifest[0]


def test_a_build_for_another_target_is_named_not_diffed(repo: Path, knoc: Knoc) -> None:
    assert knoc("build", "--a2a", "0.3", root=repo)[0] == 0
    code, out, _ = knoc("check", "--format", "json", root=repo)
    [d] = json_diags(out)
    assert code == 1 and d["message"] == "build/ was built for A2A 0.3, but the sources compile for A2A 1.0"
    assert "knoc check --a2a 0.3" in d["hint"]
    assert knoc("check", "--a2a", "0.3", root=repo)[0] == 0


def test_a_scripted_first_hour(tmp_path: Path) -> None:
    """From an empty folder to a published card under the real pre-commit
    framework: init, a domain, an agent, edits, a build, a refused stale
    commit and an accepted rebuilt one. Every card passes the strict 1.0 check."""
    import sys

    from ruamel.yaml import YAML

    from tests.test_precommit import PRE_COMMIT
    from tests.test_precommit import run as sh

    repo = tmp_path / "my-agents"
    knoc = [sys.executable, "-m", "knoc"]
    sh(tmp_path, *knoc, "init", str(repo), "--url", "https://agents.nightsky.dev/hello-agent")
    sh(repo, *knoc, "new", "domain", "weather")
    sh(repo, *knoc, "new", "agent", "night-watch", "--url", "https://agents.nightsky.dev/night-watch/")
    agent = repo / "content/agent-blueprints/night-watch.kno"
    text = agent.read_text(encoding="utf-8").replace("visibility: private\n", "").replace("domains: []",
                                                                                          "domains: [weather]")
    for placeholder, real in (("What a client can ask this agent to do.", "Watches the weather at night."),
                              ("First skill", "Forecast"), ("What the skill does.", "Tells tomorrow's weather.")):
        text = text.replace(placeholder, real)
    agent.write_text(text, encoding="utf-8")
    built = sh(repo, *knoc, "validate")  # the host has two agents now, and no primary: said by the build
    assert "no problems" in built.stderr and "warning" not in built.stderr
    with (repo / "knoc.toml").open("a", encoding="utf-8") as toml:  # as the tutorial does
        toml.write('\n[primary]\n"agents.nightsky.dev" = "hello-agent"\n')
    built = sh(repo, *knoc, "build")
    assert "wrote 2 cards" in built.stderr and "warning" not in built.stderr
    for card in (repo / "build/site").rglob("agent-card.json"):
        assert_v10_strict(json.loads(card.read_text(encoding="utf-8")))
    manifest = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = {**next(h for h in manifest if h["id"] == "knoc-check"), "language": "system"}
    with (repo / ".pre-commit-config.yaml").open("w", encoding="utf-8") as f:
        YAML().dump({"repos": [{"repo": "local", "hooks": [hook]}]}, f)
    sh(repo, "git", "init", "-q", "-b", "main")
    sh(repo, str(PRE_COMMIT), "install")
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", "first agents")
    agent.write_text(agent.read_text(encoding="utf-8").replace("Watches the weather", "Watches the sky"),
                     encoding="utf-8")
    sh(repo, "git", "add", "-A")
    refused = sh(repo, "git", "commit", "-m", "stale", check=False)
    assert refused.returncode != 0 and "night-watch/.well-known/agent-card.json" in refused.stdout + refused.stderr
    sh(repo, *knoc, "build")  # rebuilt, but build/ not staged: the hook says exactly that
    unstaged = sh(repo, "git", "commit", "-m", "rebuilt", check=False)
    said = unstaged.stdout + unstaged.stderr
    assert unstaged.returncode != 0 and "build/ is current in your work tree but not staged" in said, said
    assert "git add build/" in said
    sh(repo, "git", "add", "-A")
    accepted = sh(repo, "git", "commit", "-m", "rebuilt")
    assert "Passed" in accepted.stdout + accepted.stderr


def test_progress_shows_only_on_a_terminal_for_long_runs(capsys: object, monkeypatch: object) -> None:
    from knoc.diagnostics.progress import ProgressBar

    quiet = ProgressBar(enabled=False)
    quiet("compiling", 256, 1000)
    early = ProgressBar(enabled=True)  # under two seconds: nothing yet
    early("compiling", 256, 1000)
    assert capsys.readouterr().err == ""  # type: ignore[attr-defined]
    monkeypatch.setattr(ProgressBar, "AFTER", 0.0)  # type: ignore[attr-defined]
    with ProgressBar(enabled=True) as bar:
        bar("compiling", 256, 1000)
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert "compiling 256/1,000 [#######" in err and err.endswith("\r")


def test_no_progress_in_machine_output(repo: Path, knoc: Knoc) -> None:
    _, out, err = knoc("build", "--format", "json", root=repo)
    assert "compiling" not in out + err


def test_each_built_in_spec_is_named_after_its_slug() -> None:
    """The compiler skips an overridden built-in spec by its file name."""
    for path in BUILTIN_SPECS.glob("*.kno"):
        assert f"\nslug: {path.stem}\n" in path.read_text(encoding="utf-8")


def test_init_inside_another_repos_content_is_refused(repo: Path) -> None:
    """The outer repo would read the new one's agent and domain as its own."""
    before = tree(repo / "content")
    code, _, err = run("init", str(repo / "content/nested"))
    assert code == 2 and "inside the content folder" in err and tree(repo / "content") == before
    code, _, err = run("init", str(repo / "build/x"))  # the output folder, which a build replaces whole
    assert code == 2 and "inside the output folder" in err and not (repo / "build/x").exists()
    assert run("init", str(repo / "tools/agents"))[0] == 0  # inside the repo, outside its sources: its own repo


def test_init_inside_a_repo_whose_settings_do_not_read_is_refused(tmp_path: Path) -> None:
    """Its content folder may be any folder (here `src`): none is known to be safe."""
    outer = tmp_path / "outer"
    (outer / "src").mkdir(parents=True)
    (outer / "knoc.toml").write_text('[knoc]\ncontent = "src"\nbad =\n', encoding="utf-8")
    code, _, err = run("init", str(outer / "src/nested"))
    assert code == 2 and "whose knoc.toml does not read" in err and not (outer / "src/nested").exists()


def test_init_around_another_repo_is_refused(tmp_path: Path) -> None:
    """The new repo would read the inner one's agents as its own (and as duplicates of them)."""
    assert run("init", str(tmp_path / "outer/content/inner"))[0] == 0
    before = tree(tmp_path / "outer")
    code, _, err = run("init", str(tmp_path / "outer"))
    assert code == 2 and "marks another content repo, inside the content folder" in err
    assert tree(tmp_path / "outer") == before
    (tmp_path / "outer/content/inner/knoc.toml").unlink()  # its specs/ marks it all the same
    (tmp_path / "outer/content/inner/specs").mkdir()
    code, _, err = run("init", str(tmp_path / "outer"))
    assert code == 2 and "inner/specs marks another content repo" in err
    assert run("init", str(tmp_path / "f3/inner"))[0] == 0  # linked into the content folder, read as if there
    (tmp_path / "f3/content").mkdir()
    (tmp_path / "f3/content/lnk").symlink_to("../inner")
    code, _, err = run("init", str(tmp_path / "f3"))
    assert code == 2 and "lnk/knoc.toml marks another content repo" in err


def test_init_tells_a_capital_scheme_for_what_it_is(tmp_path: Path) -> None:
    code, _, err = run("init", str(tmp_path / "agents"), "--url", "HTTPS://agents.fleet.io/triage")
    assert code == 2 and "in lowercase" in err and "query" not in err, err
