from __future__ import annotations

from pathlib import Path

import click

from knoc.cli.options import Run, options


@click.command(name="schemas")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="The folder to write them to [default: schemas/ in the repo].")
@click.option("--modeline", "source", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Write nothing; print the `# yaml-language-server: $schema=` line for this .kno file instead "
                   "(its declared type@version, in the --out folder).")
@options(formats=("text", "json"), target=False, cache=False)
def command(run: Run, out: Path | None, source: Path | None) -> int:
    """Write one self-contained JSON Schema (draft 2020-12) per entity type
    and version, from the repo's specs: <type>@<version>.schema.json, every
    kno:// reference bundled in. Editors that read JSON Schemas
    (yaml-language-server: VS Code, Neovim, Helix) then complete field
    names and values and mark mistakes as you type."""
    from knoc.app.schemas import modeline, write_schemas
    from knoc.features.schemas import FOLDER

    if source is not None:
        return run.report(modeline(run.config, out if out is not None else run.config.root / FOLDER, source))
    return run.report(write_schemas(run.config, out))
