from __future__ import annotations

from pathlib import Path

import click

from knoc.cli.options import Run, authoring, options


@click.group(name="specs")
def command() -> None:
    """knoc's built-in specs: a repo without specs/ is checked against them."""


@command.command(name="vendor")
@click.option("--force", is_flag=True, help="Replace spec files of the same name that exist.")
@authoring
def vendor(run: Run, force: bool) -> int:
    """Copy knoc's built-in specs into the repo's specs folder, to pin them
    or extend them; a spec of the same slug there overrides the built-in one."""
    from knoc.app.new import vendor_specs

    return run.report(vendor_specs(run.config, force))


@command.command(name="check")
@click.option("--base", help="Git ref to compare with (default: the merge base with the default branch).")
@click.option("--content", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Another content repo whose entities are checked against the change too.")
@options(formats=("text", "json"), target=False, cache=False)
def check(run: Run, base: str | None, content: Path | None) -> int:
    """Compare each spec with the same spec at a git ref, and hold each
    schema change to the version bump it came with.

    A change is additive (every document valid before stays valid: at
    least a minor bump), breaking (shown with a counterexample the old
    schema accepts and the new one refuses: a major bump), or unknown
    (knoc cannot decide: a warning). Titles, descriptions and examples
    are not schema changes. The entities a change makes invalid are
    listed at their line, here and in --content."""
    from knoc.app.evolution import specs_check

    return run.report(specs_check(run.config, base, content, run.fmt))
