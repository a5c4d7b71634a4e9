"""One knoc command at a time writes a repo's build/ and cache: a lock
(flock) on the repo's own folder, taken by every command that compiles
or writes. A second command waits for the first, saying so on stderr, up
to WAIT_SECONDS, then gives up with `Locked`. The kernel lets the lock go
when its holder ends however it ends (kill -9 included), and it needs no
file: nothing to clean up, nothing a repo could plant a link in place of.

Held again by the same process (a command that builds inside another:
`serve --watch`, `import`), it is taken once; threads of one process take
turns."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

WAIT_SECONDS = 600.0  # far longer than a build of 100,000 agents
POLL_SECONDS = 0.1

_guard = threading.RLock()  # the threads of this process, one at a time
_held: dict[str, int] = {}  # repo folder -> how deep this process holds it


class Locked(OSError):
    """Another knoc command kept the repo past the wait."""


@contextlib.contextmanager
def held(root: Path, wait: float | None = None) -> Iterator[None]:
    """The repo's lock, for the duration of the block."""
    key = os.path.realpath(root)
    with _guard:
        if _held.get(key):
            _held[key] += 1
            try:
                yield
            finally:
                _held[key] -= 1
            return
        fd = os.open(key, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        try:
            _take(fd, WAIT_SECONDS if wait is None else wait)
            _held[key] = 1
            try:
                yield
            finally:
                _held.pop(key, None)
        finally:
            os.close(fd)  # and with it the lock


def _take(fd: int, wait: float) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    sys.stderr.write("knoc: another knoc command is building in this repo; waiting for it to finish\n")
    sys.stderr.flush()
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            continue
    raise Locked(f"another knoc command kept this repo busy for more than {wait:g} s")
