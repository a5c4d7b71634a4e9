"""Disk-bound work overlapped with the compile, in a forked child.

`knoc check` must stat every file and folder under build/ (360,000 at
100,000 agents) as well as compile the sources. Neither needs the other
until they are compared, and a thread would not help: the compile holds
the GIL. So the scan runs in a child process on another core and sends
its result back through a pipe, marshalled. Cut into pieces (`share`),
it is finished by whichever process is free: the compile, once done,
takes the pieces the child has not begun, instead of waiting for it.
Where fork is not safe (anything but Linux) or fails, the work simply
runs when its result is asked for."""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from knoc.io.pool import die_with_parent

Value = Any  # whatever marshal can carry: dicts, tuples, str, int, bytes
MAX_PIECES = 255  # a piece is claimed by reading its number, one byte, from a pipe


def start(work: Callable[[], Value]) -> Callable[[], Value]:
    """Begin `work`; the returned function waits for its value. Call it
    exactly once (it also reaps the child)."""
    pending = share([work])
    return lambda: pending()[0]


def share(pieces: Sequence[Callable[[], Value]]) -> Callable[[], list[Value]]:
    """Begin `pieces` in a child, in order; the returned function does the
    ones the child has not claimed yet, waits for the child's, and gives
    every value in order. Call it exactly once (it also reaps the child).
    A piece that fails in the child is done again by the caller, so what
    it raises is raised there."""
    if not 0 < len(pieces) <= MAX_PIECES:
        raise ValueError(f"1 to {MAX_PIECES} pieces, not {len(pieces)}")
    if sys.platform != "linux":
        return lambda: [piece() for piece in pieces]
    opened: list[int] = []
    try:
        claims, offer = os.pipe()
        opened += (claims, offer)
        os.write(offer, bytes(range(len(pieces))))  # fits any pipe's buffer
        os.close(offer)
        opened.remove(offer)
        os.set_blocking(claims, False)
        read_end, write_end = os.pipe()
        opened += (read_end, write_end)
        parent = os.getpid()
        pid = os.fork()
    except OSError:
        for fd in opened:
            os.close(fd)
        return lambda: [piece() for piece in pieces]
    if pid == 0:  # the child: compute, send, and leave without the parent's exit handlers or buffers
        try:
            die_with_parent(parent)
            os.close(read_end)
            try:
                payload = marshal.dumps({i: pieces[i]() for i in _claimed(claims)})
            except BaseException:
                payload = b""  # the parent does every piece not its own, and reports what it raises
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
        finally:
            os._exit(0)
    os.close(write_end)

    def values() -> list[Value]:
        done = {i: pieces[i]() for i in _claimed(claims)}
        os.close(claims)
        with os.fdopen(read_end, "rb") as pipe:
            payload = pipe.read()
        os.waitpid(pid, 0)
        done.update(marshal.loads(payload) if payload else {})
        return [done[i] if i in done else piece() for i, piece in enumerate(pieces)]

    return values


def _claimed(claims: int) -> Iterator[int]:
    """The pieces this process takes, one at a time, until none is left (a
    read of one byte from a pipe is atomic: no piece is taken twice)."""
    while True:
        try:
            claim = os.read(claims, 1)
        except BlockingIOError:
            return
        if not claim:
            return
        yield claim[0]
