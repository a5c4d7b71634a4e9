"""The command line: arguments in, exit code out. One module per command;
each parses its options, calls one application function (knoc.app) and
hands the outcome to the reporter (`options.Run.report`).

A command imports its application function when it runs: `knoc check`
runs on every commit and should not pay for the HTTP server, git or the
importer."""

from __future__ import annotations

import click

from knoc import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="knoc")
def main() -> None:
    """knoc compiles a KNO content repo into public A2A agent cards."""


def _register() -> None:
    from knoc.cli import (
        build,
        check,
        diff,
        discover,
        explain,
        id,
        import_,
        init,
        keys,
        migrate,
        new,
        serve,
        specs,
        validate,
        verify,
    )

    for module in (init, build, serve, check, validate, diff, discover, verify, keys, new, id, specs, import_, migrate,
                   explain):
        main.add_command(module.command)


_register()
