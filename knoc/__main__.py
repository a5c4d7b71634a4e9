"""`python -m knoc` and the `knoc` command. Ctrl-C while knoc is still
starting up is a quiet exit 130, like a Ctrl-C later on. Only the first
Ctrl-C counts: the ones after it would cut short the cleanup it started
(removing a half-written tree beside build/), and once the command has
reported they would only interrupt the interpreter's exit (joining the
writer threads) and print a traceback. One that Python could only ignore
(in a callback of an import) stops knoc too."""

import os
import signal
import sys


def run() -> None:
    sys.unraisablehook = _ignored
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where it was left ignored
            signal.signal(signal.SIGINT, _first_ctrl_c)
        from knoc.cli import main
        from knoc.io.memory import leave, pin_mmap_threshold

        pin_mmap_threshold()
        main()
    except SystemExit as exc:
        if isinstance(exc.code, int):
            leave(exc.code)
        raise
    except KeyboardInterrupt:
        _interrupted()
    except RuntimeError as exc:
        # Python 3.11 wraps a Ctrl-C that lands while a class is being made
        # (in its attributes' __set_name__) in a RuntimeError.
        if not isinstance(exc.__cause__, KeyboardInterrupt):
            raise
        _interrupted()
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _first_ctrl_c(signum: int, frame: object) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def _ignored(unraisable: "sys.UnraisableHookArgs") -> None:
    """A Ctrl-C that lands where Python can only ignore it (a callback
    inside an import, a finalizer) would print a traceback and let knoc go
    on: it stops knoc all the same, quietly. As after a kill, what was being
    written is left aside, for the next run to remove."""
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)
        return
    from knoc.app.outcome import INTERRUPTED

    sys.stderr.write(INTERRUPTED + "\n")
    sys.stderr.flush()
    os._exit(130)


def _interrupted() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C would only cut the message short
    from knoc.app.outcome import INTERRUPTED

    sys.stderr.write(INTERRUPTED + "\n")
    sys.exit(130)


if __name__ == "__main__":
    run()
