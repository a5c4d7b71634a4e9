"""The calls a build makes across knoc's packages, traced at run time.

    python bench/trace.py [REPO]        # default: the example repo (this one)

Runs `knoc build --no-cache --jobs 1` of REPO (in a copy), then a build
that fills the cache, then after an edit of one card a `knoc check` and a
`knoc build` (patched from the cache), then `knoc validate`, under a profile hook and an audit hook, and
reports every pair of packages one calls into the other, how often, which
run *upward* (into a higher layer, against the import order), the deepest
stack counted in package boundaries, and which package each contact with
the world outside the process (a file opened, a folder listed, a process
started) comes from. A call into a library and back (pydantic calling a
validator) counts from the knoc frame below it. `--json`: all of it as
one JSON document. tests/test_architecture.py holds the numbers to a bar."""

from __future__ import annotations

import contextlib
import io
import json
import re
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
# Audit events that touch the world outside the process (prefixes).
EDGE_EVENTS = ("open", "os.", "shutil.", "subprocess.", "socket.", "tempfile.", "mmap.", "fcntl.", "urllib.",
               "http.", "webbrowser.")


def package_of(filename: str) -> str | None:
    if not filename.startswith(PACKAGE):
        return None
    return filename[len(PACKAGE):].split("/", 1)[0].removesuffix(".py")


@dataclass
class Trace:
    pairs: Counter[tuple[str, str]] = field(default_factory=Counter)
    sites: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)  # caller -> callee, per pair
    deepest: tuple[str, ...] = ()
    exit_codes: list[int] = field(default_factory=list)  # what each traced command exited with
    # Contacts with the outside (audit events: files, folders, processes,
    # sockets), by the package of the nearest knoc frame, and where from.
    edges: Counter[tuple[str, str]] = field(default_factory=Counter)
    edge_sites: dict[str, Counter[str]] = field(default_factory=dict)

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
                    # a lower layer draws a generator: data passed down, no call up
                    chain = chain[:-1] if chain[-2:-1] == (pkg,) else (*chain[:-1], pkg)
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

    tracing, inside = [True], [False]

    def audit(event: str, _args: tuple[Any, ...]) -> None:
        if not tracing[0] or inside[0] or not event.startswith(EDGE_EVENTS):
            return
        inside[0] = True  # what the hook itself does is not traced
        try:
            frame: FrameType | None = sys._getframe(1)
            while frame is not None and package_of(frame.f_code.co_filename) is None:
                if "importlib" in frame.f_code.co_filename:
                    return  # a module being imported: the interpreter's reading, not knoc's
                frame = frame.f_back
            if frame is not None:
                pkg = package_of(frame.f_code.co_filename)
                assert pkg is not None
                found.edges[(pkg, event)] += 1
                found.edge_sites.setdefault(pkg, Counter())[f"{frame.f_code.co_qualname}: {event}"] += 1
        finally:
            inside[0] = False

    sys.addaudithook(audit)  # for good: run the trace in a process of its own (`main`)
    sys.setprofile(hook)
    threading.setprofile(hook)  # the writer threads too
    try:
        work()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        tracing[0] = False
    return found


# Cold (no cache), then cold filling the cache, then after an edit of one
# card: a check and a build patched from the cache; then a validate.
COMMANDS = (("build", "--no-cache", "--jobs", "1"), ("build", "--jobs", "1"), ("edit",), ("check",),
            ("build", "--jobs", "1"), ("validate", "--no-cache"))


def edit_a_card(repo: Path) -> None:
    """Change the description of the first card in `repo`'s content."""
    for path in sorted((repo / "content").rglob("*.kno")):
        text = path.read_text(encoding="utf-8")
        if "a2a_projection:" in text:
            head, _, card = text.partition("a2a_projection:")
            card = re.sub(r"(\n\s+description: )(.*)", r"\1\2 (edited)", card, count=1)
            path.write_text(f"{head}a2a_projection:{card}", encoding="utf-8")
            return


def build_trace(repo: Path) -> Trace:
    """The commands of `COMMANDS` on a copy of `repo`, traced."""
    from knoc.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "repo"
        copy.mkdir()
        for part in ("knoc.toml", "specs", "content"):
            if (repo / part).is_dir():
                shutil.copytree(repo / part, copy / part)
            elif (repo / part).is_file():
                shutil.copy(repo / part, copy / part)
        exit_codes: list[int] = []

        def run() -> None:
            quiet = io.StringIO()  # the commands' own reports are not the trace's
            with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
                for command, *options in COMMANDS:
                    if command == "edit":
                        edit_a_card(copy)
                        continue
                    try:
                        main.main([command, "--root", str(copy), *options], standalone_mode=False)
                        exit_codes.append(0)
                    except SystemExit as exc:
                        exit_codes.append(exc.code if isinstance(exc.code, int) else 1)

        found = trace(run)
        found.exit_codes = exit_codes
        return found


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--json"]
    found = build_trace(Path(args[0]) if args else ROOT)
    if "--json" in sys.argv:
        print(json.dumps({"exit_codes": found.exit_codes, "deepest": found.deepest,
                          "pairs": [[a, b, n] for (a, b), n in sorted(found.pairs.items())],
                          "upward": [[a, b] for a, b in sorted(found.upward)],
                          "sites": {f"{a} -> {b}": dict(c) for (a, b), c in found.sites.items()},
                          "edges": [[p, e, n] for (p, e), n in sorted(found.edges.items())],
                          "edge_sites": {p: dict(c) for p, c in found.edge_sites.items()}}))
        return
    for (a, b), n in sorted(found.pairs.items(), key=lambda x: -x[1]):
        mark = "  UPWARD" if (a, b) in found.upward else ""
        print(f"{a:>12} -> {b:<12} {n:>7}{mark}")
    print(f"{len(found.pairs)} pairs, {sum(found.pairs.values())} calls, {len(found.upward)} upward")
    for pair in found.upward:
        print(f"{pair[0]} -> {pair[1]}: " + "; ".join(f"{s} ({n})" for s, n in found.sites[pair].most_common()))
    for (pkg, event), n in sorted(found.edges.items()):
        print(f"edge: {pkg:>12} {event:<20} {n:>6}")
    print(f"deepest: {len(found.deepest) - 1} boundaries: {' -> '.join(found.deepest)}")


if __name__ == "__main__":
    main()
