"""The docs keep up with the code: every diagnostic code knoc can emit is in
the README's table, and the README opens with the two commands."""

from __future__ import annotations

import re

from knoc.codes import CODES
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_diagnostic_code_is_registered() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "knoc").rglob("*.py")
                       if p.name != "codes.py")
    emitted = set(re.findall(r'"(KNO-[A-Z0-9-]*[A-Z0-9])"', source))
    assert len(emitted) > 30, "the code scan found too little"
    assert sorted(emitted - set(CODES)) == []


def test_readme_code_table_matches_the_registry() -> None:
    rows = re.findall(r"^\| (KNO-[A-Z0-9-]+) \| [^|]+ \| (.+) \|$", README, flags=re.M)
    assert dict(rows) == CODES


def test_readme_opens_with_the_build_and_test_commands() -> None:
    block = README.split("```sh", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in block.strip().splitlines()] == ["make build", "make test"]


def test_ci_runs_the_drift_guard_then_the_readme_test_command() -> None:
    lines = (ROOT / ".ci/run").read_text().strip().splitlines()
    assert lines[-2:] == ["make check", "make test"]
