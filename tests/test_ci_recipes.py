"""The CI recipes of docs/guides/ci.md, run as written: the shell of the
GitHub diff step under `bash -e` (as Actions runs a step) and of the GitLab
script, in a content repo whose `origin` is itself, with this checkout's
knoc on PATH and a stand-in `gh` that records the comment it is given."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import ROOT

RECIPES = ROOT / "docs/guides/ci.md"
STEWARD = "content/agent-blueprints/schema-steward.kno"


def _blocks() -> list[object]:
    text = RECIPES.read_text(encoding="utf-8")
    return [YAML(typ="safe").load(block) for block in re.findall(r"```yaml\n(.*?)```", text, re.S)]


def _github_diff_step() -> tuple[str, str]:
    """The diff step's condition and shell, with the expressions Actions fills in."""
    [step] = [s for s in _blocks()[0]["jobs"]["knoc"]["steps"] if "knoc diff" in s.get("run", "")]  # type: ignore[index]
    shell = step["run"].replace("${{ github.base_ref }}", "main").replace(
        "${{ github.event.pull_request.number }}", "7")
    assert "${{" not in shell
    return step["if"], shell


def _run(repo: Path, shell: str, **env: str) -> subprocess.CompletedProcess[str]:
    tools = repo.parent / "tools"
    tools.mkdir(exist_ok=True)
    (tools / "gh").write_text('#!/bin/sh\necho "gh $*" >> "$GH_LOG"\nwhile [ "$#" -gt 0 ]; do '
                              'if [ "$1" = --body-file ]; then cat "$2" >> "$GH_LOG"; fi; shift; done\n')
    (tools / "gh").chmod(0o755)
    path = f"{tools}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    full = {**os.environ, "PATH": path, "GH_LOG": str(repo.parent / "gh.log"), "NO_COLOR": "1",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.org", **env}
    full.pop("GITHUB_ACTIONS", None)
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", shell], cwd=repo, env=full, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def pull_request(repo: Path) -> Path:
    """A content repo on a branch off main, whose `origin` is itself."""
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-qm", "base"),
                 ("remote", "add", "origin", str(repo)), ("fetch", "-q", "origin"), ("checkout", "-qb", "feature")):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                       env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"})
    return repo


def _commit(repo: Path, old: str, new: str) -> None:
    steward = repo / STEWARD
    steward.write_text(steward.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    subprocess.run(["git", "commit", "-qam", "change"], cwd=repo, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"})


def test_the_github_diff_step_comments_then_gates(pull_request: Path) -> None:
    condition, shell = _github_diff_step()
    assert "!cancelled()" in condition and "pull_request" in condition  # also after the drift guard failed
    _commit(pull_request, "    streaming: true", "    streaming: false")  # a breaking change
    done = _run(pull_request, shell)
    log = (pull_request.parent / "gh.log").read_text(encoding="utf-8")
    assert done.returncode == 1 and "gh pr comment 7 --body-file diff.md" in log and "**1 breaking**" in log
    assert "::error" in done.stdout + done.stderr  # the gate, as an annotation


def test_the_github_diff_step_posts_why_it_could_not_compare(pull_request: Path) -> None:
    _, shell = _github_diff_step()
    _commit(pull_request, "\nslug: ", "\nslug: [broken\nold_slug: ")  # the head does not compile
    done = _run(pull_request, shell)
    log = (pull_request.parent / "gh.log").read_text(encoding="utf-8")
    assert done.returncode == 1 and "Not compared: the sources at HEAD" in log, done.stderr


def test_the_gitlab_job_runs_in_merge_requests_and_reports_both(pull_request: Path) -> None:
    job = _blocks()[1]["knoc"]  # type: ignore[index]
    assert any("merge_request_event" in rule["if"] for rule in job["rules"])
    script = "\n".join(line for line in job["script"] if not line.startswith("pip install"))
    _commit(pull_request, "    streaming: true", "    streaming: false")  # breaking, and build/ not rebuilt: drift
    done = _run(pull_request, script, CI_MERGE_REQUEST_TARGET_BRANCH_NAME="main")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "**1 breaking**" in (pull_request / "knoc-diff.md").read_text(encoding="utf-8")
    assert "<failure" in (pull_request / "knoc-junit.xml").read_text(encoding="utf-8")  # the drift guard's report
