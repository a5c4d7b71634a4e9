from __future__ import annotations

from pathlib import Path

import click

from knoc.cli.options import Run, options


@click.group(name="keys")
def command() -> None:
    """Signing keys for `knoc build --sign-key`."""


@command.command(name="new")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--type", "kind", type=click.Choice(("ed25519", "p256")), default="ed25519", show_default=True,
              help="ed25519 signs with EdDSA, p256 with ES256; either gives the same bytes for the same sources.")
@options(formats=("text",), thresholds=(), target=False, cache=False, repo=False)
def new(run: Run, path: Path, kind: str) -> int:
    """Write a new private signing key to PATH (PEM, mode 0600), never inside
    the repo you are in and never over an existing file; print its key id
    and public key. Keep the file out of git: a CI secret, or your home."""
    from knoc.app.keys import new_key

    return run.report(new_key(path, kind))


@command.command(name="public")
@click.argument("path", metavar="KEY")
@options(formats=("text",), thresholds=(), target=False, cache=False, repo=False)
def public(run: Run, path: str) -> int:
    """Print the public half of the private key KEY (a PEM file), its key id
    and the line that pins it in knoc.toml's [signing] table, so that `knoc
    check` verifies signed builds without the private key. Run in a repo
    that pins keys already, the line lists them and this one; or it says
    the key is pinned."""
    from knoc.app.keys import show_public

    return run.report(show_public(path))
