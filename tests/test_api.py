"""The Python API, as a program uses it: `knoc.compile` gives what a build
writes, without writing; `knoc.DomainIndex` reads the runtime index; the
package is typed; the docs page's example runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import knoc
from tests.conftest import ROOT, tree


def test_compile_gives_the_bytes_a_build_writes(repo: Path) -> None:
    build = knoc.compile(repo)
    assert build.ok and build.target == "1.0"
    assert not (repo / "build").exists() and not (repo / ".knoc-cache").exists()  # nothing written
    assert dict(build.files) == tree(ROOT / "build")
    assert build.cards["catalog-search"]["name"] == "Catalog Search"
    assert set(knoc.compile(repo, a2a="0.3").cards["catalog-search"]) >= {"url", "protocolVersion"}


def test_findings_are_diagnostics_and_a_bad_config_raises(repo: Path) -> None:
    steward = repo / "content/agent-blueprints/schema-steward.kno"
    steward.write_text(steward.read_text(encoding="utf-8").replace("streaming: true", "streaming: maybe"),
                       encoding="utf-8")
    build = knoc.compile(repo)
    [found] = [d for d in build.diagnostics if d.is_error]
    assert not build.ok and build.files == {} and isinstance(found, knoc.Diagnostic)
    assert found.code == "KNO-SCHEMA-TYPE" and found.file == "content/agent-blueprints/schema-steward.kno"
    assert found.message.endswith("expected a boolean, found a string")
    steward.write_text(steward.read_text(encoding="utf-8").replace("streaming: maybe", "streaming: true")
                       .replace("max_invocation_tokens: 120000", "max_invocation_tokens: lots"), encoding="utf-8")
    [found] = [d for d in knoc.compile(repo).diagnostics if d.is_error]
    assert found.message.endswith("expected an integer, found a string"), found.message
    with pytest.raises(knoc.ConfigError):
        knoc.compile(repo, a2a="9.9")
    for nowhere in (repo / "no-such-folder", repo / "knoc.toml", repo / "content"):  # never a hang, never a guess
        with pytest.raises(knoc.ConfigError):
            knoc.compile(nowhere)


def test_the_package_is_typed_and_exports_only_its_api() -> None:
    assert (Path(knoc.__file__).parent / "py.typed").is_file()
    assert set(knoc.__all__) == {"Build", "ConfigError", "Diagnostic", "DomainIndex", "__version__", "compile"}
    with pytest.raises(AttributeError):
        _ = knoc.Tree  # type: ignore[attr-defined]


def test_the_docs_example_runs(tmp_path: Path) -> None:
    page = (ROOT / "docs/reference/python-api.md").read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```", page, flags=re.S)
    assert example is not None
    done = subprocess.run([sys.executable, "-c", example.group(1)], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert "['catalog-search', 'schema-steward']" in done.stdout
