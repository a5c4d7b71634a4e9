"""An author's second week: errors that point where the author is at work
and say what to write, and advice that a build can follow."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Knoc, json_diags

STEWARD = "content/agent-blueprints/schema-steward.kno"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                   check=True, capture_output=True)


@pytest.mark.parametrize("committed", [True, False])
def test_a_copied_file_is_where_the_duplicates_are_reported(repo: Path, knoc: Knoc, committed: bool) -> None:
    """Copy an agent to start a new one: the id, slug and url it still
    shares are errors at the copy (the file not in git's HEAD), pointing at
    the original, with `knoc id` for the id. Outside git: the later file."""
    if committed:
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "base")
    copy = "content/agent-blueprints/aa-new-agent.kno" if committed else "content/agent-blueprints/zz-new-agent.kno"
    shutil.copy(repo / STEWARD, repo / copy)
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    found = {d["code"]: d for d in json_diags(out) if d["code"].endswith("-DUPLICATE")}
    assert code == 1 and set(found) == {"KNO-ID-DUPLICATE", "KNO-SLUG-DUPLICATE", "KNO-URL-DUPLICATE"}, found
    for d in found.values():
        assert d["file"] == copy and d["message"].endswith(f"is also used by {STEWARD}")
        [other] = d["related"]
        assert other["file"] == STEWARD and other["label"] == "also used here"
    assert "`knoc id`" in found["KNO-ID-DUPLICATE"]["hint"]
    text = (repo / copy).read_text(encoding="utf-8").splitlines()
    assert text[found["KNO-ID-DUPLICATE"]["line"] - 1].startswith("id:")
    code, _, err = knoc("validate", root=repo)
    assert f"--> {copy}:" in err and f"--> {STEWARD}:" in err and "also used here" in err


def test_a_dedented_key_is_named_an_indentation_mistake(repo: Path, knoc: Knoc) -> None:
    source = repo / STEWARD
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("  version: "))  # under a2a_projection
    lines[at] = lines[at].lstrip()
    source.write_text("".join(lines), encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = json_diags(out)
    assert code == 1 and found["code"] == "KNO-YAML-SYNTAX" and "indentation does not line up" in found["message"]
    assert f"line {at + 1}, at column 1, may be the one out of place" in found["hint"]


@pytest.mark.parametrize(("old", "new", "hint"), [
    ("    streaming: true", "    streaming: yes", "YAML 1.2, which knoc reads, takes `yes` as a string: write `true`"),
    ("    streaming: true", "    streaming: Off", "takes `Off` as a string: write `false`"),
    ("    streaming: true", "    streaming: maybe", "write `true` or `false`, without quotes"),
    ("    streaming: true", "    streaming: [true]", "write `true` or `false`"),
    ('  version: "0.3.0"', "  version: 3", 'quote it: "3"'),
    ("  name: Schema Steward", "  name: {first: Schema}", "quote it if it holds `: `"),
    ("  name: Schema Steward", "  name: [Schema]", "write a string here"),
])
def test_every_type_error_says_what_to_write(repo: Path, knoc: Knoc, old: str, new: str, hint: str) -> None:
    source = repo / STEWARD
    text = source.read_text(encoding="utf-8")
    assert old in text
    source.write_text(text.replace(old, new, 1), encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    found = [d for d in json_diags(out) if d["code"] == "KNO-SCHEMA-TYPE"]
    assert code == 1 and found and hint in found[0]["hint"], found


def test_a_stray_file_in_build_gets_advice_a_build_can_follow(repo: Path, knoc: Knoc) -> None:
    assert knoc("build", root=repo)[0] == 0
    stray = repo / "build/site/notes.txt"
    stray.write_text("mine\n", encoding="utf-8")
    code, out, _ = knoc("check", "--format", "json", root=repo)
    [found] = json_diags(out)
    assert code == 1 and found["message"] == "extra: build/site/notes.txt (knoc did not write it)"
    assert found["hint"].startswith("move it out of build/")
    assert knoc("build", root=repo)[0] == 2 and stray.exists()  # what the old advice led to
    stray.rename(repo / "notes.txt")  # the advice, followed
    assert knoc("build", root=repo)[0] == 0 and knoc("check", root=repo)[0] == 0
