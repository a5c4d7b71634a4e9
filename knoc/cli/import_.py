from __future__ import annotations

import click

from knoc.cli.options import Run, common


@click.command(name="import")
@click.argument("sources", nargs=-1, required=True, metavar="CARD.json|URL...")
@click.option("--force", is_flag=True, help="Replace a blueprint of the same slug that exists.")
@click.option("--url", "base_url", metavar="URL",
              help="The agent's service url, for a card that names none (default for a card fetched "
                   "from a URL: that URL's base).")
@click.option("--allow-jku", is_flag=True,
              help="Fetch the key sets a signed card's signatures name, to say whether they verify.")
@common
def command(run: Run, sources: tuple[str, ...], force: bool, base_url: str | None, allow_jku: bool) -> int:
    """Turn existing A2A Agent Cards (files or URLs; 0.1 to 1.0 and mixed
    shapes) into blueprints in content/agent-blueprints/.

    What it drops or converts is reported as a warning with its JSON path;
    a JSON file that is not an agent card is refused. A blueprint of the
    same slug is never replaced unless --force. What it writes is then
    validated like any other source."""
    from knoc.app.importing import import_cards

    return run.report(import_cards(run.config, sources, force, base_url, allow_jku, use_cache=run.use_cache))
