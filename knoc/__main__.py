"""`python -m knoc` and the `knoc` command. Ctrl-C while knoc is still
starting up is a quiet exit 130, like a Ctrl-C later on; once the command
has reported, Ctrl-C is ignored: it would only interrupt the interpreter's
exit (joining the writer threads) and print a traceback."""

import signal
import sys


def run() -> None:
    try:
        from knoc.cli import main

        main()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted: build/ is as it was before this run\n")
        sys.exit(130)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


if __name__ == "__main__":
    run()
