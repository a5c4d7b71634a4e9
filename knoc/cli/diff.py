from __future__ import annotations

import click

from knoc.cli.options import Run, options
from knoc.diagnostics.reporters import FORMATS


@click.command(name="diff")
@click.option("--base", help="Git ref to compare with (default: the merge base with the default branch).")
@options(formats=(*FORMATS, "markdown"), thresholds=("error", "warning", "breaking"))
def command(run: Run, base: str | None) -> int:
    """Report the public wire changes between a git ref and the work tree.

    Per agent and per perception domain, each change is classed breaking,
    additive or cosmetic. Markdown (the default; paste it into a pull
    request) or JSON; --fail-on breaking makes it a CI gate."""
    from knoc.app.diff import diff

    return run.report(diff(run.config, base, fmt=run.fmt, gate=run.fail_on == "breaking", use_cache=run.use_cache))
