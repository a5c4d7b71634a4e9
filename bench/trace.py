"""The calls a build makes across knoc's packages, traced at run time.

    python bench/trace.py [REPO]        # default: the example repo (this one)

Runs `knoc build --no-cache --jobs 1` of REPO (in a copy) under a profile
hook and reports every pair of packages one calls into the other, how
often, which run *upward* (into a higher layer, against the import
order), and the deepest stack counted in package boundaries. A call into
a library and back (pydantic calling a validator) counts from the knoc
frame below it. tests/test_architecture.py holds the numbers to a bar."""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
import tempfile
import threading
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = str(ROOT / "knoc") + "/"


def _levels() -> dict[str, int]:
    """Each package's layer, 0 the highest: pyproject.toml's import-linter layers."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    layers = next(c["layers"] for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    return {name.strip().removeprefix("knoc."): level
            for level, layer in enumerate(layers) for name in layer.split("|")}


LEVEL = _levels()
LAZY = {"<genexpr>", "<listcomp>", "<setcomp>", "<dictcomp>"}


def package_of(filename: str) -> str | None:
    if not filename.startswith(PACKAGE):
        return None
    return filename[len(PACKAGE):].split("/", 1)[0].removesuffix(".py")


@dataclass
class Trace:
    pairs: Counter[tuple[str, str]] = field(default_factory=Counter)
    sites: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)  # caller -> callee, per pair
    deepest: tuple[str, ...] = ()
    exit_code: object = None  # what the traced build exited with

    @property
    def upward(self) -> dict[tuple[str, str], int]:
        return {p: n for p, n in self.pairs.items() if LEVEL[p[1]] < LEVEL[p[0]]}


def trace(work: Any) -> Trace:
    """Run `work()` and trace the package boundaries its calls cross."""
    found = Trace()
    # Per live frame: the chain of packages from the first knoc frame to it (boundaries only).
    chains: dict[FrameType, tuple[str, ...]] = {}

    def hook(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call":
            pkg = package_of(frame.f_code.co_filename)
            caller = frame.f_back
            chain = chains.get(caller, ()) if caller is not None else ()
            if pkg is not None:
                if not chain:
                    chain = (pkg,)
                elif chain[-1] != pkg and frame.f_code.co_name in LAZY:
                    chain = (*chain[:-1], pkg)  # a lower layer draws a generator: data passed down, no call up
                elif chain[-1] != pkg:
                    found.pairs[(chain[-1], pkg)] += 1
                    below = caller
                    while below is not None and package_of(below.f_code.co_filename) is None:
                        below = below.f_back
                    where = below.f_code.co_qualname if below is not None else "?"
                    found.sites.setdefault((chain[-1], pkg), Counter())[
                        f"{where} -> {frame.f_code.co_qualname}"] += 1
                    chain = (*chain, pkg)
                    if len(chain) > len(found.deepest):
                        found.deepest = chain
            if chain:
                chains[frame] = chain
        elif event == "return":
            chains.pop(frame, None)

    sys.setprofile(hook)
    threading.setprofile(hook)  # the writer threads too
    try:
        work()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return found


def build_trace(repo: Path) -> Trace:
    """A cold, single-process build of a copy of `repo`, traced."""
    from knoc.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "repo"
        copy.mkdir()
        for part in ("knoc.toml", "specs", "content"):
            if (repo / part).is_dir():
                shutil.copytree(repo / part, copy / part)
            elif (repo / part).is_file():
                shutil.copy(repo / part, copy / part)

        exit_code: list[object] = [0]

        def run() -> None:
            quiet = io.StringIO()  # the build's own report is not the trace's
            with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
                try:
                    main.main(["build", "--root", str(copy), "--no-cache", "--jobs", "1"], standalone_mode=False)
                except SystemExit as exc:
                    exit_code[0] = exc.code

        found = trace(run)
        found.exit_code = exit_code[0]
        return found


def main() -> None:
    repo = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    found = build_trace(repo)
    for (a, b), n in sorted(found.pairs.items(), key=lambda x: -x[1]):
        mark = "  UPWARD" if (a, b) in found.upward else ""
        print(f"{a:>12} -> {b:<12} {n:>7}{mark}")
    print(f"{len(found.pairs)} pairs, {sum(found.pairs.values())} calls, {len(found.upward)} upward")
    for pair in found.upward:
        print(f"{pair[0]} -> {pair[1]}: " + "; ".join(f"{s} ({n})" for s, n in found.sites[pair].most_common()))
    print(f"deepest: {len(found.deepest) - 1} boundaries: {' -> '.join(found.deepest)}")


if __name__ == "__main__":
    main()
