"""Disk-bound work overlapped with the compile, in a forked child.

`knoc check` must stat every file under build/ (tens of thousands on a
large repo) as well as compile the sources. Neither needs the other until
they are compared, and a thread would not help: the compile holds the GIL.
So the scan runs in a child process on another core and sends its result
back through a pipe, marshalled. Where fork is not safe (anything but
Linux) or fails, the work simply runs when its result is asked for."""

from __future__ import annotations

import functools
import marshal
import os
import sys
from collections.abc import Callable
from typing import Any

Value = Any  # whatever marshal can carry: dicts, tuples, str, int, bytes


def start_each(works: list[Callable[[], Value]], children: int) -> list[Callable[[], Value]]:
    """`start` each of `works`, on at most `children` children (at least
    one): the last child takes the works left over, one after another. On
    two cores, two scans beside the compile would take turns with it."""
    children = max(1, min(children, len(works)))
    shared = start(lambda: tuple(work() for work in works[children - 1:]))
    own = [start(work) for work in works[:children - 1]]
    values: list[tuple[Value, ...]] = []

    def each(i: int) -> Value:
        if not values:
            values.append(shared())
        return values[0][i]
    return own + [functools.partial(each, i) for i in range(len(works) - children + 1)]


def start(work: Callable[[], Value]) -> Callable[[], Value]:
    """Begin `work`; the returned function waits for its value. Call it
    exactly once (it also reaps the child)."""
    if sys.platform != "linux":
        return work
    try:
        read_end, write_end = os.pipe()
        pid = os.fork()
    except OSError:
        return work
    if pid == 0:  # the child: compute, send, and leave without the parent's exit handlers or buffers
        try:
            os.close(read_end)
            try:
                payload = marshal.dumps(work())
            except BaseException:
                payload = b""  # the parent runs the work itself, and reports what it raises
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
        finally:
            os._exit(0)
    os.close(write_end)

    def result() -> Value:
        with os.fdopen(read_end, "rb") as pipe:
            payload = pipe.read()
        os.waitpid(pid, 0)
        return marshal.loads(payload) if payload else work()

    return result
