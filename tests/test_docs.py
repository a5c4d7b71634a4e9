"""The docs keep up with the code: every diagnostic code knoc can emit is
declared and explained, the README's table says the same, and the README
opens with the two commands."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from knoc.cli import main
from knoc.diagnostics.codes import CODES
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_emitted_code_is_declared_and_explained() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "knoc").rglob("*.py")
                       if p.name != "codes.py")
    emitted = set(re.findall(r'"(KNO-[A-Z0-9-]*[A-Z0-9])"', source))
    assert len(emitted) > 30, "the code scan found too little"
    assert sorted(emitted - set(CODES)) == []
    for code in CODES.values():
        assert code.summary and len(code.explanation.split()) >= 10, code.id


def test_knoc_explain_prints_every_code() -> None:
    for code in CODES.values():
        result = CliRunner().invoke(main, ["explain", code.id])
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"{code.id} ({code.severity.value}): {code.summary}")
        assert " ".join(result.stdout.split("\n\n", 1)[1].split()) == code.explanation
    listing = CliRunner().invoke(main, ["explain"])
    assert listing.exit_code == 0 and len(listing.stdout.splitlines()) == len(CODES)
    unknown = CliRunner().invoke(main, ["explain", "KNO-DIRFT"])
    assert unknown.exit_code == 2 and "KNO-DRIFT" in unknown.stderr


def test_readme_code_table_matches_the_registry() -> None:
    rows = re.findall(r"^\| (KNO-[A-Z0-9-]+) \| ([^|]+) \| (.+) \|$", README, flags=re.M)
    assert {code: summary for code, _, summary in rows} == {c.id: c.summary for c in CODES.values()}
    assert {code: severity.split()[0] for code, severity, _ in rows} == {c.id: c.severity.value for c in CODES.values()}


def test_readme_opens_with_the_build_and_test_commands() -> None:
    block = README.split("```sh", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in block.strip().splitlines()] == ["make build", "make test"]


def test_ci_runs_the_drift_guard_then_the_readme_test_command() -> None:
    lines = (ROOT / ".ci/run").read_text().strip().splitlines()
    assert lines[-2:] == ["make check", "make test"]


def test_the_start_a_content_repo_section_works_as_written(tmp_path: Path) -> None:
    """Every command of the README's first-steps block, run in an empty
    folder in order (`cd` moves on), succeeds; the block stays short."""
    section = README.split("## Start a content repo", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh", 1)[1].split("```", 1)[0]
    lines = [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]
    assert len(lines) <= 10
    here = tmp_path
    for line in lines:
        command, *args = line.split()
        if command == "cd":
            here = here / args[0]
            continue
        assert command == "knoc", line
        invocation = ["init", str(here / args[1])] if args[0] == "init" else [*args, "--root", str(here)]
        result = CliRunner().invoke(main, invocation, catch_exceptions=False)
        assert result.exit_code == 0, f"{line}: {result.output}"
    assert (here / "build/index/agents.json").is_file()
