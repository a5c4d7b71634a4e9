from __future__ import annotations

from pathlib import Path

import click

from knoc.cli.options import finish, guarded, utf8_arguments


@click.command(name="init")
@click.argument("folder", default=".", type=click.Path(file_okay=False, path_type=Path))
def command(folder: Path) -> None:
    """Start a content repo in FOLDER (default: here): knoc.toml, a
    .gitignore for the cache, one perception domain and one public agent
    that build to a valid card at once. Never replaces a file."""
    from knoc.app.new import init

    def run() -> int:
        utf8_arguments([folder])
        return finish(init(folder), folder)

    guarded(run)
