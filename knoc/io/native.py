"""Native extensions that run Python code as they load, loaded with Ctrl-C
held. jsonschema_rs imports `decimal` from Rust when it loads; a Ctrl-C that
lands in that import is a Rust panic there (printed with a traceback), not a
KeyboardInterrupt, so knoc's quiet exit 130 never sees it. Held, the Ctrl-C
is delivered as soon as the module has loaded, as a KeyboardInterrupt."""

from __future__ import annotations

import signal

from knoc.io.interrupts import held

with held(frozenset({signal.SIGINT})):
    import jsonschema_rs

__all__ = ["jsonschema_rs"]
