"""`python -m knoc` and the `knoc` command. Ctrl-C while knoc is still
starting up is a quiet exit 130, like a Ctrl-C later on."""

import sys


def run() -> None:
    try:
        from knoc.cli import main

        main()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted: build/ is as it was before this run\n")
        sys.exit(130)


if __name__ == "__main__":
    run()
