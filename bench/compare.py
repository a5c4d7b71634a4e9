"""Two versions of knoc on the same generated repo, runs interleaved:

    python bench/compare.py BASE_REF [--sizes 10000 100000] [--rounds 4]

BASE_REF (a commit, tag or branch) is checked out into a temporary git
worktree; the other version is this checkout (its `knoc/`, copied when the
comparison starts). For each size, each version
gets a repo of its own, generated alike (bench/gen_repo.py), and in each
round, the order of the two versions alternating, each runs: a cold build
(no build/, no cache), a check after editing one blueprint, a build after
another edit, a build with nothing changed, and a check with nothing
changed (bench/measure.py: wall time, CPU time, peak memory). It prints
each row's median for both and the change; a machine whose disk is busy
moves wall times by a fifth from run to run, which the alternation and the
medians even out. `make bench` measures one version against the floor and
the peer; this says whether a change made knoc slower or larger.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_repo import generate
from run import Cost, edit_one, measure, set_aside

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ROWS = ("cold build", "check after an edit", "build after an edit", "build, nothing changed", "check, nothing changed")


def knoc(version: Path, command: str, repo: Path, expect: int = 0) -> Cost:
    # env execs the interpreter in its own place: the process measured is knoc's
    return measure(["env", f"PYTHONPATH={version}", sys.executable, "-P", "-m", "knoc", command, "--root", str(repo)],
                   expect=expect)


def one_round(version: Path, repo: Path, scratch: Path, i: int) -> list[Cost]:
    set_aside(scratch, repo / "build", repo / ".knoc-cache")
    cold = knoc(version, "build", repo)
    edit_one(repo, f"(check {i})")
    check = knoc(version, "check", repo, expect=1)  # 1: build/ drifted, as it should
    edit_one(repo, f"(build {i})")
    return [cold, check, knoc(version, "build", repo), knoc(version, "build", repo), knoc(version, "check", repo)]


def compare(versions: dict[str, Path], n: int, rounds: int, scratch: Path) -> None:
    repos = {name: scratch / f"{name}-{n}" for name in versions}
    for repo in repos.values():
        generate(repo, n)
    costs: dict[str, list[list[Cost]]] = {name: [] for name in versions}
    for i in range(rounds):
        order = list(versions) if i % 2 == 0 else list(reversed(versions))
        for name in order:
            costs[name].append(one_round(versions[name], repos[name], scratch, i))
    base, new = list(versions)
    print(f"\n{n:,} agents, {rounds} rounds (medians): {base} -> {new}")
    print(f"| {'':<24} | wall | CPU | peak memory |")
    print("|---|---|---|---|")
    for r, row in enumerate(ROWS):
        cells = []
        for key, unit in (("wall", "s"), ("cpu", "s"), ("peak_mib", " MiB")):
            a = statistics.median(c[r][key] for c in costs[base])
            b = statistics.median(c[r][key] for c in costs[new])
            cells.append(f"{a:.2f}{unit} -> {b:.2f}{unit} ({(b - a) / a:+.1%})")
        print(f"| {row:<24} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("base", help="the commit, tag or branch to compare this checkout with")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="knoc-compare-") as tmp:
        scratch = Path(tmp)
        worktree = scratch / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(worktree), args.base],
                       check=True)
        this = scratch / "this"  # a copy: an edit meanwhile is not measured, nor moves the cache's salt
        shutil.copytree(ROOT / "knoc", this / "knoc", ignore=shutil.ignore_patterns("__pycache__"))
        try:
            for n in args.sizes:
                compare({args.base: worktree, "this checkout": this}, n, args.rounds, scratch)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)], check=False)


if __name__ == "__main__":
    main()
