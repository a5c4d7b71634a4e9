"""The command line: arguments in, exit code out. One module per command;
each parses its options, calls one application function (knoc.app) and
hands the outcome to the reporter (`options.Run.report`).

A command imports its application function when it runs: `knoc check`
runs on every commit and should not pay for the HTTP server, git or the
importer."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from knoc.rules.masking import masked
from knoc.rules.text import without_keys
from knoc.version import __version__


class Knoc(click.Group):
    """The command group: a command line click refuses (an unknown option,
    a bad value) is a KNO-CONFIG finding in the format asked for, as every
    other usage error is."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        if not standalone_mode:
            return super().main(argv, prog_name, complete_var, False, **extra)
        try:
            return super().main(argv, prog_name, complete_var, False, **extra)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            sys.exit(130)
        except click.ClickException as exc:
            # click repeats what was typed, a key or a password too (its `message` is typed Final: set anyway)
            setattr(exc, "message", masked(without_keys(exc.message)))  # noqa: B010
            exc.show()
            from knoc.cli.options import implied_format, report_usage

            if isinstance(exc, click.exceptions.NoArgsIsHelpError):
                sys.exit(exc.exit_code)  # `knoc` alone: the help, not a finding
            report_usage(exc.format_message(), _format(argv) or implied_format(), "knoc " + " ".join(a for a in argv[:2]
                                                                                 if not a.startswith("-")))
            sys.exit(exc.exit_code)


def _format(argv: list[str]) -> str | None:
    """The `--format` asked for, as click would read it (None: none)."""
    for i, arg in enumerate(argv):
        if arg == "--format" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--format="):
            return arg.split("=", 1)[1]
    return None


@click.group(cls=Knoc, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="knoc")
def main() -> None:
    """knoc compiles a KNO content repo into public A2A agent cards."""


def _register() -> None:
    from knoc.cli import (
        build,
        check,
        clean,
        diff,
        discover,
        explain,
        id,
        import_,
        init,
        keys,
        lsp,
        migrate,
        new,
        schemas,
        serve,
        specs,
        validate,
        verify,
    )

    for module in (init, build, serve, check, validate, diff, discover, verify, keys, new, id, specs, schemas, import_,
                   migrate, clean, lsp, explain):
        main.add_command(module.command)


_register()
