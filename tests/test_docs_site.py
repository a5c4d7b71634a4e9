"""The documentation site: its generated references are current and cover
every command, diagnostic code, knoc.toml key, entity field and output
file; it builds with `mkdocs build --strict`; the tutorial's command blocks
run as written; and no page a user reads narrates knoc's history."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from knoc.cli.reference import commands, pages
from knoc.config import HOST_KEYS, KNOC_KEYS, SIGNING_KEYS, load_config
from knoc.diagnostics.codes import CODES
from knoc.features.reference.bad_input import CASES
from knoc.features.reference.fields import entity_types, load_specs
from knoc.features.reference.pages import OUTPUT_FILES, output_pattern, output_row
from knoc.kinds.spec import BUILTIN_SPECS
from tests.conftest import ROOT

DOCS = ROOT / "docs"
GENERATED = pages(ROOT)


def test_the_generated_pages_are_the_code_s() -> None:
    """Every page under docs/reference/ is what `make reference` makes now."""
    stale = [rel for rel, text in GENERATED.items() if (DOCS / rel).read_text(encoding="utf-8") != text]
    extra = sorted(str(p.relative_to(DOCS)) for p in (DOCS / "reference").rglob("*.md")
                   if str(p.relative_to(DOCS)) not in {*GENERATED, "reference/python-api.md"})  # its example runs
    assert (stale, extra) == ([], []), "run `make reference`"


def test_every_field_of_every_entity_type_is_described_on_its_page() -> None:
    types = entity_types(load_specs(BUILTIN_SPECS))
    assert {t.name for t in types} >= {"agent-blueprint", "agent-card", "perception-domain", "extension"}
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for t in types:
        page = GENERATED[f"reference/authoring/{t.name}.md"]
        assert f"reference/authoring/{t.name}.md" in nav
        undescribed = [f.path for f in t.fields if not f.description]
        assert undescribed == [], f"{t.name}: give these fields a description in the spec: {undescribed}"
        for f in t.fields:
            section = page.split(f"## `{f.parent}`" if f.parent else "## Top level", 1)[1].split("\n## ", 1)[0]
            assert re.search(rf"^\| \[?`{re.escape(f.name)}`", section, flags=re.M), f"{t.name}: {f.path}"


def test_every_diagnostic_code_has_its_entry() -> None:
    """With what knoc prints, for each code a case of bad input gives."""
    page = GENERATED["reference/diagnostics.md"]
    with_example = {case.code for case in CASES.values()}
    assert len(with_example) >= 30
    for code in CODES.values():
        entry = page.split(f"\n## {code.id}\n", 1)[1].split("\n## ", 1)[0]
        assert code.explanation in entry and code.severity.value in entry, code.id
        assert (f"```text\n{code.severity.value}[{code.id}]: " in entry) == (code.id in with_example), code.id


def test_every_knoc_toml_key_is_documented_and_the_example_loads(tmp_path: Path) -> None:
    page = GENERATED["reference/config.md"]
    for key in (*KNOC_KEYS, *HOST_KEYS, *SIGNING_KEYS):
        assert re.search(rf"^\| `{re.escape(key)}` \| \S", page, flags=re.M), key
    assert "## `[primary]`" in page
    example = page.split("```toml\n", 1)[1].split("```", 1)[0]
    tomllib.loads(example)
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    public = Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys/signing.pub.pem").write_bytes(public)
    (tmp_path / "knoc.toml").write_text(example, encoding="utf-8")
    config = load_config(tmp_path)
    assert (config.a2a, config.catalog_url) == ("1.0", "https://catalog.example.org/")


def test_every_file_of_the_example_build_is_documented() -> None:
    built = sorted(p.relative_to(ROOT / "build").as_posix() for p in (ROOT / "build").rglob("*") if p.is_file())
    assert [rel for rel in built if output_row(rel) is None] == []
    unsigned = {"site/<host>/.well-known/jwks.json"}  # the example is not signed
    unused = [row for row, _, _ in OUTPUT_FILES
              if row not in unsigned and not any(output_pattern(row).match(rel) for rel in built)]
    assert unused == []


def test_every_command_is_in_the_reference() -> None:
    page = GENERATED["reference/cli.md"]
    assert [path for path, _ in commands() if f"## `{path}`" not in page] == []


def test_the_site_builds_with_strict_checks(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site/reference/authoring/agent-blueprint/index.html").is_file()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    """Each ```sh block of the tutorial, in order, in one shell in an empty folder."""
    text = (DOCS / "tutorial.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M)
    assert len(blocks) >= 6
    script = "set -euo pipefail\n" + "\n".join(blocks).replace("8765", str(_free_port()))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "HOME": str(tmp_path), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org", "NO_COLOR": "1"}
    env.pop("GITHUB_ACTIONS", None)
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "valid: every client that reads this card" in done.stdout
    assert "| additive | capability `streaming` turned on | `false` | `true` |" in done.stdout
    assert (tmp_path / "hello/build/site/agents.acme.dev/.well-known/jwks.json").is_file()


HISTORY = re.compile(r"\b(this|last|previous|next) (stop|session|run of the bench)\b|\bissue \d+|\bstop \d+|"
                     r"\bseed \d{3}|\bcold look\b|\buntil this\b|\bwhat changed for\b", re.I)


@pytest.mark.parametrize("page", sorted([ROOT / "README.md", *DOCS.rglob("*.md")]), ids=lambda p: p.name)
def test_no_page_narrates_history(page: Path) -> None:
    """User pages say what is true now; the performance page keeps its
    earlier runs in a collapsed section, and the changelog is history."""
    if page.name == "changelog.md":
        return
    text = page.read_text(encoding="utf-8").split('??? note "Measurements in detail, and earlier runs"', 1)[0]
    assert [m.group(0) for m in HISTORY.finditer(text)] == []


def test_the_wire_names_are_the_cards_and_nothing_private_reaches_them() -> None:
    """Read off the example's own cards: a blueprint's url lands where each
    target puts it, and no private field of a legacy agent shows a place on
    the wire."""
    blueprint = GENERATED["reference/authoring/agent-blueprint.md"]
    url = next(line for line in blueprint.splitlines() if line.startswith("| `url` | string | yes"))
    assert "1.0: `supportedInterfaces[].url`" in url and "`url`)" in url
    legacy = GENERATED["reference/authoring/agent-card.md"]
    private = ("id", "slug", "title", "purpose", "visibility", "ownership", "perception", "goals", "boundaries",
               "budget_override", "provenance", "quality", "_history")
    for section in legacy.split("\n## ")[1:]:
        title = section.split("\n", 1)[0]
        rows = [line for line in section.splitlines() if line.startswith("| `") or line.startswith("| [`")]
        if title.startswith("`") and title.strip("`").split(".")[0].split("[")[0] in private:
            assert not any("On the wire" in row for row in rows), title
        if title == "Top level":
            assert not any("On the wire" in row for row in rows if row.split("`")[1] in private), title
    assert any("On the wire" in row for row in legacy.splitlines() if row.startswith("| `version`"))
