"""The per-file stage on every core: a pool of forked worker processes.

Forked, so each worker starts with what the parent already holds (the
compiled specs, the cache) and nothing is pickled on the way in but a file
name; results come back in the order given, so the output does not depend
on how many workers ran. Where fork is not safe (anything but Linux, or a
process running other threads: `knoc serve --watch` rebuilds beside its
server threads), or for too few items to pay for the workers, the work
runs here, in order."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Generic, TypeVar, cast

if TYPE_CHECKING:
    import asyncio
    from concurrent.futures import ProcessPoolExecutor

T = TypeVar("T")
R = TypeVar("R")
C = TypeVar("C")

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


class WorkerLost(OSError):
    """A worker process died mid-task (killed by the OOM killer, a native
    crash): the machine's doing, so the run stops with exit 2."""


def each(work: Callable[[C, T], R], context: C, items: list[T], jobs: int) -> Generator[R, None, None]:
    """`work(context, item)` for each of `items`, in their order, on up to
    `jobs` processes. `work` is a module's function (sent to the workers by
    name); `context` reaches them by the fork, never pickled. Closing it
    stops the workers (killed, not waited for: one may be deep in a file)
    and waits for them to end. A worker that dies raises WorkerLost here at
    once, never a wait for a result that cannot come."""
    if not forks(jobs, len(items)):
        with collecting():
            yield from (work(context, item) for item in items)
        return
    import multiprocessing  # here: a check, which never needs it, starts sooner
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    gc.freeze()  # what the workers inherit stays out of their collector's sight: no copy-on-write of it
    executor = ProcessPoolExecutor(min(jobs, cores()), mp_context=multiprocessing.get_context("fork"),
                                   initializer=_worker_start, initargs=(os.getpid(), context))
    try:
        # Submitted by hand, not through `executor.map`: closing map's results
        # cancels the pending futures, and 3.11's manager thread then fails on
        # them as it marks the rest broken ("Exception in thread ... CANCELLED"),
        # a traceback in the user's terminal after a Ctrl-C.
        chunks = [executor.submit(_in_worker, work, items[i:i + CHUNK]) for i in range(0, len(items), CHUNK)]
        chunks.reverse()
        while chunks:  # each chunk's results let go once handed on, as map does
            yield from chunks.pop().result()
    except BrokenProcessPool:
        raise WorkerLost("a worker process died while compiling (killed by the system, out of memory?)") from None
    finally:
        _stop(executor)


def _stop(executor: ProcessPoolExecutor) -> None:
    """Kill the workers and reap them (Ctrl-C, a failure, or the end):
    the executor's own shutdown would wait for each to finish its task."""
    processes = list((getattr(executor, "_processes", None) or {}).values())  # private, stable since 3.8
    for process in processes:
        process.kill()
    for process in processes:
        process.join()
    # A worker killed halfway through sending a result leaves the pool's
    # reader waiting for the rest, which this process's own copy of the
    # pipe's write end (only workers write to it) would keep it waiting for
    # forever: closed, the read ends and the pool sees itself broken.
    writer = getattr(getattr(executor, "_result_queue", None), "_writer", None)  # private, stable since 3.8
    if writer is not None:
        writer.close()
    executor.shutdown(wait=True)  # not cancel_futures: see `each`


# In a worker: the context its parent forked it with (`each`). A worker
# process serves one `each`, so this is set once per process, at its start.
_context: object = None


def _worker_start(parent: int, context: object) -> None:
    """A worker keeps the context it was forked with, dies with its parent
    (killed, it would otherwise linger and print tracebacks into the
    user's terminal), leaves Ctrl-C to the parent, which stops the pool and
    says so once; and collects its cycles (parsing makes some), whether or
    not the parent paused its collector."""
    global _context
    _context = context
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.enable()


def _in_worker(work: Callable[[C, T], R], items: list[T]) -> list[R]:
    context = cast(C, _context)  # the one `each` forked this worker with, for this `work`
    return [work(context, item) for item in items]


def die_with_parent(parent: int) -> None:
    """Linux: have the kernel kill this (forked) process when its parent
    ends; if the parent is already gone, end now."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(1)


def forks(jobs: int, items: int) -> bool:
    """Whether `each` runs `items` items on `jobs` worker processes (else
    here, one after the other: one job, a few items, or a process with
    threads, which a fork would copy mid-step)."""
    return jobs > 1 and items >= MIN_ITEMS and sys.platform == "linux" and threading.active_count() == 1


def collecting() -> contextlib.AbstractContextManager[None]:
    """Python's collector on, as in a worker: parsing makes cycles."""
    return _collector(True)


def settled() -> None:
    """For a process that keeps what it made (a language server's compiled
    repo): collect once, then keep the survivors out of the collector's
    sight; otherwise every full pass rescans all of them, a pause in the
    middle of an edit's work. What was kept out before is looked at again."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def collector_paused() -> contextlib.AbstractContextManager[None]:
    """Make many objects and few cycles without Python's collector scanning
    them again and again: at 100,000 agents a warm check spent more time
    on that than on its work. It runs again afterwards, and collects any
    cycle made meanwhile; the per-file work (`each`) runs it as usual."""
    return _collector(False)


@contextlib.contextmanager
def _collector(on: bool) -> Iterator[None]:
    was = gc.isenabled()
    if on:
        gc.enable()
    else:
        gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()


class Batches(Generic[T]):
    """Items handed out a batch at a time to whichever thread asks next, so
    more threads can join in while they are being worked through."""

    def __init__(self, items: list[T], size: int = 1) -> None:
        self._items, self._size, self._at, self._lock = items, size, 0, threading.Lock()

    def take(self) -> list[T]:
        with self._lock:
            batch = self._items[self._at:self._at + self._size]
            self._at += len(batch)
            return batch


def on_threads(work: Callable[[], None], n: int, stop: threading.Event) -> None:
    """Run `work` on `n` threads at once and wait for them (`Threads`)."""
    Threads(work, n, stop).join()


class Threads:
    """`work` running on `n` threads, started now. The first exception one
    raises is raised by `join`, and `stop` is set for the others (which
    `work` must watch). Plain threads, not an executor: an executor's
    finaliser is one more place a Ctrl-C could land and be swallowed
    ("Exception ignored in ...")."""

    def __init__(self, work: Callable[[], None], n: int, stop: threading.Event) -> None:
        self._work, self._stop = work, stop
        self._failed: list[BaseException] = []
        self._started = [threading.Thread(target=self._run, daemon=True) for _ in range(n)]
        for thread in self._started:
            thread.start()

    def _run(self) -> None:
        try:
            self._work()
        except BaseException as exc:
            self._failed.append(exc)
            self._stop.set()

    def join(self) -> None:
        try:
            for thread in self._started:
                thread.join()
        except BaseException:  # Ctrl-C: let them see it and stop before the caller cleans up
            self._stop.set()
            for thread in self._started:
                thread.join()
            raise
        if self._failed:
            raise self._failed[0]


class Serial:
    """Calls run one after another on a thread of their own, each awaited
    from the event loop that asked for it (`knoc lsp` compiles there, and
    answers the editor meanwhile)."""

    def __init__(self, name: str) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self._executor = ThreadPoolExecutor(1, thread_name_prefix=name)

    def run(self, call: Callable[..., R], *args: object) -> asyncio.Future[R]:
        import asyncio  # here: only the language server has an event loop (a build's start-up skips it)

        return asyncio.get_running_loop().run_in_executor(self._executor, call, *args)
