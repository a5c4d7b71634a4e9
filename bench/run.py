"""Benchmark: knoc next to the floor and check-jsonschema, in one run.

    python bench/run.py [--sizes 1000 10000 100000] [--repeat 3] [--repeat-large 3]
                        [--only build|chains|editor|watch] [--chain-sizes 1000 10000] [--editor-size 10000]

For each size it generates a repo (bench/gen_repo.py) and measures, each in
a fresh process (bench/measure.py: wall time, CPU time of the whole process
tree, peak memory of the whole tree):

- knoc cold build: no build/, no cache; imports, specs and every file paid for;
- knoc validate: the same, without writing (the difference is the disk);
- knoc warm check after editing one blueprint, with the cache a build left
  (the pre-commit case), a knoc build after such an edit, and a knoc build
  with nothing changed;
- the floor (../shared/tools/floor, one process: parse, fast-validate and
  write two card files per public agent), on the same repo;
- check-jsonschema 0.39.0 validating the same blueprints against the
  bundled blueprint schema (installed into a venv under ~/.cache/knoc-bench).
  Its command line takes 20,000 files at a time; the batches are summed.

Times are the run with the median wall time of --repeat runs (--repeat-large
for 100,000 agents and more, where check-jsonschema runs once: a quarter of
an hour a run; at least five for the warm check and the no-op
build, which take a second or two, timed once the machine has settled from
the builds' writes: see `settle`); peak memory is the largest of them. Then the
ratios the README quotes: knoc's cold build over the floor's and over
check-jsonschema's, time(largest) / time(10,000), and the no-op build over
the warm check."""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from editor import editor_table
from gen_chain import write_chain
from gen_repo import generate
from watch import watch_table

HERE = Path(__file__).resolve().parent
SHARED_TOOLS = HERE.parents[1] / "shared" / "tools"
PEER_VENV = Path.home() / ".cache" / "knoc-bench" / "check-jsonschema-0.39.0"
LARGE = 100_000
BATCH = 20_000  # files per check-jsonschema command line (the kernel caps its length)
QUICK_RUNS = 5  # runs of the warm check and the no-op build, at least, at any size
SETTLE_PAUSE, SETTLE_LEAST, SETTLE_MOST = 20, 300, 900  # seconds (see `settle`)
# knoc runs as an installed tool does: with its bytecode cached (pip compiles it
# at install). Some environments switch that off for every process.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


class Cost(dict[str, float]):
    """What one run cost: wall, cpu (seconds) and peak_mib."""


def measure(command: list[str], cwd: Path | None = None, expect: int = 0) -> Cost:
    out = subprocess.run([sys.executable, str(HERE / "measure.py"), *(["--cwd", str(cwd)] if cwd else []), "--",
                          *command], capture_output=True, text=True, check=True, env=ENV)
    got = json.loads(out.stdout)
    if got["rc"] != expect:
        raise SystemExit(f"{' '.join(command[:4])} ...: exit {got['rc']}, expected {expect}")
    return Cost(wall=got["wall"], cpu=got["cpu"], peak_mib=got["peak_mib"])


def knoc(command: str, repo: Path, expect: int = 0) -> Cost:
    # -P: not the working directory first on the path, which would find this checkout's knoc, not the copy
    return measure([sys.executable, "-P", "-m", "knoc", command, "--root", str(repo)], expect=expect)


def cold(command: str, repo: Path) -> Cost:
    set_aside(repo.parent, repo / "build", repo / ".knoc-cache")
    return knoc(command, repo)


def set_aside(scratch: Path, *paths: Path) -> None:
    """Move these out of a cold run's way, into a new folder in the bench's
    `scratch` folder (the same disk), which is deleted when the bench ends,
    instead of deleting them now. On the machine the README's numbers come
    from (ext4 with no journal), creating files within a minute or so of
    deleting tens of thousands costs up to 20 s of kernel CPU
    (`recently_deleted` in the inode allocator): a cold build or a floor
    run right after its old tree was deleted paid anything from 2 s to 20 s
    for it, by chance. A cold build in a fresh clone, what the row stands
    for, pays none."""
    for path in paths:
        if path.exists():
            path.rename(Path(tempfile.mkdtemp(dir=scratch, prefix="set-aside-")) / path.name)


def warm_check(repo: Path, i: int) -> Cost:
    """`knoc check` after editing one blueprint's card description, with the
    cache a previous build or check left: what a pre-commit hook sees."""
    edit_one(repo, f"(edit {i})")
    return knoc("check", repo, expect=1)  # 1: build/ drifted, as it should


def edit_build(repo: Path, i: int) -> Cost:
    """`knoc build` after editing one blueprint, with the build/ and the
    cache the previous build left: what an author runs after each change."""
    edit_one(repo, f"(rebuild {i})")
    return knoc("build", repo)


def edit_one(repo: Path, mark: str) -> None:
    """Its card's description, in place (the line at two spaces' indent: a
    persona goal's `description`, deeper, reaches no card)."""
    blueprint = repo / "content/agent-blueprints/agent-000123.kno"
    text = blueprint.read_text(encoding="utf-8")
    blueprint.write_text(text.replace("\n  description: ", f"\n  description: {mark} ", 1), encoding="utf-8")


def settle(repo: Path, least: float) -> None:
    """Wait until the machine has settled from the builds' writes before the
    warm paths are timed. On the 2-core VM these numbers come from, a check
    in the 3-5 minutes after 700,000 files were written (the cold builds,
    the floor's cards, the rebuilds) runs up to a third slower than it does
    later, and two such checks in a row agree with each other; a pre-commit
    hook runs in the steady state. So: `sync`, then a check every
    SETTLE_PAUSE seconds until at least `least` seconds have passed and two
    in a row agree within 3% (at most SETTLE_MOST seconds). The README
    gives both numbers."""
    subprocess.run(["sync"], check=False)
    start, last = time.monotonic(), None
    while time.monotonic() - start < SETTLE_MOST:
        time.sleep(SETTLE_PAUSE)
        wall = knoc("check", repo)["wall"]  # nothing edited: exit 0
        if time.monotonic() - start >= least and last is not None and abs(wall - last) <= 0.03 * last:
            return
        last = wall


def median(runs: int, run: Callable[[int], Cost]) -> Cost:
    return pick([run(i) for i in range(runs)])


def pick(costs: list[Cost]) -> Cost:
    """The run with the median wall time, with the peak memory of them all."""
    costs = sorted(costs, key=lambda c: c["wall"])
    mid = Cost(costs[(len(costs) - 1) // 2])
    mid["peak_mib"] = max(c["peak_mib"] for c in costs)
    return mid


def floor(repo: Path, schema: Path, scratch: Path) -> Cost:
    set_aside(scratch, scratch / "floor-out")
    return measure([sys.executable, str(SHARED_TOOLS / "floor"), str(repo / "content"), str(schema),
                    str(scratch / "floor-out"), "1"])


def check_jsonschema(repo: Path, schema: Path) -> Cost:
    blueprints = sorted(p.relative_to(repo).as_posix() for p in (repo / "content/agent-blueprints").glob("*.kno"))
    total = Cost(wall=0.0, cpu=0.0, peak_mib=0.0)
    for i in range(0, len(blueprints), BATCH):
        c = measure([str(PEER_VENV / "bin" / "check-jsonschema"), "--default-filetype", "yaml", "--schemafile",
                     str(schema), *blueprints[i:i + BATCH]], cwd=repo)
        total["wall"] += c["wall"]
        total["cpu"] += c["cpu"]
        total["peak_mib"] = max(total["peak_mib"], c["peak_mib"])
    return total


def peers_ready() -> None:
    if not (SHARED_TOOLS / "floor").is_file():
        raise SystemExit(f"the benchmark needs {SHARED_TOOLS}/floor (the shared tools beside this checkout)")
    if not (PEER_VENV / "bin" / "check-jsonschema").is_file():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run([str(PEER_VENV / "bin" / "pip"), "install", "-q", "check-jsonschema==0.39.0"], check=True)


def row(n: int, what: str, c: Cost, note: str = "") -> None:
    print(f"| {n:,} | {what} | {c['wall']:.2f} s | {c['cpu']:.2f} s | {c['peak_mib']:.0f} MiB | {note} |",
          flush=True)


def build_table(sizes: list[int], repeat: int, repeat_large: int) -> None:
    peers_ready()
    print(f"# {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores, "
          f"{platform.system()} {platform.release()}\n")
    print("| agents | run | wall | CPU | peak memory | notes |")
    print("|---:|---|---:|---:|---:|---|")
    cold_wall: dict[int, float] = {}
    for n, repo, tmp in repos(sizes, "knoc-bench-"):
        cold_wall[n] = one_size(n, repo, tmp, repeat_large if n >= LARGE else repeat, cold_wall.get(10_000))


def one_size(n: int, repo: Path, tmp: Path, runs: int, cold_10k: float | None) -> float:
    """The rows of one repo size; returns the cold build's wall time."""
    schema = tmp / "blueprint.schema.json"
    subprocess.run([sys.executable, str(SHARED_TOOLS / "bundle-schema"), str(repo / "specs"),
                    "agent-blueprint-schema", str(schema)], check=True, capture_output=True)
    builds, bases = [], []
    for _ in range(runs):  # turn about, so both see the disk in the same state
        builds.append(cold("build", repo))
        bases.append(floor(repo, schema, tmp))
    build, base = pick(builds), pick(bases)
    validate = median(runs, lambda _: cold("validate", repo))
    knoc("build", repo)  # leaves build/ and a filled cache, as a content repo has
    rebuild = median(runs, lambda i: edit_build(repo, i))
    settle(repo, SETTLE_LEAST if n >= LARGE else 0)
    quick = max(runs, QUICK_RUNS)  # a second or two each: a median of several, at every size
    noop = median(quick, lambda _: knoc("build", repo))  # nothing changed since the last rebuild
    warm = median(quick, lambda i: warm_check(repo, i))
    peer = median(1 if n >= LARGE else runs, lambda _: check_jsonschema(repo, schema))
    scale = f"; {build['wall'] / cold_10k:.1f}x the 10,000-agent build" if n > 10_000 and cold_10k else ""
    row(n, "knoc cold build", build, f"{build['wall'] / base['wall']:.2f}x the floor, "
        f"{build['wall'] / peer['wall']:.2f}x check-jsonschema{scale}")
    row(n, "knoc validate (no writing)", validate)
    row(n, "knoc check after a one-file edit", warm, f"{100 * warm['wall'] / build['wall']:.1f}% of a cold build")
    row(n, "knoc build after a one-file edit", rebuild, f"{100 * rebuild['wall'] / build['wall']:.1f}% of a cold build")
    row(n, "knoc build, nothing changed", noop, f"{noop['wall'] / warm['wall']:.2f}x the warm check")
    row(n, "floor (1 process)", base)
    row(n, "check-jsonschema (validate only)", peer)
    return build["wall"]


def chain_table(sizes: list[int], repeat: int) -> None:
    """`knoc validate` over one long chain of `composes` or `extends` links,
    next to the same entities and links as N one-link chains (a star): the
    link stage's walks are linear, so the two grow alike."""
    print("\n| links | entities | N one-link chains | one chain of N | chain / one-link |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="knoc-bench-chain-") as tmp:
        for link in ("composes", "extends"):
            for n in sizes:
                times = [validate_chain(Path(tmp) / f"{link}-{n}-{star}", n, link, star, repeat)
                         for star in (True, False)]
                print(f"| {link} | {n:,} | {times[0]:.2f} s | {times[1]:.2f} s | {times[1] / times[0]:.2f} |",
                      flush=True)


def validate_chain(at: Path, n: int, link: str, star: bool, repeat: int) -> float:
    repo = write_chain(at, n, link, star=star)
    return median(repeat, lambda _: cold("validate", repo))["wall"]


def repos(sizes: list[int], prefix: str) -> Iterator[tuple[int, Path, Path]]:
    """(agents, a generated repo of that many, the scratch folder), each removed after use."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        for n in sizes:
            repo = Path(tmp) / f"repo-{n}"
            generate(repo, n)
            yield n, repo, Path(tmp)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--chain-sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--repeat-large", type=int, default=3,
                    help=f"Runs at {LARGE:,} agents and more (check-jsonschema's: one).")
    ap.add_argument("--editor-size", type=int, default=10_000)
    ap.add_argument("--only", choices=("build", "chains", "editor", "watch"), help="Run one of the four tables.")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="knoc-bench-code-") as code:
        measure_a_copy(Path(code))
        if args.only in (None, "build"):
            build_table(args.sizes, args.repeat, args.repeat_large)
        if args.only in (None, "chains"):
            chain_table(args.chain_sizes, args.repeat)
        if args.only in (None, "editor"):
            editor_table(args.editor_size, 10, ENV)  # bench/editor.py: how soon `knoc lsp` shows an edit
        if args.only in (None, "watch"):
            watch_table(args.editor_size, 10, ENV)  # bench/watch.py: how soon `knoc serve --watch` serves one


def measure_a_copy(into: Path) -> None:
    """Run knoc from a copy of this checkout's package, compiled as an
    install would be: an edit to the checkout during the hour the bench
    takes would otherwise be measured halfway, and would change the code
    fingerprint the cache is salted with (a warm row would be a cold one)."""
    shutil.copytree(HERE.parent / "knoc", into / "knoc", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into / "knoc")], check=True, env=ENV)
    ENV["PYTHONPATH"] = os.pathsep.join(filter(None, (str(into), ENV.get("PYTHONPATH"))))


if __name__ == "__main__":
    main()
