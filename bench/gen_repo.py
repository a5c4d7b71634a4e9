"""Write a synthetic content repo of N agent blueprints (for benchmarks).

    python bench/gen_repo.py OUT N [--seed S]

Same N and seed, same bytes. The repo uses this project's specs/ and has the
shape knoc meets in practice: ~10% private agents, ~20% tenant-owned, ~60%
with a declared service class, delegation through `composes`, 0-3 perception
domains per agent (one domain per 20 agents) and 1-6 skills."""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
TAGS = ("api", "search", "feed", "index", "discovery", "play", "game", "auth", "billing",
        "reports", "etl", "testing", "diagnostics", "summarize", "translate")
MODES = ("text/plain", "application/json", "image/png", "text/markdown")


def ulid(rng: random.Random) -> str:
    return "01" + "".join(rng.choice(CROCKFORD) for _ in range(24))


def blueprint(i: int, domains: int, rng: random.Random) -> str:
    slug = f"agent-{i:06d}"
    picked = sorted(rng.sample(range(domains), k=rng.randint(0, min(3, domains))))
    out = [
        "$schema: agent-blueprint@0.2.0",
        f"id: {ulid(rng)}",
        f"slug: {slug}",
        "type: agent-blueprint",
        f"version: 0.{rng.randint(1, 9)}.{rng.randint(0, 20)}",
        *(["visibility: private"] if rng.random() < 0.1 else []),
        f'title: "Agent {i}"',
        "purpose: |",
        f"  Synthetic agent {i}: a persona, goals, boundaries and a card projection.",
        "persona:",
        f"  safety_level: {rng.choice(['standard', 'elevated'])}",
        f"  lifecycle: {rng.choice(['on-demand', 'continuous', 'ephemeral'])}",
        "  perception:",
        "    domains: [" + ", ".join(f"domain-{d:04d}" for d in picked) + "]",
        f"    refresh: {rng.choice(['on-change', 'periodic', 'on-demand', 'scheduled'])}",
        "  goals:",
        "    - id: latency",
        "      description: Answers quickly",
        '      target: "<5s p95"',
        "  boundaries:",
        "    - MUST NOT send data outside the tenant",
        "    - SHOULD NOT call more than 3 tools per request",
    ]
    if rng.random() < 0.6:
        out.append(f"service_class: {rng.choice(['utility', 'principal', 'ephemeral'])}")
    if i > 0 and rng.random() < 0.3:
        out += ["composes:", f"  - xri: kno://agent-blueprints/agent-{rng.randrange(i):06d}",
                "    reason: delegates part of the work"]
    if rng.random() < 0.2:
        out += ["ownership:", "  context: tenant", f"  possibility_slug: realm-{rng.randint(0, 99)}"]
    else:
        out += ["ownership:", "  context: platform"]
    out += [
        "a2a_projection:",
        f'  name: "Agent {i} {rng.choice(["Search", "Planner", "Ledger", "Crawler", "Résumé"])}"',
        f'  description: "Does synthetic task {i}."',
        f"  url: https://agents{i % 7}.example.org/a2a/{slug}",
        '  protocol_versions: ["1.0", "0.3"]',
        f'  version: "1.{i % 10}.0"',
        "  provider:",
        "    organization: Example Org",
        "    url: https://example.org",
        "  capabilities:",
        f"    streaming: {str(rng.random() < 0.5).lower()}",
        f"    push_notifications: {str(rng.random() < 0.3).lower()}",
        "  default_input_modes: [" + ", ".join(rng.sample(MODES, 2)) + "]",
        "  default_output_modes: [" + ", ".join(rng.sample(MODES, 2)) + "]",
        "  skills:",
    ]
    for k in range(rng.randint(1, 6)):
        out += [f"    - id: skill-{k}", f'      name: "Skill {k}"',
                f'      description: "Skill {k} of agent {i}."',
                "      tags: [" + ", ".join(rng.sample(TAGS, rng.randint(1, 3))) + "]",
                "      examples:", f'        - "Please do thing {k}"']
    return "\n".join(out) + "\n"


def domain(d: int, rng: random.Random) -> str:
    return (f"$schema: perception-domain@0.1.0\nid: {ulid(rng)}\nslug: domain-{d:04d}\n"
            f'type: perception-domain\nversion: 0.1.0\ntitle: "Domain {d}"\n')


def generate(out: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    domains = max(5, n // 20)
    (out / "content/agent-blueprints").mkdir(parents=True, exist_ok=True)
    (out / "content/perception-domains").mkdir(parents=True, exist_ok=True)
    for d in range(domains):
        (out / f"content/perception-domains/domain-{d:04d}.kno").write_text(domain(d, rng), encoding="utf-8")
    for i in range(n):
        (out / f"content/agent-blueprints/agent-{i:06d}.kno").write_text(
            blueprint(i, domains, rng), encoding="utf-8")
    shutil.copytree(ROOT / "specs", out / "specs", dirs_exist_ok=True)


@contextlib.contextmanager
def built(n: int, prefix: str, env: dict[str, str] | None = None) -> Iterator[Path]:
    """A generated repo of `n` agents, built once (the build/ and the cache
    someone working in it has), removed afterwards. `env`: where knoc is
    imported from (`bench/run.py` measures a copy)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        repo = Path(tmp) / "repo"
        generate(repo, n)
        subprocess.run([sys.executable, "-m", "knoc", "build", "--root", str(repo)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env or dict(os.environ))
        yield repo


def print_table(title: str, rows: dict[str, list[float]]) -> None:
    """The median and the slowest of each row's times, as a Markdown table."""
    print(f"\n{title}:\n| | median | slowest |\n|---|---|---|")
    for key, times in rows.items():
        print(f"| {key} | {statistics.median(times):.3f} s | {max(times):.3f} s |")


def table_main(table: Callable[[int, int], None]) -> None:
    """The command line of a latency table: `--size` agents, `--edits` edits."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--edits", type=int, default=10)
    args = ap.parse_args()
    table(args.size, args.edits)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    generate(args.out, args.n, args.seed)
    print(f"wrote {args.n} blueprints under {args.out}")
