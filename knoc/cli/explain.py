from __future__ import annotations

import sys

import click

from knoc.cli.options import EXIT_OK, usage


@click.command(name="explain")
@click.argument("code", required=False)
def command(code: str | None) -> None:
    """Print what a diagnostic code means, and what to do about it.

    `knoc explain KNO-DRIFT`; without CODE, every code with its severity
    and summary."""
    from knoc.app.explain import explain
    from knoc.app.outcome import UsageError

    try:
        click.echo(explain(code), nl=False)
    except UsageError as exc:
        sys.exit(usage(exc))
    sys.exit(EXIT_OK)
