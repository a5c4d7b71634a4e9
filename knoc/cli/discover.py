from __future__ import annotations

import click

from knoc.a2a.extensions import SERVICE_CLASSES
from knoc.cli.options import Run, options


@click.command(name="discover")
@click.option("--requires", "requires", multiple=True, metavar="CAPABILITY",
              help="A capability the agent must declare (repeatable): a flag such as streaming_message, "
                   "or ext:<uri> for an extension.")
@click.option("--protocol", metavar="VERSION", help="The A2A protocol version the caller speaks, e.g. 1.0.")
@click.option("--domain", metavar="DOMAIN", help="Only agents that perceive this perception domain.")
@click.option("--class", "service_class", type=click.Choice((*SERVICE_CLASSES, "unknown")),
              help="Only agents of this service class (declared or inferred, as in the catalog).")
@options(formats=("text", "json"), thresholds=())  # its exit code is its answer: does any agent qualify
def command(run: Run, requires: tuple[str, ...], protocol: str | None, domain: str | None,
            service_class: str | None) -> int:
    """Which public agents qualify for a request, and why the others do not.

    Answers from the catalog `knoc build` would publish (compiled in memory,
    through the cache), reading each agent's published card the way a
    client would (KNO's safe discovery). Exit 0 when at least one
    agent qualifies, 1 when none does."""
    from knoc.app.discover import discover
    from knoc.features.discover import Request

    request = Request(requires, protocol, domain, service_class)
    return run.report(discover(run.config, request, fmt=run.fmt, use_cache=run.use_cache))
