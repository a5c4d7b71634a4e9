"""Benchmark: generate repos of 1,000 and 10,000 agents; time a cold
`knoc build` (no build/, no cache) in a fresh process, its peak memory, and
a warm `knoc check` after editing one blueprint (the pre-commit case), and
a `knoc build` with nothing changed (which writes nothing).

    python bench/run.py [--sizes 1000 10000] [--chain-sizes 1000 10000] [--repeat 3] [--only build|chains]
                        [--peers]

With --peers it also times, on the same repos in the same run, the floor
(../shared/tools/floor: parse, fast-validate and write two card files per
public agent, in one process) and check-jsonschema validating the same
blueprints against the bundled blueprint schema (installed into a venv of
its own under ~/.cache/knoc-bench), and prints knoc's ratios to both.

Each run is a new interpreter with a removed build/, so imports, spec
compilation and every file are paid for: what a CI job or a hook sees. Times
are medians of --repeat runs. `knoc validate` does all the work but writing,
so the difference between the two columns is the disk."""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_chain import write_chain
from gen_repo import generate

MEASURE = ("import resource, subprocess, sys, time;"
           "t = time.perf_counter();"
           "rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL);"
           "wall = time.perf_counter() - t;"
           "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss;"
           "print(rc, wall, rss)")


def cold(command: str, repo: Path) -> tuple[float, float]:
    shutil.rmtree(repo / "build", ignore_errors=True)
    shutil.rmtree(repo / ".knoc-cache", ignore_errors=True)
    return timed(command, repo)


def warm_check(repo: Path, i: int) -> float:
    """`knoc check` after editing one blueprint's card description, with the
    cache a previous build or check left: what a pre-commit hook sees."""
    blueprint = repo / "content/agent-blueprints/agent-000123.kno"
    text = blueprint.read_text(encoding="utf-8")
    blueprint.write_text(text.replace("  description: ", f"  description: (edit {i}) ", 1), encoding="utf-8")
    return timed("check", repo, expect="1")[0]  # 1: build/ drifted, as it should


# knoc runs as an installed tool does: with its bytecode cached (pip compiles it
# at install). Some environments switch that off for every process.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(command: str, repo: Path, expect: str = "0") -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-m", "knoc", command,
                          "--root", str(repo)], capture_output=True, text=True, check=True, env=ENV)
    rc, wall, rss_kb = out.stdout.split()
    if rc != expect:
        raise SystemExit(f"knoc {command} on {repo}: exit {rc}, expected {expect}")
    return float(wall), int(rss_kb) / 1024


def chain_table(sizes: list[int], repeat: int) -> None:
    """`knoc validate` over one long chain of `composes` or `extends` links,
    next to the same entities and links as N one-link chains (a star): the
    link stage's walks are linear, so the two grow alike."""
    print("\n| links | entities | N one-link chains | one chain of N | chain / one-link |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="knoc-bench-chain-") as tmp:
        for link in ("composes", "extends"):
            for n in sizes:
                times = []
                for star in (True, False):
                    repo = write_chain(Path(tmp) / f"{link}-{n}-{star}", n, link, star=star)
                    times.append(statistics.median(cold("validate", repo)[0] for _ in range(repeat)))
                print(f"| {link} | {n:,} | {times[0]:.2f} s | {times[1]:.2f} s | {times[1] / times[0]:.2f} |",
                      flush=True)


SHARED_TOOLS = Path(__file__).resolve().parents[2] / "shared" / "tools"
PEER_VENV = Path.home() / ".cache" / "knoc-bench" / "check-jsonschema-0.39.0"


def peer_table(sizes: list[int], repeat: int) -> None:
    """knoc next to the floor (one process) and to check-jsonschema, on the
    same generated repos, in the same run."""
    floor, bundle = SHARED_TOOLS / "floor", SHARED_TOOLS / "bundle-schema"
    if not floor.is_file():
        raise SystemExit(f"--peers needs {floor} (the shared tools beside this checkout)")
    if not (PEER_VENV / "bin" / "check-jsonschema").is_file():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run([str(PEER_VENV / "bin" / "pip"), "install", "-q", "check-jsonschema==0.39.0"], check=True)
    print("\n| agents | knoc cold build | floor (1 process) | knoc / floor | check-jsonschema (validate only) "
          "| knoc / check-jsonschema |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n, repo, tmp in repos(sizes, "knoc-bench-peers-"):
        schema = tmp / "blueprint.schema.json"
        subprocess.run([sys.executable, str(bundle), str(repo / "specs"), "agent-blueprint-schema", str(schema)],
                       check=True)
        knoc = statistics.median(cold("build", repo)[0] for _ in range(repeat))
        floors = []
        for _ in range(repeat):
            out = tmp / "floor-out"
            shutil.rmtree(out, ignore_errors=True)
            floors.append(run_timed([sys.executable, str(floor), str(repo / "content"), str(schema), str(out),
                                     "1"]))
        blueprints = sorted(str(p) for p in (repo / "content/agent-blueprints").glob("*.kno"))
        peer = run_timed([str(PEER_VENV / "bin" / "check-jsonschema"), "--default-filetype", "yaml",
                          "--schemafile", str(schema), *blueprints])
        f = statistics.median(floors)
        print(f"| {n:,} | {knoc:.2f} s | {f:.2f} s | {knoc / f:.2f} | {peer:.2f} s | {knoc / peer:.2f} |",
              flush=True)


def repos(sizes: list[int], prefix: str) -> Iterator[tuple[int, Path, Path]]:
    """(agents, a generated repo of that many, the scratch folder), each removed after use."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        for n in sizes:
            repo = Path(tmp) / f"repo-{n}"
            generate(repo, n)
            yield n, repo, Path(tmp)


def run_timed(command: list[str]) -> float:
    """Wall time of a command in a fresh process, which must succeed."""
    out = subprocess.run([sys.executable, "-c", MEASURE, *command], capture_output=True, text=True, check=True,
                         env=ENV)
    rc, wall, _ = out.stdout.split()
    if rc != "0":
        raise SystemExit(f"{command[0]}: exit {rc}")
    return float(wall)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--chain-sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=("build", "chains"), help="Run one of the two tables.")
    ap.add_argument("--peers", action="store_true", help="Also time the floor and check-jsonschema (see above).")
    args = ap.parse_args()
    if args.peers:
        peer_table(args.sizes, args.repeat)
    if args.only != "chains":
        build_table(args.sizes, args.repeat)
    if args.only != "build":
        chain_table(args.chain_sizes, args.repeat)


def build_table(sizes: list[int], repeat: int) -> None:
    print(f"# knoc cold build, {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} cores")
    print("| agents | files | cold build | of which compiling (validate) | peak RSS "
          "| warm check after a one-file edit | warm / cold | no-op build |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, repo, _ in repos(sizes, "knoc-bench-"):
        files = sum(1 for _ in repo.rglob("*.kno"))
        builds = [cold("build", repo) for _ in range(repeat)]
        checks = [cold("validate", repo) for _ in range(repeat)]
        timed("build", repo)  # leaves build/ and a filled cache, as a content repo has
        warm = statistics.median(warm_check(repo, i) for i in range(repeat))
        timed("build", repo)  # the edits, written
        noop = statistics.median(timed("build", repo)[0] for _ in range(repeat))  # nothing changed
        wall = statistics.median(r[0] for r in builds)
        compiling = statistics.median(r[0] for r in checks)
        rss = max(r[1] for r in builds)
        print(f"| {n:,} | {files:,} | {wall:.2f} s | {compiling:.2f} s | {rss:.0f} MiB "
              f"| {warm:.2f} s | {100 * warm / wall:.1f}% | {noop:.2f} s |", flush=True)


if __name__ == "__main__":
    main()
