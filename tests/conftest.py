from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from knoc.cli import main
from knoc.config import load_config
from knoc.incremental.driver import Result, compile_repo

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_PARTS = ("knoc.toml", "specs", "content")


def compile_example(target: str | None = None, root: Path = ROOT) -> Result:
    return compile_repo(load_config(root, target))


@pytest.fixture(autouse=True)
def _not_in_github_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under GITHUB_ACTIONS=true knoc defaults to annotations; tests pick a format."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A private copy of the example content repo, not yet built."""
    for part in EXAMPLE_PARTS:
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(src, tmp_path / part)
        else:
            shutil.copy(src, tmp_path / part)
    return tmp_path


@pytest.fixture
def knoc() -> Callable[..., Any]:
    """Run the CLI in-process: knoc("build", root=path) -> (exit code, stdout, stderr),
    from the repo's root, as its author runs it (a FILE named is found there)."""

    def run(*args: str, root: Path) -> tuple[int, str, str]:
        with contextlib.chdir(root if root.is_dir() else Path.cwd()):
            result = CliRunner().invoke(main, [*args, "--root", str(root)], catch_exceptions=False)
        return result.exit_code, result.stdout, result.stderr

    return run


def json_diags(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def rejected_by_manifest(files: dict[str, bytes]) -> bool:
    """Whether a reader that checks build/ against its manifest refuses it."""
    try:
        outputs = json.loads(files["manifest.json"])["outputs"]
    except (KeyError, ValueError):
        return True
    listed = {*outputs, "manifest.json"}
    return set(files) != listed or any(hashlib.sha256(files[p]).hexdigest() != d for p, d in outputs.items())


# Helpers for tests that edit a copy of the example and read its findings.
Knoc = Callable[..., Any]


def edit(repo: Path, rel: str, old: str, new: str) -> None:
    path = repo / rel
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def findings(knoc: Knoc, repo: Path) -> tuple[int, list[dict[str, Any]]]:
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    return code, json_diags(out)


def line_of(repo: Path, rel: str, needle: str, occurrence: int = 1) -> int:
    lines = (repo / rel).read_text(encoding="utf-8").splitlines()
    hits = [i for i, line in enumerate(lines, 1) if needle in line]
    return hits[occurrence - 1]


def one(diags: list[dict[str, Any]], code: str) -> dict[str, Any]:
    hits = [d for d in diags if d["code"] == code]
    assert len(hits) == 1, diags
    return hits[0]


@pytest.fixture
def signing_key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh Ed25519 key, outside any repo (`knoc keys new`)."""
    key = tmp_path_factory.mktemp("key") / "k.pem"
    assert CliRunner().invoke(main, ["keys", "new", str(key)]).exit_code == 0
    return key


# Clients and tools the tests install (the SDKs of the client matrix, yaml-language-server), once per machine.
CACHE = Path(os.environ.get("KNOC_INTEROP_CACHE", Path.home() / ".cache" / "knoc-interop"))
INSTALL_TIMEOUT = 900


def installed_once(folder: Path, install: list[list[str]]) -> Path:
    """Run `install` into `folder` once; a folder without its .ready mark is rebuilt."""
    if (folder / ".ready").is_file():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for command in install:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        if done.returncode != 0:
            pytest.fail(f"cannot install a client the tests need ({' '.join(command)}):\n{done.stdout[-3000:]}"
                        f"\n{done.stderr[-3000:]}")
    (folder / ".ready").write_text("ok\n")
    return folder


def npm_installed(package: str) -> Path:
    """The folder whose node_modules holds `package` (name@version), installed once."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.fail(f"{package} needs node and npm on the PATH")
    folder = CACHE / f"js-{hashlib.sha256(package.encode()).hexdigest()[:12]}"
    return installed_once(folder, [[npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--silent",
                                    package]])
