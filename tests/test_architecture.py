"""The shape of knoc: folders are layers, each importing only those below
it, the CLI and the compiler import no edge (import-linter's contracts in
pyproject.toml); every contact with disk, network and processes is in
io/, in the source and when a build runs; calls go up the layers only
where they are known to; no module cycle; no module grows past about 400
lines. The code map (docs/contributing/architecture.md) states the same
order."""

from __future__ import annotations

import ast
import graphlib
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "knoc"
# Highest first; a folder may import its own modules and any folder after it.
LAYERS = ("cli", "app", "features", "evolution", "incremental", "compiler", "output", "kinds", "a2a", "diagnostics", "io", "yaml", "rules")
TOP_LEVEL = {"__init__", "__main__", "config", "api", "version"}
MAX_LINES = 400
# Contact with the outside world: only io/ may do these.
EDGE_IMPORTS = {"urllib.request"}  # the rest: import-linter's contract (a submodule of urllib it cannot name)
EDGE_CALLS = re.compile(r"(?<![\w.])open\(|(?<!files)(?<!tree)(?<!disk)\.(read_bytes|write_bytes|read_text|write_text|mkdir|unlink|rmdir|iterdir|"
                        r"glob|rglob|is_file|is_dir|exists)\(|\bos\.(replace|rename|stat|walk|scandir|fork|pipe|"
                        r"remove|chmod)\(")


def modules() -> dict[str, Path]:
    return {p.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__"): p
            for p in PACKAGE.rglob("*.py")}


def runtime_imports(path: Path, known: set[str] = frozenset()) -> set[str]:  # type: ignore[assignment]
    """Every module this file imports, at any depth (a command's lazy
    imports count), except those only a type checker reads. `from pkg
    import mod` counts as importing `mod` when it is one of `known`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for child in node.body for n in ast.walk(child))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & known
            found |= submodules if len(submodules) == len(node.names) else {node.module, *submodules}
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: {m for m in runtime_imports(path, set(mods)) if m in mods and m != name}
            for name, path in mods.items()}


def room(module: str) -> str:
    """The folder (layer) of a knoc module, or its name for a top-level module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_the_package_is_a_handful_of_modules_and_the_layer_folders() -> None:
    top = {p.stem for p in PACKAGE.glob("*.py")}
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert top == TOP_LEVEL
    assert folders == set(LAYERS)


def test_the_import_contracts_hold() -> None:
    """import-linter holds the layers (pyproject.toml's contracts): each
    imports only those below it, the CLI no edge, and only io/ reaches
    processes, threads and the network."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c["layers"] for c in contracts["contracts"] if c["type"] == "layers")
    named = [m.strip().removeprefix("knoc.") for layer in layers for m in layer.split("|")]
    assert [m for m in named if m in LAYERS] == list(LAYERS)
    done = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0 and "0 broken" in done.stdout, done.stdout + done.stderr


def test_no_module_cycle() -> None:
    graphlib.TopologicalSorter(graph()).prepare()  # raises CycleError on any cycle between modules


def test_only_io_touches_disk_network_and_processes() -> None:
    offenders = []
    for name, path in modules().items():
        if room(name) == "io":
            continue
        text = path.read_text(encoding="utf-8")
        offenders += [f"{name} imports {m}" for m in sorted(runtime_imports(path) & EDGE_IMPORTS)]
        offenders += [f"{name}:{i}: {line.strip()}" for i, line in enumerate(text.splitlines(), 1)
                      if EDGE_CALLS.search(line) and not line.lstrip().startswith("#")]
    assert offenders == []


def test_no_module_is_long() -> None:
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


# Lines that name typing.Any: a third-party signature copied as it is, or a
# value a library hands back untyped. Parsed JSON is a JsonValue
# (knoc.rules.json), a stored record's field a Stored, anything else unknown
# an `object` narrowed where it is read.
MAX_ANY = 60


def test_any_is_kept_for_what_cannot_be_typed() -> None:
    lines = [f"{name}:{i}" for name, path in modules().items()
             for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if re.search(r"\bAny\b", line)]
    assert len(lines) <= MAX_ANY, lines


def test_the_code_map_lists_the_layers_in_order() -> None:
    readme = (ROOT / "docs/contributing/architecture.md").read_text(encoding="utf-8")
    code_map = readme.split("## Code map", 1)[1]
    listed = re.findall(r"^\| `knoc/(\w+)/` \|", code_map, flags=re.M)
    assert tuple(listed) == LAYERS


def test_the_command_line_starts_without_the_compiler() -> None:
    """`knoc check` begins scanning build/ on another core before it imports
    the compiler and the card models: the CLI itself must not import them."""
    import subprocess
    import sys

    probe = ("import sys, knoc.cli; "
             "print(sorted(m for m in ('pydantic', 'knoc.incremental.driver', 'knoc.a2a.wire') if m in sys.modules))")
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"


@pytest.mark.parametrize("command", ["build", "check"])
def test_a_repo_that_does_not_sign_never_loads_the_key_reader(repo: Path, command: str) -> None:
    """A build or check with no key given, nothing pinned and nothing signed
    reads no key, so it loads neither knoc's key reader nor `cryptography`
    (about 10 ms of its start-up), nor the signing code."""
    from knoc.config import SIGNING_KEY_ENV
    from knoc.io import keys

    assert keys.ENV == SIGNING_KEY_ENV  # the variable knoc looks at is the one the reader reads
    probe = (f"import sys\nfrom knoc.cli import main\nsys.argv = ['knoc', '{command}', '--root', sys.argv[1]]\n"
             "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code in (0, 1), exc.code\n"
             "print(sorted(m for m in ('cryptography', 'knoc.io.keys', 'knoc.a2a.signing') if m in sys.modules))")
    env = {k: v for k, v in os.environ.items() if k != SIGNING_KEY_ENV}
    found = subprocess.run([sys.executable, "-c", probe, str(repo)], capture_output=True, text=True, check=True,
                           env=env)
    assert found.stdout.strip().splitlines()[-1] == "[]"


# The deepest stack, in package boundaries crossed (docs/contributing/architecture.md,
# "Calls up the layers"). No call runs upward: the worker pool's call into the
# engine, the one declared seam, happens in forked workers, outside the trace.
MAX_BOUNDARIES = 5


@pytest.fixture(scope="module")
def traced() -> dict[str, Any]:
    """Builds, a check and a validate of the example repo, traced (bench/trace.py)
    in a process of its own: its audit hook cannot be removed."""
    done = subprocess.run([sys.executable, str(ROOT / "bench/trace.py"), "--json"], capture_output=True, text=True,
                          check=True, timeout=600, cwd=ROOT)
    found: dict[str, Any] = json.loads(done.stdout)
    # Every command ran to its end; the check after the edit finds build/ stale.
    assert found["exit_codes"] == [0, 0, 1, 0, 0], done.stderr
    return found


def test_no_call_runs_up_the_layers_and_stacks_stay_shallow(traced: dict[str, Any]) -> None:
    pairs = {(a, b) for a, b, _ in traced["pairs"]}
    assert {("app", "incremental"), ("incremental", "compiler"), ("compiler", "kinds")} <= pairs  # it sees a build
    assert traced["upward"] == [], traced["sites"]
    assert len(traced["deepest"]) - 1 <= MAX_BOUNDARIES, traced["deepest"]


def test_only_io_touches_the_world_at_run_time(traced: dict[str, Any]) -> None:
    """Every file opened, folder listed or made, file renamed or removed,
    process started or lock taken comes from knoc.io (libraries included:
    jinja's templates are read through it too)."""
    assert {event for _, event, _ in traced["edges"]} >= {"open", "os.scandir", "os.rename"}
    assert {pkg for pkg, _, _ in traced["edges"]} == {"io"}, traced["edge_sites"]
