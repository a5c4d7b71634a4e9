from __future__ import annotations

from pathlib import Path

import click

from knoc.cli.options import Run, common


@click.command(name="validate")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@common
def command(run: Run, files: tuple[Path, ...]) -> int:
    """Run every check of `build` without writing anything.

    The signing keys knoc.toml and KNOC_SIGNING_KEY name are read and
    checked as a build reads them; nothing is signed, so what only signing
    finds (a client that cannot verify a card) is said by `build` and
    `check`, not here. With FILES, report
    only their diagnostics (the whole repo is still read, since references
    cross files)."""
    from knoc.app.validate import validate

    with run.progress() as progress:
        outcome = validate(run.config, files, use_cache=run.use_cache, progress=progress)
    return run.report(outcome)
