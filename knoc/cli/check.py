from __future__ import annotations

import click

from knoc.cli.options import Run, common


@click.command(name="check")
@common
def command(run: Run) -> int:
    """Compile in memory and compare with build/ on disk (the drift guard).

    Exit 0 when build/ matches the sources; exit 1 with each stale, missing
    or extra file (and a short diff) when it does not, or on any finding."""
    from knoc.app.check import check

    with run.progress() as progress:
        outcome = check(run.config, use_cache=run.use_cache, progress=progress)
    return run.report(outcome)
