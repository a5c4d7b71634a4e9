from __future__ import annotations

import sys
from pathlib import Path

import click

from knoc.cli.options import bug, finish, usage


@click.command(name="init")
@click.argument("folder", default=".", type=click.Path(file_okay=False, path_type=Path))
def command(folder: Path) -> None:
    """Start a content repo in FOLDER (default: here): knoc.toml, a
    .gitignore for the cache, one perception domain and one public agent
    that build to a valid card at once. Never replaces a file."""
    from knoc.app.new import init
    from knoc.app.outcome import UsageError

    try:
        code = finish(init(folder), folder)
    except UsageError as exc:
        code = usage(exc)
    except Exception as exc:  # a bug: one diagnostic and exit 3, never a traceback
        code = bug(exc)
    sys.exit(code)
