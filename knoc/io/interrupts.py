"""Interruptions held off for a few steps that must not be cut in two."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

# Ctrl-C, and the signals a service manager or a closed terminal sends.
HELD = frozenset(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None),
                             getattr(signal, "SIGHUP", None)) if s is not None)


@contextlib.contextmanager
def held(signals: frozenset[int] = HELD) -> Iterator[None]:
    """These signals blocked for this thread until the block ends, then
    delivered (where the system has no signal masks, nothing is held).
    Only for this thread: a command that works on another thread waits
    for that work itself before it exits."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


@contextlib.contextmanager
def as_ctrl_c() -> Iterator[None]:
    """SIGTERM and SIGHUP end the block as Ctrl-C does (a KeyboardInterrupt),
    so that what runs on when it ends runs for them too. From the main
    thread only (elsewhere nothing changes)."""
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    taken = HELD - {getattr(signal, "SIGINT", None)}
    try:
        before = {s: signal.signal(s, interrupt) for s in taken}
    except ValueError:  # not the main thread
        before = {}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
