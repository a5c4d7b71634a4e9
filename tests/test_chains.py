"""Long chains: 10,000 agents each delegating to the next, and 10,000
entities each extending the next, compile without recursion errors, and a
cycle through all of them is found and reported once. (How the time grows
with the chain's length is measured by `bench/run.py --only chains`.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.gen_chain import write_chain
from knoc.config import load_config
from knoc.incremental.driver import compile_repo

N = 10_000


@pytest.mark.parametrize("link", ["composes", "extends"])
def test_a_chain_of_ten_thousand_compiles(tmp_path: Path, link: str) -> None:
    result = compile_repo(load_config(write_chain(tmp_path, N, link)))
    assert result.ok, result.report.sorted()[:3]
    # one warning for the generated host (chain.example.com), never one per card
    assert [d.code for d in result.report.sorted()] == (["KNO-CARD-URL-EXAMPLE"] if link == "composes" else [])
    if link == "composes":
        assert len(result.cards) == N


@pytest.mark.parametrize(("link", "code"), [("composes", "KNO-COMPOSES-CYCLE"), ("extends", "KNO-EXTENDS-CYCLE")])
def test_a_cycle_through_ten_thousand_is_reported_once(tmp_path: Path, link: str, code: str) -> None:
    result = compile_repo(load_config(write_chain(tmp_path, N, link, loop=True)))
    found = [d for d in result.report.sorted() if d.code == code]
    assert len(found) == 1
    members = found[0].message.split(": ", 1)[1].split(" -> ")
    assert len(members) == N + 1 and members[0] == members[-1] and len(set(members)) == N
    assert found[0].file is not None and found[0].file.endswith("-000000.kno")


def test_a_requirement_unmet_at_the_bottom_is_found_from_every_link_above(tmp_path: Path) -> None:
    """Each link requires `streaming` of its whole chain; the last agent
    drops it, so every one of the 99 links above reports the full chain."""
    n = 100
    root = write_chain(tmp_path, n, "composes")
    last = root / f"content/agent-blueprints/agent-{n - 1:06d}.kno"
    last.write_text(last.read_text(encoding="utf-8").replace("streaming: true", "streaming: false"), encoding="utf-8")
    result = compile_repo(load_config(root))
    found = [d for d in result.report.sorted() if d.code == "KNO-CHAIN-REQUIRES"]
    assert len(found) == n - 1
    first = next(d for d in found if d.file == "content/agent-blueprints/agent-000000.kno")
    assert first.message.startswith(" -> ".join(f"agent-{i:06d}" for i in range(n)) + ": `agent-000099`")
