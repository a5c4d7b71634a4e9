from __future__ import annotations

import click

from knoc.cli.options import Run, options


@click.command(name="verify")
@click.argument("card", metavar="CARD_OR_URL")
@click.option("--jwks", metavar="FILE_OR_URL", help="The key set to verify against (a JWKS file or URL).")
@click.option("--allow-jku", is_flag=True,
              help="Fetch the key set each signature names (`jku`); off by default: a card from anywhere "
                   "should not choose what knoc downloads.")
@options(formats=("text", "json"), thresholds=(), repo=False)
def command(run: Run, card: str, jwks: str | None, allow_jku: bool) -> int:
    """Verify the signatures of any A2A Agent Card (a file, or a URL: a base
    URL gets /.well-known/agent-card.json). Says which signature verified,
    with which key and over which view of the card (1.0, or 0.3). Exit 0
    when one verifies, 1 when none does or the card is unsigned, 2 when the
    card or key set cannot be read."""
    from knoc.app.verify import verify

    return run.report(verify(card, jwks, allow_jku, fmt=run.fmt))
