from __future__ import annotations

import click


@click.command(name="id")
@click.option("-n", "count", type=click.IntRange(1, 1000), default=1, show_default=True, help="How many.")
def command(count: int) -> None:
    """Print a fresh ULID, for an entity's `id`."""
    from knoc.app.new import new_id

    for _ in range(count):
        click.echo(new_id())
