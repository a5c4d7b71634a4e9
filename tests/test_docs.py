"""The docs keep up with the code: every diagnostic code knoc can emit is in
the README's table, and the README opens with the two commands."""

from __future__ import annotations

import re

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_diagnostic_code_is_documented() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "knoc").rglob("*.py"))
    emitted = set(re.findall(r'"(KNO-[A-Z0-9-]*[A-Z0-9])"', source))
    documented = set(re.findall(r"^\| (KNO-[A-Z0-9-]+) \|", README, flags=re.M))
    assert emitted, "no codes found"
    assert sorted(emitted - documented) == []


def test_readme_opens_with_the_build_and_test_commands() -> None:
    block = README.split("```sh", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in block.strip().splitlines()] == ["make build", "make test"]


def test_ci_runs_the_readme_test_command() -> None:
    assert (ROOT / ".ci/run").read_text().strip().endswith("make test")
