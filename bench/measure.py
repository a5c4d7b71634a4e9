"""Run one command and report what it cost, as JSON on stdout:

    python bench/measure.py [--cwd DIR] -- COMMAND ...

{"rc": exit code, "wall": seconds, "cpu": user + system seconds of the
command and every process it started and waited for (pool workers
included), "peak_mib": peak memory}.

Peak memory is the larger of two lower bounds: the peak resident set of
the largest single process (getrusage), and the peak, sampled every 100 ms,
of the proportional set size (PSS: a page shared by n processes counts 1/n
in each) summed over the whole process tree. Forked workers share their
parent's pages, so summing their resident sets would count those twice."""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path


def tree_pss_kib(root: int) -> int:
    """The summed PSS of `root` and its descendants, in KiB (0 once gone)."""
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
            for task in os.listdir(f"/proc/{pid}/task"):
                pending += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except (OSError, ValueError):
            continue  # it ended between two reads
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cwd", default=None)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    peak = [0]
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=args.cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.1):
            peak[0] = max(peak[0], tree_pss_kib(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    rc = proc.wait()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_kib = max(peak[0], usage.ru_maxrss)
    json.dump({"rc": rc, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_mib": peak_kib / 1024},
              sys.stdout)


if __name__ == "__main__":
    main()
