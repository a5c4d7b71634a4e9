"""The shape of knoc, held by its import graph: folders are layers, each
importing only those below it; the CLI touches no edge; every contact
with disk, network and processes is in io/; no module grows past about
400 lines. The code map (docs/contributing/architecture.md) states the same order."""

from __future__ import annotations

import ast
import graphlib
import re
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "knoc"
# Highest first; a folder may import its own modules and any folder after it.
LAYERS = ("cli", "app", "tools", "compiler", "output", "kinds", "a2a", "diagnostics", "io", "rules")
TOP_LEVEL = {"__init__", "__main__", "config"}
# Where the top-level modules sit: config is read by the compiler and above.
RANK = {**{name: len(LAYERS) - i for i, name in enumerate(LAYERS)},
        "__main__": len(LAYERS) + 1, "config": len(LAYERS) - LAYERS.index("compiler") - 0.5, "__init__": -1}
MAX_LINES = 400
# Contact with the outside world: only io/ may do these.
EDGE_IMPORTS = {"subprocess", "shutil", "tempfile", "socket", "threading", "multiprocessing", "urllib.request",
                "http.server", "http.client", "marshal"}
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


def test_no_import_runs_upward_and_no_module_cycle() -> None:
    upward = sorted(f"{a} -> {b}" for a, deps in graph().items() for b in deps
                    if room(a) != room(b) and RANK[room(a)] <= RANK[room(b)])
    assert upward == []
    graphlib.TopologicalSorter(graph()).prepare()  # raises CycleError on any cycle between modules


def test_the_cli_touches_no_edge() -> None:
    reaching = sorted(f"{a} -> {b}" for a, deps in graph().items() if room(a) == "cli"
                      for b in deps if room(b) == "io")
    assert reaching == []


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
             "print(sorted(m for m in ('pydantic', 'knoc.compiler.driver', 'knoc.a2a.wire') if m in sys.modules))")
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"
