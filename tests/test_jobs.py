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


def _half_sent(_: object) -> None:
    """In a worker: begin sending a result (a length, then less than it
    says), then die, as a worker killed mid-send does."""
    import os
    import signal
    import struct

    frame = sys._getframe()
    while frame is not None and frame.f_code.co_name != "_process_worker":
        frame = frame.f_back
    assert frame is not None
    writer = frame.f_locals["result_queue"]._writer.fileno()
    os.write(writer, struct.pack("!i", 1 << 20) + b"partial")
    os.kill(os.getpid(), signal.SIGKILL)


def test_stopping_the_pool_never_waits_on_a_result_a_dead_worker_half_sent() -> None:
    """A worker killed while it sends a result leaves the pool's reader
    waiting for the rest: stopping the pool (a Ctrl-C, a failure) must
    still end, not wait forever."""
    import multiprocessing
    import threading
    import time
    from concurrent.futures import ProcessPoolExecutor

    executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
    executor.submit(_half_sent, None)
    deadline = time.monotonic() + 30
    while any(p.is_alive() for p in list((executor._processes or {}).values())) or not executor._processes:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.2)  # the pool's reader is in the half-sent result
    stopper = threading.Thread(target=pool._stop, args=(executor,), daemon=True)
    stopper.start()
    stopper.join(20)
    assert not stopper.is_alive(), "stopping the pool hung on the half-sent result"
