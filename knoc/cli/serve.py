from __future__ import annotations

import dataclasses

import click

from knoc.app.outcome import UsageError
from knoc.cli.options import Run, common, complain


@click.command(name="serve")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port on 127.0.0.1; 0 picks a free one.")
@click.option("--site", "site_name", metavar="HOST",
              help="Serve the build/site/HOST tree for every request, whatever its Host header.")
@click.option("--watch", is_flag=True, help="Build now, then rebuild whenever a source, a spec or knoc.toml changes.")
@click.option("--sign-key", "sign_keys", multiple=True, metavar="PATH",
              help="With --watch: sign each build, as `knoc build --sign-key` does.")
@click.option("--unsigned", is_flag=True, help="With --watch: build without signatures in a repo that signs.")
@common
def command(run: Run, port: int, site_name: str | None, watch: bool, sign_keys: tuple[str, ...],
            unsigned: bool) -> int:
    """Serve build/site/ on loopback the way a static host would.

    The request's Host header (a trailing dot or not) picks the
    build/site/<host> tree; any other host (knoc's own `_catalog` folder
    included) gets build/site/ itself, with the catalog page at /. Cards go out
    with the headers build/site/_headers gives them (CORS open for GET,
    HEAD and OPTIONS); a folder's path without its `/` is redirected to it.
    In a repo that signs its cards, --watch needs the key (--sign-key)."""
    from knoc.app.serve import serve

    if (sign_keys or unsigned) and not watch:
        raise UsageError("KNO-CONFIG", "--sign-key and --unsigned go with --watch (they say how it builds)",
                         "add --watch, or build first: knoc build --sign-key KEY")
    return run.report(serve(run.config, port, site_name, watch, sign_keys, unsigned, use_cache=run.use_cache,
                            reopen=run.reread, fail_on_warning=run.fail_on == "warning",
                            report=lambda outcome, config: dataclasses.replace(run, config=config).report(outcome),
                            failed=complain, say=lambda line: click.echo(line, err=True)))
