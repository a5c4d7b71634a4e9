from __future__ import annotations

import click

from knoc.cli.options import Run, authoring


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
