from __future__ import annotations

import click

from knoc.cli.options import Run, authoring


@click.command(name="clean")
@click.option("--cache-only", is_flag=True, help="Remove only .knoc-cache/, and keep build/.")
@authoring
def command(run: Run, cache_only: bool) -> int:
    """Remove build/ and .knoc-cache/ (a build or check makes them again).

    build/ is removed only when every file in it is one knoc wrote (its
    manifest lists it); from .knoc-cache/ only the files of the names knoc
    gives them go, and a file of another name stays (the summary names it);
    nothing is removed through a link."""
    from knoc.app.clean import clean

    return run.report(clean(run.config, cache_only))
