"""Interruptions held off for a few steps that must not be cut in two."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator

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
def as_ctrl_c() -> Iterator[Callable[[], None]]:
    """SIGTERM and SIGHUP end the block as Ctrl-C does (a KeyboardInterrupt),
    so that what runs as it ends runs for them too. Yields `ignore_more`:
    from then until the block ends, all three are ignored, so a second one
    cannot cut that short. From the main thread only (elsewhere nothing
    changes)."""
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        before = {s: signal.getsignal(s) for s in HELD}
        for s in HELD - {getattr(signal, "SIGINT", None)}:
            signal.signal(s, interrupt)
    except ValueError:  # not the main thread
        before = {}

    def ignore_more() -> None:
        for s in before:
            signal.signal(s, signal.SIG_IGN)

    try:
        yield ignore_more
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def exit_at_ctrl_c(code: int, message: str) -> None:
    """From now on, Ctrl-C (and SIGTERM, SIGHUP, but none the process was
    started ignoring) ends the process at once with `message` and `code`:
    for a process whose writes are each atomic (the language server), where
    an orderly stop could wait forever on a thread blocked reading input."""
    def leave(signum: int, frame: object) -> None:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
        os._exit(code)

    for s in HELD:
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, leave)
