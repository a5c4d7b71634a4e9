"""`--jobs N`: the per-file stage on N processes gives the same bytes as
one process, findings included, on a repo large enough to use the pool."""

from __future__ import annotations

import sys
from pathlib import Path

from knoc.io import pool
from tests.conftest import Knoc, json_diags, tree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from gen_repo import generate


def test_any_number_of_jobs_gives_the_same_build_and_findings(tmp_path: Path, knoc: Knoc) -> None:
    repo = tmp_path / "repo"
    generate(repo, 2 * pool.MIN_ITEMS)
    broken = sorted((repo / "content/agent-blueprints").glob("*.kno"))
    originals = {p: p.read_bytes() for p in (broken[3], broken[7])}
    broken[3].write_bytes(b"\xff\xfe not utf-8")  # a finding made in a worker
    broken[7].write_text(broken[7].read_text(encoding="utf-8").replace("slug:", "slug: [", 1), encoding="utf-8")
    runs = {}
    for jobs in ("1", "2", "4"):
        code, out, _ = knoc("validate", "--no-cache", "--jobs", jobs, "--format", "json", root=repo)
        runs[jobs] = (code, json_diags(out))
    assert runs["1"][0] == 1 and {d["code"] for d in runs["1"][1]} >= {"KNO-YAML-ENCODING"}
    assert runs["1"] == runs["2"] == runs["4"]
    for path, original in originals.items():
        path.write_bytes(original)
    trees = {}
    for jobs in ("1", "2", "4"):
        code, _, err = knoc("build", "--no-cache", "--jobs", jobs, root=repo)
        assert code == 0, err
        trees[jobs] = tree(repo / "build")
    assert trees["1"] == trees["2"] == trees["4"]
    assert len(trees["1"]) > 2 * pool.MIN_ITEMS
