from __future__ import annotations

from pathlib import Path

import click

from knoc.cli.options import Run, common


@click.command(name="migrate")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True, help="Check the migration and say what it would do; write nothing.")
@common
def command(run: Run, files: tuple[Path, ...], dry_run: bool) -> int:
    """Rewrite legacy agents (content/agents/*.kno, or FILES) as blueprints
    in content/agent-blueprints/, keeping every comment and the key order.

    Before writing, the repo is compiled as it is and as it would be in a
    scratch copy, for the A2A target of this run: every built file but the
    manifest must come out byte for byte the same, or nothing is written.
    A legacy agent that states no protocol versions meant the target's; its
    blueprint states this target's (and says so). A blueprint that exists
    is never replaced; the legacy file is removed once its blueprint is
    written."""
    from knoc.app.migrate import migrate

    return run.report(migrate(run.config, files, dry_run, use_cache=run.use_cache))
