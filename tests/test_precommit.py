"""The hooks in .pre-commit-hooks.yaml, driven by the real pre-commit
framework in a throwaway content repo. The hooks run as `language: system`
with this checkout's knoc on PATH, so the test needs no network; id, entry,
files and pass_filenames are taken from the shipped manifest unchanged."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import ROOT

PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
BLUEPRINT = "content/agent-blueprints/schema-steward.kno"


def run(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home"), "NO_COLOR": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    env.pop("GITHUB_ACTIONS", None)
    done = subprocess.run(list(args), cwd=repo, env=env, capture_output=True, text=True)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


def hook_repo(repo: Path, hook_id: str, blueprint: str = BLUEPRINT) -> Path:
    assert PRE_COMMIT is not None, "pre-commit is a test dependency: pip install -e .[test]"
    manifest = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(h for h in manifest if h["id"] == hook_id)
    hook["language"] = "system"
    config = YAML()
    with (repo / ".pre-commit-config.yaml").open("w", encoding="utf-8") as f:
        config.dump({"repos": [{"repo": "local", "hooks": [hook]}]}, f)
    run(repo, "git", "init", "-q", "-b", "main")
    run(repo, sys.executable, "-m", "knoc", "build")
    run(repo, "git", "add", "-A")
    run(repo, "git", "commit", "-qm", "content and build")
    run(repo, str(PRE_COMMIT), "install")
    edit = repo / blueprint
    edit.write_text(edit.read_text(encoding="utf-8").replace("  description: Reviews", "  description: Now reviews"),
                    encoding="utf-8")
    run(repo, "git", "add", blueprint)
    return repo


def test_knoc_check_refuses_a_commit_that_did_not_rebuild(repo: Path) -> None:
    hook_repo(repo, "knoc-check")
    refused = run(repo, "git", "commit", "-m", "edit without rebuild", check=False)
    assert refused.returncode != 0
    output = refused.stdout + refused.stderr
    assert "knoc check" in output and "Failed" in output
    assert "stale: build/site/agents.possibility.space/schema-steward/.well-known/agent-card.json" in output
    assert "run `knoc build`" in output
    run(repo, sys.executable, "-m", "knoc", "build")
    run(repo, "git", "add", "-A")
    accepted = run(repo, "git", "commit", "-m", "edit and rebuild")
    assert "Passed" in accepted.stdout + accepted.stderr
    assert "build/ is up to date" in accepted.stdout + accepted.stderr  # shown on a pass too, with any warning


def test_knoc_check_guards_a_repo_whose_folders_are_named_otherwise(repo: Path) -> None:
    """`content = "agents"` (knoc.toml): the hook runs all the same; a
    pattern of folder names would skip the commit and let the drift in."""
    (repo / "content").rename(repo / "agents")
    (repo / "knoc.toml").write_text((repo / "knoc.toml").read_text(encoding="utf-8").replace(
        'content = "content"', 'content = "agents"'), encoding="utf-8")
    assert 'content = "agents"' in (repo / "knoc.toml").read_text(encoding="utf-8")
    hook_repo(repo, "knoc-check", BLUEPRINT.replace("content/", "agents/", 1))
    refused = run(repo, "git", "commit", "-m", "edit without rebuild", check=False)
    assert refused.returncode != 0 and "stale: build/site/" in refused.stdout + refused.stderr


def test_knoc_build_rebuilds_and_stages(repo: Path) -> None:
    hook_repo(repo, "knoc-build")
    accepted = run(repo, "git", "commit", "-m", "edit without rebuild")
    assert "Passed" in accepted.stdout + accepted.stderr
    # shown on a pass too: what it wrote, and any warning (a host's root card gone, a key left out)
    assert "build/ updated" in accepted.stdout + accepted.stderr
    assert run(repo, "git", "status", "--porcelain").stdout.strip() == ""  # the rebuilt build/ went into the commit
    committed = run(repo, "git", "show", "HEAD:build/site/agents.possibility.space/schema-steward/.well-known/"
                    "agent-card.json").stdout
    assert "Now reviews" in committed


@pytest.mark.parametrize(("ignored", "said"), [("build/", "not staged: git's ignore rules keep it out"),
                                               ("site/", "files were not staged: git's ignore rules keep them out")])
def test_build_stage_with_build_ignored_says_so_beside_the_builds_own_findings(repo: Path, ignored: str,
                                                                              said: str) -> None:
    """All of build/ ignored, or a part (`site/`, as MkDocs users have): `git add` skips it without a word."""
    run(repo, "git", "init", "-q", "-b", "main")
    (repo / ".gitignore").write_text(f"{ignored}\n", encoding="utf-8")
    done = run(repo, sys.executable, "-m", "knoc", "build", "--stage", check=False)
    assert done.returncode == 1 and said in done.stderr and "remove the line that does" in done.stderr
    assert "wrote 7 cards" in done.stderr and ", staged" not in done.stderr  # the build's own summary, and true
    assert (repo / "build/manifest.json").is_file()


def test_build_stage_names_files_git_does_not_look_at(repo: Path) -> None:
    """A sparse checkout's skip-worktree mark: `git add` stages no change of the file, and says nothing."""
    run(repo, "git", "init", "-q", "-b", "main")
    run(repo, sys.executable, "-m", "knoc", "build")
    run(repo, "git", "add", "-A")
    run(repo, "git", "commit", "-qm", "built")
    run(repo, "git", "update-index", "--skip-worktree", "build/index/agents.json")
    edit = repo / BLUEPRINT
    edit.write_text(edit.read_text(encoding="utf-8").replace("  description: Reviews", "  description: Now reviews"),
                    encoding="utf-8")
    done = run(repo, sys.executable, "-m", "knoc", "build", "--stage", check=False)
    assert done.returncode == 1 and "may not be staged" in done.stderr and "build/index/agents.json" in done.stderr
    assert ", staged" not in done.stderr


def test_knoc_build_without_the_key_fails_the_commit_of_a_signed_repo(repo: Path) -> None:
    """The knoc-build hook in a repo whose build/ is signed, run by a
    teammate without the key: the commit fails, and the signed build/ stays."""
    hook_repo(repo, "knoc-build")
    key = repo.parent / "signing.pem"
    run(repo.parent, sys.executable, "-m", "knoc", "keys", "new", str(key))
    run(repo, sys.executable, "-m", "knoc", "build", "--sign-key", str(key))
    run(repo, "git", "add", "-A")
    run(repo, "git", "commit", "-qm", "signed", "--no-verify")
    edit = repo / BLUEPRINT
    edit.write_text(edit.read_text(encoding="utf-8").replace("Now reviews", "Reviews again"), encoding="utf-8")
    run(repo, "git", "add", BLUEPRINT)
    refused = run(repo, "git", "commit", "-m", "edit, no key", check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "Failed" in output and "KNO-UNSIGNED" in output and "--sign-key" in output
    card = "build/site/agents.possibility.space/schema-steward/.well-known/agent-card.json"
    assert '"signatures"' in (repo / card).read_text(encoding="utf-8")  # nothing was stripped
    done = run(repo, "git", "commit", "-m", "edit, with the key", check=False)
    assert done.returncode != 0  # still no key: still refused
    env_key = key.read_text(encoding="utf-8")
    os.environ["KNOC_SIGNING_KEY"] = env_key
    try:
        accepted = run(repo, "git", "commit", "-m", "edit, key in the environment")
    finally:
        del os.environ["KNOC_SIGNING_KEY"]
    assert "Passed" in accepted.stdout + accepted.stderr
    assert "Reviews again" in run(repo, "git", "show", f"HEAD:{card}").stdout
    assert '"signatures"' in run(repo, "git", "show", f"HEAD:{card}").stdout


def test_the_readme_config_installs_knoc_from_its_release_tag(repo: Path) -> None:
    """The README's snippet as written, with the shipped manifest as is
    (`language: python`): pre-commit clones knoc at the release tag the
    README names, installs it in an environment of its own, and the hook
    refuses a stale build. The tag is made in a clone when this checkout
    lacks it (a shallow or tag-less clone), so the snippet is what is tested."""
    import re

    import knoc

    readme = (ROOT / "docs/guides/drift-guard.md").read_text(encoding="utf-8")
    snippet = readme[readme.index("```yaml\nrepos:"):]
    snippet = snippet[len("```yaml\n"):snippet.index("```", 8)]
    rev = re.search(r"rev: (\S+)", snippet)
    assert rev and rev.group(1) == f"v{knoc.__version__}"  # the tag of the version this checkout is
    source = repo.parent / "knoc-source"
    run(repo.parent, "git", "clone", "-q", "--no-hardlinks", str(ROOT), str(source))
    if not run(source, "git", "tag", "-l", rev.group(1)).stdout.strip():
        run(source, "git", "tag", rev.group(1))
    (repo / ".pre-commit-config.yaml").write_text(snippet.replace("<url of the knoc repository>", str(source)),
                                                  encoding="utf-8")
    run(repo, "git", "init", "-q", "-b", "main")
    run(repo, sys.executable, "-m", "knoc", "build")
    run(repo, "git", "add", "-A")
    run(repo, str(PRE_COMMIT), "install")
    first = run(repo, "git", "commit", "-m", "content and build", check=False)  # installs knoc for the hook
    assert first.returncode == 0 and "knoc check" in first.stdout + first.stderr, first.stdout + first.stderr
    edit = repo / BLUEPRINT
    edit.write_text(edit.read_text(encoding="utf-8").replace("  description: Reviews", "  description: Now reviews"),
                    encoding="utf-8")
    run(repo, "git", "add", BLUEPRINT)
    refused = run(repo, "git", "commit", "-m", "edit without rebuild", check=False)
    assert refused.returncode != 0 and "stale: build/site/" in refused.stdout + refused.stderr


def test_knoc_check_names_a_card_made_executable_in_the_commit(repo: Path) -> None:
    """`chmod +x` on a card, staged: git would commit the bit. The hook says
    the card's mode, not "current in your work tree but not staged" (which
    `git add` could never mend)."""
    hook_repo(repo, "knoc-check")
    run(repo, "git", "checkout", "HEAD", "--", BLUEPRINT)  # only the mode changes
    card = "build/site/agents.possibility.space/schema-steward/.well-known/agent-card.json"
    (repo / card).chmod(0o755)
    run(repo, "git", "add", card)
    refused = run(repo, "git", "commit", "-m", "a card made executable", check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "(its mode: knoc writes no file executable" in output, output
    assert "not staged" not in output


def test_knoc_check_names_a_card_edited_by_hand_and_staged(repo: Path) -> None:
    """A card edited in build/ and staged, after a check saw build/ current:
    the hook shows the stale card and its diff, not "not staged" (the work
    tree holds the same edit: `git add` would mend nothing)."""
    hook_repo(repo, "knoc-check")
    run(repo, "git", "checkout", "HEAD", "--", BLUEPRINT)
    run(repo, sys.executable, "-m", "knoc", "check")  # the last run saw build/ as the sources give it
    card = repo / "build/site/agents.possibility.space/schema-steward/.well-known/agent-card.json"
    card.write_text(card.read_text(encoding="utf-8").replace('"name": "', '"name": "Hand-', 1), encoding="utf-8")
    run(repo, "git", "add", "-A")
    refused = run(repo, "git", "commit", "-m", "a card edited by hand", check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "stale: build/site/agents.possibility.space/schema-steward" in output, output
    assert "not staged" not in output and "Hand-" in output
    run(repo, "git", "checkout", "HEAD", "--", "build")  # the manifest alone, reformatted by hand (or by a tool)
    manifest = repo / "build/manifest.json"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace('\n  "', '\n    "', 1), encoding="utf-8")
    run(repo, "git", "add", "-A")
    refused = run(repo, "git", "commit", "-m", "the manifest edited by hand", check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "stale: build/manifest.json" in output and "not staged" not in output, output


def test_knoc_check_says_not_staged_over_an_older_build_staged_before(repo: Path) -> None:
    """An edit built and staged, then another edit built but only its
    source staged: the staged build/ is the older build, whole, and the
    work tree's is current; the hook says to stage it."""
    hook_repo(repo, "knoc-check")
    run(repo, sys.executable, "-m", "knoc", "build")
    run(repo, "git", "add", "-A")
    edit = repo / BLUEPRINT
    edit.write_text(edit.read_text(encoding="utf-8").replace("Now reviews", "Then reviews"), encoding="utf-8")
    run(repo, sys.executable, "-m", "knoc", "build")
    run(repo, "git", "add", BLUEPRINT)
    refused = run(repo, "git", "commit", "-m", "second edit, build/ not staged", check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "build/ is current in your work tree but not staged" in output, output
