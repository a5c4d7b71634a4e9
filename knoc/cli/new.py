from __future__ import annotations

import click

from knoc.cli.options import Run, common


@click.group(name="new")
def command() -> None:
    """Write a new source file from a skeleton."""


@command.command(name="agent")
@click.argument("slug")
@click.option("--title", help="The agent's title and card name (default: from the slug).")
@click.option("--url", default="https://agents.example.com/{slug}", show_default=True,
              help="Where the agent is served; its card goes to <url>/.well-known/agent-card.json.")
@common
def agent(run: Run, slug: str, title: str | None, url: str) -> int:
    """Write content/agent-blueprints/SLUG.kno: a valid blueprint skeleton
    with a fresh ULID, private until its visibility line is removed. Never
    replaces a file; the new file is then validated like any other."""
    from knoc.app.new import new_agent

    return run.report(new_agent(run.config, slug, title, url, use_cache=run.use_cache))
