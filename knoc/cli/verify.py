from __future__ import annotations

import click

from knoc.cli.options import Run, options


@click.command(name="verify")
@click.argument("card", metavar="CARD_OR_URL")
@click.option("--jwks", metavar="FILE_OR_URL", help="The key set to verify against (a JWKS file or URL).")
@click.option("--allow-jku", is_flag=True,
              help="Fetch the key set each signature names (`jku`): only over https, only from the card's own "
                   "host (where it was fetched, else its main url's). Off by default: a card from anywhere "
                   "should not choose what knoc downloads.")
@click.option("--jku-host", "jku_hosts", multiple=True, metavar="HOST",
              help="With --allow-jku, also trust key sets on this host (repeat for several).")
@options(formats=("text", "json"), thresholds=(), target=False, cache=False, repo=False)
def command(run: Run, card: str, jwks: str | None, allow_jku: bool, jku_hosts: tuple[str, ...]) -> int:
    """Verify the signatures of any A2A Agent Card (a file, or a URL: a base
    URL gets /.well-known/agent-card.json). A card is valid when every client
    generation that reads it (a2a-sdk 1.x, the JS SDK as fetched and as its
    client resolves it, a2a-sdk 0.3) verifies what it reads; the answer says
    which signature covers which, with which key. Exit 0 when valid, 1 when
    not (or unsigned), 2 when the card or key set cannot be read."""
    from knoc.app.verify import verify

    return run.report(verify(card, jwks, allow_jku, jku_hosts, fmt=run.fmt))
