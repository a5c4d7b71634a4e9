"""The docs keep up with the code: every diagnostic code knoc can emit is
declared and explained, the README opens with the two commands and its
first steps work, and every command line the docs show exists."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from knoc.cli import main
from knoc.diagnostics.codes import CODES
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = README + "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").rglob("*.md")))


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
        body = result.stdout.split("\n\n", 1)[1].split("\nThe codes it starts:\n")[0]  # KNO-CONFIG: then KNO-CONFIG-*
        assert " ".join(body.split()) == code.explanation
    listing = CliRunner().invoke(main, ["explain"])
    assert listing.exit_code == 0 and len(listing.stdout.splitlines()) == len(CODES)
    unknown = CliRunner().invoke(main, ["explain", "KNO-DIRFT"])
    assert unknown.exit_code == 2 and "KNO-DRIFT" in unknown.stderr
    family = CliRunner().invoke(main, ["explain", "yaml"])  # a code's start: the codes it starts
    assert family.exit_code == 0 and "KNO-YAML-SYNTAX" in family.stdout and "KNO-DRIFT" not in family.stdout
    for start in ("KNO-HOST-", "kno-host*"):
        hosts = CliRunner().invoke(main, ["explain", start])
        assert hosts.exit_code == 0 and hosts.stdout.startswith("KNO-HOST-NO-ROOT "), hosts.output
    assert CliRunner().invoke(main, ["explain", "KNO-"]).stdout == listing.stdout
    config = CliRunner().invoke(main, ["explain", "config"])  # a code, and the start of others
    assert config.stdout.startswith("KNO-CONFIG (error)") and "\nKNO-CONFIG-PRIMARY " in config.stdout


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


def _commands_in(text: str) -> list[str]:
    """Every `knoc ...` command line the text shows: in code blocks, and in inline code."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    lines = [re.split(r" #| \| | >>? | && | ; | &$", line)[0] for block in blocks for line in block.splitlines()]
    spans = re.findall(r"`(knoc [^`]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return [c.strip() for c in [*lines, *spans] if c.strip().startswith("knoc ")]


def test_the_docs_name_only_commands_and_options_that_exist() -> None:
    """Each command line of the README and docs/, against what `--help` offers."""
    from knoc.cli.reference import commands, options
    known = dict(commands())
    groups = {" ".join(path.split()[:2]) for path in known if len(path.split()) == 3}
    shown = _commands_in(DOCS)
    wrong = []
    for line in shown:
        words = line.split()
        path = next((p for n in (3, 2) if (p := " ".join(words[:n])) in known), None)
        if path is None:
            if words[1].startswith("-") or words[1] in {"COMMAND", "CMD"} or " ".join(words[:2]) in groups:
                continue  # `knoc --version`, a placeholder, a group (`knoc new`)
            wrong.append(f"no command: {line}")
            continue
        for word in words[len(path.split()):]:
            flag = re.match(r"\[?(--?[a-z][a-z0-9-]*)", word)
            if flag and flag.group(1) not in (*options(known[path]), "--help", "-h"):
                wrong.append(f"{path} has no {flag.group(1)}: {line}")
    assert not wrong, "\n".join(wrong)
    named = {" ".join(line.split()[:3]) for line in shown} | {" ".join(line.split()[:2]) for line in shown}
    assert not set(known) - named, f"commands the docs never show: {sorted(set(known) - named)}"


def test_the_spec_versioning_guide_names_every_annotation() -> None:
    """What `knoc specs check` reads as no schema change is what the guide says it is."""
    from knoc.evolution.model import ANNOTATIONS

    guide = (ROOT / "docs/guides/spec-versioning.md").read_text(encoding="utf-8")
    assert [a for a in sorted(ANNOTATIONS - {"$defs", "definitions"}) if f"`{a}`" not in guide] == []
