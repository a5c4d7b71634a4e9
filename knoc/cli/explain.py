from __future__ import annotations

import click

from knoc.cli.options import EXIT_OK, guarded


@click.command(name="explain")
@click.argument("code", required=False)
def command(code: str | None) -> None:
    """Print what a diagnostic code means, and what to do about it.

    `knoc explain KNO-DRIFT`; without CODE, every code with its severity
    and summary."""
    from knoc.app.explain import explain

    def show() -> int:
        click.echo(explain(code), nl=False)
        return EXIT_OK

    guarded(show)
