from __future__ import annotations

from pathlib import Path

import click

from knoc.cli.options import finish, guarded, utf8_arguments


@click.command(name="init")
@click.argument("folder", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--url", metavar="URL", help="Where the first agent is served; its slug is the url's last segment "
              "when that is a slug, else hello-agent (default: https://agents.example.com/hello-agent, a domain for "
              "examples: the build says so until it is real).")
def command(folder: Path, url: str | None) -> None:
    """Start a content repo in FOLDER (default: here): knoc.toml, a
    .gitignore for the cache, one perception domain and one public agent
    that build to a valid card at once. Never replaces a file. Refused
    inside another repo's content or specs folder (or inside a repo whose
    knoc.toml does not read), and around another repo, where one would
    read the other's files as its own."""
    from knoc.app.new import init

    def run() -> int:
        utf8_arguments([folder, url])
        return finish(init(folder, url), folder)

    guarded(run)
