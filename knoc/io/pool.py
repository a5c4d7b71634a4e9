"""The per-file stage on every core: a pool of forked worker processes.

Forked, so each worker starts with what the parent already holds (the
compiled specs, the cache) and nothing is pickled on the way in but a file
name; results come back in the order given, so the output does not depend
on how many workers ran. Where fork is not safe (anything but Linux, or a
process running other threads: `knoc serve --watch` rebuilds beside its
server threads), or for too few items to pay for the workers, the work
runs here, in order."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Below this many items a pool costs more than it saves (forking the workers,
# sending each result back). Measured on 2 cores: even near 250 files, 15%
# faster at 500, 1.7x at 10,000 (README, "Benchmark").
MIN_ITEMS = 300
CHUNK = 32  # items per task: large enough to amortise the pipe, small enough to balance


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def each(work: Callable[[T], R], items: list[T], jobs: int) -> Iterator[R]:
    """`work` over `items`, in their order, on up to `jobs` processes."""
    if jobs <= 1 or len(items) < MIN_ITEMS or sys.platform != "linux" or threading.active_count() > 1:
        yield from map(work, items)
        return
    context = multiprocessing.get_context("fork")
    gc.freeze()  # what the workers inherit stays out of their collector's sight: no copy-on-write of it
    with context.Pool(min(jobs, cores()), initializer=_quiet) as pool:  # terminated on the way out, Ctrl-C too
        yield from pool.imap(work, items, chunksize=CHUNK)


def _quiet() -> None:
    """A worker leaves Ctrl-C to the parent, which stops the pool and says so once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
