from __future__ import annotations

import click

from knoc.cli.options import Run, common


@click.command(name="build")
@click.option("--stage", is_flag=True, help="Then `git add` the output folder (the knoc-build pre-commit hook).")
@common
def command(run: Run, stage: bool) -> int:
    """Compile the repo and write build/ (cards, domain index, catalog, manifest).

    The new tree is written aside and swapped in: a failed build leaves the
    previous build/ untouched."""
    from knoc.app.build import build

    with run.progress() as progress:
        outcome = build(run.config, use_cache=run.use_cache, fail_on_warning=run.fail_on == "warning",
                        stage=stage, progress=progress)
    return run.report(outcome)
