from __future__ import annotations

import click

from knoc.cli.options import Run, authoring


@click.group(name="new")
def command() -> None:
    """Write a new source file from a skeleton, with a fresh ULID."""


@command.command(name="agent")
@click.argument("slug")
@click.option("--title", help="The agent's title and card name (default: from the slug).")
@click.option("--url", help="Where the agent is served; its card goes to <url>/.well-known/agent-card.json "
              "(default: https://HOST/{slug}, HOST the one most of the repo's cards are on, else agents.example.com).")
@authoring
def agent(run: Run, slug: str, title: str | None, url: str | None) -> int:
    """Write content/agent-blueprints/SLUG.kno: a valid blueprint skeleton,
    private until its visibility line is removed. Never replaces a file; the
    new file is then validated like any other."""
    from knoc.app.new import new_agent

    return run.report(new_agent(run.config, slug, title, url, use_cache=run.use_cache))


@command.command(name="domain")
@click.argument("slug")
@click.option("--title", help="The domain's title (default: from the slug).")
@authoring
def domain(run: Run, slug: str, title: str | None) -> int:
    """Write content/perception-domains/SLUG.kno: a perception domain agents
    can name in persona.perception.domains."""
    from knoc.app.new import new_domain

    return run.report(new_domain(run.config, slug, title, use_cache=run.use_cache))


@command.command(name="extension")
@click.argument("slug")
@click.option("--title", help="The extension's title (default: from the slug).")
@click.option("--uri", default="https://extensions.example.com/{slug}/v1", show_default=True,
              help="The extension's URI: cards declare it, and its page is published there.")
@authoring
def extension(run: Run, slug: str, title: str | None, uri: str) -> int:
    """Write content/extensions/SLUG.kno: an extension entity whose
    params_schema checks the params of every card entry that declares it."""
    from knoc.app.new import new_extension

    return run.report(new_extension(run.config, slug, title, uri, use_cache=run.use_cache))
