"""Native extensions that run Python code as they load, loaded with Ctrl-C
held. jsonschema_rs imports `decimal` from Rust when it loads; a Ctrl-C that
lands in that import is a Rust panic there (printed with a traceback), not a
KeyboardInterrupt, so knoc's quiet exit 130 never sees it. Held, the Ctrl-C
is delivered as soon as the module has loaded, as a KeyboardInterrupt."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def ctrl_c_held() -> Iterator[None]:
    """SIGINT blocked for this thread until the block ends (where the
    system has no signal masks, nothing is held)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


with ctrl_c_held():
    import jsonschema_rs

__all__ = ["jsonschema_rs"]
