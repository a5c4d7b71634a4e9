"""Write a content repo whose entities form one long chain (for the chain
tests and benchmark): N agent blueprints each delegating to the next
(`composes`, each link requiring `streaming`), or N perception domains each
extending the next (`extends`). With `loop`, the last links back to the
first, so the whole chain is one cycle. With `star`, the same entities and
the same number of links, but each links to the first: N unrelated
one-link chains, the baseline a long chain is measured against.

    python bench/gen_chain.py OUT N composes|extends [--loop | --star]"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid(i: int) -> str:
    digits = ""
    for _ in range(10):
        i, r = divmod(i, 32)
        digits = CROCKFORD[r] + digits
    return "01KKCHA1N" + "0" * 7 + digits


def _next(i: int, n: int, loop: bool, star: bool) -> int:
    """The entity `i` links to; n (none) at the end of an open chain."""
    if star:
        return 0 if i else n
    return (i + 1) % n if loop else i + 1


def agent(i: int, n: int, loop: bool, star: bool = False) -> str:
    nxt = _next(i, n, loop, star)
    link = [] if nxt >= n else [
        "composes:",
        f"  - xri: kno://agent-blueprints/agent-{nxt:06d}",
        "    reason: hands the rest of the task down the chain",
        "    requires: [streaming]",
    ]
    return "\n".join([
        "$schema: agent-blueprint@0.2.0", f"id: {ulid(i)}", f"slug: agent-{i:06d}", "type: agent-blueprint",
        "version: 0.1.0", f'title: "Agent {i}"', "persona:", "  safety_level: standard", "  lifecycle: on-demand",
        *link, "ownership:", "  context: platform", "a2a_projection:", f"  name: Agent {i}",
        f"  description: Link {i} of a delegation chain.", f"  url: https://chain.example.com/agent-{i:06d}",
        '  version: "0.1.0"', "  capabilities:", "    streaming: true", "  skills:", "    - id: relay",
        "      name: Relay", "      description: Passes the task on.", "      tags: [relay]", ""])


def domain(i: int, n: int, loop: bool, star: bool = False) -> str:
    nxt = _next(i, n, loop, star)
    link = [] if nxt >= n else [
        "relationships:", "  extends:", f"    - xri: kno://perception-domains/domain-{nxt:06d}",
        "      reason: narrows the next domain"]
    return "\n".join([
        "$schema: perception-domain@0.1.0", f"id: {ulid(i)}", f"slug: domain-{i:06d}", "type: perception-domain",
        "version: 0.1.0", f'title: "Domain {i}"', *link, ""])


def write_chain(root: Path, n: int, link: str, loop: bool = False, star: bool = False) -> Path:
    """The repo at `root`."""
    shutil.copytree(ROOT / "specs", root / "specs")
    folder, make, name = ((root / "content/agent-blueprints", agent, "agent") if link == "composes" else
                          (root / "content/perception-domains", domain, "domain"))
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"{name}-{i:06d}.kno").write_text(make(i, n, loop, star), encoding="utf-8")
    return root


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("n", type=int)
    ap.add_argument("link", choices=("composes", "extends"))
    ap.add_argument("--loop", action="store_true")
    ap.add_argument("--star", action="store_true")
    args = ap.parse_args()
    write_chain(args.out, args.n, args.link, args.loop, args.star)
