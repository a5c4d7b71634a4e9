from __future__ import annotations

import click


@click.command(name="lsp")
def command() -> None:
    """Run knoc's language server on stdin and stdout, for editors: the
    findings of `knoc validate` as you type (the cross-file ones too),
    completion, hover, go to definition, document symbols and quick fixes
    in .kno files. Your editor starts it; see the editors guide."""
    from knoc.app.lsp import serve

    serve()
